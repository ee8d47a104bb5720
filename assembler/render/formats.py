"""Formats: the blocks of a layout become the text itself, or a provider API's body.

Input: the ``Block`` tuple of a layout, a ``RenderFormat`` and whether a cache-aware
layout placed the breakpoints.
Output: a ``Body`` (``providers/interface.py``): the body's canonical JSON (``text``:
the rendered text as a JSON string), its cache breakpoints (byte offsets into the
rendered text) and its value made on demand; or ``RenderError`` before anything is
returned: ``RENDER_EMPTY`` when there is nothing to send (no item but tool definitions,
no instruction or query), in every format, and ``RENDER_PROVIDER_RULE`` naming the rule
and the items when the body breaks its provider's rules.

Each provider API's body is built, checked and counted in its own room
(``assembler.providers.<name>``, found by ``providers.registry.api_for``); in every
format the body's texts, read in the provider's order, concatenate to the rendered
text: the body is bound to the same bytes.
"""

from __future__ import annotations

from ..errors import RenderError
from ..model.rendering import RenderFormat
from ..providers.interface import Body
from ..providers.pieces import checked_calls
from ..providers.registry import api_for
from ..stages.identities import canonical_json
from .layout import Block

__all__ = ["body_of"]


def body_of(blocks: tuple[Block, ...], fmt: RenderFormat, *, placed: bool = False) -> Body:
    """The body of ``blocks`` in ``fmt``: breakpoints at the ends of the sections, or
    with ``placed`` (a cache-aware layout) exactly where the blocks say (none when the
    provider caches by itself)."""
    if all(b.kind == "tool_definition" for b in blocks):
        raise RenderError(
            "RENDER_EMPTY",
            "the bundle renders to no message (no item but tool definitions, no instruction"
            " or query): there is nothing to send",
        )
    if fmt is RenderFormat.TEXT:
        text = "".join(b.text for b in blocks)
        return Body(canonical_json(text), (), lambda: text)
    checked_calls(blocks)
    return api_for(fmt).build(blocks, placed=placed)
