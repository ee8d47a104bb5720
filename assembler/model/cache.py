"""What the provider holds: a request's ``cache`` section, its defaults and its arithmetic.

Input: the ``cache`` object of a request (parsed JSON), the ``Limits``.
Output: a ``Cache`` (frozen) with every default filled in from the provider's table,
or ``InvalidRequest`` naming the field (``cache.pricing.read``,
``cache.previous.blocks[3].tokens``); and the exact integers the objective uses:
multipliers in millionths of the base input price (``Cache.rates``), the value
thresholds of the tolerance and the budget left by the headroom.

Every default comes from the provider's rules (``providers.cache_rules``, each figure
with its source in ``models/cache-providers.md``) for the ``model`` named (the
provider's default family without one). A request may set every one of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from typing import Any

from ..facts import CacheMode, Provider, cache_rules, providers_listed
from .errors import UnknownCacheModel
from .limits import Limits
from .numbers import is_number
from .rules import (
    MAX_INTEGER,
    REQUEST_FIELDS,
    Place,
    enum_rule,
    flag,
    integer,
    kind,
    mapping,
    name,
    shown,
    unit_number,
    unknown_field,
)

__all__ = [
    "MICRO",
    "Cache",
    "CacheOutcome",
    "CacheTerms",
    "PreviousBlock",
    "Pricing",
    "cache_identity",
    "cache_json",
    "parse_cache",
]

# multipliers are kept in millionths of the base input price: exact integers
MICRO = 1_000_000
_SHA = frozenset("0123456789abcdef")
_MAX_MULTIPLIER = Decimal(100)


@dataclass(frozen=True, slots=True)
class Pricing:
    """Multipliers of the base input price per token, in millionths: a token sent
    uncached costs ``input``, one read from the cache ``read``, one written ``write``."""

    input: int
    read: int
    write: int


@dataclass(frozen=True, slots=True)
class PreviousBlock:
    """One block the previous call sent, in order: an item (its candidate ``id`` and
    ``form``) or the task's instruction (``id`` None); the sha256 of its content, its
    tokens, and whether a cache breakpoint ended it."""

    id: str | None
    form: str | None
    content_sha256: str
    tokens: int
    breakpoint: bool = False


@dataclass(frozen=True, slots=True)
class Cache:
    """A request's ``cache`` section, defaults filled in (``models/README.md`` 6b)."""

    provider: Provider
    model: str | None
    ttl: int
    pricing: Pricing
    # whether tokens past the entry read are billed as written (else as plain input)
    writes: bool
    min_prefix_tokens: int
    step_tokens: int
    breakpoints: int
    lookback: int
    tolerance: float
    headroom: float
    now: float | None
    previous_at: float | None
    previous: tuple[PreviousBlock, ...]
    # tokens of this call's instruction; None: the previous call's, if unchanged
    instruction_tokens: int | None

    @property
    def alive(self) -> bool:
        """Whether the previous call's entries are still held at ``now`` (unknown times
        count as held: a call right after the previous one)."""
        if self.now is None or self.previous_at is None:
            return True
        return 0 <= self.now - self.previous_at <= self.ttl

    def value_floor(self, optimum: int) -> int:
        """The least value within the tolerance of ``optimum``: ceil((1 - tol) V*)."""
        exact = (1 - Decimal(repr(self.tolerance))) * optimum
        return int(exact.to_integral_value(rounding=ROUND_CEILING))

    def rewrite_budget(self, budget: int) -> int:
        """The budget a rewrite fills: ``budget - ceil(headroom * budget)``."""
        room = (Decimal(repr(self.headroom)) * budget).to_integral_value(rounding=ROUND_CEILING)
        return budget - int(room)


_KEYS = {
    "provider",
    "model",
    "ttl",
    "pricing",
    "min_prefix_tokens",
    "step_tokens",
    "breakpoints",
    "lookback",
    "tolerance",
    "headroom",
    "now",
    "previous",
    "instruction_tokens",
}
_BLOCK_KEYS = {"id", "part", "form", "content_sha256", "tokens", "breakpoint"}
_PROVIDER = enum_rule(Provider)


