"""What a provider billed for a sent body, against what was predicted for it.

Input: a provider's ``usage`` (an SDK response's ``usage`` or ``usage_metadata``, or
its dict), in any of the shapes the providers' data files name (the fields that tell
the shape, and those of its input, read and written tokens:
``assembler/facts/<provider>.json``, ``usage``); LangChain's ``usage_metadata``
(``input_tokens``, ``input_token_details.cache_read`` / ``cache_creation``).
Output: ``BilledUsage`` (the input tokens billed, of them read from the cache and
written to it); ``sent_blocks`` (the blocks a rendering sent, as the ledger keeps them);
``replay`` (the simulator's read and written tokens for a session of sent bodies);
``divergence`` (the first block where a body's bytes differ from the previous one's);
``record_result_usage`` (one ``usage_reported`` event for a ``Result``'s body, through
any recorder with ``record_usage``: ``assembler.Ledger`` on any store).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..facts import CacheRules, Provider, provider_facts
from ..model.errors import InvalidRequest
from ..model.numbers import is_whole
from ..model.types import Result
from .simulator import CacheBlock, CacheSimulator, Call

__all__ = [
    "BilledUsage",
    "SentBlock",
    "UsageRecorder",
    "cache_record",
    "divergence",
    "parse_usage",
    "record_result_usage",
    "replay",
    "sent_blocks",
]


@dataclass(frozen=True, slots=True)
class BilledUsage:
    """Input tokens billed for one body: ``input`` in all, ``read`` of them from the
    cache, ``written`` to it (0 when the provider reports no writes)."""

    provider: str
    input: int
    read: int
    written: int

    def to_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "input": self.input, "read": self.read,
                "written": self.written}  # fmt: skip


def _get(usage: Any, *keys: str) -> Any:
    for key in keys:
        value = usage
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else getattr(value, part, None)
            if value is None:
                break
        if value is not None:
            return value
    return None


def _count(usage: Any, *keys: str) -> int:
    value = _get(usage, *keys)
    return int(value) if is_whole(value) else 0


def parse_usage(usage: Any) -> BilledUsage:
    """The billed input of ``usage``, by the first of the providers' usage shapes it has
    (their fields: ``assembler/facts/<provider>.json``), or LangChain's
    ``usage_metadata``, else its ``input_tokens``; ``InvalidRequest`` naming ``usage``
    when it reports no input at all."""
    if usage is None:
        raise InvalidRequest("usage", "is missing")
    inner = _get(usage, "usageMetadata", "usage_metadata")
    if inner is not None and not isinstance(inner, int | float | str):
        usage = inner
    for provider in Provider:
        for shape in provider_facts(provider).usage:
            if _get(usage, *shape.when) is None:
                continue
            read, written = _count(usage, *shape.read), _count(usage, *shape.written)
            total = _count(usage, *shape.input) + (read + written if shape.cache_apart else 0)
            return _checked(BilledUsage(provider.value, total, read, written))
    details = _get(usage, "input_token_details")
    if details is not None:
        # LangChain's usage_metadata: any provider's, its cache reads and writes named
        read, written = _count(details, "cache_read"), _count(details, "cache_creation")
        return _checked(BilledUsage("langchain", _count(usage, "input_tokens"), read, written))
    return _checked(BilledUsage("unknown", _count(usage, "input_tokens"), 0, 0))


def _checked(billed: BilledUsage) -> BilledUsage:
    if billed.input < 1:
        raise InvalidRequest("usage", "reports no input tokens")
    if billed.read + billed.written > billed.input:
        raise InvalidRequest(
            "usage", f"reads {billed.read} and writes {billed.written} of {billed.input} tokens"
        )
    return billed


@dataclass(frozen=True, slots=True)
class SentBlock:
    """One block of a sent body: the item (None: an envelope part), its content hash,
    its tokens, and whether a cache breakpoint ends it."""

    id: str | None
    content_sha256: str
    tokens: int
    breakpoint: bool = False

    def to_list(self) -> list[Any]:
        return [self.id, self.content_sha256, self.tokens, self.breakpoint]

    @staticmethod
    def from_list(raw: Sequence[Any]) -> SentBlock:
        return SentBlock(raw[0], str(raw[1]), int(raw[2]), bool(raw[3]))


def sent_blocks(cache_blocks: Iterable[Mapping[str, Any]]) -> tuple[SentBlock, ...]:
    """The blocks of ``Manifest.cache_blocks(...)`` as the ledger keeps them."""
    return tuple(
        SentBlock(b.get("id"), str(b["content_sha256"]), int(b["tokens"]),
                  bool(b.get("breakpoint", False)))
        for b in cache_blocks
    )  # fmt: skip


def divergence(before: Sequence[SentBlock], now: Sequence[SentBlock]) -> int | None:
    """The index of the first block of ``now`` whose bytes differ from ``before``'s
    block there (or that ``before`` lacks); None when ``now`` starts with all of
    ``before`` (an append: nothing diverged)."""
    for index, block in enumerate(now):
        if index >= len(before):
            return None
        other = before[index]
        if (other.id, other.content_sha256) != (block.id, block.content_sha256):
            return index
    return None if len(now) >= len(before) else len(now)


def replay(
    rules: CacheRules, calls: Sequence[tuple[float, Sequence[SentBlock]]], ttl: int | None = None
) -> list[tuple[int, int]]:
    """The simulator's (read, written) tokens for each sent body, in order, from an
    empty cache; a breakpoint is one of ``ttl`` seconds (default: the rules' own)."""
    simulator = CacheSimulator(rules)
    seconds = rules.ttl(ttl).seconds
    out = []
    for at, blocks in calls:
        cache_blocks = tuple(
            CacheBlock(f"{b.id}:{b.content_sha256}", b.tokens, seconds if b.breakpoint else None)
            for b in blocks
        )
        cost = simulator.call(Call(at, cache_blocks))
        out.append((cost.read, cost.written))
    return out


def cache_record(
    blocks: Sequence[SentBlock],
    billed: BilledUsage,
    *,
    provider: str | None = None,
    model: str | None = None,
    at: float | None = None,
    predicted: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """The ``cache`` part of a usage event."""
    return {
        "at": time.time() if at is None else float(at),
        "provider": provider or billed.provider,
        "model": model,
        "billed": billed.to_dict(),
        "predicted": None if predicted is None else {"read": predicted[0],
                                                     "written": predicted[1]},
        "blocks": [b.to_list() for b in blocks],
    }  # fmt: skip


class UsageRecorder(Protocol):
    """What records a usage report (``assembler.Ledger`` implements it)."""

    def record_usage(
        self,
        *,
        model: str,
        counter: str,
        counted: int,
        billed: int,
        of: int | None = None,
        cache: Mapping[str, Any] | None = None,
    ) -> None: ...


def record_result_usage(
    ledger: UsageRecorder,
    result: Result,
    usage: Any,
    *,
    model: str,
    provider: str | None = None,
    at: float | None = None,
    of: int | None = None,
) -> BilledUsage:
    """Record the provider's ``usage`` for the body ``result`` rendered, next to what
    the cache-aware decision predicted for it (``result.cache``); returns the usage."""
    rendering = result.rendering
    if rendering is None:
        raise InvalidRequest("result", "has no rendering: only a sent body has a usage")
    billed = parse_usage(usage)
    blocks = sent_blocks(rendering.manifest.cache_blocks(rendering.text))
    outcome = result.cache
    predicted = None if outcome is None else (outcome.read, outcome.written)
    record = cache_record(blocks, billed, provider=provider, model=model, at=at,
                          predicted=predicted)  # fmt: skip
    counted = max(1, sum(b.tokens for b in blocks))
    ledger.record_usage(model=model, counter="declared", counted=counted, billed=billed.input,
                        of=of, cache=record)  # fmt: skip
    return billed
