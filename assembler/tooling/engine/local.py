"""The local engine: a pool of worker processes on this machine.

Input: a worker count (2 or more; one worker is ``SerialEngine``, in this process).
Output: an ``Engine`` whose jobs run in ``spawn``-started processes, results in job
order. The workers ignore SIGINT: a Ctrl-C in a terminal reaches the whole process
group, and only the parent decides what it means (stop and write what was found).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from typing import Any

from .base import EngineError, WindowedEngine

__all__ = ["PoolEngine"]


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class PoolEngine(WindowedEngine):
    """Jobs in a local process pool."""

    def __init__(self, workers: int) -> None:
        if workers < 2:
            raise ValueError("a pool has 2 or more workers; one worker runs in-process")
        self.workers = workers
        self.description = f"local, {workers} processes"
        # spawn, not fork: the parent may already hold OR-Tools' threads
        context = multiprocessing.get_context("spawn")
        self._pool: Any = context.Pool(workers, initializer=_ignore_interrupts)

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
