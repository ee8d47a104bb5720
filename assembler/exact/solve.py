"""The exact decision, for any backend: gates' report in, a ``Choice`` out.

Input: a validated ``Request``, its ``GateReport``, a ``Backend``, the call's
``Deadline`` (the trace's share already kept back) and a worker count; and optionally
what the previous call of a session kept (``ExactKept``).
Output: a ``Choice`` (a bundle with its proof, a refusal with the mandatory cost and
conflict, or undecided) carrying the ``ExactKept`` for the next call.

The chain is visible and each link a pure stage:
required refusals -> closure/groups -> the linear refusal -> backend solve -> refusal pricing.

What is kept, and why reusing it is exact: the problem and the backend's outcome. When
the new problem is equal to the kept one and the outcome was proven OPTIMAL, no backend
runs: the lexicographic order has one optimum, so every proof finds that one. The same
holds when only values moved, none of the optimum's forms lost value and none of the
others gained any (``still_optimal``: every other selection gains at most what the
optimum gains, so none overtakes it, and a tie on value leaves cost and weight as they
were). Anything less than a proof (a time-out's incumbent, a refusal) is never reused.
The kept optimum is the cache-blind one: with a cache section the cache-aware order
(``cached.py``) decides from it exactly as from a fresh solve's.
A session's result says which: its timings hold ``kept-optimum`` (the seconds the
check took) when the previous optimum answered, ``fresh-solve`` when a backend ran. The kept problem
also lends the tie-break weights of the forms both share, and a session's LP starts from
the basis the previous LP ended with (``relaxation.LpMemory``: a start, never a premise).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..deadline import Deadline, Stopwatch
from ..model.rendering import RenderFormat
from ..model.types import Request
from ..stages.choice import Choice
from ..stages.gates import GateReport
from .backend import Ask, Backend, SolveOutcome, SolveStatus
from .closure import Problem, build_problem, build_problem_by
from .mckp import solve_mckp
from .refusal import linear_refusal, over_budget_refusal, required_refusal

if TYPE_CHECKING:
    from .relaxation import LpMemory

__all__ = ["ExactKept", "decide_exact", "exact_backend", "exact_strategy", "still_optimal"]


@dataclass(frozen=True, slots=True)
class ExactKept:
    """What the exact strategy keeps for a session's next call: the problem it solved
    and the outcome (None when the chain stopped before a solve), and the LP memory
    shared by the session's solves."""

    problem: Problem | None = None
    outcome: SolveOutcome | None = None
    memory: LpMemory | None = None


def decide_exact(
    request: Request,
    gates: GateReport,
    backend: Backend,
    deadline: Deadline,
    workers: int,
    kept: ExactKept | None = None,
    render: RenderFormat | None = None,
) -> Choice:
    """The exact decision after the gates: past ``deadline`` nothing more is searched,
    and the answer is what was proven by then. With ``render``, the optimum among the
    selections that format can send (``sendable.py``)."""
    memory = None if kept is None else kept.memory
    clock = Stopwatch()
    refusal = required_refusal(request, gates)
    if refusal is not None:
        return Choice.refused(refusal, kept=ExactKept(memory=memory))
    if deadline.passed:
        return Choice.undecided(timings=(("closure", 0.0),), kept=ExactKept(memory=memory))
    known = None if kept is None else kept.problem
    # Without a kept problem, the build gives up once the deadline has passed (a problem
    # finished past it is answered undecided, unsearched); a kept problem is built whole,
    # as its outcome may answer this call.
    problem = (
        build_problem_by(deadline, request, gates, render)
        if known is None
        else build_problem(request, gates, known, render)
    )
    clock.lap("closure")
    if problem is None:
        return Choice.undecided(timings=clock.timings, kept=ExactKept(memory=memory))
    # a refusal one pass proves is answered by that pass, whatever the time limit
    refusal = linear_refusal(problem)
    if refusal is not None:
        clock.lap("refusal")
        return Choice.refused(refusal, timings=clock.timings, kept=ExactKept(memory=memory))
    if (
        kept is not None
        and known is not None
        and kept.outcome is not None
        and kept.outcome.status is SolveStatus.OPTIMAL
        and still_optimal(known, problem, kept.outcome.selection)
    ):
        clock.lap("kept-optimum")
        clock.mark("solve", 0.0)
        selection = kept.outcome.selection
        outcome = SolveOutcome(
            SolveStatus.OPTIMAL, selection, bound=sum(problem.value[f] for f in selection)
        )
        # the kept optimum is the cache-blind one: with a cache section, the cache-aware
        # order still decides from it, as after a fresh solve
        after = ExactKept(problem, outcome, memory)
        return _bundle(request, problem, outcome, backend, deadline, workers, clock, after)
    if deadline.passed:
        return Choice.undecided(timings=clock.timings, kept=ExactKept(memory=memory))
    # the multiple-choice kernel answers the shapes it proves (an oracle's backend, never)
    answered = _kernel_answer(problem, deadline) if backend.name == "exact" else None
    outcome = backend.solve(problem, Ask(deadline, workers)) if answered is None else answered
    clock.lap("solve")
    clock.mark("path-general" if answered is None else "path-mckp", 0.0)
    if known is not None:
        clock.mark("fresh-solve", 0.0)
    after = ExactKept(problem, outcome, memory)
    if outcome.status is SolveStatus.INFEASIBLE:
        refusal = over_budget_refusal(
            problem,
            backend,
            deadline=deadline,
            workers=workers,
            priced=outcome.selection,
        )
        clock.lap("refusal")
        return Choice.refused(refusal, timings=clock.timings, kept=after)
    if outcome.status is SolveStatus.UNKNOWN:
        return Choice.undecided(outcome.bound, timings=clock.timings, kept=after)
    return _bundle(request, problem, outcome, backend, deadline, workers, clock, after)


