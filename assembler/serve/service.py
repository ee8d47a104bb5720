"""The server's core, shared by both transports: a call in, a reply out.

Input: a ``ServedCall`` (``messages``: with its deadline); the ``ServerConfig``.
Output: a ``Reply``: the exit code ``assembler compile`` would give (0 bundle, 1
refused, 3 undecided; 2 invalid input, 3 no answer in time, 4 a bug), the HTTP
status, and the reply's JSON as bytes (``{"exit", "result"}``, with ``"session"``
for a session's call, or ``{"exit", "error"}``).

Solves are CPU-bound: they run on a pool of ``concurrency`` threads, never on the
event loop, and a call waits for a free thread. Decoding an HTTP body, validating,
solving and encoding the result all happen on that thread (a JSON line is decoded on
the loop, in the order of the lines, which is what keeps a session's calls in order).
The time limit is the call's promise, counted from its arrival: waiting for its
session's previous call and for a thread come off it, the solve gets what is left,
and if no answer has come ``OVERRUN_GRACE`` seconds after the limit the call is
answered ``time-limit`` (a delta is then not applied: a session changes only when its
reply is a result). With a ledger the same holds there: an answer moves a session on in
the ledger only if it is its call's reply (``Fate``); one that comes after its call was
told ``time-limit`` is recorded ``abandoned`` and changes nothing. The ledger's store is
waited for at most ``ledger_wait`` seconds (a connection of its pool): when it is down
a call is told ``ledger-error`` (503, retryable) at once, having applied and recorded
nothing, rather than solving with what is left of its time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from ..deadline import Deadline
from ..exits import EXIT
from ..ledger import Ledger
from ..ledger.sessions import SessionCommit, SessionEntry, SessionMoved
from ..ledger.store import open_store
from ..model.arguments import DEFAULT_TIME_LIMIT
from ..model.limits import DEFAULT_LIMITS, Limits
from ..model.types import Result, Status
from ..pipeline import run
from ..session import Session
from . import fleet
from .errors import (
    Overdue,
    ServerBusy,
    SessionExpired,
    SessionUnknown,
    TimeLimitReached,
    VersionConflict,
    error_reply,
)
from .memory import BodyMemory, give_back
from .messages import Op, ServedCall
from .store import SessionStore, weight
from .text import load_utf8_json

__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_LEDGER_WAIT",
    "DEFAULT_MAX_BODY_MEMORY",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_SESSION_MEMORY",
    "DEFAULT_WRITE_TIMEOUT",
    "OVERRUN_GRACE",
    "REFUSING_SECONDS",
    "SHUTDOWN_MARGIN",
    "Fate",
    "Reply",
    "ServerConfig",
    "Service",
]

# after the limit, how long a solve may still take to return its answer (the trace of
# a solve stopped at the limit, and encoding the reply) before the call is given up
OVERRUN_GRACE = 1.0
# beyond the time limit and its grace, what a shutdown waits for (writing the last
# replies) before it gives up on a client that does not read them
SHUTDOWN_MARGIN = 5.0
# bytes of lines and bodies held at once by calls not yet answered: one request of the
# largest size the default limits allow
DEFAULT_MAX_BODY_MEMORY = DEFAULT_LIMITS.max_request_bytes
# HTTP: seconds for a request's headers to arrive (from the connection, or the end of
# the previous reply on it), and for its body once its headers are in
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 1000
# HTTP: seconds for a client to take its whole reply once it is written
DEFAULT_WRITE_TIMEOUT = 30.0
# the longest wait for the ledger's store (a connection of PostgreSQL's pool, SQLite's
# write lock) before a call is told ledger-error
DEFAULT_LEDGER_WAIT = 1.0
# /healthz says "refusing" (and saturated) for this long after a call was told server-busy
REFUSING_SECONDS = 10.0
# the sessions kept, by their estimated memory (``store.weight``)
DEFAULT_MAX_SESSION_MEMORY = 4 * 2**30
# below this much time left a solve is not started: it could only answer undecided
_LEAST_SOLVE = 0.01
# the longest wait between two sweeps of idle sessions
_SWEEP_SECONDS = 30.0
# how soon after a busy spell ends its memory is given back
_IDLE_TRIM_SECONDS = 5.0

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """``assembler serve``'s options (defaults in ``cli/serve.py``); a call's own
    ``assembler.Settings`` (strategy, render, headers, time limit) and a session's cache
    come with the call (``messages.ServedCall``)."""

    time_limit: float = DEFAULT_TIME_LIMIT
    concurrency: int = 2
    max_sessions: int = 1000
    idle_seconds: float = 3600.0
    # calls held at once: lines read ahead, or HTTP requests read and not yet answered
    max_pending: int = 64
    limits: Limits = DEFAULT_LIMITS
    ledger: str | None = None
    max_body_memory: int = DEFAULT_MAX_BODY_MEMORY
    max_session_memory: int = DEFAULT_MAX_SESSION_MEMORY
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    # HTTP: open connections of one client (its address); calls waiting for a place;
    # seconds for a client to take its reply
    max_client_connections: int = DEFAULT_MAX_CONNECTIONS // 2
    max_queue: int = DEFAULT_MAX_CONNECTIONS
    write_timeout: float = DEFAULT_WRITE_TIMEOUT
    # HTTP: the shared secret every call but /healthz must present (a Bearer token:
    # visible ASCII, ``model.keys.token``)
    token: str | None = None
    # seconds a call waits for the ledger's store before it is told ledger-error
    ledger_wait: float = DEFAULT_LEDGER_WAIT


@dataclass(frozen=True, slots=True)
class Reply:
    exit: int
    http: int
    body: bytes
    # the error's code (None for a result)
    code: str | None = None
    # server-busy: the seconds after which a retry is expected to find room
    retry_after: float | None = None


class Service:
    """Sessions, the solver threads and the ledger, for one server process."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.sessions = SessionStore(
            config.max_sessions, config.idle_seconds, config.max_session_memory
        )
        self.bodies = BodyMemory(config.max_body_memory)
        self._slots = asyncio.Semaphore(config.concurrency)
        self._pool = ThreadPoolExecutor(config.concurrency, thread_name_prefix="solve")
        self._store = (
            None if config.ledger is None else open_store(config.ledger, wait=config.ledger_wait)
        )
        # beside each session held, with a ledger: the entry it stands at (fleet.py)
        self._held: weakref.WeakKeyDictionary[Session, fleet.Held] = weakref.WeakKeyDictionary()
        # calls being answered; of them, those on a solver thread; calls answered so far
        self.in_flight = 0
        self.answered = 0
        self.solving = 0
        # set by a transport once it stops taking calls
        self.draining = False
        # the transport's own figures for /healthz (HTTP: connections, bodies being read)
        self.transport_health: Callable[[], dict[str, Any]] = dict
        # replies by error code since the start (the soak and /healthz read them)
        self.errors: dict[str, int] = {}
        # the last call told server-busy: when (time.monotonic()) and why
        self._refused: tuple[float, str] | None = None
        self.started = time.monotonic()

    def close(self) -> None:
        """After the last call: wait for the solver threads, close the ledger."""
        self._pool.shutdown(wait=True)
        if self._store is not None:
            self._store.close()

    async def sweep_forever(self) -> None:
        """Sweep out idle sessions, a few times per idle period, and give memory back
        once the calls of a busy spell are answered, until cancelled."""
        every = min(_SWEEP_SECONDS, max(0.05, self.config.idle_seconds / 4))
        swept = time.monotonic()
        answered = self.answered
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(every, _IDLE_TRIM_SECONDS))
            if time.monotonic() - swept >= every:
                self.sessions.sweep()
                swept = time.monotonic()
            if self.in_flight == 0 and self.answered != answered:
                answered = self.answered
                await loop.run_in_executor(None, give_back)

    def health(self) -> dict[str, Any]:
        """``/healthz``: ``status`` is ``ok``, ``saturated`` (a call now would wait for
        a solver thread, or be told ``server-busy``) or ``draining`` (shutting down),
        with the figures that say why."""
        config = self.config
        transport = self.transport_health()
        waiting = self.in_flight - self.solving
        saturated = (
            self.in_flight >= config.max_pending
            or self.bodies.held >= self.bodies.limit
            or (self.solving >= config.concurrency and waiting > 0)
            or transport.get("connections", 0) >= config.max_connections
            or transport.get("queued", 0) > 0
        )
        refusing = None
        if self._refused is not None:
            ago = time.monotonic() - self._refused[0]
            if ago <= REFUSING_SECONDS:
                refusing = {"why": self._refused[1], "seconds_ago": round(ago, 3)}
                saturated = True
        status = "draining" if self.draining else "saturated" if saturated else "ok"
        return {
            "status": status,
            # a call told server-busy in the last REFUSING_SECONDS, and why (else null)
            "refusing": refusing,
            "sessions": len(self.sessions),
            "max_sessions": config.max_sessions,
            "session_memory": self.sessions.memory,
            "max_session_memory": config.max_session_memory,
            "in_flight": self.in_flight,
            "solving": self.solving,
            "concurrency": config.concurrency,
            "max_pending": config.max_pending,
            "body_memory": self.bodies.held,
            "max_body_memory": self.bodies.limit,
            "reply_memory": self.bodies.replies,
            "replies_unread": self.bodies.unread,
            **transport,
            "time_limit": config.time_limit,
            "errors": dict(sorted(self.errors.items())),
            "uptime_s": round(time.monotonic() - self.started, 3),
        }

    def count(self, reply: Reply) -> Reply:
        """Count an error reply by its code (for ``/healthz``); the reply itself."""
        if reply.code is not None:
            self.errors[reply.code] = self.errors.get(reply.code, 0) + 1
            if reply.code == "server-busy":
                self._refused = (time.monotonic(), _message(reply.body))
        return reply

    async def handle(self, call: ServedCall) -> Reply:
        """Answer ``call`` by its deadline; any error becomes an error reply, never an
        exception."""
        self.in_flight += 1
        try:
            if call.op is Op.ASSEMBLE:
                return await self._assemble(call)
            assert call.key is not None
            # every call on a key, a close too, waits for the calls before it
            async with self.sessions.key(call.key, call.deadline):
                if call.op is Op.CLOSE:
                    return await self._close(call)
                if call.op is Op.OPEN:
                    return await self._open(call, call.key)
                return await self._delta(call, call.key)
        except Overdue as late:
            # the one place the seconds are named: the call's time limit, as given
            return self.count(error(TimeLimitReached(call.settings.seconds, late.what), call.id))
        except Exception as exc:
            return self.count(error(exc, call.id))
        finally:
            self.in_flight -= 1
            self.answered += 1

    # -- operations -------------------------------------------------------------

    async def _assemble(self, call: ServedCall) -> Reply:
        fate = Fate()
        settings = call.settings.but(ledger=self._recorder(None, fate))
        deadline = call.deadline

        def work() -> tuple[Result, str]:
            # the call's deadline covers decoding and parsing the request
            result, _ = run(_decoded(call.payload, settings.limits), settings, deadline=deadline)
            return result, _encoded(result)

        result, encoded = await self._solve(work, deadline, fate)
        return _reply(result, encoded, call.id, None)

    async def _open(self, call: ServedCall, key: str) -> Reply:
        self.sessions.room(key)
        fate = Fate()
        ledger = None
        if self._store is not None:
            # opening: whatever the session was, if this reply is given
            ledger = fleet.ledger_for(self._store, key).but(
                commit=SessionCommit(key), claim=fate.claim
            )
        settings = call.settings.but(ledger=ledger)
        deadline = call.deadline

        def work() -> tuple[Session, Result, str]:
            session = Session(_decoded(call.payload, settings.limits), settings, cache=call.cache)
            # the answer gets what is left once the request is parsed
            result = session.answer(deadline=deadline)
            return session, result, _encoded(result)

        session, result, encoded = await self._solve(work, deadline, fate)
        if ledger is not None:
            self._held[session] = fleet.Held.opened(key, ledger)
        self.sessions.put(key, session, weight(session.state))
        return _reply(result, encoded, call.id, _about(key, session))

    async def _delta(self, call: ServedCall, key: str) -> Reply:
        store = self._store
        if store is None:
            # no ledger: the session is this process's alone
            return await self._step(call, key, self.sessions.get(key), None, None)
        try:
            session = self.sessions.get(key)
        except (SessionUnknown, SessionExpired) as missing:
            # evicted, idle or never here: the ledger may hold it
            return await self._step(call, key, None, None, missing)
        return await self._step(call, key, session, self._held.get(session), None)

    async def _step(
        self,
        call: ServedCall,
        key: str,
        session: Session | None,
        held: fleet.Held | None,
        missing: Exception | None,
    ) -> Reply:
        """Apply the call's delta to ``session`` (None: rebuilt from the ledger first,
        or ``missing`` raised, what this replica knows of the key, when it holds none).
        With a ledger, the answer moves the session on there only if it is this call's
        reply (``Fate``): one that comes after the call was told time-limit is
        recorded ``abandoned``, and the session stays where the client knows it."""
        store, limits = self._store, self.config.limits
        limit, deadline = call.settings.time_limit, call.deadline
        fate = Fate()

        def work() -> Any:
            delta = _decoded(call.payload, limits)
            named = fleet.digest(delta) if store is not None else None
            current, kept = session, held
            for attempt in (1, 2):
                if current is None or (store is not None and kept is None):
                    assert store is not None
                    found = fleet.rebuilt(store, key, limits)
                    if found is None:
                        raise missing or SessionUnknown(key)
                    current, kept = found
                if call.version is not None and call.version != current.version:
                    if store is None:
                        raise VersionConflict(key, current.version, call.version)
                    entry = store.session_entry(key)
                    if attempt == 1 and kept is not None and entry != kept.entry:
                        current = None  # this copy is behind the ledger: rebuild it
                        continue
                    if entry is None or (entry.version, entry.delta) != (call.version + 1, named):
                        raise VersionConflict(key, None if entry is None else entry.version,
                                              call.version)  # fmt: skip
                    # the same delta, already answered (here or by another replica)
                    return entry, *fleet.replayed(store, entry)
                recorder = None
                if kept is not None:
                    assert named is not None
                    recorder = kept.recorder(named, fate.claim)
                try:
                    proposal = current.propose(
                        delta, time_limit=limit, deadline=deadline, ledger=recorder
                    )
                except SessionMoved as moved:
                    if attempt == 2 or moved.found is None:
                        raise VersionConflict(
                            key, None if moved.found is None else moved.found.version,
                            current.version,
                        ) from None  # fmt: skip
                    current = None  # another replica answered since: rebuild, once
                    continue
                return current, kept, recorder, proposal, _encoded(proposal.result)
            raise AssertionError("unreachable")

        try:
            done = await self._solve(work, deadline, fate)
        except VersionConflict:
            self._forget(key, session)
            raise
        if isinstance(done[0], SessionEntry):
            entry, candidates, encoded = done
            if session is not None and session.version != entry.version:
                self._forget(key, session)  # it was behind: the next call rebuilds it
            about = {"key": key, "version": entry.version, "candidates": candidates}
            return _reply_encoded(_exit_of(encoded), encoded, call.id, about)
        current, kept, recorder, proposal, encoded = done
        try:
            # a session that grew must fit beside the others (ServerBusy leaves it as it
            # was); with a ledger it has moved on there, and is simply not kept here
            if current is session:
                self.sessions.resize(key, weight(proposal.state))
        except ServerBusy:
            if kept is None:
                raise
            self._forget(key, session)
        # committed here, on the event loop, only now that the reply is a result
        current.commit(proposal)
        if kept is not None:
            kept.moved(recorder)
            if current is not session:
                self._held[current] = kept
                with contextlib.suppress(ServerBusy):
                    self.sessions.put(key, current, weight(current.state))
        return _reply(proposal.result, encoded, call.id, _about(key, current))

    def _forget(self, key: str, session: Session | None) -> None:
        """Stop holding ``session`` (a stale copy): the next call rebuilds it."""
        if session is not None and self._store is not None:
            self.sessions.close(key)

    async def _close(self, call: ServedCall) -> Reply:
        assert call.key is not None
        closed = self.sessions.close(call.key)
        if self._store is not None:
            # closed for every replica: the ledger's entry goes
            loop = asyncio.get_running_loop()
            gone = await loop.run_in_executor(self._pool, self._store.close_session, call.key)
            closed = closed or gone
        body = {"id": call.id, "exit": 0, "closed": closed, "session": {"key": call.key}}
        return Reply(0, 200, _json(body))

    # -- time and threads ---------------------------------------------------------

    async def _solve(
        self, work: Callable[[], T], deadline: Deadline, fate: Fate | None = None
    ) -> T:
        """``work()`` on a solver thread, within the call's ``deadline`` (``work`` hands
        it to the chain, which gives the solve what is left of it); ``Overdue`` when
        the deadline passes first. ``fate``: what the recording of the answer claims
        before it moves anything on, and the call abandons when its time is up (the
        first one wins; an answer claimed is the reply, however late)."""
        if not self._slots.locked():
            await self._slots.acquire()  # at once: a free thread costs no time
        else:
            try:
                await asyncio.wait_for(self._slots.acquire(), deadline.left())
            except TimeoutError:
                raise Overdue("every solver thread was busy") from None
        if not await self.bodies.room(deadline.left()):
            # what clients do not read stops growing: no solve starts while it fills
            # the memory bound (serve/memory.py), the thread held while it waits
            self._slots.release()
            raise Overdue("replies their clients had not read filled --max-body-memory")
        left = deadline.left()
        if left < _LEAST_SOLVE:
            self._slots.release()
            raise Overdue(
                f"{left * 1000:.1f} ms of it were left when the solve could start,"
                f" under the {_LEAST_SOLVE * 1000:g} ms a solve needs"
            )
        loop = asyncio.get_running_loop()
        self.solving += 1
        future = loop.run_in_executor(self._pool, work)
        # the thread is free only when the work has returned, even if the call gave up
        future.add_done_callback(self._solved)
        try:
            return await asyncio.wait_for(asyncio.shield(future), left + OVERRUN_GRACE)
        except TimeoutError:
            if fate is None or fate.abandon():
                future.add_done_callback(_retrieve)
                raise Overdue(
                    f"the solve had not returned {OVERRUN_GRACE:g} s after the limit"
                ) from None
        # the answer was being recorded as this call's reply when the time ran out: it
        # is the reply (its write is bounded by the ledger's own wait)
        return await future

    def _solved(self, _: Any) -> None:
        self.solving -= 1
        self._slots.release()

    def _recorder(self, key: str | None, fate: Fate) -> Ledger | None:
        """A call's recorder: its answer recorded as given only if ``fate`` says so."""
        if self._store is None:
            return None
        ledger = Ledger(self._store.path, session=key, store=self._store)
        ledger.claim = fate.claim
        return ledger


