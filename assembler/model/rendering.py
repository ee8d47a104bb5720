"""Value types of a rendering: what bytes were prepared for a model call.

Input: nothing. Output: ``RenderFormat``, ``Headers`` (how an item is framed: the one
home of the choices), ``ManifestItem``, ``Manifest`` and ``Rendering``, frozen values
with a stable ``to_dict()`` JSON form (``models/rendering.schema.json``,
``models/README.md`` section 14).

A ``Rendering`` says which bytes were prepared and how they bind to the selection.
It never claims that a model received or used them: selected is not rendered, and
rendered is not received.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..facts import RenderFormat
from .later import later_fields

__all__ = [
    "CONVERSATIONAL",
    "DEFAULT_HEADERS",
    "RENDER_VERSION",
    "Headers",
    "Manifest",
    "ManifestItem",
    "RenderFormat",
    "Rendering",
]

# The layout and framing of models/README.md section 14; any change to either bumps it.
RENDER_VERSION = 3


class Headers(StrEnum):
    """How an item that is not a conversation turn is framed: ``provenance`` (id, kind,
    form, sha256 and byte length), ``minimal`` (the id) or ``none`` (the content and a
    line break). Conversation turns (``CONVERSATIONAL``) carry their content only,
    whatever the choice (``render_version`` 3). The manifest locates and hashes every
    item whatever the choice, so the leanest, ``none``, is the default."""

    PROVENANCE = "provenance"
    MINIMAL = "minimal"
    NONE = "none"


# the framing a rendering uses when none is asked for: the leanest, the manifest exact
DEFAULT_HEADERS = Headers.NONE
# the kinds that carry their content only: what the caller and the model said and did
CONVERSATIONAL = frozenset({"user_turn", "assistant_turn", "tool_call", "tool_result"})


@dataclass(frozen=True, slots=True)
class ManifestItem:
    """One selected form in the rendered bytes: ``offset``/``length`` locate its content
    (UTF-8 bytes, header excluded); ``tokens`` is its block's cost (header and framing
    included) by the counter, or its declared cost when costs were declared."""

    id: str
    identity: str
    form: str
    kind: str
    content_sha256: str
    offset: int
    length: int
    tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "identity": self.identity,
            "form": self.form,
            "kind": self.kind,
            "content_sha256": self.content_sha256,
            "offset": self.offset,
            "length": self.length,
            "tokens": self.tokens,
        }


@later_fields("items", "envelope", "rendered_sha256", "request_body_sha256")
@dataclass(frozen=True, slots=True)
class Manifest:
    """Binds a rendering to the selection it was made from, byte for byte.

    ``items``, ``envelope`` and the two sha256 fields may be computed when first read
    (``later.py``: a rendering's text and body never change, so the value is the one
    an eager computation gives): a caller that only sends the body pays for none."""

    render_version: int
    format: RenderFormat
    package_id: str
    trace_id: str
    items: tuple[ManifestItem, ...]
    # (part, offset, length) of the task's instruction and query text, when present
    envelope: tuple[tuple[str, int, int], ...]
    # byte offsets where a cache breakpoint ends a section (a format whose body marks them)
    breakpoints: tuple[int, ...]
    rendered_sha256: str
    request_body_sha256: str
    # "declared" (the request's costs) or "counted" (by the counter named below)
    costs: str
    counter_name: str | None
    counter_version: str | None
    budget: int
    # tokens of the rendered text counted as one text; None when costs are declared
    total_tokens: int | None
    # tokens of everything that is not an item (instruction, query); None when declared
    envelope_tokens: int | None
    # how items are framed
    headers: Headers = Headers.PROVENANCE

    def to_dict(self) -> dict[str, Any]:
        return {
            "render_version": self.render_version,
            "format": self.format.value,
            "package_id": self.package_id,
            "trace_id": self.trace_id,
            "items": [item.to_dict() for item in self.items],
            "envelope": [
                {"part": part, "offset": offset, "length": length}
                for part, offset, length in self.envelope
            ],
            "breakpoints": list(self.breakpoints),
            "rendered_sha256": self.rendered_sha256,
            "request_body_sha256": self.request_body_sha256,
            "costs": self.costs,
            "counter": (
                None
                if self.counter_name is None
                else {"name": self.counter_name, "version": self.counter_version}
            ),
            "budget": self.budget,
            "total_tokens": self.total_tokens,
            "envelope_tokens": self.envelope_tokens,
            "headers": str(self.headers),
        }

    def cache_blocks(self, text: str) -> list[dict[str, Any]]:
        """The blocks this rendering sent, in order, as a later request's
        ``cache.previous.blocks`` lists them: each item's id, form, content hash and
        tokens, the instruction's hash, and whether a cache breakpoint ended each."""
        data = text.encode("utf-8")
        ends = self.breakpoints
        placed: list[tuple[int, int, dict[str, Any]]] = []
        for item in self.items:
            block = {
                "id": item.id,
                "form": item.form,
                "content_sha256": item.content_sha256,
                "tokens": item.tokens,
            }
            placed.append((item.offset, item.offset + item.length, block))
        for part, offset, length in self.envelope:
            if part == "instruction":
                digest = hashlib.sha256(data[offset : offset + length]).hexdigest()
                instruction = {"part": "instruction", "content_sha256": digest, "tokens": 0}
                placed.append((offset, offset + length, instruction))
        placed.sort(key=lambda entry: entry[0])
        # a breakpoint ends a block's text: after its content, at or before the next
        # block's content (the first block whose span holds it owns it)
        marks = sorted(ends)
        out = []
        for index, (_, end, block) in enumerate(placed):
            after = placed[index + 1][0] if index + 1 < len(placed) else len(data)
            while marks and marks[0] < end:
                marks.pop(0)
            if marks and marks[0] <= after:
                block["breakpoint"] = True
                marks.pop(0)
            out.append(block)
        return out

    def changed_items(self, other: Manifest) -> tuple[str, ...]:
        """Ids whose content differs between two manifests (or that only one has)."""
        mine = {item.id: item.content_sha256 for item in self.items}
        theirs = {item.id: item.content_sha256 for item in other.items}
        return tuple(sorted(i for i in mine.keys() | theirs.keys() if mine.get(i) != theirs.get(i)))


@later_fields("body")
@dataclass(frozen=True, slots=True)
class Rendering:
    """The prepared model input: ``text`` (the rendered UTF-8, identical for every
    format), the provider body built from it (``body_json``, its canonical JSON, made
    once; ``body``, the same as plain JSON values, made when first read, never parsed
    back from the JSON: a string for ``text``, the provider's body for the others, its
    shape in its room's docstring, ``assembler.providers.<name>``), and the manifest
    binding both."""

    format: RenderFormat
    text: str
    # canonical JSON of the provider body, made once
    body_json: str
    manifest: Manifest
    body: Any

    @property
    def data(self) -> bytes:
        return self.text.encode("utf-8")

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format.value,
            "text": self.text,
            "body": self.body,
            "manifest": self.manifest.to_dict(),
        }
