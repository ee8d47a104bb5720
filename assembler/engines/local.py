"""The local engine: a pool of worker processes on this machine.

Input: a worker count.
Output: an ``Engine`` whose jobs run in ``spawn``-started processes, results in job
order.

The workers leave the terminal's process group (``detach``): a Ctrl-C in a terminal
reaches the whole foreground group, and only the parent may decide what it means
(stop and write what was found). Ignoring SIGINT in a worker would not be enough on
its own: a solver library may install its own handler (``exact/cpsat.py`` turns
CP-SAT's off), and leaving the group keeps the decision with the parent whatever a
library does.

A worker that dies (killed, out of memory) breaks the pool: its batch is lost, and
this engine does not re-run batches (that is what the Dask engine's retries are for),
so the run stops with an ``EngineError`` naming the cause instead of waiting forever
for a result that will never come.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .base import EngineError, WindowedEngine

__all__ = ["PoolEngine", "detach"]

_BROKEN = (
    "a worker process of the local pool died (killed, or out of memory); its batch is"
    " lost and the local engine does not re-run batches: run again, or use --engine dask,"
    " whose retries re-run a lost batch"
)


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
        self._pool = concurrent.futures.ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=detach
        )

    def _submit(self, fn: Callable[[Any], Any], job: Any) -> Any:
        try:
            return self._pool.submit(fn, job)
        except BrokenProcessPool as error:
            raise EngineError(_BROKEN) from error

    def _wait(self, handles: list[Any], timeout: float) -> None:
        concurrent.futures.wait(handles[:1], timeout)

    def _ready(self, handle: Any) -> bool:
        return bool(handle.done())

    def _result(self, handle: Any) -> Any:
        try:
            return handle.result()
        except BrokenProcessPool as error:
            raise EngineError(_BROKEN) from error
        except Exception as error:
            raise EngineError(f"a batch failed: {type(error).__name__}: {error}") from error

    def _cancel(self, handles: list[Any]) -> None:
        for handle in handles:
            handle.cancel()

    def rerun_jobs(self) -> int:
        return 0

    def close(self) -> None:
        # A started batch cannot be cancelled, and shutdown() would wait for it: a
        # stopped hunt ends now, so the workers are terminated (the executor keeps its
        # processes in a private mapping; there is no public terminate).
        processes = list(getattr(self._pool, "_processes", {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()
        for process in processes:
            process.join()