class _Given(Enum):
    OPEN = "open"
    CLAIMED = "claimed"
    ABANDONED = "abandoned"


class Fate:
    """Whether a call's answer is its reply: claimed by the recording of the answer (on
    the solver thread, just before it moves a session on) or abandoned by the call (on
    the event loop, once its time is up and it is told time-limit), whichever comes
    first; the other then knows."""

    __slots__ = ("_lock", "_state")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state = _Given.OPEN

    def claim(self) -> bool:
        """The answer is about to be recorded: whether it will be the reply."""
        with self._lock:
            if self._state is _Given.OPEN:
                self._state = _Given.CLAIMED
            return self._state is _Given.CLAIMED

    def abandon(self) -> bool:
        """The call's time is up: whether it may be told so (no answer claimed it)."""
        with self._lock:
            if self._state is _Given.OPEN:
                self._state = _Given.ABANDONED
            return self._state is _Given.ABANDONED


def _retrieve(future: asyncio.Future[Any]) -> None:
    # a call that gave up on its solve does not want the outcome; retrieving it keeps
    # asyncio from reporting an exception nobody awaited
    if not future.cancelled():
        future.exception()


def _message(body: bytes) -> str:
    """An error reply's message (for /healthz's ``refusing``)."""
    message: str = json.loads(body)["error"]["message"]
    return message


