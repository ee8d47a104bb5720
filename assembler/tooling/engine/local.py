"""The local engine: a pool of worker processes on this machine.

Input: a worker count.
Output: an ``Engine`` whose jobs run in ``spawn``-started processes, results in job
order.

The workers leave the terminal's process group (``detach``): a Ctrl-C in a terminal
reaches the whole foreground group, and only the parent may decide what it means
(stop and write what was found). Ignoring SIGINT in a worker is not enough: CP-SAT
installs its own SIGINT handler for each solve, which cuts the search short (an
unproven answer where the optimum was due), and leaves SIGINT at its default,
fatal disposition when the solve ends.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable
from typing import Any

from .base import EngineError, WindowedEngine

__all__ = ["PoolEngine", "detach"]


def detach() -> None:
    """In a worker process: out of the terminal's reach (see the module's docstring)."""
    with contextlib.suppress(OSError):  # already a session leader
        os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class PoolEngine(WindowedEngine):
    """Jobs in a local process pool."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.workers = workers
        self.description = f"local, {workers} worker process{'es' if workers > 1 else ''}"
        # spawn, not fork: the parent may already hold OR-Tools' threads
        context = multiprocessing.get_context("spawn")
        self._pool: Any = context.Pool(workers, initializer=detach)

    def _submit(self, fn: Callable[[Any], Any], job: Any) -> Any:
        return self._pool.apply_async(fn, (job,))

    def _wait(self, handles: list[Any], timeout: float) -> None:
        handles[0].wait(timeout)

    def _ready(self, handle: Any) -> bool:
        return bool(handle.ready())

    def _result(self, handle: Any) -> Any:
        try:
            return handle.get()
        except Exception as error:
            raise EngineError(f"a batch failed: {type(error).__name__}: {error}") from error

    def _cancel(self, handles: list[Any]) -> None:
        # a pool cannot cancel a started task; close() terminates the workers
        return None

    def rerun_jobs(self) -> int:
        return 0

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()
