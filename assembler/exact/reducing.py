"""The exact backend the ``cpsat`` strategy uses: reduce, then search the core.

Input: a ``Problem`` (from ``closure``), a time limit and a worker count.
Output: an ``Outcome``: OPTIMAL (proven, tie-break included), FEASIBLE (the best
legal selection found, with its proven value bound), INFEASIBLE or UNKNOWN.

It chains ``reduce`` (exact reduction to a core), ``search`` (a small branch and
bound for small cores) and an inner backend (CP-SAT) level by level: value, then
cost, then tie-break weight, reducing again between levels.
"""

from __future__ import annotations

import time
from dataclasses import replace

from .backend import Backend, Outcome, SolveStatus, selection_cost, selection_value
from .closure import Problem
from .reduce import Level, Reduction

__all__ = ["Reducing"]


class Reducing:
    """A backend that first reduces the problem exactly, then searches only the core.

    Cores of a few dozen forms are solved by a small exact search (``search.py``)
    rather than a CP-SAT session, which costs more to start than they take; the
    search gives up after a few milliseconds and the core goes to ``inner``. Problems
    without a budget (pricing the mandatory closure) go straight to ``inner``: the
    value bound has nothing to prune there.
    """

    # forms up to which the small search is tried first (measured on 100-form requests:
    # a cap of 48 gave a median of 5.2 ms, 96 gave 2.7 ms, 200 no better)
    SMALL_CORE = 96

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name

    def solve(
        self,
        problem: Problem,
        *,
        time_limit: float,
        workers: int,
        tiebreak: bool = True,
        hint: tuple[int, ...] | None = None,
        value_only: bool = False,
        proven: tuple[int, ...] = (),
    ) -> Outcome:
        from .reduce import reduce_problem
        from .search import SmallSearch

        deadline = time.monotonic() + time_limit

        def remaining() -> float:
            return max(0.001, deadline - time.monotonic())

        if problem.budget is None:
            return self.inner.solve(
                problem, time_limit=time_limit, workers=workers, tiebreak=tiebreak
            )
        reduction = reduce_problem(problem)
        if reduction is None:
            return Outcome(SolveStatus.INFEASIBLE)
        # Each pass proves one more level of the objective on the core, then the next
        # reduction keeps only the forms that can still beat or tie that answer at the
        # next level: value, then cost, then tie-break weight. The uniqueness proof,
        # the most expensive phase, only ever sees forms that tie on all three.
        optimum: list[int] = []  # value, then cost, of the full problem once proven

        def proven_levels(current: Reduction) -> tuple[int, ...]:
            # the proven levels in the terms of the current core (fixed forms taken out)
            fixed = current.chosen
            totals = (problem.value, problem.cost)
            return tuple(
                level - sum(totals[k][f] for f in fixed) for k, level in enumerate(optimum)
            )

        gave_up = [self.SMALL_CORE + 1]  # smallest core the search failed on

        def small(core: Problem) -> Outcome | None:
            # a core that stumped the search once is retried only once it has halved
            if core.size > self.SMALL_CORE or core.size * 2 > gave_up[0]:
                return None
            found = SmallSearch().solve(core)
            if found is None:
                gave_up[0] = core.size
            return found

        for level, stop in ((Level.COST, "value"), (Level.WEIGHT, "cost")):
            core = reduction.core
            searched = small(core)
            if searched is not None:
                return self._lifted(problem, reduction, searched)
            if not tiebreak:
                break
            if remaining() < self.MODEL_SECONDS_PER_FORM * core.size:
                # Not even time to build the model: answer with what is proven.
                return self._fallback(problem, reduction)
            found = self.inner.solve(
                core,
                time_limit=remaining(),
                workers=workers,
                value_only=stop == "value",
                tiebreak=False,
                hint=_restrict(reduction, reduction.incumbent),
                proven=proven_levels(reduction),
            )
            if found.status is SolveStatus.INFEASIBLE:
                return found
            if found.status is not SolveStatus.OPTIMAL:
                # Out of time before this level was proven: later phases cannot run.
                return self._unproven(problem, reduction, found)
            best = reduction.lift(found.selection)
            optimum.append(
                selection_value(problem, best) if stop == "value" else selection_cost(problem, best)
            )
            # Reduce the core (which carries the earlier fixings) at the next level.
            again = reduce_problem(core, known=found.selection, level=level)
            if again is None:
                break
            # the value optimum is proven: it is the bound from here on
            reduction = replace(
                reduction.compose(again), bound=selection_value(problem, best), incumbent=best
            )
        core = reduction.core
        searched = small(core)
        if searched is not None:
            return self._lifted(problem, reduction, searched)
        found = self.inner.solve(
            core,
            time_limit=remaining(),
            workers=workers,
            tiebreak=tiebreak,
            hint=_restrict(reduction, reduction.incumbent),
            proven=proven_levels(reduction),
        )
        if found.status in (SolveStatus.INFEASIBLE, SolveStatus.OPTIMAL):
            return self._lifted(problem, reduction, found)
        return self._unproven(problem, reduction, found)

    @staticmethod
    def _lifted(problem: Problem, reduction: Reduction, found: Outcome) -> Outcome:
        """A proven answer on the core as the answer to the whole problem."""
        if found.status is SolveStatus.INFEASIBLE:
            return found
        selection = reduction.lift(found.selection)
        return Outcome(SolveStatus.OPTIMAL, selection, bound=selection_value(problem, selection))

    # Seconds to build a CP-SAT model, per form (measured ~10 us; doubled for safety).
    MODEL_SECONDS_PER_FORM = 2e-5

    @staticmethod
    def _fallback(problem: Problem, reduction: Reduction) -> Outcome:
        if reduction.incumbent is None:
            return Outcome(SolveStatus.UNKNOWN, bound=reduction.bound)
        return Outcome(SolveStatus.FEASIBLE, reduction.incumbent, bound=reduction.bound)

    @staticmethod
    def _unproven(problem: Problem, reduction: Reduction, found: Outcome) -> Outcome:
        """The better of the core search's answer and the incumbent, with the best bound."""
        assert found.status in (SolveStatus.FEASIBLE, SolveStatus.UNKNOWN), found.status
        if found.status is SolveStatus.UNKNOWN:
            return Reducing._fallback(problem, reduction)
        selection = reduction.lift(found.selection)
        bounds = [b for b in (reduction.bound,) if b is not None]
        if found.bound is not None:
            bounds.append(sum(problem.value[f] for f in reduction.chosen) + found.bound)
        incumbent = reduction.incumbent
        if incumbent is not None and selection_value(problem, incumbent) > selection_value(
            problem, selection
        ):
            selection = incumbent
        return Outcome(SolveStatus.FEASIBLE, selection, bound=min(bounds) if bounds else None)


def _restrict(reduction: Reduction, selection: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A full-problem selection as a hint for the core (forms outside the core dropped)."""
    if selection is None:
        return None
    position = {form: k for k, form in enumerate(reduction.core_forms)}
    return tuple(position[f] for f in selection if f in position)
