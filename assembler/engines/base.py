"""The engine protocol: submit batches, get their results back in submission order.

Input: a picklable function and an iterable of picklable jobs (for the hunt, a batch
of example indices each).
Output: the function's results, one per job, in the order the jobs were given,
whatever the number of workers or the order in which they finish. Also the
``EngineSpec`` a command line chooses an engine by, ``EngineError`` for an engine
that failed, and ``SerialEngine``: the jobs run one by one in this process.

Why in order: a hunt merges findings by example index and a time-bounded hunt must
have tried a prefix 0..n-1 of the examples, so an engine never hands back a later
job's result before an earlier one. At most ``window`` jobs are in flight, so a
time-bounded run can stop soon after its deadline, and ``stop()`` is polled between
results (a first Ctrl-C), so an interrupted run keeps every result already handed
back.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from ..errors import EngineError

__all__ = [
    "LOCAL_BATCH",
    "POLL_SECONDS",
    "Engine",
    "EngineError",
    "EngineKind",
    "EngineSpec",
    "SerialEngine",
    "WindowedEngine",
    "never",
]

J = TypeVar("J")
R = TypeVar("R")

# how long a wait for a result lasts before stop() is asked again
POLL_SECONDS = 0.1
# jobs in flight per worker: enough that no worker idles while the parent merges
IN_FLIGHT_PER_WORKER = 3
# handing a local job over costs far less than an example: small batches keep a
# time-bounded hunt's overrun short
LOCAL_BATCH = 8


class EngineKind(StrEnum):
    """Where batches run."""

    LOCAL = "local"  # this process (1 worker) or a local process pool
    DASK = "dask"  # a dask.distributed cluster: a scheduler address, or a LocalCluster


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """Which engine, how many workers (a LocalCluster's or a pool's), which scheduler.

    ``workers`` is ignored with a ``scheduler`` address: the cluster has its own.
    """

    kind: EngineKind = EngineKind.LOCAL
    workers: int = 1
    scheduler: str | None = None
    connect_timeout: float = 10.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError("workers must be at least 1")
        if self.scheduler is not None and self.kind is not EngineKind.DASK:
            raise ValueError("a scheduler address needs the dask engine")
        if not self.connect_timeout > 0:
            raise ValueError("connect_timeout must be positive")


def never() -> bool:
    return False


class Engine(Protocol):
    """Runs jobs on some workers; results come back in job order."""

    @property
    def description(self) -> str:
        """One line for summaries: what ran the batches."""
        ...

    @property
    def workers(self) -> int: ...

    @property
    def default_batch(self) -> int:
        """Examples per job when the caller does not say: enough to hide the engine's
        cost per job, few enough to keep every worker busy."""
        ...

    def map(
        self, fn: Callable[[J], R], jobs: Iterable[J], stop: Callable[[], bool] = never
    ) -> Iterator[R]:
        """``fn(job)`` for each job, in job order; ends early, after handing back what
        is already finished, once ``stop()`` is true."""
        ...

    def rerun_jobs(self) -> int:
        """Jobs that had to run again because a worker was lost (0 on a local engine)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Engine: ...

    def __exit__(self, *exc: object) -> None: ...


class _Closing:
    def close(self) -> None:
        return None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SerialEngine(_Closing):
    """Every job in this process, one after the other: the reference engine."""

    description = "local, 1 process"
    workers = 1
    default_batch = LOCAL_BATCH

    def map(
        self, fn: Callable[[J], R], jobs: Iterable[J], stop: Callable[[], bool] = never
    ) -> Iterator[R]:
        for job in jobs:
            if stop():
                return
            yield fn(job)

    def rerun_jobs(self) -> int:
        return 0


class WindowedEngine(_Closing, ABC):
    """An engine with workers elsewhere: keeps a window of jobs in flight and hands
    the results back in order. A subclass says how to submit, wait and collect."""

    workers: int
    default_batch: int = LOCAL_BATCH

    @abstractmethod
    def _submit(self, fn: Callable[[Any], Any], job: Any) -> Any:
        """Start one job; return a handle."""

    @abstractmethod
    def _wait(self, handles: list[Any], timeout: float) -> None:
        """Block until the first handle is finished or ``timeout`` passes."""

    @abstractmethod
    def _ready(self, handle: Any) -> bool:
        """Whether the job is finished (its result or its error is in)."""

    @abstractmethod
    def _result(self, handle: Any) -> Any:
        """The result of a finished job; raises ``EngineError`` when it failed."""

    @abstractmethod
    def _cancel(self, handles: list[Any]) -> None:
        """Give up on unfinished jobs."""

    def map(
        self, fn: Callable[[J], R], jobs: Iterable[J], stop: Callable[[], bool] = never
    ) -> Iterator[R]:
        window = IN_FLIGHT_PER_WORKER * self.workers
        source = iter(jobs)
        pending: deque[Any] = deque()
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < window and not stop():
                    job = next(source, _END)
                    if job is _END:
                        exhausted = True
                    else:
                        pending.append(self._submit(fn, job))
                if not pending:
                    return
                if stop():
                    # keep what is already finished, in order, and nothing more
                    while pending and self._ready(pending[0]):
                        yield self._result(pending.popleft())
                    return
                self._wait(list(pending), POLL_SECONDS)
                while pending and self._ready(pending[0]):
                    yield self._result(pending.popleft())
        finally:
            if pending:
                self._cancel(list(pending))


_END: Any = object()
