"""The cyclic garbage collector paused for a call, safely across threads.

Input: nothing (a context manager). Output: ``no_cyclic_gc()``, under which the
cyclic collector is off; it comes back to its previous state when the last of the
concurrent calls that paused it ends.

A call builds many acyclic objects (a parse hundreds of thousands) that die with
it, and each generation-2 pass of the collector walks all of them again (measured:
30% of a parse at 100k candidates, 20% of a 100k-form call, 9% at 10k). The depth
under a lock keeps one thread's end from turning the collector back on in the middle
of another thread's call (``serve --concurrency``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["no_cyclic_gc"]

_gc_lock = threading.Lock()
_gc_depth = 0
_gc_was_enabled = False


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic garbage collector off for the call (the module says why), back to its
    previous state after the last concurrent call."""
    global _gc_depth, _gc_was_enabled
    with _gc_lock:
        if _gc_depth == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_depth += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth -= 1
            if _gc_depth == 0 and _gc_was_enabled:
                gc.enable()
