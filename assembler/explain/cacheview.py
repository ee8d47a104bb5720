"""The page's and the report's cache section: what the provider holds, kept and read.

Input: the compilation's ``CacheView`` (``assembler.ledger.cacheview``), or None.
Output: the HTML section (empty without a cache section) and the report's lines: the
previous blocks kept of those the previous call sent, the tokens read, written and sent
uncached, the price of this call against the cache-blind optimum's, the value given up,
whether the previous entries still lived, and the first divergence (the first previous
block not kept, and why). Prices are tokens at the base input price.
"""

from __future__ import annotations

from ..ledger.cacheview import CacheView, tokens
from .figures import VALUE_UNIT
from .markup import e, figure

__all__ = ["cache_lines", "cache_section"]

_PRICE_UNIT = "base-price tokens"


def cache_lines(view: CacheView | None) -> list[str]:
    """The report's lines (nothing without a cache section)."""
    return [] if view is None else [*view.lines(), ""]


def cache_section(view: CacheView | None) -> str:
    if view is None:
        return ""
    figures = [
        figure("cache-kept", "Previous blocks kept", f"{view.kept} of {view.previous}", ""),
        figure("cache-read", "Tokens read", view.read, "tokens"),
        figure("cache-written", "Tokens written", view.written, "tokens"),
        figure("cache-uncached", "Tokens uncached", view.uncached, "tokens"),
        figure("cache-price", "Price", tokens(view.price_micro), _PRICE_UNIT),
    ]
    if view.blind_price_micro is not None:
        figures.append(
            figure(
                "blind-price",
                "Cache-blind optimum's price",
                tokens(view.blind_price_micro),
                _PRICE_UNIT,
            )
        )
        figures.append(figure("value-given-up", "Value given up", view.value_given_up, VALUE_UNIT))
    d = view.divergence
    if d is None:
        divergence = "none: every previous block is kept, and this call appends to it"
    else:
        figures.append(
            figure("first-divergence", "First divergence", f"block {d.index}", d.reason.value)
        )
        divergence = f"block {d.index} ({d.reason.value}): {d.detail}"
    blind = (
        ""
        if view.blind_price_micro is None
        else f" The cache-blind optimum (value {view.blind_value}) would cost"
        f" {tokens(view.blind_price_micro)}: {view.value_given_up} value points are given up"
        " for the difference, within the request's tolerance."
    )
    alive = "" if view.alive else " The previous call's entries had expired: nothing is read."
    return (
        '<section id="cache" aria-labelledby="h-cache">'
        f'<h2 id="h-cache">Cache ({e(view.provider)})</h2>'
        f'<p class="why">What the provider holds from the previous call, as the request'
        f" states it: {view.previous} blocks. This call keeps {view.kept} of them as its"
        f" prefix; its price counts each token read, written or sent uncached at the"
        f" provider's rates, in tokens at the base input price.{e(blind)}{e(alive)}</p>"
        f'<dl class="figures">{"".join(figures)}</dl>'
        f"<p>First divergence: {e(divergence)}.</p>"
        "</section>"
    )
