"""Test-only strategies (imported by name through the strategy registry)."""

from __future__ import annotations

from assembler.model.types import Request, Result
from assembler.stages.gates import GateReport
from assembler.stages.trace import undecided_result


def never_finishes(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    return undecided_result(request, gates, "cpsat", bound=None)
