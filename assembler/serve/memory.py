"""The bytes of calls in flight, bounded for the whole server (``--max-body-memory``).

Input: byte counts taken when a call's line or body is read (the JSON-lines reader
thread, or an HTTP body on the event loop) and given back once its reply is out.
Output: whether a body fits (``try_take``), or a wait until it does (``take``, for
the reader of a pipe, whose one client is simply read more slowly); the bytes held
now, for ``/healthz``.

Thread-safe: the stdin reader takes from its own thread, the event loop gives back.
"""

from __future__ import annotations

import threading

__all__ = ["BodyMemory"]


class BodyMemory:
    """At most ``limit`` bytes held at once by calls that have not been answered."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held = 0
        self._room = threading.Condition()

    @property
    def held(self) -> int:
        return self._held

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