def parse_cache(raw: Any, limits: Limits) -> Cache:
    """The ``cache`` section by the model's rules, every default filled in."""
    record = mapping(raw, Place("$"), "cache")
    place = Place("cache")
    for key in record:
        if key not in _KEYS:
            unknown_field(place, key, _KEYS, REQUEST_FIELDS)
    if "provider" not in record:
        place.fail("provider", f"is required ({providers_listed()})")
    provider: Provider = _PROVIDER(record["provider"], place, "provider", limits)
    model = None if "model" not in record else name(record["model"], place, "model", limits)
    try:
        rules = cache_rules(provider.value, model)
    except UnknownCacheModel as error:
        place.fail("model", str(error))
    ttl = _positive(record, place, "ttl", rules.default_ttl.seconds, limits)
    try:
        lifetime = rules.ttl(ttl)
    except UnknownCacheModel as error:
        place.fail("ttl", str(error))
    default = Pricing(
        MICRO, _micro(rules.read), _micro(lifetime.write) if rules.bills_writes else MICRO
    )
    pricing = _pricing(record, place, default)
    if pricing.read > min(pricing.input, pricing.write):
        place.fail("pricing", "a read must cost no more than an input or a write")
    breakpoints = rules.breakpoints if rules.mode is CacheMode.BREAKPOINTS else 0
    previous_at, blocks = _previous(record.get("previous"), limits)
    tolerance = _unit(record, place, "tolerance", 0.05, limits)
    headroom = _unit(record, place, "headroom", 0.25, limits)
    if headroom >= 1:
        place.fail("headroom", "must be below 1 (a rewrite must leave some budget)")
    return Cache(
        provider=provider,
        model=model,
        ttl=ttl,
        pricing=pricing,
        writes=rules.bills_writes,
        min_prefix_tokens=_count(
            record, place, "min_prefix_tokens", rules.min_prefix_tokens, limits
        ),
        step_tokens=_positive(record, place, "step_tokens", rules.step_tokens, limits),
        breakpoints=_breakpoints(record, place, breakpoints, limits),
        lookback=_count(record, place, "lookback", rules.lookback or 0, limits),
        tolerance=tolerance,
        headroom=headroom,
        now=_seconds(record, place, "now"),
        previous_at=previous_at,
        previous=blocks,
        instruction_tokens=(
            None
            if "instruction_tokens" not in record
            else integer(record["instruction_tokens"], place, "instruction_tokens", limits)
        ),
    )


def _micro(multiplier: float) -> int:
    return int(Decimal(repr(multiplier)) * MICRO)


def _breakpoints(record: Mapping[Any, Any], place: Place, default: int, limits: Limits) -> int:
    # with one breakpoint, an entry read could lie past the lookback of the one placed
    # at the end: the model places one at the entry read and one at the end
    value = _count(record, place, "breakpoints", default, limits)
    if value == 1:
        place.fail("breakpoints", "must be 0 (the provider caches by itself) or at least 2")
    return value


def _count(record: Mapping[Any, Any], place: Place, key: str, default: int, limits: Limits) -> int:
    return default if key not in record else integer(record[key], place, key, limits)


def _positive(
    record: Mapping[Any, Any], place: Place, key: str, default: int, limits: Limits
) -> int:
    value = _count(record, place, key, default, limits)
    if value < 1:
        place.fail(key, f"must be at least 1, not {value}")
    return value


def _unit(
    record: Mapping[Any, Any], place: Place, key: str, default: float, limits: Limits
) -> float:
    return default if key not in record else unit_number(record[key], place, key, limits)


