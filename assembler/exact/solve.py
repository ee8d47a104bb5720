"""The exact chain after the gates, for any backend.

Input: a validated ``Request``, its ``GateReport``, a ``Backend``, a time limit and
a worker count.
Output: a ``Result``.

The chain is visible and each link a pure stage:
required refusals -> closure/groups -> backend solve ->
(refusal with mandatory cost and conflict | bundle | undecided) -> trace.
``cpsat_strategy`` is that chain with the reducing CP-SAT backend.
"""

from __future__ import annotations

import time
from dataclasses import replace

from ..model.types import Request, Result
from ..stages.gates import GateReport
from ..stages.trace import bundle_result, refused_result, undecided_result
from .backend import Backend, SolveStatus, selection_value
from .closure import build_problem
from .refusal import over_budget_refusal, required_refusal

__all__ = ["cpsat_strategy", "solve_exact"]


def solve_exact(
    request: Request, gates: GateReport, backend: Backend, time_limit: float, workers: int
) -> Result:
    """The exact pipeline after the gates, for any backend. ``time_limit`` is what is
    left of the call's limit for deciding (the caller keeps back what the trace needs):
    past it nothing more is searched, and the answer is what was proven by then."""
    deadline = time.monotonic() + time_limit
    name = backend.name
    started = time.perf_counter()
    refusal = required_refusal(request, gates)
    if refusal is not None:
        return refused_result(request, gates, name, refusal)
    if time.monotonic() >= deadline:
        return undecided_result(request, gates, name, None, (("closure", 0.0),))
    problem = build_problem(request, gates)
    built_at = time.perf_counter()
    timings: tuple[tuple[str, float], ...] = (("closure", built_at - started),)
    if time.monotonic() >= deadline:
        return undecided_result(request, gates, name, None, timings)
    # building the problem is part of the call's time too
    outcome = backend.solve(
        problem, time_limit=max(0.001, deadline - time.monotonic()), workers=workers
    )
    solved_at = time.perf_counter()
    timings += (("solve", solved_at - built_at),)
    if outcome.status is SolveStatus.INFEASIBLE:
        refusal = over_budget_refusal(
            problem,
            backend,
            time_limit=deadline - time.monotonic(),
            workers=workers,
            priced=outcome.selection,
        )
        timings += (("refusal", time.perf_counter() - solved_at),)
        return refused_result(request, gates, name, refusal, timings)
    if outcome.status is SolveStatus.UNKNOWN:
        return undecided_result(request, gates, name, outcome.bound, timings)
    optimal = outcome.status is SolveStatus.OPTIMAL
    result = bundle_result(
        request,
        gates,
        name,
        (problem.form_ids[f] for f in outcome.selection),
        optimal=optimal,
        bound=selection_value(problem, outcome.selection) if optimal else outcome.bound,
    )
    return replace(result, timings=(*timings, ("trace", time.perf_counter() - solved_at)))


def cpsat_strategy(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    from .cpsat import CpSat
    from .reducing import Reducing

    return solve_exact(request, gates, Reducing(CpSat()), time_limit, workers)