def _kernel_answer(problem: Problem, deadline: Deadline) -> SolveOutcome | None:
    """The multiple-choice kernel's optimum of the problem without the format's rules,
    when it answers and that optimum keeps them: the optimum of a relaxation that is
    feasible is the optimum (otherwise None, and the general path answers)."""
    outcome = solve_mckp(problem.blind(), deadline)
    if outcome is None or problem.breaks(outcome.selection) is not None:
        return None
    return outcome


def still_optimal(before: Problem, after: Problem, selection: tuple[int, ...]) -> bool:
    """Whether ``selection``, the unique optimum of ``before``, is that of ``after``
    without a search: the same problem, or one whose values alone moved, the selected
    forms' up or not at all, every other form's down or not at all (module docstring)."""
    if before.value == after.value:
        return before == after
    if (
        before.form_ids != after.form_ids
        or before.cost != after.cost
        or before.budget != after.budget
        or before.identity_of != after.identity_of
        or before.needs != after.needs
        or before.groups != after.groups
        or before.required != after.required
        or before.weight != after.weight
        or before.identities != after.identities
        or before.rules != after.rules
    ):
        return False
    chosen = set(selection)
    for form, (old, new) in enumerate(zip(before.value, after.value, strict=True)):
        if new != old and (new < old) == (form in chosen):
            return False
    return True


def _bundle(
    request: Request,
    problem: Problem,
    outcome: SolveOutcome,
    backend: Backend,
    deadline: Deadline,
    workers: int,
    clock: Stopwatch,
    kept: ExactKept,
) -> Choice:
    """The bundle of a proven or stopped search; with a cache section, the cache-aware
    order's (``cached.py``) from the cache-blind optimum."""
    if request.cache is None:
        return _chosen(problem, outcome, clock.timings, kept)
    from .cached import decide_cached

    cached, report = decide_cached(request, problem, outcome, backend, deadline, workers)
    clock.lap("cache")
    return replace(_chosen(problem, cached, clock.timings, kept), cache=report)


def _chosen(
    problem: Problem, outcome: SolveOutcome, timings: tuple[tuple[str, float], ...], kept: ExactKept
) -> Choice:
    return Choice.bundle(
        tuple(problem.form_ids[f] for f in outcome.selection),
        optimal=outcome.status is SolveStatus.OPTIMAL,
        # the trace reports the bundle's own value as the bound when optimal
        bound=outcome.bound,
        timings=timings,
        kept=kept,
    )


def exact_backend(memory: LpMemory | None = None) -> Backend:
    """The exact strategy's backend: CP-SAT behind the reductions (whose first LP starts
    from ``memory``'s basis, a session's, when one is given)."""
    from .core_search import CoreSearch
    from .cpsat import CpSat

    return CoreSearch(CpSat(), memory)


def exact_strategy(
    request: Request,
    gates: GateReport,
    deadline: Deadline,
    workers: int,
    *,
    kept: ExactKept | None = None,
    keep: bool = False,
    render: RenderFormat | None = None,
) -> Choice:
    """The exact strategy: ``decide_exact`` with the backend of ``exact_backend``, for
    a bundle rendered in ``render`` when set. A session (``keep``) gets an LP memory on
    its first call and keeps it."""
    memory = None if kept is None else kept.memory
    if memory is None and keep:
        from .relaxation import LpMemory

        memory = LpMemory()
    if kept is None:
        kept = ExactKept(memory=memory)
    elif kept.memory is not memory:
        kept = ExactKept(kept.problem, kept.outcome, memory)
    return decide_exact(request, gates, exact_backend(memory), deadline, workers, kept, render)