def _seconds(record: Mapping[Any, Any], place: Place, key: str) -> float | None:
    if key not in record:
        return None
    value = record[key]
    if not is_number(value):
        place.fail(key, f"must be a number of seconds, not {kind(value)}")
    if not math.isfinite(value) or value < 0:
        place.fail(key, f"must be a finite number of seconds >= 0, not {shown(value)}")
    return float(value)


def _pricing(record: Mapping[Any, Any], place: Place, default: Pricing) -> Pricing:
    if "pricing" not in record:
        return default
    given = mapping(record["pricing"], place, "pricing")
    inner = place.inner("pricing")
    values = {"input": default.input, "read": default.read, "write": default.write}
    for key, value in given.items():
        if key not in values:
            unknown_field(inner, key, ("input", "read", "write"), "input, read or write")
        if not is_number(value) or not math.isfinite(value):
            inner.fail(key, f"must be a finite number, not {kind(value)}")
        exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if (
            not 0 <= exact <= _MAX_MULTIPLIER
            or (exact * MICRO) != (exact * MICRO).to_integral_value()
        ):
            inner.fail(
                key,
                f"must be a multiplier from 0 to 100 with at most 6 decimals, not {shown(value)}",
            )
        values[key] = int(exact * MICRO)
    return Pricing(**values)


def _previous(raw: Any, limits: Limits) -> tuple[float | None, tuple[PreviousBlock, ...]]:
    if raw is None:
        return None, ()
    record = mapping(raw, Place("cache"), "previous")
    place = Place("cache.previous")
    for key in record:
        if key not in ("at", "blocks"):
            unknown_field(place, key, ("at", "blocks"), "at or blocks")
    at = _seconds(record, place, "at")
    listed = record.get("blocks", [])
    if not isinstance(listed, list):
        place.fail("blocks", f"must be a list, not {kind(listed)}")
    blocks = tuple(_block(item, index, limits) for index, item in enumerate(listed))
    total = sum(b.tokens for b in blocks)
    if total > MAX_INTEGER:
        place.fail("blocks", f"their tokens add up to {total}, above {MAX_INTEGER}")
    if sum(b.id is None for b in blocks) > 1:
        place.fail("blocks", "lists the instruction twice (a rendering sends it once)")
    return at, blocks


def _block(raw: Any, index: int, limits: Limits) -> PreviousBlock:
    place = Place("cache.previous.blocks", index)
    record = mapping(raw, Place("cache.previous.blocks"), index)
    for key in record:
        if key not in _BLOCK_KEYS:
            unknown_field(place, key, _BLOCK_KEYS, ", ".join(sorted(_BLOCK_KEYS)))
    part = record.get("part", "item")
    if part not in ("item", "instruction"):
        place.fail("part", f"must be 'item' or 'instruction', not {shown(part)}")
    block_id = None
    if part == "item":
        if "id" not in record:
            place.fail("id", "is required for an item")
        block_id = name(record["id"], place, "id", limits)
        place.candidate = block_id
    elif "id" in record:
        place.fail("id", "an instruction block has no id")
    digest = record.get("content_sha256")
    if not isinstance(digest, str) or len(digest) != 64 or not _SHA.issuperset(digest):
        place.fail("content_sha256", "must be 64 lowercase hexadecimal digits")
    if "tokens" not in record:
        place.fail("tokens", "is required")
    return PreviousBlock(
        id=block_id,
        form=None if "form" not in record else name(record["form"], place, "form", limits),
        content_sha256=digest,
        tokens=integer(record["tokens"], place, "tokens", limits),
        breakpoint=False
        if "breakpoint" not in record
        else flag(record["breakpoint"], place, "breakpoint", limits),
    )


