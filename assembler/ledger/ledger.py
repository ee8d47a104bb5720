"""``Ledger``: records compilations (it is a ``Recorder``) and reads them back.

Input: a ledger path; as a recorder, what ``assemble()`` reports (the parsed request
and run before solving, then the result or the error). Output: events appended to the
store, and for readers ``Summary`` rows, whole ``Compilation`` records (request,
result, error, rendering) and the events themselves.

One compilation is two events in two transactions: ``compilation_requested`` before
the solve, then one outcome (``compiled``, ``refused`` or ``failed``). Its number is
its place among the ledger's compilations (1, 2, 3, ...: the n-th
``compilation_requested`` event), whatever other events lie between them; the events
themselves carry the ``seq`` of that request event. A request with no outcome reads
as ``interrupted``. The ledger records what was decided and what bytes were
prepared; it never claims that a model received them.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..model.numbers import is_whole
from ..model.types import Request, Result, Status
from ..recorder import Recorded
from .documents import (
    Fragments,
    error_document,
    raw_document,
    request_document,
    request_from_document,
    result_dict,
    result_document,
    run_document,
    run_from_document,
    storable,
    storable_name,
)
from .errors import LedgerError, UnknownCompilation
from .events import (
    OUTCOME_OF,
    AbandonReason,
    CompilationOutcome,
    Entry,
    Event,
    EventKind,
    canonical,
    sha256_hex,
)
from .sessions import SessionCommit, SessionMoved
from .store import Store, open_store

__all__ = ["Compilation", "Ledger", "RecordedRendering", "Summary"]


def payload_text(payload: Mapping[str, Any]) -> str:
    """An event's payload as stored: canonical JSON that UTF-8 can hold."""
    return storable(canonical(payload))