def _decoded(payload: Any, limits: Limits) -> Any:
    """An HTTP body (bytes) decoded within the limits; a JSON-lines payload as is."""
    if isinstance(payload, bytes | bytearray):
        return load_utf8_json(bytes(payload), limits)
    return payload


def _encoded(result: Result) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=False, separators=(",", ":"))


def _about(key: str, session: Session) -> dict[str, Any]:
    request = session.request
    return {"key": key, "version": session.version, "candidates": len(request.candidates)}


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _reply(result: Result, encoded: str, id_: Any, session: dict[str, Any] | None) -> Reply:
    return _reply_encoded(EXIT[result.status], encoded, id_, session)


def _exit_of(encoded: str) -> int:
    """The exit code of a recorded result (its JSON), as of a fresh one."""
    return EXIT[Status(json.loads(encoded)["status"])]


def _reply_encoded(code: int, encoded: str, id_: Any, session: dict[str, Any] | None) -> Reply:
    head: dict[str, Any] = {"id": id_, "exit": code}
    if session is not None:
        head["session"] = session
    # the result is already JSON (encoded on the solver thread): splice it in
    text = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
    return Reply(code, 200, (text[:-1] + ',"result":' + encoded + "}").encode("utf-8"))


def error(exc: BaseException, id_: Any = None) -> Reply:
    """The reply for an error."""
    told = error_reply(exc)
    body = _json({"id": id_, "exit": told.exit, "error": told.body})
    return Reply(told.exit, told.http, body, told.body["code"], told.body.get("retry_after"))
