"""The exact chain after the gates, for any backend.

Input: a validated ``Request``, its ``GateReport``, a ``Backend``, a time limit and
a worker count (and, from a session, a problem solved before with its outcome).
Output: a ``Result`` (``solve_exact``), or what was decided before the trace
(``decide_exact``: a session traces a bundle itself, keeping the trace between calls).

The chain is visible and each link a pure stage:
required refusals -> closure/groups -> backend solve ->
(refusal with mandatory cost and conflict | bundle | undecided) -> trace.
``exact_strategy`` (the strategy registered as ``exact``) is that chain with the
backend of ``exact_backend``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..model.types import Request, Result
from ..stages.gates import GateReport
from ..stages.trace import bundle_result, refused_result, undecided_result
from .backend import Backend, SolveOutcome, SolveStatus
from .closure import Problem, build_problem, build_problem_by
from .refusal import over_budget_refusal, required_refusal

if TYPE_CHECKING:
    from .relaxation import LpMemory

__all__ = [
    "UntracedResult",
    "decide_exact",
    "exact_backend",
    "exact_strategy",
    "solve_exact",
]


@dataclass(frozen=True, slots=True)
class UntracedResult:
    """The exact chain's answer before the bundle's trace: the finished ``result`` when
    there is no bundle (a refusal, or undecided), else the problem and the backend's
    outcome, whose bundle the caller traces."""

    result: Result | None
    problem: Problem | None = None
    outcome: SolveOutcome | None = None
    timings: tuple[tuple[str, float], ...] = ()


def decide_exact(
    request: Request,
    gates: GateReport,
    backend: Backend,
    time_limit: float,
    workers: int,
    known: tuple[Problem, SolveOutcome] | None = None,
) -> UntracedResult:
    """The exact pipeline after the gates, up to the trace. ``time_limit`` is what is
    left of the call's limit for deciding (the caller keeps back what the trace needs):
    past it nothing more is searched, and the answer is what was proven by then.

    ``known`` is a problem an earlier call solved and its outcome (lending the weights
    of the forms they share to this problem's build): when this problem is
    equal to it and the outcome was proven OPTIMAL, it is this problem's answer too
    (the lexicographic order leaves one optimum, so every proof finds that one) and no
    backend runs. Anything less than a proof is never reused."""
    deadline = time.monotonic() + time_limit
    started = time.perf_counter()
    refusal = required_refusal(request, gates)
    if refusal is not None:
        return UntracedResult(refused_result(request, gates, backend.name, refusal))
    if time.monotonic() >= deadline:
        return UntracedResult(
            undecided_result(request, gates, backend.name, None, (("closure", 0.0),))
        )
    # Without a known problem, the build itself gives up once the deadline has passed:
    # a problem finished past it is answered undecided below, unsearched. A known
    # problem is always built whole, as its outcome may answer this call.
    problem = (
        build_problem_by(deadline, request, gates)
        if known is None
        else build_problem(request, gates, known[0])
    )
    built_at = time.perf_counter()
    timings: tuple[tuple[str, float], ...] = (("closure", built_at - started),)
    if problem is None:
        return UntracedResult(undecided_result(request, gates, backend.name, None, timings))
    if known is not None and known[1].status is SolveStatus.OPTIMAL and known[0] == problem:
        return UntracedResult(None, problem, known[1], (*timings, ("solve", 0.0)))
    if time.monotonic() >= deadline:
        return UntracedResult(undecided_result(request, gates, backend.name, None, timings))
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
        return UntracedResult(refused_result(request, gates, backend.name, refusal, timings))
    if outcome.status is SolveStatus.UNKNOWN:
        return UntracedResult(
            undecided_result(request, gates, backend.name, outcome.bound, timings)
        )
    return UntracedResult(None, problem, outcome, timings)


def solve_exact(
    request: Request, gates: GateReport, backend: Backend, time_limit: float, workers: int
) -> Result:
    """The exact pipeline after the gates, for any backend (``decide_exact``, then the
    trace of the bundle when there is one)."""
    decided = decide_exact(request, gates, backend, time_limit, workers)
    if decided.result is not None:
        return decided.result
    problem, outcome = decided.problem, decided.outcome
    assert problem is not None and outcome is not None
    traced_at = time.perf_counter()
    result = bundle_result(
        request,
        gates,
        backend.name,
        (problem.form_ids[f] for f in outcome.selection),
        optimal=outcome.status is SolveStatus.OPTIMAL,
        # bundle_result reports the bundle's own value as the bound when optimal
        bound=outcome.bound,
    )
    return replace(result, timings=(*decided.timings, ("trace", time.perf_counter() - traced_at)))


def exact_backend(memory: LpMemory | None = None) -> Backend:
    """The backend of the ``exact`` strategy: CP-SAT behind the reductions (whose first
    LP starts from ``memory``'s basis, a session's, when one is given)."""
    from .core_search import CoreSearch
    from .cpsat import CpSat

    return CoreSearch(CpSat(), memory)


def exact_strategy(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    return solve_exact(request, gates, exact_backend(), time_limit, workers)