@cache
def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("assembler")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True, slots=True)
class RecordedRendering:
    """The bytes prepared for a model (not: received by one), as recorded: the rendered
    text's UTF-8 bytes, the provider body (canonical JSON) and the manifest."""

    format: str
    data: bytes
    body: bytes
    manifest: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """As ``assembler.Rendering.to_dict()`` gave it when it was recorded."""
        return {
            "format": self.format,
            "text": self.data.decode("utf-8"),
            "body": json.loads(self.body),
            "manifest": self.manifest,
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """One compilation as ``ledger list`` shows it, read from its events alone."""

    number: int
    session: str | None
    requested_at: str
    outcome: CompilationOutcome
    status: str | None
    strategy: str
    task: str | None
    candidates: int | None
    selected: int | None
    cost: int | None
    budget: int | None
    package_id: str | None
    trace_id: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Compilation:
    """Everything recorded about one compilation, artifacts resolved."""

    number: int
    session: str | None
    outcome: CompilationOutcome
    # the settings as recorded (``Settings.recorded()``'s keys)
    run: dict[str, Any]
    version: str
    events: tuple[Event, ...]
    # the request as offered (contents restored); None when it never parsed
    request: dict[str, Any] | None
    # the input exactly as given when it did not parse (JSON text), else None
    raw_request: str | None
    raw_exact: bool
    # Result.to_dict() as it was (its rendering included); None unless answered
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    rendering: RecordedRendering | None

    @property
    def requested_at(self) -> str:
        return self.events[0].recorded_at

    @property
    def finished_at(self) -> str | None:
        return self.events[1].recorded_at if len(self.events) > 1 else None


class _Recording:
    """One compilation being recorded; it accepts exactly one outcome."""

    def __init__(
        self,
        ledger: Ledger,
        number: int,
        session: str | None,
        commit: SessionCommit | None,
        claim: Callable[[], bool] | None = None,
    ) -> None:
        self._ledger = ledger
        self.number = number
        self._session = session
        # the ledger's commit and claim when the request was recorded (they may change
        # meanwhile)
        self._commit = commit
        self._claim = claim
        self._done = False

    def _append(
        self,
        kind: EventKind,
        payload: dict[str, Any],
        blobs: dict[str, bytes | str],
        commit: SessionCommit | None = None,
    ) -> Event:
        if self._done:
            raise LedgerError(
                self._ledger.path, f"compilation {self.number} already has an outcome"
            )
        self._done = True
        return self._ledger._store.append(
            Entry(kind.value, self.number, self._session, payload_text(payload), blobs, commit)
        )

    def answered(self, result: Result) -> None:
        payload, blobs = _answer(result)
        kind = EventKind.REFUSED if result.status is Status.REFUSED else EventKind.COMPILED
        if self._claim is not None and not self._claim():
            # its caller was answered otherwise (told time-limit): it moves nothing on
            self._append(EventKind.ABANDONED, {**payload, "reason": AbandonReason.ANSWERED},
                         blobs)  # fmt: skip
            return
        try:
            # an answer moves a server session on (a failure leaves it where it was)
            self._append(kind, payload, blobs, self._commit)
        except SessionMoved:
            # another call moved the session first: this answer is recorded as what it
            # is, one nobody will act on, not left to read as a crash
            self._done = False
            with contextlib.suppress(LedgerError):
                self._append(EventKind.ABANDONED, {**payload, "reason": AbandonReason.MOVED},
                             blobs)  # fmt: skip
            raise
        self._ledger.last_answer = self.number

    def failed(self, error: Exception) -> None:
        self._append(EventKind.FAILED, {"error": error_document(error)}, {})


def _answer(result: Result) -> tuple[dict[str, Any], dict[str, bytes | str]]:
    """An answer's outcome payload and the artifacts it references."""
    document = result_document(result)
    digest = sha256_hex(document)
    blobs: dict[str, bytes | str] = {digest: document}
    rendered: dict[str, Any] | None = None
    rendering = result.rendering
    if rendering is not None:
        text, body = rendering.data, rendering.body_json.encode("utf-8")
        rendered_sha, body_sha = sha256_hex(text), sha256_hex(body)
        blobs[rendered_sha] = text
        blobs[body_sha] = body
        rendered = {
            "format": rendering.format.value,
            "rendered_sha256": rendered_sha,
            "body_sha256": body_sha,
            "size": len(text),
            "manifest": rendering.manifest.to_dict(),
        }
    payload = {
        "result": digest,
        "status": result.status.value,
        "strategy": result.strategy,
        "selected": list(result.selected),
        "cost": result.cost,
        "value": result.value,
        "budget": result.budget,
        "optimal": result.optimal,
        "package_id": result.package_id,
        "trace_id": result.trace_id,
        "refusal": None if result.refusal is None else result.refusal.code.value,
        "rendering": rendered,
    }
    return payload, blobs


class Ledger:
    """A durable, replayable record of compilations: an SQLite file or a PostgreSQL
    database.

    ``Ledger(path)`` (or ``Ledger.open(address)``) opens an SQLite file, created when
    it does not exist; an address ``postgresql://...`` opens a PostgreSQL database
    (the ``postgres`` extra), its tables created on the first writable open, and
    ``sqlite:///PATH`` names a file. ``readonly=True`` opens an existing ledger
    without ever writing to it. ``session`` names the session of every compilation
    recorded through this object (default: the request's task id). ``store`` puts
    another ``Store`` (the narrow interface of ``ledger.store``) in place of the one
    the address names. ``commit``: the server session every answer recorded through
    this object moves on (``sessions.SessionCommit``; checked before the solve too).
    Pass the ledger to ``assemble(..., ledger=...)`` to record.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        session: str | None = None,
        readonly: bool = False,
        store: Store | None = None,
        commit: SessionCommit | None = None,
    ) -> None:
        self._store: Store = store if store is not None else open_store(path, readonly=readonly)
        self.path = self._store.path
        self.session = session
        self.commit = commit
        # asked just before an answer is recorded whether its caller will be given it
        # (None: always); False records it ``abandoned``, moving no session on
        self.claim: Callable[[], bool] | None = None
        # the compilation whose answer this object recorded last (None: none yet)
        self.last_answer: int | None = None
        self._fragments: Fragments = {}

    def but(
        self, *, commit: SessionCommit | None, claim: Callable[[], bool] | None
    ) -> Ledger:
        """This ledger (its store, its memo of what it recorded) recording with
        ``commit`` and ``claim``: one call's recorder, whatever the others set."""
        other = copy.copy(self)
        other.commit, other.claim, other.last_answer = commit, claim, None
        return other

    @classmethod
    def open(
        cls, address: str | os.PathLike[str], *, session: str | None = None,
        readonly: bool = False,
    ) -> Ledger:  # fmt: skip
        """The ledger at ``address``: ``postgresql://USER@HOST:PORT/DATABASE``,
        ``sqlite:///PATH`` or a path."""
        return cls(address, session=session, readonly=readonly)

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the Recorder protocol ---------------------------------------------------

    def requested(self, request: Request, settings: Recorded) -> _Recording:
        return self._requested(request, settings.recorded())

    def _requested(self, request: Request, given: Mapping[str, Any]) -> _Recording:
        text, contents = request_document(request, self._fragments)
        document = text.encode("utf-8")
        digest = sha256_hex(document)
        blobs: dict[str, bytes | str] = {**contents, digest: document}
        payload = {
            "request": digest,
            "raw": None,
            "raw_exact": True,
            "run": run_document(given),
            "version": _version(),
            "task": request.task.id,
            "budget": request.task.budget,
            "candidates": len(request.candidates),
        }
        session = storable_name(self.session if self.session is not None else request.task.id)
        event = self._store.append(
            Entry(EventKind.REQUESTED.value, None, session, payload_text(payload), blobs,
                  self.commit)
        )  # fmt: skip
        return _Recording(self, event.seq, session, self.commit, self.claim)

    def invalid(self, request: object, given: Mapping[str, Any], error: Exception) -> None:
        """A call rejected before a request existed: the raw input, then ``failed``."""
        if isinstance(request, Request):
            recording = self._requested(request, given)
        else:
            raw, exact = raw_document(request)
            digest = sha256_hex(raw)
            task = request.get("task") if isinstance(request, dict) else None
            task_id = task.get("id") if isinstance(task, dict) else None
            task_id = task_id if isinstance(task_id, str) else None
            payload = {
                "request": None,
                "raw": digest,
                "raw_exact": exact,
                "run": run_document(given),
                "version": _version(),
                "task": task_id,
                "budget": None,
                "candidates": None,
            }
            session = self.session if self.session is not None else task_id
            session = None if session is None else storable_name(session)
            event = self._store.append(
                Entry(EventKind.REQUESTED.value, None, session, payload_text(payload),
                      {digest: raw})
            )  # fmt: skip
            recording = _Recording(self, event.seq, session, None)
        recording.failed(error)

    # -- calibration: the provider's bill against our count -------------------------

    def record_usage(
        self,
        *,
        model: str,
        counter: str,
        counted: int,
        billed: int,
        of: int | None = None,
        cache: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that a body we counted at ``counted`` tokens with ``counter`` was
        billed ``billed`` input tokens by ``model`` (``of``: the compilation that chose
        it, when known). ``calibration`` reads these back. ``cache``: what the provider
        reported reading and writing for the body, against the prediction, with the
        body's blocks (``ledger.usage.cache_record``; ``assembler ledger cache`` reads
        it back). Through the store protocol, so on every store."""
        for name, value in (("counted", counted), ("billed", billed)):
            if not is_whole(value) or value < 1:
                raise ValueError(f"{name} must be a whole number of tokens >= 1, not {value!r}")
        payload: dict[str, Any] = {"model": model, "counter": counter, "counted": counted,
                                   "billed": billed, "of": of}  # fmt: skip
        if cache is not None:
            payload["cache"] = dict(cache)
        self._store.append(
            Entry(EventKind.USAGE.value, None, self.session, payload_text(payload), {})
        )

    def calibration(self, model: str, counter: str, *, last: int = 20) -> float:
        """The factor to scale ``counter``'s counts by for ``model``: the largest
        billed / counted of its ``last`` usage reports, never below 1 (1 without any)."""
        ratios: list[float] = [
            float(data["billed"]) / float(data["counted"])
            for event in self._store.events()
            if event.kind == EventKind.USAGE
            and (data := event.data())["model"] == model
            and data["counter"] == counter
        ]
        return max([1.0, *ratios[-last:]])

    # -- reading ------------------------------------------------------------------

    def events(self, after: int = 0) -> Iterator[Event]:
        return self._store.events(after)

    def artifact(self, sha256: str) -> bytes:
        data = self._store.blob(sha256)
        if data is None:
            raise LedgerError(self.path, f"artifact {sha256} is missing; run verify")
        return data

    def summaries(self) -> list[Summary]:
        """Every compilation, in order, from its events (no artifact is read)."""
        requested: dict[int, Event] = {}
        outcomes: dict[int, Event] = {}
        for event in self._store.events():
            if event.kind == EventKind.REQUESTED:
                requested[event.compilation] = event
            elif event.kind != EventKind.USAGE:
                outcomes[event.compilation] = event
        return [
            _summary(number, ev, outcomes.get(ev.compilation))
            for number, ev in enumerate(requested.values(), start=1)
        ]

    def numbers(self, session: str | None = None) -> list[int]:
        return [s.number for s in self.summaries() if session is None or s.session == session]

    def resolve(self, ref: str) -> int:
        """A compilation number from ``N`` or ``last``; UnknownCompilation otherwise."""
        count = len(self._store.requested_seqs())
        if ref == "last":
            if not count:
                raise UnknownCompilation(self.path, ref, "holds no compilation yet")
            return count
        if not ref.isdigit():
            raise UnknownCompilation(
                self.path, ref, f"{ref!r} is not a compilation number (a number, or 'last')"
            )
        number = int(ref)
        if not 1 <= number <= count:
            held = f"compilations 1 to {count}" if count else "no compilation yet"
            raise UnknownCompilation(self.path, ref, f"holds no compilation {number} ({held})")
        return number

    def previous(self, number: int) -> int | None:
        """The compilation before ``number`` in the same session, if any."""
        session = self.compilation(number).session
        earlier = [n for n in self.numbers(session) if n < number]
        return earlier[-1] if earlier else None

    def compilation(self, number: int) -> Compilation:
        """Compilation ``number`` (1 for the ledger's first, as ``list`` numbers them)."""
        seqs = self._store.requested_seqs()
        events = self._store.compilation_events(seqs[number - 1]) if 0 < number <= len(seqs) else []
        if not events or events[0].kind != EventKind.REQUESTED:
            raise UnknownCompilation(self.path, str(number), f"holds no compilation {number}")
        return self._compilation(number, events)

    def compilation_at(self, seq: int, *, result: bool = True) -> Compilation:
        """The compilation whose request is event ``seq``, read without the others (its
        ``number`` is 0: counting the compilations before it would read them all);
        ``result=False`` leaves its result document unread (``result`` None)."""
        events = self._store.compilation_events(seq)
        if not events or events[0].kind != EventKind.REQUESTED or events[0].seq != seq:
            raise UnknownCompilation(self.path, str(seq), f"holds no compilation at event {seq}")
        return self._compilation(0, events, with_result=result)

    def _compilation(
        self, number: int, events: list[Event], *, with_result: bool = True
    ) -> Compilation:
        first = events[0]
        asked = first.data()
        outcome_event = events[1] if len(events) > 1 else None
        request = raw = None
        if asked["request"] is not None:
            document = json.loads(self.artifact(asked["request"]))
            # every content in one read (a 1,000-form request: one query, not 1,000)
            named = [c["content_sha256"] for c in document.get("candidates", [])
                     if c.get("content_sha256")]  # fmt: skip
            contents = self._store.blobs(named)
            request = request_from_document(
                document,
                lambda sha: (contents.get(sha) or self.artifact(sha)).decode("utf-8"),
            )
        if asked["raw"] is not None:
            raw = self.artifact(asked["raw"]).decode("utf-8")
        result = error = None
        rendering = None
        outcome = CompilationOutcome.INTERRUPTED
        if outcome_event is not None:
            outcome = OUTCOME_OF[EventKind(outcome_event.kind)]
            answer = outcome_event.data()
            if outcome is CompilationOutcome.FAILED:
                error = answer["error"]
            else:
                if with_result:
                    result = result_dict(self.artifact(answer["result"]))
                if answer["rendering"] is not None:
                    r = answer["rendering"]
                    rendering = RecordedRendering(
                        r["format"],
                        self.artifact(r["rendered_sha256"]),
                        self.artifact(r["body_sha256"]),
                        r["manifest"],
                    )
                    if result is not None:
                        result["rendering"] = rendering.to_dict()
        return Compilation(
            number=number,
            session=first.session,
            outcome=outcome,
            run=run_from_document(asked["run"]),
            version=asked["version"],
            events=tuple(events),
            request=request,
            raw_request=raw,
            raw_exact=asked["raw_exact"],
            result=result,
            error=error,
            rendering=rendering,
        )


def _summary(number: int, asked: Event, answer: Event | None) -> Summary:
    request = asked.data()
    outcome = CompilationOutcome.INTERRUPTED
    answered: dict[str, Any] = {}
    if answer is not None:
        outcome = OUTCOME_OF.get(EventKind(answer.kind), CompilationOutcome.INTERRUPTED)
        answered = answer.data()
    error = answered.get("error")
    return Summary(
        number=number,
        session=asked.session,
        requested_at=asked.recorded_at,
        outcome=outcome,
        status=answered.get("status"),
        strategy=str(request["run"]["strategy"]),
        task=request["task"],
        candidates=request["candidates"],
        selected=len(answered["selected"]) if "selected" in answered else None,
        cost=answered.get("cost"),
        budget=answered.get("budget", request["budget"]),
        package_id=answered.get("package_id"),
        trace_id=answered.get("trace_id"),
        error=None if error is None else f"{error['type']}: {error['message']}",
    )
