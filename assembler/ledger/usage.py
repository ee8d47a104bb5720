"""Predicted against billed: a sent body's cache usage in the ledger, and the report of it.

Input: a ledger whose ``usage_reported`` events carry a ``cache`` part
(``cache.usage.record_result_usage``, ``Fitted.record_usage``, ``Session.record_usage``:
the billed input, read and written tokens, the prediction, the call's time and the
body's blocks).
Output: ``cache_usage`` reads a session's reports back into a ``UsageReport``: per
body, hit or miss, the simulator's replay of the sent bodies (read, written), and for
a miss the first block where the sent bytes diverged from the previous body's (an
offline counterpart of a provider's cache diagnostics); with totals of reads billed,
predicted and replayed.

A *hit* is a body with cached tokens billed; a *miss* one without, after a previous
body of the session (the first body of a session has nothing to read).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cache.usage import BilledUsage, SentBlock, divergence, replay
from ..facts import cache_rules
from .events import EventKind

if TYPE_CHECKING:
    from .ledger import Ledger

__all__ = ["UsageReport", "UsageRow", "cache_usage"]


@dataclass(frozen=True, slots=True)
class UsageRow:
    seq: int
    session: str | None
    of: int | None
    at: float
    billed: BilledUsage
    predicted: tuple[int, int] | None
    # the simulator's (read, written) for this body after the session's earlier ones
    replayed: tuple[int, int] | None
    hit: bool
    miss: bool
    # the first block whose bytes differ from the previous body's: (index, item id)
    diverged: tuple[int, str | None] | None
    blocks: tuple[SentBlock, ...] = ()


@dataclass(frozen=True, slots=True)
class UsageReport:
    rows: tuple[UsageRow, ...]

    @property
    def hits(self) -> int:
        return sum(r.hit for r in self.rows)

    @property
    def misses(self) -> int:
        return sum(r.miss for r in self.rows)

    def reads(self) -> dict[str, int | None]:
        """Tokens read: billed, predicted (where a prediction was made) and replayed."""
        predicted = [r.predicted[0] for r in self.rows if r.predicted is not None]
        replayed = [r.replayed[0] for r in self.rows if r.replayed is not None]
        return {
            "billed": sum(r.billed.read for r in self.rows),
            "predicted": sum(predicted) if predicted else None,
            "replayed": sum(replayed) if replayed else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "reads": self.reads(),
            "bodies": [
                {"seq": r.seq, "session": r.session, "of": r.of, "at": r.at,
                 "billed": r.billed.to_dict(),
                 "predicted": None if r.predicted is None else list(r.predicted),
                 "replayed": None if r.replayed is None else list(r.replayed),
                 "hit": r.hit, "miss": r.miss,
                 "diverged": None if r.diverged is None else list(r.diverged)}
                for r in self.rows
            ],
        }  # fmt: skip


def cache_usage(ledger: Ledger, session: str | None = None) -> UsageReport:
    """The cache usage reports of ``session`` (None: every session, each on its own)."""
    by_session: dict[str | None, list[tuple[int, int | None, Mapping[str, Any]]]] = {}
    for event in ledger.events():
        if event.kind != EventKind.USAGE:
            continue
        data = event.data()
        record = data.get("cache")
        if not isinstance(record, Mapping) or (session is not None and event.session != session):
            continue
        by_session.setdefault(event.session, []).append((event.seq, data.get("of"), record))
    rows: list[UsageRow] = []
    for key, reports in by_session.items():
        rows.extend(_rows(key, reports))
    return UsageReport(tuple(sorted(rows, key=lambda r: r.seq)))


def _rows(
    session: str | None, reports: list[tuple[int, int | None, Mapping[str, Any]]]
) -> list[UsageRow]:
    bodies = [[SentBlock.from_list(b) for b in record["blocks"]] for _s, _o, record in reports]
    times = [float(record["at"]) for _s, _o, record in reports]
    first = reports[0][2] if reports else {}
    replayed: list[tuple[int, int]] | None = None
    try:
        rules = cache_rules(str(first.get("provider")), first.get("model"))
        replayed = replay(rules, list(zip(times, bodies, strict=True)))
    except ValueError:
        replayed = None  # a provider or model the table does not know: no replay
    out = []
    for index, (seq, of, record) in enumerate(reports):
        b = record["billed"]
        billed = BilledUsage(str(b["provider"]), int(b["input"]), int(b["read"]),
                             int(b["written"]))  # fmt: skip
        p = record.get("predicted")
        predicted = None if p is None else (int(p["read"]), int(p["written"]))
        hit = billed.read > 0
        miss = not hit and index > 0
        diverged = None
        if index > 0:
            at = divergence(bodies[index - 1], bodies[index])
            if at is not None:
                block = bodies[index][at] if at < len(bodies[index]) else None
                diverged = (at, None if block is None else block.id)
        out.append(UsageRow(seq, session, of, times[index], billed, predicted,
                            None if replayed is None else replayed[index], hit, miss,
                            diverged, tuple(bodies[index])))  # fmt: skip
    return out
