"""The server's memory: the bytes it holds for its clients, bounded
(``--max-body-memory``), and memory freed by calls given back to the system once the
server is idle.

Input: byte counts taken when a call's line or body is read (the JSON-lines reader
thread, or an HTTP body on the event loop) and given back once its reply exists; the
bytes of each reply from the moment it exists until its client has taken them (the
last byte handed to the socket or the pipe) or was cut off.
Output: whether a body fits (``try_take``), or a wait until it does (``take``, for
the reader of a pipe, whose one client is simply read more slowly; ``take_within``,
for an HTTP body once another was cut to make room for it); a wait until
replies nobody reads no longer fill the bound (``room``: no solve starts before, so
that what clients do not read stops growing); the bytes held now, for ``/healthz``.
``give_back()`` collects cyclic garbage and returns glibc's free pages
(``malloc_trim``): without it a server that answered a burst of large calls keeps
their peak in its RSS long after (measured in benchmarks/soak.py).

The bound: bodies are taken only when they fit; a reply is always counted (it exists:
refusing it would lose an answer, and a session's delta with it), but while bodies and
replies together exceed ``limit`` no solve starts, so the bytes held stay within
``limit`` plus the replies of the solves already running (``--concurrency``).

Thread-safe: the stdin reader takes from its own thread, the event loop gives back.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import threading
from collections.abc import Callable
from functools import cache

__all__ = ["BodyMemory", "give_back"]


class BodyMemory:
    """At most ``limit`` bytes held at once by calls that have not been answered and
    replies their clients have not taken (beyond it only by the replies of the solves
    that were running)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held = 0
        self._replies = 0
        self.unread = 0  # replies being written, not yet taken whole
        self._room = threading.Condition()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        # bodies waiting for bytes given back (``take_within``), woken at every give
        self._takers: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def held(self) -> int:
        """Bytes of bodies and replies together."""
        return self._held

    @property
    def replies(self) -> int:
        """Of them, the replies' bytes."""
        return self._replies

    def try_take(self, size: int) -> bool:
        """Take ``size`` bytes if they fit now; whether they were taken."""
        with self._room:
            if self._held + size > self.limit:
                return False
            self._held += size
            return True

    def take(self, size: int) -> None:
        """Take ``size`` bytes, waiting until they fit (at once when nothing is held:
        a single call within the request limits is never refused for the others')."""
        with self._room:
            while self._held and self._held + size > self.limit:
                self._room.wait()
            self._held += size

    def give(self, size: int) -> None:
        if size:
            with self._room:
                self._held -= size
                self._room.notify_all()
                waiters = self._waiters if self._held <= self.limit else []
                if waiters:
                    self._waiters = []
                waiters, self._takers = waiters + self._takers, []
            for loop, future in waiters:
                loop.call_soon_threadsafe(_wake, future)

    async def take_within(self, size: int, timeout: float) -> bool:
        """Take ``size`` bytes once they fit, waiting at most ``timeout`` seconds for
        bytes given back (a body cut to make room); whether they were taken."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not self.try_take(size):
            left = end - loop.time()
            if left <= 0:
                return False
            future: asyncio.Future[None] = loop.create_future()
            with self._room:
                self._takers.append((loop, future))
            try:
                await asyncio.wait_for(future, left)
            except TimeoutError:
                with self._room:
                    if (loop, future) in self._takers:
                        self._takers.remove((loop, future))
        return True

    def hold_reply(self, size: int) -> None:
        """A reply of ``size`` bytes exists: counted until ``drop_reply``."""
        with self._room:
            self._held += size
            self._replies += size
            self.unread += 1

    def drop_reply(self, size: int) -> None:
        """The reply was taken whole by its client, or its client was cut off."""
        with self._room:
            self._replies -= size
            self.unread -= 1
        self.give(size)

    async def room(self, timeout: float) -> bool:
        """Wait, at most ``timeout`` seconds, until what is held is within the limit;
        whether it is."""
        loop = asyncio.get_running_loop()
        with self._room:
            if self._held <= self.limit:
                return True
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            await asyncio.wait_for(future, max(0.0, timeout))
            return True
        except TimeoutError:
            with self._room:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
                return self._held <= self.limit


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def give_back() -> None:
    """Return what the last calls freed to the system (glibc; elsewhere the cyclic
    collector only)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    return trim
