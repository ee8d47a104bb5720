"""The Dask engine: batches run on a ``dask.distributed`` cluster.

Input: a scheduler address (``tcp://host:8786``), or none and a worker count, in which
case a ``LocalCluster`` of that many single-threaded worker processes is started on
loopback and closed with the engine.
Output: an ``Engine`` whose jobs are Dask tasks, results handed back in job order.

Faults are Dask's to handle: a task whose worker dies is re-run on another worker
(up to the scheduler's ``allowed-failures``, default 3, before ``KilledWorker``), and
a task that raises is retried ``RETRIES`` times. Results are fetched as soon as they
finish, not when their turn comes, so a worker that dies holds no finished result
and costs only the batch it was running. ``rerun_jobs()`` counts, from the
scheduler's own ``remove-worker`` events, the batches of this engine that were lost
with a worker and re-run.

Every worker must run the same ``assembler`` as the client, or the answers could
differ: on start the engine compares a digest of the package's source on each worker
with its own and refuses a mismatch; that first call also loads the solvers on every
worker, so that the first batches do not pay for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import distributed
from distributed.diagnostics.plugin import WorkerPlugin

from ..api import assemble
from ..shipped import example
from .base import EngineError, WindowedEngine
from .local import detach

__all__ = ["DASK_BATCH", "RETRIES", "DaskEngine", "source_digest"]

# a batch that raises is tried this many more times (a worker that dies is another
# matter: the scheduler re-runs its tasks up to allowed-failures times)
RETRIES = 2
# a Dask task costs milliseconds of scheduling and transfer (benchmarks/engines.py):
# a batch of 64 examples keeps that to a few per cent of its work
DASK_BATCH = 64
_PACKAGE = Path(__file__).resolve().parents[1]
# distributed's API is not annotated: the three calls made of it, as what they are here
_LocalCluster: Any = distributed.LocalCluster
_Client: Any = distributed.Client
_wait: Any = distributed.wait


def source_digest() -> str:
    """sha256 over the package's Python sources, path and bytes: same code, same digest."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def prepare() -> str:
    """On a worker: load the solvers now (the first exact answer in a process pays
    for loading OR-Tools and HiGHS), then return the source digest."""
    assemble(json.loads(example("review-migration").read_text(encoding="utf-8")), strategy="exact")
    return source_digest()


class _Detach(WorkerPlugin):
    """On the LocalCluster's workers (restarted ones too): out of the terminal's reach,
    as the local pool's workers (``local.detach`` says why)."""

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            detach()
        else:
            with suppress(OSError):
                os.setsid()


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    # processes spawned meanwhile inherit the ignored disposition
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass(slots=True)
class _Job:
    future: Any
    done: bool = False
    result: Any = None
    error: BaseException | None = None


class DaskEngine(WindowedEngine):
    """Jobs as Dask tasks on the cluster at ``scheduler``, or on a new LocalCluster."""

    default_batch = DASK_BATCH

    def __init__(
        self, workers: int = 1, scheduler: str | None = None, connect_timeout: float = 10.0
    ) -> None:
        self._token = uuid.uuid4().hex[:12]
        self._count = 0
        self._cluster: Any = None
        self._client: Any = None
        try:
            if scheduler is None:
                with _interrupts_ignored(), warnings.catch_warnings():
                    # the scheduler's HTTP endpoints (loopback, as the cluster) move to a
                    # free port when 8787 is taken, with a warning that helps nobody here
                    warnings.filterwarnings("ignore", message="Port 8787 is already in use")
                    self._cluster = _LocalCluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # the workers share our stderr: at shutdown (Ctrl-C, the end
                        # of a hunt) a heartbeat racing the scheduler's close logs an
                        # ERROR with a traceback (seen under load). What matters reaches
                        # us through the futures and the scheduler's events instead.
                        silence_logs=logging.CRITICAL,
                    )
                    self._client = _Client(self._cluster)
                    self._client.register_plugin(_Detach(), name="assembler-detach")
                where = f"LocalCluster at {self._cluster.scheduler_address}"
            else:
                try:
                    self._client = _Client(scheduler, timeout=connect_timeout)
                except (OSError, TimeoutError) as error:
                    raise EngineError(
                        f"cannot reach the Dask scheduler at {scheduler}: {error}"
                    ) from None
                where = f"scheduler {scheduler}"
            try:
                self._client.wait_for_workers(1, timeout=connect_timeout)
            except TimeoutError:
                raise EngineError(
                    f"no Dask worker joined the {where} within {connect_timeout:g} s"
                ) from None
            self._check_workers()
            threads = self._client.nthreads()
            self.workers = max(1, sum(threads.values()))
            self.description = f"dask, {where}, {len(threads)} workers ({self.workers} threads)"
        except BaseException:
            self.close()
            raise

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (for diagnostics: worker processes, tasks)."""
        return self._client

    def _check_workers(self) -> None:
        ours = source_digest()
        try:
            theirs = self._client.run(prepare)
        except Exception as error:
            raise EngineError(
                f"the Dask workers cannot run assembler ({type(error).__name__}: {error});"
                " install the same assembler on every worker"
            ) from None
        for address, digest in sorted(theirs.items()):
            if digest != ours:
                raise EngineError(
                    f"the Dask worker {address} runs a different assembler (source"
                    f" {digest[:12]}, here {ours[:12]}): install the same version everywhere"
                )

    def _submit(self, fn: Callable[[Any], Any], job: Any) -> _Job:
        self._count += 1
        future = self._client.submit(
            fn, job, key=f"assembler-{self._token}-{self._count}", pure=False, retries=RETRIES
        )
        return _Job(future)

    def _wait(self, handles: list[Any], timeout: float) -> None:
        if handles[0].done:
            return
        waiting = [job.future for job in handles if not job.done]
        with suppress(TimeoutError):
            _wait(waiting, timeout=timeout, return_when="FIRST_COMPLETED")
        for job in handles:
            if not job.done and job.future.done():
                self._collect(job)

    def _collect(self, job: _Job) -> None:
        try:
            job.result = job.future.result()
        except Exception as error:
            job.error = error
        job.done = True
        # the result is here now: let the cluster forget it
        job.future.release()

    def _ready(self, handle: Any) -> bool:
        job: _Job = handle
        return job.done

    def _result(self, handle: Any) -> Any:
        job: _Job = handle
        if job.error is not None:
            error = job.error
            if type(error).__name__ == "KilledWorker":
                raise EngineError(
                    f"a batch was lost with every worker that ran it ({error}); the"
                    " finished batches are kept"
                )
            raise EngineError(
                f"a batch failed after {RETRIES} retries: {type(error).__name__}: {error}"
            )
        return job.result

    def _cancel(self, handles: list[Any]) -> None:
        futures = [job.future for job in handles if not job.done]
        if futures and self._client is not None:
            self._client.cancel(futures)

    def rerun_jobs(self) -> int:
        """Batches of this engine lost with a worker (running, or finished but not yet
        fetched) and so run again, from the scheduler's ``remove-worker`` events."""
        if self._client is None:
            return 0
        prefix = f"assembler-{self._token}-"
        lost: set[str] = set()
        for _, event in self._client.get_events("all"):
            if isinstance(event, dict) and event.get("action") == "remove-worker":
                for name in ("processing-tasks", "lost-computed-tasks"):
                    lost.update(k for k in event.get(name, ()) if str(k).startswith(prefix))
        return len(lost)

    def close(self) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
