"""``verify``: check a ledger's file, its hash chain and every stored artifact.

Input: a ``Ledger``. Output: a ``VerifyReport``: counts, the chain's head, and one
``Fault`` per fault found, each with its location (an event's sequence number, an
artifact's sha256 and who references it, or the file).

What is checked (models/ledger.md, "What verify checks"): SQLite's own structural
check of the file; sequence numbers run 1, 2, 3 ... without a gap; each event's
``prev_hash`` is the previous event's hash and its ``hash`` recomputes from its fields
and payload; payloads are canonical JSON of a known kind; every outcome belongs to an
earlier request and no compilation has two; every artifact an event references is
stored; every stored artifact decodes to bytes of its recorded size whose sha256 is
its key. Reading appends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .documents import storable
from .errors import LedgerError
from .events import GENESIS, Event, EventKind, canonical, sha256_hex
from .ledger import Ledger

__all__ = ["Fault", "FaultKind", "VerifyReport", "references", "verify"]


class FaultKind(StrEnum):
    FILE = "file"  # SQLite reports the file itself damaged
    SEQUENCE = "sequence"  # a gap or repetition in sequence numbers
    CHAIN = "chain"  # prev_hash is not the previous event's hash
    HASH = "hash"  # the event's fields or payload no longer match its hash
    PAYLOAD = "payload"  # not canonical JSON, or not of its kind's shape
    ORDER = "order"  # an outcome without a request, or a second outcome
    MISSING = "missing-artifact"
    DAMAGED = "damaged-artifact"


@dataclass(frozen=True, slots=True)
class Fault:
    kind: FaultKind
    where: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "where": self.where, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class VerifyReport:
    events: int
    compilations: int
    interrupted: int
    artifacts: int
    head_seq: int
    head_hash: str
    problems: tuple[Fault, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "events": self.events,
            "compilations": self.compilations,
            "interrupted": self.interrupted,
            "artifacts": self.artifacts,
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "problems": [p.to_dict() for p in self.problems],
        }


def _where(event: Event) -> str:
    return f"event {event.seq} ({event.kind}, compilation {event.compilation})"


def references(event: Event, data: dict[str, Any], ledger: Ledger) -> Iterator[tuple[str, str]]:
    """The artifacts an event references, each with what it is. Reads the request
    document to find the contents it names (when that artifact is readable)."""
    if event.kind == EventKind.REQUESTED:
        if data.get("raw"):
            yield data["raw"], "the raw request"
        if data.get("request"):
            yield data["request"], "the request document"
            try:
                document = json.loads(ledger.artifact(data["request"]))
            except (LedgerError, ValueError):
                return  # reported as a missing or damaged artifact
            for candidate in document.get("candidates", []):
                if candidate.get("content_sha256"):
                    yield candidate["content_sha256"], f"content of {candidate['id']!r}"
    elif event.kind in (EventKind.COMPILED, EventKind.REFUSED, EventKind.ABANDONED):
        yield data["result"], "the result document"
        if data.get("rendering"):
            yield data["rendering"]["rendered_sha256"], "the rendered bytes"
            yield data["rendering"]["body_sha256"], "the provider body"


_KINDS = frozenset(kind.value for kind in EventKind)
_NEEDS = {
    EventKind.REQUESTED: ("request", "raw", "run", "version"),
    EventKind.COMPILED: ("result", "status", "package_id", "trace_id", "selected"),
    EventKind.REFUSED: ("result", "status", "refusal", "trace_id"),
    EventKind.FAILED: ("error",),
    EventKind.ABANDONED: ("result", "status", "reason"),
    EventKind.USAGE: ("model", "counter", "counted", "billed", "of"),
}


def _payload(event: Event) -> tuple[dict[str, Any] | None, str | None]:
    try:
        data = json.loads(event.payload)
    except ValueError as exc:
        return None, f"payload is not JSON: {exc}"
    if not isinstance(data, dict):
        return None, "payload is not a JSON object"
    if storable(canonical(data)) != event.payload:
        return data, "payload is not in canonical JSON"
    if event.kind not in _KINDS:
        return data, f"unknown event kind {event.kind!r}"
    missing = [key for key in _NEEDS[EventKind(event.kind)] if key not in data]
    if missing:
        return data, f"payload lacks {', '.join(missing)}"
    return data, None


def verify(ledger: Ledger) -> VerifyReport:
    problems: list[Fault] = []
    store = ledger._store
    try:
        for finding in store.structure_problems()[:20]:
            problems.append(Fault(FaultKind.FILE, "file", finding))
    except LedgerError as exc:
        problems.append(Fault(FaultKind.FILE, "file", exc.reason))
    referenced: dict[str, list[str]] = {}
    requested: set[int] = set()
    answered: dict[int, int] = {}
    expected_seq, prev, count = 1, GENESIS, 0
    try:
        for event in ledger.events():
            count += 1
            where = _where(event)
            if event.seq != expected_seq:
                gap = f"events {expected_seq}..{event.seq - 1} are missing"
                detail = gap if event.seq > expected_seq else f"expected seq {expected_seq}"
                problems.append(Fault(FaultKind.SEQUENCE, where, detail))
            if event.prev_hash != prev:
                problems.append(
                    Fault(
                        FaultKind.CHAIN,
                        where,
                        f"prev_hash {event.prev_hash[:16]}... is not the hash of the event"
                        f" before it ({prev[:16]}...)",
                    )
                )
            if event.hash != event.expected_hash():
                problems.append(
                    Fault(
                        FaultKind.HASH,
                        where,
                        "its fields or payload were changed after it was written (the stored"
                        " hash does not recompute)",
                    )
                )
            data, fault = _payload(event)
            if fault is not None:
                problems.append(Fault(FaultKind.PAYLOAD, where, fault))
            _check_order(event, requested, answered, problems)
            if data is not None and fault is None:
                for sha, what in references(event, data, ledger):
                    referenced.setdefault(sha, []).append(f"{what} in {where}")
            expected_seq, prev = event.seq + 1, event.hash
    except LedgerError as exc:
        problems.append(Fault(FaultKind.FILE, "file", exc.reason))
    artifacts = _check_artifacts(ledger, referenced, problems)
    return VerifyReport(
        events=count,
        compilations=len(requested),
        interrupted=len(requested - set(answered)),
        artifacts=artifacts,
        head_seq=expected_seq - 1,
        head_hash=prev,
        problems=tuple(problems),
    )


def _check_order(
    event: Event, requested: set[int], answered: dict[int, int], problems: list[Fault]
) -> None:
    where = _where(event)
    if event.kind == EventKind.USAGE:
        if event.compilation != event.seq:
            problems.append(Fault(FaultKind.ORDER, where, "a usage report numbers itself"))
        return
    if event.kind == EventKind.REQUESTED:
        if event.compilation != event.seq:
            problems.append(
                Fault(FaultKind.ORDER, where, "a request must number its own compilation")
            )
        requested.add(event.compilation)
        return
    if event.compilation not in requested:
        problems.append(
            Fault(FaultKind.ORDER, where, "an outcome for a compilation never requested")
        )
    elif event.compilation in answered:
        problems.append(
            Fault(
                FaultKind.ORDER,
                where,
                f"a second outcome (the first is event {answered[event.compilation]})",
            )
        )
    answered.setdefault(event.compilation, event.seq)


def _check_artifacts(
    ledger: Ledger, referenced: dict[str, list[str]], problems: list[Fault]
) -> int:
    store = ledger._store
    seen: set[str] = set()
    try:
        index = list(store.blob_index())
    except LedgerError as exc:
        problems.append(Fault(FaultKind.FILE, "file", exc.reason))
        index = []
    for sha, size in index:
        seen.add(sha)
        users = referenced.get(sha, [])
        where = f"artifact {sha}" + (f" ({users[0]})" if users else " (unreferenced)")
        try:
            data = store.blob(sha)
        except LedgerError as exc:
            problems.append(Fault(FaultKind.DAMAGED, where, exc.reason))
            continue
        if data is None:
            continue
        if len(data) != size or sha256_hex(data) != sha:
            detail = f"its bytes no longer hash to its key (size {len(data)}, recorded {size})" + (
                f"; referenced by {len(users)} event(s)" if users else ""
            )
            problems.append(Fault(FaultKind.DAMAGED, where, detail))
    for sha, users in referenced.items():
        if sha not in seen:
            problems.append(
                Fault(FaultKind.MISSING, f"artifact {sha}", f"{users[0]} is not stored")
            )
    return len(seen)
