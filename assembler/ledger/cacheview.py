"""What a cache-aware compilation kept of the previous call, and where it stopped.

Input: a request (its JSON dict, with a ``cache`` section: ``models/README.md`` 6b) and
its result (``Result.to_dict()``), as a ledger records them.
Output: a ``CacheView``: the provider, the previous blocks kept of those listed,
whether it appends, the tokens read, written and sent uncached, the price of this
call, the cache-blind optimum's value and price and the value given up for the
difference (from the result's ``cache`` record; a baseline's record has no blind
figures), whether the previous call's entries still lived, and the first divergence:
the first previous block not kept, and why (``DivergenceReason``). None without a cache
section or a bundle.

The reasons, checked in this order for that block: ``not-offered`` (no candidate has
its id now; for the instruction, the task has none), ``not-eligible`` (its candidate is
rejected by a gate), ``content-changed`` (its content or form differs: it cannot be
sent byte for byte), ``not-selected`` (eligible, unchanged, left out of the bundle),
``layout-order`` (selected, but the layout cannot keep it there: a selected form that
must come before it, a new instruction opening the system prompt, or the previous call's
own order). A record without its figures (a baseline that prices nothing) is priced
here by the rules the decision uses (``cache.prefix``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..cache.prefix import build_prefix
from ..model.cache import MICRO
from ..model.parse import parse_request
from ..model.types import Reason, Request

__all__ = ["CacheView", "Divergence", "DivergenceReason", "cache_view", "tokens"]


class DivergenceReason(StrEnum):
    NOT_OFFERED = "not-offered"
    NOT_ELIGIBLE = "not-eligible"
    CONTENT_CHANGED = "content-changed"
    NOT_SELECTED = "not-selected"
    LAYOUT_ORDER = "layout-order"


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first previous block not kept: its index in ``cache.previous.blocks``, its
    candidate id (None: the task's instruction), why, and a sentence saying so."""

    index: int
    block: str | None
    reason: DivergenceReason
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "block": self.block,
            "reason": self.reason.value,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class CacheView:
    provider: str
    previous: int
    kept: int
    appended: bool
    read: int
    written: int
    uncached: int
    # millionths of a token at the base input price
    price_micro: int
    blind_price_micro: int | None
    blind_value: int | None
    value_given_up: int | None
    # whether the previous call's entries lived at this call's time
    alive: bool
    divergence: Divergence | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "previous": self.previous,
            "kept": self.kept,
            "appended": self.appended,
            "read_tokens": self.read,
            "written_tokens": self.written,
            "uncached_tokens": self.uncached,
            "price": self.price_micro / MICRO,
            "blind_price": None
            if self.blind_price_micro is None
            else self.blind_price_micro / MICRO,
            "blind_value": self.blind_value,
            "value_given_up": self.value_given_up,
            "alive": self.alive,
            "first_divergence": None if self.divergence is None else self.divergence.to_dict(),
        }

    def lines(self) -> list[str]:
        """The view as the lines ``ledger show``, ``ledger diff`` and the inspector's
        report print."""
        out = [
            f"cache ({self.provider}): kept {self.kept} of {self.previous} previous blocks"
            + (" (appends)" if self.appended else "")
            + f"; {self.read} tokens read, {self.written} written, {self.uncached} uncached"
            + ("" if self.alive else " (the previous call's entries had expired)")
        ]
        price = f"price {tokens(self.price_micro)}"
        if self.blind_price_micro is not None:
            price += (
                f" against the cache-blind optimum's {tokens(self.blind_price_micro)}"
                f" (value {self.blind_value}); value given up {self.value_given_up}"
            )
        out.append(price + " (tokens at the base input price)")
        if self.divergence is None:
            out.append("first divergence: none (every previous block is kept)")
        else:
            d = self.divergence
            out.append(f"first divergence: block {d.index}, {d.reason.value}: {d.detail}")
        return out


def tokens(micro: int) -> str:
    """A price in millionths as tokens at the base input price (``1580``, ``1613.2``)."""
    return f"{micro / MICRO:.6f}".rstrip("0").rstrip(".")


