"""Rendering: a bundle becomes the exact model input, bound to the selection.

Input: a request, a bundle ``Result`` of it, a format (a ``RenderFormat``: the text
itself, or one provider API's body) and an optional token counter.
Output: a ``Rendering`` (``assembler.model.rendering``): the rendered text, the
provider body and the manifest; or ``RenderError`` before anything is returned.

One module per concern: ``layout`` (canonical order and framing), ``formats`` (the
text, or the body its provider's room builds: ``assembler.providers``), ``counters``
and ``encodings`` (text -> tokens), ``meters`` (a counter by name, a model's meter),
``manifest`` (offsets and hashes), ``budget`` (counted costs: the whole rendered text
fits the budget). Its judge is ``assembler.verifiers.rendering``, which imports none of
this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model.parse import parse_request
from ..model.rendering import RenderFormat, Rendering
from ..model.types import Request, Result
from .budget import priced_request
from .counters import Counter, TiktokenCounter, TokenizersCounter, Utf8Bytes
from .manifest import build_rendering, render_format

__all__ = [
    "Counter",
    "TiktokenCounter",
    "TokenizersCounter",
    "Utf8Bytes",
    "priced_request",
    "render_bundle",
    "render_format",
]


def render_bundle(
    request: Mapping[str, Any] | Request,
    result: Result,
    *,
    format: str | RenderFormat = RenderFormat.TEXT,
    counter: Counter | None = None,
) -> Rendering:
    """Render ``result``'s bundle of ``request``. With ``counter`` each item's ``tokens``
    and the total are counted; the budget guarantee needs ``assemble(render=...,
    counter=...)``, which prices the forms before solving."""
    return build_rendering(parse_request(request), result, render_format(format), counter)
