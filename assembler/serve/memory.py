"""The server's memory: bytes of calls in flight, bounded (``--max-body-memory``), and
memory freed by calls given back to the system once the server is idle.

Input: byte counts taken when a call's line or body is read (the JSON-lines reader
thread, or an HTTP body on the event loop) and given back once its reply is out.
Output: whether a body fits (``try_take``), or a wait until it does (``take``, for
the reader of a pipe, whose one client is simply read more slowly); the bytes held
now, for ``/healthz``. ``give_back()`` collects cyclic garbage and returns glibc's
free pages (``malloc_trim``): without it a server that answered a burst of large
calls keeps their peak in its RSS long after (measured in benchmarks/soak.py).

Thread-safe: the stdin reader takes from its own thread, the event loop gives back.
"""

from __future__ import annotations

import ctypes
import gc
import threading
from collections.abc import Callable
from functools import cache

__all__ = ["BodyMemory", "give_back"]


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
