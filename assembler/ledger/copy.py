"""``copy``: every event and artifact of one ledger into another, exactly as they are.

Input: a source ``Ledger`` (read) and a target ``Ledger`` (written), in either store.
Output: a ``CopyReport``: the events copied, those the target already held, and the
head both now share. The target must be empty or hold a first part of the source's
chain (a copy that stopped part way is resumed); anything else is refused with a
``LedgerError``, and nothing is written.

Events keep their ``seq``, times and hashes, so the target's chain is the source's and
``export`` writes the same lines from both. Each event is checked as it is read (its
hash recomputes and follows the one before); a damaged source stops the copy at the
first damaged event, with everything before it copied. Events are written in batches,
each one transaction, with the artifacts they reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .errors import LedgerError
from .events import GENESIS, Event
from .ledger import Ledger
from .verify import references

__all__ = ["BATCH", "CopyReport", "copy"]

# events per transaction: large enough to amortise a commit, small enough to bound
# what a batch holds in memory (its artifacts)
BATCH = 500


@dataclass(frozen=True, slots=True)
class CopyReport:
    copied: int
    already: int
    head_seq: int
    head_hash: str


def _held(target: Ledger, source: Ledger) -> tuple[int, str]:
    """How many of the source's first events the target holds (it must hold nothing
    else), and the hash of the last of them."""
    count, prev = 0, GENESIS
    theirs = source.events()
    for mine in target.events():
        other = next(theirs, None)
        if other is None or other.to_dict() != mine.to_dict():
            raise LedgerError(
                target.path,
                f"holds event {mine.seq}, which is not {source.path}'s event {mine.seq}:"
                " a ledger is copied into an empty one (or one that holds a first part of it)",
            )
        count, prev = mine.seq, mine.hash
    return count, prev


def copy(source: Ledger, target: Ledger, *, batch: int = BATCH) -> CopyReport:
    already, prev = _held(target, source)
    copied = 0
    pending: list[tuple[Event, Mapping[str, bytes]]] = []
    written: set[str] = set()
    for event in source.events(already):
        if (
            event.seq != already + copied + 1
            or event.prev_hash != prev
            or event.hash != event.expected_hash()
        ):
            target._store.restore(pending)
            raise LedgerError(
                source.path,
                f"event {event.seq} does not chain to the one before it: {copied} events"
                f" copied up to it; run 'assembler ledger verify {source.path}'",
            )
        blobs = {
            sha: source.artifact(sha)
            for sha, _ in references(event, event.data(), source)
            if sha not in written
        }
        written.update(blobs)
        pending.append((event, blobs))
        prev = event.hash
        copied += 1
        if len(pending) >= batch:
            target._store.restore(pending)
            pending, written = [], set()
    target._store.restore(pending)
    return CopyReport(copied, already, already + copied, prev)
