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
from functools import partial

from ..model.errors import RenderError
from ..model.later import Later, later
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
from ..stages.identities import content_digest, package_id
from .counters import Counter
from .formats import body_of
from .layout import Block, layout

__all__ = ["build_rendering", "render_format"]


def render_format(value: str | RenderFormat) -> RenderFormat:
    """``render(format=...)``'s value as a format (else ``InvalidRequest`` naming it)."""
    return choice(RenderFormat, value, "format")


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    vouched: bool = False,
) -> Rendering:
    """The rendering of ``result``'s bundle. ``counted`` says the bundle's costs were
    counted by ``counter`` (the budget guarantee); ``budget`` defaults to the task's;
    ``headers`` frames each item; ``vouched``: ``result`` is the chain's own answer for
    this very request (its ``package_id`` is that of its selection: not computed again).

    Without a counter the manifest's items and envelope, and with one or without the
    two sha256 of the whole text and body, are computed when first read (``Manifest``)."""
    if result.status is not Status.BUNDLE or result.package_id is None:
        raise RenderError(
            "RENDER_NOT_A_BUNDLE", f"only a bundle renders; this result is {result.status.value}"
        )
    if not vouched:
        by_id = {c.id: c for c in request.candidates}
        unknown = [i for i in result.selected if i not in by_id]
        if unknown or package_id(request, [by_id[i] for i in result.selected]) != result.package_id:
            raise RenderError(
                "RENDER_RESULT_MISMATCH",
                "the result's package_id is not that of its selection under this request",
                items=tuple(unknown),
            )
    blocks = layout(request, result.selected, headers)
    body = body_of(blocks, fmt, placed=request.cache is not None)
    body_text, breakpoints = body.json, body.breakpoints
    text = "".join(block.text for block in blocks)
    if counter is None:
        located = Later(partial(_located, blocks, request.digests, None))
        items, envelope = later(lambda: located.get()[0]), later(lambda: located.get()[1])
        envelope_tokens = total_tokens = None
    else:
        items, envelope, envelope_tokens = _located(blocks, request.digests, counter)
        total_tokens = counter.count(text)
    manifest = Manifest(
        render_version=RENDER_VERSION,
        format=fmt,
        package_id=result.package_id,
        trace_id=result.trace_id,
        items=items,
        envelope=envelope,
        breakpoints=breakpoints,
        rendered_sha256=later(partial(_sha256, text)),
        request_body_sha256=later(partial(_sha256, body_text)),
        costs="counted" if counted else "declared",
        counter_name=None if counter is None else counter.name,
        counter_version=None if counter is None else counter.version,
        budget=request.task.budget if budget is None else budget,
        total_tokens=total_tokens,
        envelope_tokens=envelope_tokens,
        headers=headers,
    )
    return Rendering(fmt, text, body_text, manifest, later(body.value))


def _located(
    blocks: tuple[Block, ...],
    digests: dict[int, tuple[str, str, int]],
    counter: Counter | None,
) -> tuple[tuple[ManifestItem, ...], tuple[tuple[str, int, int], ...], int]:
    """Each item's place, hash and tokens (its declared cost without a counter), the
    envelope's parts, and the envelope's tokens (0 without a counter)."""
    items: list[ManifestItem] = []
    envelope: list[tuple[str, int, int]] = []
    envelope_tokens = 0
    offset = 0
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
    return tuple(items), tuple(envelope), envelope_tokens