def cache_view(
    request: Mapping[str, Any] | Request | None, result: Mapping[str, Any] | None
) -> CacheView | None:
    """The view of one compilation (None without a cache section or a bundle)."""
    if request is None or result is None or result.get("status") != "bundle":
        return None
    parsed = request if isinstance(request, Request) else parse_request(request)
    cache = parsed.cache
    if cache is None:
        return None
    selected = tuple(result.get("selected", ()))
    record = result.get("cache")
    if not isinstance(record, Mapping):
        record = _priced(parsed, selected)
    kept = int(record["kept"])
    return CacheView(
        provider=cache.provider.value,
        previous=len(cache.previous),
        kept=kept,
        appended=bool(record["appended"]),
        read=int(record["read_tokens"]),
        written=int(record["written_tokens"]),
        uncached=int(record["uncached_tokens"]),
        price_micro=int(record["price_micro"]),
        blind_price_micro=record.get("blind_price_micro"),
        blind_value=record.get("blind_value"),
        value_given_up=record.get("value_given_up"),
        alive=cache.alive,
        divergence=_divergence(parsed, result, selected, kept),
    )


def _priced(request: Request, selected: tuple[str, ...]) -> dict[str, Any]:
    forms = sorted(selected)
    by_id = {c.id: c for c in request.candidates}
    prefix = build_prefix(request, forms, [by_id[i].cost for i in forms])
    assert prefix is not None
    price = prefix.price(tuple(range(len(forms))))
    return {
        "kept": price.kept,
        "appended": prefix.complete and price.kept == prefix.size,
        "read_tokens": price.read,
        "written_tokens": price.written,
        "uncached_tokens": price.uncached,
        "price_micro": price.price,
    }


_GATES = frozenset(r.value for r in Reason if r.is_gate)


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _divergence(
    request: Request, result: Mapping[str, Any], selected: tuple[str, ...], kept: int
) -> Divergence | None:
    cache = request.cache
    assert cache is not None
    if kept >= len(cache.previous):
        return None
    block = cache.previous[kept]
    why = DivergenceReason
    if block.id is None:
        instruction = request.task.instruction
        if instruction is None:
            return Divergence(kept, None, why.NOT_OFFERED, "the task has no instruction now")
        if _sha(instruction) != block.content_sha256:
            return Divergence(kept, None, why.CONTENT_CHANGED, "the task's instruction changed")
        return Divergence(kept, None, why.LAYOUT_ORDER, _order(request, selected, kept))
    name = block.id
    candidate = next((c for c in request.candidates if c.id == name), None)
    if candidate is None:
        return Divergence(kept, name, why.NOT_OFFERED, f"no candidate is {name!r} now")
    decision: Mapping[str, Any] = next(
        (d for d in result.get("decisions", ()) if d.get("id") == name), {}
    )
    reason = str(decision.get("reason", ""))
    if reason in _GATES:
        return Divergence(
            kept, name, why.NOT_ELIGIBLE, f"{name!r} is rejected by the gate {reason}"
        )
    if _sha(candidate.content) != block.content_sha256:
        return Divergence(kept, name, why.CONTENT_CHANGED, f"{name!r}'s content changed")
    if block.form is not None and block.form != candidate.form:
        return Divergence(
            kept,
            name,
            why.CONTENT_CHANGED,
            f"{name!r} is form {candidate.form!r}, was {block.form!r}",
        )
    if name not in selected:
        told = _left_out(request, candidate.identity, selected, reason)
        return Divergence(kept, name, why.NOT_SELECTED, f"{name!r} is not selected: {told}")
    return Divergence(kept, name, why.LAYOUT_ORDER, _order(request, selected, kept))


def _left_out(request: Request, identity: str, selected: tuple[str, ...], reason: str) -> str:
    chosen = set(selected)
    other = next(
        (c.id for c in request.candidates if c.identity == identity and c.id in chosen), None
    )
    if other is not None:
        return f"another form of its identity, {other!r}, is admitted"
    return "the bundle leaves its identity out" if reason != "refused" else "no bundle"


def _order(request: Request, selected: tuple[str, ...], kept: int) -> str:
    """Why a selected, unchanged block cannot be kept at ``kept``: the selected forms
    whose place comes before it, else the run's own end."""
    forms = sorted(selected)
    by_id = {c.id: c for c in request.candidates}
    prefix = build_prefix(request, forms, [by_id[i].cost for i in forms])
    assert prefix is not None
    before = sorted(forms[f] for f, at in prefix.barriers.items() if at <= kept)
    if before:
        shown = ", ".join(repr(f) for f in before[:3]) + (" ..." if len(before) > 3 else "")
        return f"the layout puts {shown} before it (the provider's order)"
    if request.task.instruction is not None and all(f is not None for f in prefix.forms):
        return "a task instruction the previous call did not send opens the system prompt"
    return "the previous call sent it out of the layout's order"
