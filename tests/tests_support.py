"""Test-only strategies (imported by name through the strategy registry)."""

from __future__ import annotations

from assembler.gates import GateReport
from assembler.trace import undecided_result
from assembler.types import Request, Result


def never_finishes(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    return undecided_result(request, gates, "cpsat", bound=None)
