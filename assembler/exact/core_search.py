"""The exact backend the ``exact`` strategy uses: reduce, then search the core.

Input: a ``Problem`` (from ``closure``), a ``Deadline`` and a worker count.
Output: a ``SolveOutcome``: OPTIMAL (proven, tie-break included), FEASIBLE (the best
legal selection found, with its proven value bound), INFEASIBLE or UNKNOWN.

It chains ``fixings`` and ``core`` (exact reduction to a core), ``knapsack`` (a program over the
budget for cores whose needs and groups join few identities), ``search`` (a small branch
and bound for small cores) and an inner backend (CP-SAT) level by level: value, then
cost, then tie-break weight, reducing again between levels. At the cost and tie-break
levels, when the level's fixings leave a large core, a hypothetical threshold near the
level's bound leaves a small one: its optimum is the answer when it reaches the
threshold, else a better incumbent to fix by (``_tighten_level``: the face of the
optimum can hold a great many selections of equal value and cost, and the weight's
proof on them was CP-SAT's longest). Every stage gets what is
left of one deadline, the LP included, and a stage that runs out of it leaves the
best legal selection found so far with the proven bound.

A problem with the format's rules (``Problem.rules``) is solved without them first, on
these fast paths: when that optimum keeps every rule it is also the optimum among the
selections that keep them (the order has one optimum, and the rules only take
selections away). Otherwise the inner backend, which encodes the rules, searches the
whole problem with them (the reductions are rule-blind); the optimum found without
them stays a bound.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from ..deadline import Deadline
from .backend import Ask, Backend, SolveOutcome, SolveStatus, selection_cost, selection_value
from .closure import Problem
from .core import Reduction
from .fixings import Level, Plan, plan

if TYPE_CHECKING:
    from ..cache.prefix import Prefix
    from ..model.cache import CacheTerms
    from .cached import CachedBackend
    from .relaxation import LpMemory

__all__ = ["CoreSearch"]


class CoreSearch:
    """A backend that first reduces the problem exactly, then searches only the core.

    Knapsack-shaped cores are solved by the program over the reachable sums (``knapsack.py``)
    and cores of a few dozen forms by a small exact search (``search.py``) rather than
    a CP-SAT session, which costs more to start than they take; either hands the core
    on (the search after a few milliseconds) and it goes to ``inner``. Problems
    without a budget (pricing the mandatory closure) are cut to the part the required
    material can reach (``reach.py``) and presolved, then go to ``inner``: the value
    bound has nothing to prune there.
    """

    # forms up to which the small search is tried first: below it the search ends
    # sooner than a CP-SAT session starts, above it the session wins
    SMALL_CORE = 96
    # Core size aimed at by the first, hypothetical threshold (``_tighten``): small
    # enough to solve in a few milliseconds, large enough to hold the optimum on most
    # requests
    TIGHT_CORE = 250
    # The same at the cost and tie-break levels (``_tighten_level``): their bounds are
    # closer, so a smaller core still holds the optimum, and its proof is the cheaper
    TIE_CORE = 60
    # Seconds to build a CP-SAT model, per entry of its problem (a form, a dependency
    # edge, a group membership), with a margin of two: a core that cannot be modelled
    # in what is left is not handed to CP-SAT
    MODEL_SECONDS_PER_ENTRY = 2e-5

    # the strategy this backend answers for (``Result.strategy``), whatever its inner
    # backend: CP-SAT is one link of its chain
    name = "exact"

    def __init__(self, inner: Backend, memory: LpMemory | None = None) -> None:
        self.inner = inner
        # a session's: the first LP of each solve (the whole problem's) starts from the
        # basis the previous solve's left (``relaxation.LpMemory``)
        self.memory = memory

    def solve(self, problem: Problem, ask: Ask) -> SolveOutcome:
        # this backend answers the whole order (or, without tiebreak, value then cost);
        # hints, value-only searches and proven levels it asks of its inner backend
        if problem.rules:
            return self._sendable(problem, ask)
        deadline, workers, tiebreak = ask.deadline, ask.workers, ask.tiebreak
        if problem.budget is None:
            return self._priced(problem, deadline, workers, tiebreak)
        first = plan(problem, deadline=deadline, memory=self.memory)
        if first.incumbent is None and problem.required and not deadline.passed:
            # The greedy could not place the required material: price it exactly. Too
            # dear proves the budget infeasible; otherwise it is a legal incumbent.
            # (with the full order: when it is too dear, it is the refusal's closure)
            priced = self._priced(problem.mandatory(), deadline, workers, tiebreak=True)
            if priced.selection:
                cost = selection_cost(problem, priced.selection)
                if cost > problem.budget and priced.status is SolveStatus.OPTIMAL:
                    return SolveOutcome(SolveStatus.INFEASIBLE, priced.selection)
                if cost <= problem.budget:
                    first = _with_incumbent(first, priced.selection)
        small = _SmallCoreSolvers(self.SMALL_CORE, deadline)
        tightened: tuple[Reduction, bool] | None = None
        if not first.proven and not deadline.passed:
            trial = self._tighten(problem, first, deadline, workers, small)
            if isinstance(trial, SolveOutcome):
                return trial
            tightened = trial
        if tightened is None:
            if deadline.passed and first.incumbent is not None:
                # Past the deadline, with an incumbent, the fixings and the core are not
                # drawn (linear, but seconds at scale): the answer is the incumbent
                # with the bound, as the reduction would carry them. (Without one the
                # reduction is still drawn: its contradiction proves infeasibility.)
                return SolveOutcome(SolveStatus.FEASIBLE, first.incumbent, bound=first.bound)
            # the greedy's own fixings, drawn only now: a tightened core replaces them
            reduction = first.reduction()
            if reduction is None:
                # only possible without an incumbent, when the fixings found no legal selection
                return SolveOutcome(SolveStatus.INFEASIBLE)
            if deadline.passed:
                return self._fallback(reduction)
            # with a proven incumbent (it meets the bound) the value needs no search
            value_known = first.proven
        else:
            reduction, value_known = tightened
        optimum = [selection_value(problem, reduction.incumbent or ())] if value_known else []
        return self._levels(problem, reduction, optimum, deadline, workers, tiebreak, small)

    def _sendable(self, problem: Problem, ask: Ask) -> SolveOutcome:
        """The answer among the selections that keep the format's rules (module
        docstring): the problem without them first, then, unless that answer keeps
        them and is proven, the inner backend on the whole problem with them."""
        blind = self.solve(problem.blind(), ask)
        if blind.status is SolveStatus.INFEASIBLE:
            return blind  # nothing legal fits, sendable or not
        keeps = blind.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE) and (
            problem.breaks(blind.selection) is None
        )
        if keeps and blind.status is SolveStatus.OPTIMAL:
            return blind
        found = SolveOutcome(SolveStatus.UNKNOWN)
        if not ask.deadline.passed:
            hint = blind.selection if keeps else None
            found = self.inner.solve(problem, replace(ask, hint=hint, proven=()))
        if found.status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE):
            return found
        # stopped: the better sendable selection in hand, under both proven bounds
        # (the optimum without the rules bounds the one with them)
        bounds = [b for b in (blind.bound, found.bound) if b is not None]
        floors = [c for c in (blind.cost_floor, found.cost_floor) if c is not None]
        best = found.selection if found.status is SolveStatus.FEASIBLE else None
        if keeps and (
            best is None
            or selection_value(problem, blind.selection) > selection_value(problem, best)
        ):
            best = blind.selection
        return SolveOutcome(
            SolveStatus.UNKNOWN if best is None else SolveStatus.FEASIBLE,
            () if best is None else best,
            bound=min(bounds) if bounds else None,
            cost_floor=max(floors) if floors else None,
        )

    def solve_cached(
        self, problem: Problem, prefix: Prefix, terms: CacheTerms, ask: Ask
    ) -> SolveOutcome:
        """The cache-aware order's optimum: settled by the knapsack program class by
        class (``cached.settled_by_program``) or by a bound (``cached.settled_by_bound``)
        when it can be, else by the inner backend on the whole problem (the reductions
        bound the value, which the price does not follow)."""
        from .cached import settled_by_bound, settled_by_program

        settled = settled_by_program(problem, prefix, terms, ask.deadline)
        if settled is None:
            settled = settled_by_bound(problem, prefix, terms)
        if settled is not None:
            return settled
        inner = cast("CachedBackend", self.inner)
        return inner.solve_cached(problem, prefix, terms, ask)

    def _levels(
        self,
        problem: Problem,
        reduction: Reduction,
        optimum: list[int],
        deadline: Deadline,
        workers: int,
        tiebreak: bool,
        small: _SmallCoreSolvers,
    ) -> SolveOutcome:
        """Each pass proves one more level of the objective on the core, then the next
        reduction keeps only the forms that can still beat or tie that answer at the
        next level: value, then cost, then tie-break weight. The uniqueness proof, the
        most expensive phase, only ever sees forms that tie on all three. ``optimum``
        holds the levels proven so far (value, then cost, of the full problem)."""

        def proven_levels(current: Reduction) -> tuple[int, ...]:
            # the proven levels in the terms of the current core (fixed forms taken out)
            fixed = current.chosen
            totals = (problem.value, problem.cost)
            return tuple(
                level - sum(totals[k][f] for f in fixed) for k, level in enumerate(optimum[:2])
            )

        def search(current: Reduction, **phases: bool) -> SolveOutcome | None:
            """The inner backend on the core, or None with no time to build its model."""
            core = current.core
            if deadline.left() < self.MODEL_SECONDS_PER_ENTRY * core.entries:
                return None
            hint = _restrict(current, current.incumbent)
            ask = Ask(deadline, workers, hint=hint, proven=proven_levels(current), **phases)
            return self.inner.solve(core, ask)

        for level, proving in ((Level.COST, 0), (Level.WEIGHT, 1)):
            core = reduction.core
            searched = small.solve(core, _worth(problem, reduction))
            if searched is not None:
                return self._lifted(problem, reduction, searched)
            if not tiebreak:
                break
            if len(optimum) > proving:
                # proven already (by ``_tighten`` or a level's LP bound): the incumbent
                # is that optimum
                best = reduction.incumbent or ()
                known = _restrict(reduction, best) or ()
            else:
                found = search(reduction, value_only=proving == 0, tiebreak=False)
                if found is None:
                    # Not even time to build the model: answer with what is proven.
                    return self._fallback(reduction)
                if found.status is SolveStatus.INFEASIBLE:
                    return found
                if found.status is not SolveStatus.OPTIMAL:
                    # Out of time before this level was proven: later phases cannot run.
                    return self._unproven(problem, reduction, found)
                best = reduction.lift(found.selection)
                totals = problem.value if proving == 0 else problem.cost
                optimum.append(sum(totals[f] for f in best))
                known = found.selection
            # Reduce the core (which carries the earlier fixings) at the next level.
            step = plan(core, known=known, level=level, deadline=deadline)
            if not step.proven and not deadline.passed:
                tightened = self._tighten_level(
                    problem, reduction, step, optimum, deadline, workers, small
                )
                if isinstance(tightened, SolveOutcome):
                    return tightened
                step = tightened or step
            again = step.reduction()
            if again is None:
                break
            composed = reduction.compose(again)
            if step.proven and composed.incumbent is not None:
                # the LP's bound is met at this level too: its incumbent is the optimum
                best = composed.incumbent
                optimum.append(sum((problem.cost, problem.weight)[proving][f] for f in best))
            # the value optimum is proven: it is the bound from here on
            reduction = replace(composed, bound=optimum[0], incumbent=best)
        core = reduction.core
        searched = small.solve(core, _worth(problem, reduction))
        if searched is not None:
            return self._lifted(problem, reduction, searched)
        found = search(reduction, tiebreak=tiebreak)
        if found is None:
            return self._fallback(reduction)
        if found.status in (SolveStatus.INFEASIBLE, SolveStatus.OPTIMAL):
            return self._lifted(problem, reduction, found)
        return self._unproven(problem, reduction, found)

    def _priced(
        self, problem: Problem, deadline: Deadline, workers: int, tiebreak: bool
    ) -> SolveOutcome:
        """The cheapest selection admitting the required material (no budget): on the
        part the required identities reach, presolved."""
        from .reach import required_reach

        sub, forms = required_reach(problem)
        reduction = plan(sub, use_lp=False).reduction()
        assert reduction is not None, "without a budget the gated material always fits"
        found = self.inner.solve(reduction.core, Ask(deadline, workers, tiebreak=tiebreak))
        # without the LP nothing is fixed in (presolve and propagation only rule forms
        # out): the core's selection lifts alone and its cost floor is the whole one
        assert not reduction.chosen
        if found.selection:
            found = replace(
                found, selection=tuple(forms[f] for f in reduction.lift(found.selection))
            )
        return found

    def _tighten(
        self,
        problem: Problem,
        first: Plan,
        deadline: Deadline,
        workers: int,
        small: _SmallCoreSolvers,
    ) -> SolveOutcome | tuple[Reduction, bool] | None:
        """A stronger incumbent than the greedy's, from a hypothetical threshold.

        The fixings at a threshold t above the incumbent's value keep every bundle worth
        at least t. If the best bundle of that small core reaches t, it is the optimum
        in value (every better bundle is in the core) and the core holds every bundle of
        that value: the levels below run on it (or, when the small search settled the
        core, that answer is the answer). Otherwise the bundle found is still legal, and
        when it beats the greedy's incumbent the real fixings are drawn at its value,
        which often leaves a core ten times smaller. Returns a final answer, or the
        reduction to go on with and whether its incumbent's value is proven optimal, or
        None when the greedy's fixings stand.
        """
        unchanged = None
        threshold = first.threshold_for(self.TIGHT_CORE)
        if threshold is None or first.threshold is None:
            return unchanged
        trial = first.reduction(threshold)
        if trial is None:
            return unchanged  # nothing reaches t: the greedy's fixings stand
        left = deadline.left()
        if trial.core.size > 4 * self.TIGHT_CORE or left < (
            self.MODEL_SECONDS_PER_ENTRY * trial.core.entries
        ):
            return unchanged
        # Only a bundle worth t settles the trial, and only one worth more than the
        # incumbent helps: the program drops what cannot reach t, then (when nothing
        # does) what cannot beat the incumbent; INFEASIBLE then says nothing here does.
        chosen = sum(problem.value[f] for f in trial.chosen)
        searched = small.solve(trial.core, worth=threshold - chosen)
        if searched is not None and searched.status is SolveStatus.INFEASIBLE:
            searched = small.solve(trial.core, worth=first.threshold + 1 - chosen)
        if searched is not None and searched.status is SolveStatus.OPTIMAL:
            best = trial.lift(searched.selection)
            if selection_value(problem, best) >= threshold:
                # the lexicographic optimum of a core that holds every optimal bundle
                return SolveOutcome(SolveStatus.OPTIMAL, best, bound=selection_value(problem, best))
            found = searched
        elif searched is not None:
            return unchanged  # infeasible: nothing beats the incumbent
        else:
            # a quarter of the time left at most: a trial that stalls must not starve
            # the search it was meant to shorten
            share = deadline.within(max(0.02, left / 4))
            found = self.inner.solve(
                trial.core, Ask(share, workers, value_only=True, tiebreak=False)
            )
        if found.status not in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE):
            return unchanged
        best = trial.lift(found.selection)
        value = selection_value(problem, best)
        if found.status is SolveStatus.OPTIMAL and value >= threshold:
            return replace(trial, incumbent=best), True
        if value <= first.threshold:
            return unchanged
        better = _with_incumbent(first, best).reduction()
        return unchanged if better is None else (better, False)

    def _tighten_level(
        self,
        problem: Problem,
        reduction: Reduction,
        step: Plan,
        optimum: list[int],
        deadline: Deadline,
        workers: int,
        small: _SmallCoreSolvers,
    ) -> SolveOutcome | Plan | None:
        """``_tighten`` at the cost or the tie-break level: the face of the optimum (the
        selections of optimal value, and cost) reduced at a hypothetical threshold t
        better than the incumbent's, to a core of about ``TIGHT_CORE`` forms that holds
        every selection of the face at least that good at this level. When that core's
        optimum under the whole order reaches t, every selection that could beat or tie
        it is in the core, so it is the optimum (returned). Otherwise, when it lies on
        the face and beats the incumbent at this level, the level's fixings are drawn
        again at it (returned: far fewer forms survive a threshold near the bound; on a
        knapsack whose costs follow its values the weight level's core went from 1,012
        forms to 45). None when neither helps. ``step`` is the level's plan of
        ``reduction``'s core, ``optimum`` the levels proven so far."""
        threshold = step.threshold_for(self.TIE_CORE)
        if threshold is None or step.threshold is None:
            return None
        trial = step.reduction(threshold)
        left = deadline.left()
        if trial is None or trial.core.size > 4 * self.TIGHT_CORE or left < (
            self.MODEL_SECONDS_PER_ENTRY * trial.core.entries
        ):
            return None
        composed = reduction.compose(trial)
        fixed = composed.chosen
        proven = tuple(
            level - sum((problem.value, problem.cost)[k][f] for f in fixed)
            for k, level in enumerate(optimum[:2])
        )
        found = small.solve(trial.core)
        if found is None or found.status is not SolveStatus.OPTIMAL:
            # a quarter of the time left at most, as ``_tighten``'s trial
            share = deadline.within(max(0.02, left / 4))
            found = self.inner.solve(trial.core, Ask(share, workers, proven=proven))
        if found.status is not SolveStatus.OPTIMAL:
            return None
        best = composed.lift(found.selection)
        face = (problem.value, problem.cost)
        if any(sum(face[k][f] for f in best) != level for k, level in enumerate(optimum[:2])):
            return None  # the trial core holds nothing of the face
        # this level's objective of ``best``, in the terms of ``step`` (the core's)
        within = tuple(reduction.core_forms.index(f) for f in best if f not in reduction.chosen)
        reached = sum(step_objective(step, f) for f in within)
        if reached >= threshold:
            return SolveOutcome(SolveStatus.OPTIMAL, best, bound=selection_value(problem, best))
        if reached <= step.threshold:
            return None
        return plan(step.problem, known=within, level=step.level, deadline=deadline)

    @staticmethod
    def _lifted(problem: Problem, reduction: Reduction, found: SolveOutcome) -> SolveOutcome:
        """A proven answer on the core as the answer to the whole problem."""
        if found.status is SolveStatus.INFEASIBLE:
            return found
        selection = reduction.lift(found.selection)
        return SolveOutcome(
            SolveStatus.OPTIMAL, selection, bound=selection_value(problem, selection)
        )

    @staticmethod
    def _fallback(reduction: Reduction) -> SolveOutcome:
        if reduction.incumbent is None:
            return SolveOutcome(SolveStatus.UNKNOWN, bound=reduction.bound)
        return SolveOutcome(SolveStatus.FEASIBLE, reduction.incumbent, bound=reduction.bound)

    @staticmethod
    def _unproven(problem: Problem, reduction: Reduction, found: SolveOutcome) -> SolveOutcome:
        """The better of the core search's answer and the incumbent, with the best bound."""
        assert found.status in (SolveStatus.FEASIBLE, SolveStatus.UNKNOWN), found.status
        if found.status is SolveStatus.UNKNOWN:
            return CoreSearch._fallback(reduction)
        selection = reduction.lift(found.selection)
        bounds = [b for b in (reduction.bound,) if b is not None]
        if found.bound is not None:
            bounds.append(sum(problem.value[f] for f in reduction.chosen) + found.bound)
        incumbent = reduction.incumbent
        if incumbent is not None and selection_value(problem, incumbent) > selection_value(
            problem, selection
        ):
            selection = incumbent
        return SolveOutcome(SolveStatus.FEASIBLE, selection, bound=min(bounds) if bounds else None)


