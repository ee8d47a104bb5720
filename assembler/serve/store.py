"""The server's sessions: bounded in number, dropped when idle, one call at a time each.

Input: session keys and ``Session`` objects from the service, the clock.
Output: the session of a key, or ``SessionUnknown`` / ``SessionExpired`` (which keeps
saying *expired*, with the reason, for keys dropped recently); a per-key lock that
serialises the calls on one key in the order they arrived, waited for no longer than
the call's deadline (``Overdue``).

Memory is bounded by ``max_sessions`` (each session by the request ``Limits``) and by
``max_memory``, the sessions' estimated bytes together (``weight``: a kept session
holds its candidates' content and at most about ``BYTES_PER_FORM`` for each form's
typed values and the state kept between calls): a new session, or
one that grew, beyond either evicts the least recently used sessions that have no
call in flight, or, when that is not enough, is refused (``ServerBusy``). A session
unused for ``idle_seconds`` expires, checked on every access and swept by
``sweep()``.
Everything here runs on the event loop's thread, so it needs no lock of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from ..deadline import Deadline
from ..session import Session
from ..session.state import State
from .errors import Overdue, ServerBusy, SessionExpired, SessionUnknown

__all__ = ["BYTES_PER_FORM", "SessionStore", "weight"]

# the estimate of what a kept session holds per form besides its content
BYTES_PER_FORM = 2048

# how many dropped keys are remembered, so that their clients hear "expired"
_REMEMBERED_PER_SESSION = 4
_REMEMBERED_AT_LEAST = 1024


def weight(state: State) -> int:
    """The estimated bytes a session in ``state`` holds."""
    return BYTES_PER_FORM * len(state.request.candidates) + state.content_bytes


@dataclass(slots=True)
class _Entry:
    session: Session
    last_used: float
    weight: int = 0


@dataclass(slots=True)
class _KeyLock:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class SessionStore:
    def __init__(
        self,
        max_sessions: int,
        idle_seconds: float,
        max_memory: int = 2**62,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.max_memory = max_memory
        # the sessions' weights together
        self.memory = 0
        self._clock = clock
        # least recently used first
        self._sessions: OrderedDict[str, _Entry] = OrderedDict()
        self._gone: OrderedDict[str, str] = OrderedDict()
        self._locks: dict[str, _KeyLock] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    @asynccontextmanager
    async def key(self, key: str, deadline: Deadline) -> AsyncIterator[None]:
        """Hold ``key``'s lock: calls on one key run one at a time, in arrival order."""
        held = self._locks.get(key)
        if held is None:
            held = self._locks[key] = _KeyLock()
        held.users += 1
        try:
            try:
                await asyncio.wait_for(held.lock.acquire(), deadline.left())
            except TimeoutError:
                raise Overdue("the session's previous call was still running") from None
            try:
                yield
            finally:
                held.lock.release()
        finally:
            held.users -= 1
            if held.users == 0:
                del self._locks[key]

    def get(self, key: str) -> Session:
        entry = self._sessions.get(key)
        if entry is None:
            why = self._gone.get(key)
            if why is not None:
                raise SessionExpired(key, why)
            raise SessionUnknown(key)
        now = self._clock()
        if now - entry.last_used > self.idle_seconds:
            self._drop(key, f"unused for more than {self.idle_seconds:g} s")
            raise SessionExpired(key, f"unused for more than {self.idle_seconds:g} s")
        entry.last_used = now
        self._sessions.move_to_end(key)
        return entry.session

    def put(self, key: str, session: Session, weight: int = 0) -> None:
        """Keep ``session`` under ``key`` (replacing the key's session, if any), making
        room for its ``weight`` first."""
        if key not in self._sessions and len(self._sessions) >= self.max_sessions:
            self._evict()
        self._fit(key, weight)
        old = self._sessions.get(key)
        self.memory += weight - (0 if old is None else old.weight)
        self._sessions[key] = _Entry(session, self._clock(), weight)
        self._sessions.move_to_end(key)
        self._gone.pop(key, None)

    def resize(self, key: str, weight: int) -> None:
        """``key``'s session is about to weigh ``weight``: make room, or raise
        ``ServerBusy`` (the session is then left as it was)."""
        entry = self._sessions.get(key)
        if entry is None:
            return
        self._fit(key, weight)
        self.memory += weight - entry.weight
        entry.weight = weight

    def _fit(self, key: str, weight: int) -> None:
        """Evict the least recently used idle sessions until ``weight`` fits under
        ``key`` beside the others."""
        entry = self._sessions.get(key)
        others = self.memory - (0 if entry is None else entry.weight)
        if others + weight <= self.max_memory:
            return
        victims = []
        for other in self._sessions:
            if others + weight <= self.max_memory:
                break
            if other != key and self._evictable(other):
                victims.append(other)
                others -= self._sessions[other].weight
        if others + weight > self.max_memory:
            # nothing is evicted for a session that would not fit anyway
            raise ServerBusy(
                f"the sessions kept fill --max-session-memory ({self.max_memory} bytes) and"
                f" those with a call in flight leave too little for this one (~{weight} bytes)"
            )
        for other in victims:
            self._drop(
                other,
                f"evicted: this server keeps sessions of at most {self.max_memory} bytes"
                " together (--max-session-memory) and this one was the least recently used",
            )

    def room(self, key: str) -> None:
        """Raise ``ServerBusy`` if a new session under ``key`` could not be kept."""
        if key in self._sessions or len(self._sessions) < self.max_sessions:
            return
        if not any(self._evictable(k) for k in self._sessions):
            raise ServerBusy(
                f"all {self.max_sessions} sessions (--max-sessions) have a call in flight;"
                " try again, or close a session"
            )

    def close(self, key: str) -> bool:
        """Drop ``key``'s session; whether there was one."""
        entry = self._sessions.pop(key, None)
        if entry is None:
            return False
        self.memory -= entry.weight
        return True

    def sweep(self) -> int:
        """Drop every session idle for too long; how many were dropped."""
        now = self._clock()
        idle = [
            key
            for key, entry in self._sessions.items()
            if now - entry.last_used > self.idle_seconds and self._evictable(key)
        ]
        for key in idle:
            self._drop(key, f"unused for more than {self.idle_seconds:g} s")
        return len(idle)

    def _evictable(self, key: str) -> bool:
        return key not in self._locks

    def _evict(self) -> None:
        for key in self._sessions:
            if self._evictable(key):
                self._drop(
                    key,
                    f"evicted: this server keeps at most {self.max_sessions} sessions"
                    " (--max-sessions) and this one was the least recently used",
                )
                return
        raise ServerBusy(f"all {self.max_sessions} sessions (--max-sessions) have a call in flight")

    def _drop(self, key: str, why: str) -> None:
        entry = self._sessions.pop(key, None)
        if entry is not None:
            self.memory -= entry.weight
        self._gone[key] = why
        self._gone.move_to_end(key)
        remembered = max(_REMEMBERED_AT_LEAST, _REMEMBERED_PER_SESSION * self.max_sessions)
        while len(self._gone) > remembered:
            self._gone.popitem(last=False)
