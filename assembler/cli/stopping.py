"""Ctrl-C as a request to stop: the first one asks a run to end cleanly, a second one
interrupts at once.

Input: nothing (``StopOnInterrupt`` is a context manager around a run).
Output: ``requested()``, true once SIGINT arrived; the run polls it between batches,
writes what it found and says how far it got. Outside the main thread (where no
signal handler can be installed) it never fires and SIGINT keeps its usual meaning.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

__all__ = ["StopOnInterrupt"]


class StopOnInterrupt:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None
        self._installed = False

    def requested(self) -> bool:
        return self._event.is_set()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._event.is_set():
            raise KeyboardInterrupt
        self._event.set()

    def __enter__(self) -> StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
            self._installed = False
