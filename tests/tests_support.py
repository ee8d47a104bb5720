"""Test-only strategies (imported by name through the strategy registry) and batch functions."""

from __future__ import annotations

import os
import signal
from typing import Any

from assembler.deadline import Deadline
from assembler.exact.backend import Backend
from assembler.model.types import Request, Result
from assembler.stages.choice import Choice
from assembler.stages.gates import GateReport
from assembler.stages.trace import trace


def solve_exact(
    request: Request, gates: GateReport, backend: Backend, time_limit: float, workers: int
) -> Result:
    """The exact decision with ``backend`` and its trace: a strategy's answer outside the
    pipeline, for tests that hand it a backend of their own."""
    from assembler.exact.solve import decide_exact

    choice = decide_exact(request, gates, backend, Deadline.after(time_limit), workers)
    return trace(request, gates, backend.name, choice)[0]


def never_finishes(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    return Choice.undecided()


def dies_on_job_three(job: int) -> int:
    """A batch function whose worker process is killed outright on job 3."""
    if job == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return job * job


def crashes(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    """A strategy with a bug: what the CLI and the API do when one escapes."""
    return {}["no such key"]  # type: ignore[no-any-return]


def sleepy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **kept: Any
) -> Choice:
    """cpsat after sleeping ``ASSEMBLER_TEST_SLEEP`` seconds (default 2) whatever the
    time limit: a long solve for the server's tests (shutdown, queueing, a solve that
    overruns its limit)."""
    import time

    from assembler.exact.solve import exact_strategy

    time.sleep(float(os.environ.get("ASSEMBLER_TEST_SLEEP", "2")))
    return exact_strategy(request, gates, deadline, workers, **kept)


def records_gc_state(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    import gc

    assert not gc.isenabled(), "the cyclic collector runs during a call"
    return Choice.undecided()
