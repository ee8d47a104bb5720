"""The fixings of an exact reduction: which forms a threshold proves out of or into the optimum.

Input: a ``Problem`` (a level of the objective, a known selection, a deadline).
Output: a ``Plan`` (the presolved state, the LP's losses, a bound and an incumbent),
and from it a ``Reduction`` (``core.py``): forms proven to be in the optimum, the core
``Problem`` over the forms whose fate is still open, a proven upper bound on the
value, and a legal incumbent when one was found; or None when the problem is proven
to have no legal selection. ``plan`` keeps the LP's data so that the same fixings can
be drawn again at another threshold without solving the LP again.

The chain, each link a pure function over plain arrays: ``presolve`` (dominance and
filler) -> ``relaxation.relax`` (the LP and its Lagrangian losses) ->
``incumbent.build_incumbent`` (a legal selection in the LP's order) -> the fixings at
a threshold -> ``core.core_of`` (propagation and the core).

A fixing at threshold t keeps every bundle whose objective reaches t: form j goes out
when forcing it in drops the Lagrangian bound below t, and an identity is admitted
when leaving it out would. With t the incumbent's objective the unique optimum always
survives. A higher, hypothetical t (``Plan.threshold_for``) keeps only the bundles
worth at least t: if the core's best reaches t it is the optimum, and otherwise it is
still a legal selection (``core_search.py`` uses this to find a strong incumbent).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..deadline import NEVER, Deadline
from .closure import Problem
from .core import FREE, IN, OUT, Contradiction, Reduction, core_of
from .incumbent import build_incumbent, rounded_selection
from .presolve import presolve
from .relaxation import LpMemory, Relaxation, budget_relaxation, relax

__all__ = ["LP_MIN_FORMS", "Level", "Plan", "plan", "reduce_problem"]

# Below this many forms the LP costs more than the search it would save.
LP_MIN_FORMS = 24
# Seconds per entry of the problem (a form, a dependency edge, a group membership:
# ``Problem.entries``) the work after the LP takes (incumbent, fixings, propagation,
# the core), with a margin of two: kept back from the LP's time limit, so that the LP
# never takes the time its answer needs.
AFTER_LP_SECONDS_PER_ENTRY = 4e-6
LP_SHARE = 0.8
# What the value LP takes per entry at worst: with less than twice this left, the
# budget row's Lagrangian bound is secured before the LP, so that a stopped LP leaves a
# bound.
EXPECTED_LP_SECONDS_PER_ENTRY = 2.5e-5
# Building the LP's arrays and HiGHS' start (the simplex's first iteration, the interior
# point's setup) read no clock, so an LP whose share of the time cannot hold them is
# not started (the budget row's Lagrangian bounds the value instead).
LP_START_SECONDS_PER_ENTRY = 5e-6


class Level(StrEnum):
    """Which level of the lexicographic objective a reduction fixes by."""

    VALUE = "value"  # keeps every bundle worth at least the threshold
    COST = "cost"  # ``known`` optimal in value: keeps every such bundle no dearer than it
    WEIGHT = "weight"  # ``known`` optimal in value then cost: keeps the bundles tied with
    # it on both whose tie-break weight is no larger


def reduce_problem(
    problem: Problem,
    *,
    use_lp: bool = True,
    known: tuple[int, ...] | None = None,
    level: Level = Level.VALUE,
    deadline: Deadline = NEVER,
) -> Reduction | None:
    """The reduction of ``problem``, or None when it is proven to have no legal selection.

    ``known`` is a legal selection; by value it is used when it is worth more than the
    incumbent built here. At the later levels it must be optimal in the earlier ones
    (see ``Level``), and the reduction keeps every bundle that could still beat or tie
    it, so the unique optimum always survives. To reduce further after an earlier
    reduction, reduce its core and ``compose`` the two.
    """
    return plan(problem, use_lp=use_lp, known=known, level=level, deadline=deadline).reduction()


@dataclass(frozen=True, slots=True)
class Plan:
    """The presolved state and the LP's losses of one problem at one level."""

    problem: Problem
    level: Level
    forms_of: tuple[tuple[int, ...], ...]
    presolved: tuple[int, ...]
    relaxation: Relaxation | None
    bound: int | None  # proven upper bound on the value (value level only)
    incumbent: tuple[int, ...] | None
    threshold: int | None  # the objective of the incumbent (or of ``known``)
    stats: dict[str, int]

    @property
    def proven(self) -> bool:
        """Whether the incumbent meets the proven bound: optimal at this level."""
        if self.threshold is None:
            return False
        if self.level is Level.VALUE:
            return self.bound is not None and self.threshold >= self.bound
        return self.relaxation is not None and self.threshold >= self.relaxation.proven_bound

    def reduction(self, threshold: int | None = None) -> Reduction | None:
        """The fixings at ``threshold`` (default: the incumbent's), then the core."""
        problem = self.problem
        state = [FREE] * problem.size
        for f in self.presolved:
            state[f] = OUT
        stats = dict(self.stats)
        at = self.threshold if threshold is None else threshold
        if self.relaxation is not None and at is not None:
            out, into = _fixings(self.relaxation, at)
            for f in out:
                state[f] = OUT
            for f in into:
                state[f] = IN
            stats["lp_out"], stats["lp_in"] = len(out), len(into)
        try:
            reduction = core_of(problem, state, self.forms_of, self.bound, self.incumbent)
        except Contradiction:
            return None
        reduction.stats.update(stats)
        reduction.stats["core"] = reduction.core.size
        return reduction

    def threshold_for(self, core_size: int) -> int | None:
        """The lowest threshold above the incumbent's whose core is estimated to hold at
        most ``core_size`` forms (before propagation), or None when even the incumbent's
        threshold leaves no more than that."""
        relaxation = self.relaxation
        if relaxation is None or self.threshold is None:
            return None
        top = relaxation.proven_bound
        low = self.threshold
        if low >= top or _core_estimate(relaxation, low) <= core_size:
            return None
        # the estimate shrinks as the threshold rises: bisect on integers
        high = top
        while high - low > 1:
            middle = (low + high) // 2
            if _core_estimate(relaxation, middle) <= core_size:
                high = middle
            else:
                low = middle
        return high


