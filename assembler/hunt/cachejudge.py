"""Judging a cache-aware answer: the tested bundle's price and value against exact's.

Input: a request with a ``cache`` section (``models/README.md`` 6b), the exact answer
(a ``Result`` proven optimal under the cache-aware order, with its ``cache`` record)
and a tested bundle (any strategy's, legal by the verifier).
Output: ``price_of`` (the price of any selection under the request's cache: kept
blocks, tokens read, written and uncached, whether it appends), ``CacheVerdict`` (the
tested bundle's place against the exact answer: priced higher, cheaper but outside the
tolerance the exact answer was held to, or as cheap and worth less); the hunt's judge
(``judge.py``) and the corpus table (``conformance``) read them.

The exact answer is the least-price selection of the feasible set (a value floor, and
either keeping every previous block or a rewrite within the rewrite budget), then
section 6's order. So a legal tested bundle is, against it: *outside the tolerance*
when it is not feasible by the exact answer's own terms (its record's floor and
rewrite budget); else *priced higher*, or at the same price *worth less* or *dearer*
(more tokens at the same value); a feasible bundle that is cheaper, or as cheap and
better by section 6, means the exact answer is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..cache.prefix import build_prefix
from ..model.cache import MICRO
from ..model.parse import parse_request
from ..model.types import Request, Result

__all__ = ["CacheVerdict", "Priced", "cache_verdict", "price_of", "simulated_read", "tokens"]


@dataclass(frozen=True, slots=True)
class Priced:
    """A selection's place in the provider's cache (``cache.prefix.Price``'s figures
    and whether every previous block is kept)."""

    kept: int
    read: int
    written: int
    uncached: int
    # millionths of a token at the base input price
    price: int
    appended: bool


def price_of(request: Mapping[str, Any] | Request, selected: tuple[str, ...]) -> Priced | None:
    """The price of sending ``selected`` under the request's cache section (None
    without one); the same rules as the cache-aware decision (``cache.prefix``)."""
    parsed = request if isinstance(request, Request) else parse_request(request)
    forms = sorted(selected)
    by_id = {c.id: c for c in parsed.candidates}
    prefix = build_prefix(parsed, forms, [by_id[i].cost for i in forms])
    if prefix is None:
        return None
    price = prefix.price(tuple(range(len(forms))))
    appended = prefix.complete and price.kept == prefix.size
    return Priced(price.kept, price.read, price.written, price.uncached, price.price, appended)


@dataclass(frozen=True, slots=True)
class CacheVerdict:
    """A legal tested bundle against the exact cache-aware answer: its price, how much
    dearer it is (negative: cheaper), how much less it is worth, and whether it lies in
    the feasible set the exact answer was held to."""

    price: int
    exact_price: int
    value_lost: int
    feasible: bool

    @property
    def price_over(self) -> int:
        return self.price - self.exact_price

    @property
    def priced_higher(self) -> bool:
        return self.price > self.exact_price


def cache_verdict(
    request: Mapping[str, Any] | Request, exact: Result, tested: Result
) -> CacheVerdict | None:
    """``tested``'s verdict against ``exact`` (both bundles of a cache request; None
    when the exact answer has no cache record)."""
    record = exact.to_dict().get("cache")
    priced = price_of(request, tuple(tested.selected))
    if record is None or priced is None or record.get("rewrite_floor") is None:
        return None
    floor = int(record["rewrite_floor"])
    appends = priced.appended and record.get("append_floor") is not None
    within = tested.value >= floor and (appends or tested.cost <= int(record["rewrite_budget"]))
    return CacheVerdict(
        price=priced.price,
        exact_price=int(record["price_micro"]),
        value_lost=exact.value - tested.value,
        feasible=within,
    )


def simulated_read(request: Mapping[str, Any] | Request, result: Result) -> int | None:
    """The tokens the cache simulator (``assembler.cache.simulator``, code the decision
    does not share) reads for ``result``'s body after the previous call's blocks, under
    the request's own cache figures; None when there is nothing to replay (no
    rendering, or no previous blocks). Blocks are keyed by item and content, so any
    format compares; the instruction counts the tokens the section gives it."""
    from ..cache.simulator import CacheBlock, CacheSimulator, Call
    from ..facts import CacheMode, TtlRule, cache_rules

    parsed = request if isinstance(request, Request) else parse_request(request)
    cache = parsed.cache
    rendering = result.rendering
    if cache is None or rendering is None or not cache.previous:
        return None
    # the instruction's tokens are the section's (a rendering lists it at 0)
    listed = next((b.tokens for b in cache.previous if b.id is None), 0)
    instruction = cache.instruction_tokens if cache.instruction_tokens is not None else listed
    rules = cache_rules(cache.provider.value, cache.model)
    # the request's figures over the table's: what the decision priced with
    rules = replace(
        rules,
        mode=CacheMode.BREAKPOINTS if cache.breakpoints else CacheMode.AUTOMATIC,
        min_prefix_tokens=cache.min_prefix_tokens,
        step_tokens=cache.step_tokens,
        read=cache.pricing.read / MICRO,
        ttls=(TtlRule("request", cache.ttl, cache.pricing.write / MICRO),),
        bills_writes=cache.writes,
        breakpoints=cache.breakpoints or rules.breakpoints,
        lookback=cache.lookback or None,
    )

    def blocks(listed: Any) -> tuple[CacheBlock, ...]:
        return tuple(
            CacheBlock(f"{b.get('id')}:{b['content_sha256']}",
                       instruction if b.get("id") is None else int(b["tokens"]),
                       cache.ttl if b.get("breakpoint") and cache.breakpoints else None)
            for b in listed
        )  # fmt: skip

    before = [{"id": b.id, "form": b.form, "content_sha256": b.content_sha256,
               "tokens": b.tokens, "breakpoint": b.breakpoint} for b in cache.previous]  # fmt: skip
    now = cache.now if cache.now is not None else 1.0
    at = cache.previous_at if cache.previous_at is not None else now - 1.0
    if not cache.alive:
        at = now - cache.ttl  # expired: an entry of exactly its lifetime is dead
    simulator = CacheSimulator(rules)
    simulator.call(Call(min(at, now), blocks(before)))
    sent = rendering.manifest.cache_blocks(rendering.text)
    return simulator.call(Call(now, blocks(sent))).read


def tokens(micro: int) -> str:
    """A price in millionths as tokens at the base input price (``1580``, ``1613.2``)."""
    return f"{micro / MICRO:.6f}".rstrip("0").rstrip(".")
