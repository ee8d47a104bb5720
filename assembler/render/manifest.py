"""Manifest: a layout and its body become a ``Rendering`` bound to the selection.

Input: a validated ``Request``, a bundle ``Result`` of it, a format, an optional
counter and the budget to record.
Output: a ``Rendering`` (text, provider body, manifest), or ``RenderError`` before
anything is returned: no partial manifest exists.

Each manifest item locates its content in the rendered UTF-8 (``offset``/``length``
in bytes, the header excluded) with its sha256; ``rendered_sha256`` hashes the text
and ``request_body_sha256`` the canonical JSON of the provider body. Everything
depends only on the request and the selection, so any permutation of the candidates
gives the same manifest.
"""

from __future__ import annotations

import hashlib

from ..model.errors import RenderError
from ..model.rendering import (
    DEFAULT_HEADERS,
    RENDER_VERSION,
    Headers,
    Manifest,
    ManifestItem,
    RenderFormat,
    Rendering,
)
from ..model.rules import choice
from ..model.types import Request, Result, Status
from ..stages.identities import canonical_json, content_digest, package_id
from .counters import Counter
from .formats import build_body
from .layout import layout

__all__ = ["build_rendering", "render_format"]


def render_format(value: str | RenderFormat) -> RenderFormat:
    """``render(format=...)``'s value as a format (else ``InvalidRequest`` naming it)."""
    return choice(RenderFormat, value, "format")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _utf8_length(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def build_rendering(
    request: Request,
    result: Result,
    fmt: RenderFormat,
    counter: Counter | None,
    *,
    budget: int | None = None,
    counted: bool = False,
    headers: Headers = DEFAULT_HEADERS,
) -> Rendering:
    """The rendering of ``result``'s bundle. ``counted`` says the bundle's costs were
    counted by ``counter`` (the budget guarantee); ``budget`` defaults to the task's;
    ``headers`` frames each item."""
    if result.status is not Status.BUNDLE or result.package_id is None:
        raise RenderError(
            "RENDER_NOT_A_BUNDLE", f"only a bundle renders; this result is {result.status.value}"
        )
    by_id = {c.id: c for c in request.candidates}
    unknown = [i for i in result.selected if i not in by_id]
    if unknown or package_id(request, [by_id[i] for i in result.selected]) != result.package_id:
        raise RenderError(
            "RENDER_RESULT_MISMATCH",
            "the result's package_id is not that of its selection under this request",
            items=tuple(unknown),
        )
    blocks = layout(request, result.selected, headers)
    body, breakpoints = build_body(blocks, fmt, placed=request.cache is not None)
    text = "".join(block.text for block in blocks)
    body_text = canonical_json(body)
    items: list[ManifestItem] = []
    envelope: list[tuple[str, int, int]] = []
    envelope_tokens = 0
    offset = 0
    digests = request.digests
    for block in blocks:
        start = offset + _utf8_length(block.header)
        c = block.candidate
        if c is None:
            size = _utf8_length(block.content)
            offset = start + size + _utf8_length(block.footer)
            envelope.append((block.kind, start, size))
            envelope_tokens += 0 if counter is None else counter.count(block.text)
            continue
        # an item's content is its candidate's: hashed once for the request (identities)
        digest, size = content_digest(block.content, digests)
        offset = start + size + _utf8_length(block.footer)
        tokens = c.cost if counter is None else counter.count(block.text)
        items.append(
            ManifestItem(c.id, c.identity, c.form, c.kind.value, digest, start, size, tokens)
        )
    manifest = Manifest(
        render_version=RENDER_VERSION,
        format=fmt,
        package_id=result.package_id,
        trace_id=result.trace_id,
        items=tuple(items),
        envelope=tuple(envelope),
        breakpoints=breakpoints,
        rendered_sha256=_sha256(text.encode("utf-8")),
        request_body_sha256=_sha256(body_text.encode("utf-8")),
        costs="counted" if counted else "declared",
        counter_name=None if counter is None else counter.name,
        counter_version=None if counter is None else counter.version,
        budget=request.task.budget if budget is None else budget,
        total_tokens=None if counter is None else counter.count(text),
        envelope_tokens=None if counter is None else envelope_tokens,
        headers=headers,
    )
    return Rendering(fmt, text, body_text, manifest)