def plan(
    problem: Problem,
    *,
    use_lp: bool = True,
    known: tuple[int, ...] | None = None,
    level: Level = Level.VALUE,
    deadline: Deadline = NEVER,
    memory: LpMemory | None = None,
) -> Plan:
    # the forms of each identity, built once: several stages read it
    forms_of = problem.forms_of()
    presolved = presolve(problem, forms_of)
    stats = {"forms": problem.size, "presolve_out": len(presolved)}
    state = np.full(problem.size, FREE, dtype=np.int64)
    state[presolved] = OUT
    objective = _objective(problem, level)
    floor = cap = None
    relaxation: Relaxation | None = None
    bound: int | None = None
    candidates: list[tuple[int, ...] | None] = [known]
    by_value = level is Level.VALUE and problem.budget is not None
    open_forms = np.flatnonzero(state == FREE)
    fallback: tuple[int, Any] | None = None
    entries = problem.entries
    if by_value and deadline.left() < 2 * EXPECTED_LP_SECONDS_PER_ENTRY * entries:
        # The LP may not finish in time: secure the budget row's Lagrangian first (a
        # fraction of the LP's time), so that an LP stopped by the limit still leaves a
        # bound within a fraction of a percent and a bundle.
        fallback = budget_relaxation(problem, open_forms)
        candidates.append(build_incumbent(problem, open_forms, fallback[1], deadline=deadline))
    if use_lp and problem.budget is not None and problem.size >= LP_MIN_FORMS:
        if level is not Level.VALUE:
            assert known is not None
            floor = sum(problem.value[f] for f in known)
            if level is Level.WEIGHT:
                cap = sum(problem.cost[f] for f in known)
        # HiGHS reads its clock between iterations, and one iteration of a large LP can
        # run past the limit: a fifth of the LP's share is kept back for the incumbent
        share = deadline.less(AFTER_LP_SECONDS_PER_ENTRY * entries)
        lp = share.share(LP_SHARE)
        if not share.passed and lp.left() > LP_START_SECONDS_PER_ENTRY * entries:
            relaxation = relax(
                problem,
                state,
                objective,
                deadline=lp,
                value_floor=floor,
                cost_cap=cap,
                memory=memory,
            )
    solved = relaxation is not None and not relaxation.timed_out
    if by_value:
        if solved:
            assert relaxation is not None
            bound = relaxation.proven_bound
            candidates.append(
                build_incumbent(problem, relaxation.columns, relaxation.primal, deadline=deadline)
            )
        else:
            # No LP, or one stopped by the time limit: its primal is no guide (the dual
            # simplex keeps it infeasible until the end), its duals still bound.
            if fallback is None:
                fallback = budget_relaxation(problem, open_forms)
                candidates.append(
                    build_incumbent(problem, open_forms, fallback[1], deadline=deadline)
                )
            bound = fallback[0]
            if relaxation is not None:
                bound = min(bound, relaxation.proven_bound)
    if solved:
        assert relaxation is not None
        candidates.append(
            rounded_selection(
                problem, relaxation.columns, relaxation.primal, value_floor=floor, cost_cap=cap
            )
        )
    # the best at this level's objective; the first on a tie (``known`` is proven in the
    # earlier levels, the others only legal, and at a later level only ``known`` and
    # the rounded LP are considered, both meeting the earlier levels' optimum)
    found = [c for c in candidates if c is not None]
    incumbent = max(found, key=lambda c: _total(objective, c)) if found else None
    threshold = None if incumbent is None else _total(objective, incumbent)
    return Plan(
        problem=problem,
        level=level,
        forms_of=forms_of,
        presolved=tuple(presolved),
        relaxation=relaxation,
        bound=bound,
        incumbent=incumbent,
        threshold=threshold,
        stats=stats,
    )


def _objective(problem: Problem, level: Level) -> list[int]:
    if level is Level.VALUE:
        return list(problem.value)
    if level is Level.COST:
        return [-c for c in problem.cost]
    return [-w for w in problem.weight]


def _total(objective: list[int], selection: tuple[int, ...]) -> int:
    return sum(objective[f] for f in selection)


def _fixings(relaxation: Relaxation, threshold: int) -> tuple[list[int], list[int]]:
    """Forms that no selection reaching ``threshold`` holds, and forms every such
    selection holds (its identity is admitted and this is its only form left)."""
    ceiling = relaxation.bound + relaxation.margin
    # floor(ceiling - loss) < threshold  <=>  ceiling - loss < threshold (integer threshold)
    without = ceiling - relaxation.loss_in < threshold
    columns = relaxation.columns
    identity = relaxation.identity
    admitted = ceiling - relaxation.loss_out < threshold
    left = np.bincount(identity[~without], minlength=len(admitted))
    single = admitted & (left == 1)
    out = columns[without].tolist()
    into = columns[~without & single[identity]].tolist()
    return out, into


def _core_estimate(relaxation: Relaxation, threshold: int) -> int:
    ceiling = relaxation.bound + relaxation.margin
    kept = ceiling - relaxation.loss_in >= threshold
    admitted = ceiling - relaxation.loss_out < threshold
    left = np.bincount(relaxation.identity[kept], minlength=len(admitted))
    return int(kept.sum() - (admitted & (left == 1)).sum())