def cache_json(cache: Cache) -> dict[str, Any]:
    """The section as JSON, every default written out: what a request carries to get
    this ``Cache`` back (and what ``package_id`` hashes)."""
    out: dict[str, Any] = {
        "provider": cache.provider.value,
        "ttl": cache.ttl,
        "pricing": {
            "input": _multiplier(cache.pricing.input),
            "read": _multiplier(cache.pricing.read),
            "write": _multiplier(cache.pricing.write),
        },
        "min_prefix_tokens": cache.min_prefix_tokens,
        "step_tokens": cache.step_tokens,
        "breakpoints": cache.breakpoints,
        "lookback": cache.lookback,
        "tolerance": cache.tolerance,
        "headroom": cache.headroom,
    }
    if cache.model is not None:
        out["model"] = cache.model
    if cache.now is not None:
        out["now"] = cache.now
    if cache.instruction_tokens is not None:
        out["instruction_tokens"] = cache.instruction_tokens
    if cache.previous or cache.previous_at is not None:
        previous: dict[str, Any] = {"blocks": [_block_json(b) for b in cache.previous]}
        if cache.previous_at is not None:
            previous["at"] = cache.previous_at
        out["previous"] = previous
    return out


def cache_identity(cache: Cache) -> dict[str, Any]:
    """What ``package_id`` hashes of the section: its JSON with the two times replaced
    by whether the previous call's entries live (the answer reads them no other way)."""
    out = cache_json(cache)
    out.pop("now", None)
    if "previous" in out:
        out["previous"].pop("at", None)
    out["alive"] = cache.alive
    return out


def _multiplier(micro: int) -> int | float:
    return micro // MICRO if micro % MICRO == 0 else micro / MICRO


def _block_json(block: PreviousBlock) -> dict[str, Any]:
    out: dict[str, Any] = {"part": "instruction"} if block.id is None else {"id": block.id}
    if block.form is not None:
        out["form"] = block.form
    out["content_sha256"] = block.content_sha256
    out["tokens"] = block.tokens
    if block.breakpoint:
        out["breakpoint"] = True
    return out


@dataclass(frozen=True, slots=True)
class CacheTerms:
    """The feasible set of the cache-aware order: the value floor of a selection that
    keeps every previous block (None: no selection can), and the budget and value
    floor of one that does not (section 6b)."""

    append_floor: int | None
    rewrite_budget: int
    rewrite_floor: int


@dataclass(frozen=True, slots=True)
class CacheOutcome:
    """What a cache-aware decision decided beside the selection: the terms it was held
    to, the cache-blind optimum's value and price, and for the selection the previous
    blocks kept as a prefix (of ``previous``), the tokens read, written and sent
    uncached, the price (millionths of a token at the base input price), and a proven
    lower bound on the price when the search stopped before proving it."""

    # the order's terms and the cache-blind optimum (None: a baseline that claims no
    # place in the cache-aware order, only its prefix and price)
    terms: CacheTerms | None
    blind_value: int | None
    blind_price: int | None
    kept: int
    previous: int
    read: int
    written: int
    uncached: int
    price: int
    price_floor: int | None
    # whether every previous block is kept (the bundle appends to the last call's)
    appended: bool
    # the previous block whose cache entry is read (None: nothing is read)
    entry: int | None

    def to_dict(self, value: int) -> dict[str, Any]:
        """The JSON of ``Result.cache``; ``value`` is the bundle's."""
        return {
            "kept": self.kept,
            "previous": self.previous,
            "appended": self.appended,
            "entry": self.entry,
            "read_tokens": self.read,
            "written_tokens": self.written,
            "uncached_tokens": self.uncached,
            "price": self.price / MICRO,
            "price_micro": self.price,
            "price_floor_micro": self.price_floor,
            "blind_value": self.blind_value,
            "blind_price": None if self.blind_price is None else self.blind_price / MICRO,
            "blind_price_micro": self.blind_price,
            "value_given_up": None if self.blind_value is None else self.blind_value - value,
            "append_floor": None if self.terms is None else self.terms.append_floor,
            "rewrite_budget": None if self.terms is None else self.terms.rewrite_budget,
            "rewrite_floor": None if self.terms is None else self.terms.rewrite_floor,
        }
