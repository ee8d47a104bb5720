"""Test-only strategies (imported by name through the strategy registry) and batch functions."""

from __future__ import annotations

import os
import signal

from assembler.model.types import Request, Result
from assembler.stages.gates import GateReport
from assembler.stages.trace import undecided_result


def never_finishes(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    return undecided_result(request, gates, "exact", bound=None)


def dies_on_job_three(job: int) -> int:
    """A batch function whose worker process is killed outright on job 3."""
    if job == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return job * job


def crashes(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    """A strategy with a bug: what the CLI and the API do when one escapes."""
    return {}["no such key"]  # type: ignore[no-any-return]


def sleepy(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    """exact after sleeping ``ASSEMBLER_TEST_SLEEP`` seconds (default 2) whatever the
    time limit: a long solve for the server's tests (shutdown, queueing, a solve that
    overruns its limit)."""
    import time

    from assembler.exact.solve import exact_strategy

    pause = float(os.environ.get("ASSEMBLER_TEST_SLEEP", "2"))
    time.sleep(pause)
    return exact_strategy(request, gates, max(0.001, time_limit - pause), workers)


# the collector's state each call of ``records_gc_state`` saw
GC_SEEN: list[tuple[bool, tuple[int, int, int], int]] = []


def records_gc_state(
    request: Request, gates: GateReport, time_limit: float, workers: int
) -> Result:
    """Notes the cyclic collector's state in the middle of a call."""
    import gc

    GC_SEEN.append((gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()))
    return undecided_result(request, gates, "exact", bound=None)