class _SmallCoreSolvers:
    """The exact answers cheaper than a CP-SAT session: the budget program for a
    knapsack-shaped core (``knapsack.py``, bounded by its cell limit), then the small
    search, tried on cores of at most ``limit`` forms; a core that stumped the program
    or the search once is retried by it only once it has halved (the levels hand on
    cores a little smaller each time, and a program that walked its state limit on
    one would walk it again on the next)."""

    def __init__(self, limit: int, deadline: Deadline) -> None:
        self.limit = limit
        self.deadline = deadline
        self.gave_up = limit + 1  # smallest core the search failed on
        self.program_gave_up = math.inf  # smallest core the program handed back
        # the last core given up on: the levels can hand the same core over again (a
        # reduction ``_tighten`` kept, or one no later level reduced), and both tries
        # would fail again on it
        self.failed: Problem | None = None

    def solve(self, core: Problem, worth: int | None = None) -> SolveOutcome | None:
        """The core's optimum, INFEASIBLE, or None (handed on). With ``worth``, the
        program may also answer INFEASIBLE when no legal selection is worth that much
        (``knapsack.solve_knapsack``); the search's answer is the optimum whatever it
        is worth."""
        from .knapsack import solve_knapsack
        from .search import SmallSearch

        if core is self.failed:
            return None
        if core.size * 2 <= self.program_gave_up:
            found = solve_knapsack(core, deadline=self.deadline, worth=worth)
            if found is not None:
                return found
            self.program_gave_up = min(self.program_gave_up, core.size)
        if core.size > self.limit or core.size * 2 > self.gave_up:
            self.failed = core
            return None
        found = SmallSearch().solve(core, self.deadline)
        if found is None:
            self.gave_up = core.size
            self.failed = core
        return found


def step_objective(step: Plan, form: int) -> int:
    """A core form's term in ``step``'s level objective (``fixings``: value, minus the
    cost, minus the weight), the sign the thresholds read."""
    core = step.problem
    if step.level is Level.COST:
        return -core.cost[form]
    if step.level is Level.WEIGHT:
        return -core.weight[form]
    return core.value[form]


def _worth(problem: Problem, reduction: Reduction) -> int | None:
    """What the core's optimum is worth at least: the incumbent's value less the fixed
    forms'. Every reduction the levels search keeps the optimum, worth no less than the
    incumbent, in its core."""
    if reduction.incumbent is None:
        return None
    return selection_value(problem, reduction.incumbent) - sum(
        problem.value[f] for f in reduction.chosen
    )


def _with_incumbent(first: Plan, selection: tuple[int, ...]) -> Plan:
    return replace(first, incumbent=selection, threshold=selection_value(first.problem, selection))


def _restrict(reduction: Reduction, selection: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A full-problem selection as a hint for the core (forms outside the core dropped)."""
    if selection is None:
        return None
    position = {form: k for k, form in enumerate(reduction.core_forms)}
    return tuple(position[f] for f in selection if f in position)
