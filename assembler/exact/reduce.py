"""Exact reduction: from a problem to the small core that still needs a search.

Input: a ``Problem``.
Output: a ``Reduction``: forms proven to be in the optimum, the core ``Problem``
over the forms whose fate is still open, a proven upper bound on the value, and
a legal incumbent when one was found.

Every fixing here keeps the unique optimum of the full lexicographic order:

* dominance: a form is left out when another form of the same identity is at
  least as valuable, no dearer, needs no more identities and wins the tie-break,
  since swapping them improves any bundle that holds the first;
* filler: a form without value that nothing needs, couples or requires only adds
  cost and tie-break weight, so no optimum holds it;
* reduced costs: for ANY dual vector y of the LP relaxation (signs respected),
  V(x) <= L(y) = y.b + sum_j max(0, d_j) with d = v - A'y, since 0 <= x <= 1.
  Forcing x_j against the sign of d_j lowers that bound by |d_j|; when the lowered
  bound is below the value of a legal incumbent, no optimum (which is at least as
  valuable as the incumbent) has x_j that way. The bound is recomputed here from
  HiGHS's duals, with a margin for rounding, so exactness does not rest on the LP
  solver's tolerances: a poor dual only fixes less.

Propagation then removes what the fixings make impossible (a second form of an
admitted identity, forms whose needs or group partners are gone) and turns what
fixed forms need into required identities of the core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from .closure import Problem

__all__ = ["Level", "Reduction", "reduce_problem"]


class Level(StrEnum):
    """Which level of the lexicographic objective a reduction fixes by."""

    VALUE = "value"  # keeps every bundle worth at least the incumbent
    COST = "cost"  # ``known`` optimal in value: keeps every such bundle no dearer than it
    WEIGHT = "weight"  # ``known`` optimal in value then cost: keeps the bundles tied with
    # it on both whose tie-break weight is no larger


# Below this many forms the LP costs more than the search it would save.
LP_MIN_FORMS = 24


@dataclass(frozen=True, slots=True)
class Reduction:
    chosen: tuple[int, ...]  # forms in every optimum (indices of the full problem)
    core: Problem  # what is left to search
    core_forms: tuple[int, ...]  # full-problem index of each core form
    bound: int | None  # proven upper bound on the value of the full problem
    incumbent: tuple[int, ...] | None  # a legal selection of the full problem
    stats: dict[str, int] = field(default_factory=dict)

    def lift(self, core_selection: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sorted((*self.chosen, *(self.core_forms[f] for f in core_selection))))

    def compose(self, inner: Reduction) -> Reduction:
        """This reduction followed by ``inner``, a reduction of this one's core."""
        outer = self.core_forms
        return Reduction(
            chosen=self.lift(inner.chosen),
            core=inner.core,
            core_forms=tuple(outer[f] for f in inner.core_forms),
            bound=self.bound,
            incumbent=None if inner.incumbent is None else self.lift(inner.incumbent),
            stats={**self.stats, "core": inner.core.size},
        )


class _Contradiction(Exception):
    """The fixings leave no legal selection (only possible when none exists)."""


def reduce_problem(
    problem: Problem,
    *,
    use_lp: bool = True,
    known: tuple[int, ...] | None = None,
    level: Level = Level.VALUE,
) -> Reduction | None:
    """The reduction of ``problem``, or None when it is proven to have no legal selection.

    ``known`` is a legal selection; by value it is used when it is worth more than the
    incumbent built here. At the later levels it must be optimal in the earlier ones
    (see ``Level``), and the reduction keeps every bundle that could still beat or tie
    it, so the unique optimum always survives. To reduce further after an earlier
    reduction, reduce its core and ``compose`` the two.
    """
    state: list[int | None] = [None] * problem.size
    stats = {"forms": problem.size}
    # the forms of each identity, built once: three stages read it (0.13 s at 100k)
    forms_of = problem.forms_of()
    fixed_out = _presolve(problem, forms_of)
    for f in fixed_out:
        state[f] = 0
    stats["presolve_out"] = len(fixed_out)
    bound: int | None = None
    incumbent: tuple[int, ...] | None = None
    if use_lp and problem.budget is not None and problem.size >= LP_MIN_FORMS:
        fixing = _lp_fixing(problem, state, forms_of, known, level)
        if fixing is not None:
            bound, incumbent, out, into = fixing
            for f in out:
                state[f] = 0
            for f in into:
                state[f] = 1
            stats["lp_out"] = len(out)
            stats["lp_in"] = len(into)
    try:
        reduction = _core(problem, state, bound, incumbent, forms_of)
    except _Contradiction:
        return None
    reduction.stats.update(stats)
    reduction.stats["core"] = reduction.core.size
    return reduction


# ---------------------------------------------------------------------------
# presolve


def _presolve(problem: Problem, forms_of: tuple[tuple[int, ...], ...]) -> list[int]:
    needed = {d for needs in problem.needs for d in needs}
    coupled = {i for group in problem.groups for i in group}
    required = set(problem.required)
    out: list[int] = []
    for forms in forms_of:
        for a in forms:
            identity = problem.identity_of[a]
            if (
                problem.value[a] == 0
                and identity not in needed
                and identity not in coupled
                and identity not in required
            ):
                out.append(a)
                continue
            if any(_dominates(problem, b, a) for b in forms if b != a):
                out.append(a)
    return out


def _dominates(problem: Problem, b: int, a: int) -> bool:
    """True when swapping form a for form b (same identity) improves any bundle."""
    va, vb = problem.value[a], problem.value[b]
    ca, cb = problem.cost[a], problem.cost[b]
    if vb < va or cb > ca or not set(problem.needs[b]) <= set(problem.needs[a]):
        return False
    if vb > va or cb < ca:
        return True
    return problem.weight[b] < problem.weight[a]


# ---------------------------------------------------------------------------
# LP relaxation and reduced-cost fixing


@dataclass(slots=True)
class _Lp:
    columns: list[int]  # full-problem form of each LP column
    start: list[int]
    index: list[int]
    coefficient: list[float]
    upper: list[float]  # row upper bounds (b)
    equality: list[bool]
    # rows "one form per identity": kept inside the Lagrangian subproblem, not priced
    identity_row: list[bool]


def _build_lp(
    problem: Problem,
    state: list[int | None],
    value_floor: int | None = None,
    cost_cap: int | None = None,
) -> _Lp:
    columns = [f for f in range(problem.size) if state[f] is None]
    column = {f: j for j, f in enumerate(columns)}
    entries: list[list[tuple[int, float]]] = [[] for _ in columns]
    upper: list[float] = []
    equality: list[bool] = []
    identity_row: list[bool] = []

    def add_row(
        terms: list[tuple[int, float]], bound: float, is_equality: bool, per_identity: bool = False
    ) -> None:
        row = len(upper)
        for j, coefficient in terms:
            entries[j].append((row, coefficient))
        upper.append(bound)
        equality.append(is_equality)
        identity_row.append(per_identity)

    forms_of: list[list[int]] = [[] for _ in problem.identities]
    for f in columns:
        forms_of[problem.identity_of[f]].append(column[f])
    required = set(problem.required)
    for identity, js in enumerate(forms_of):
        if identity in required:
            add_row([(j, 1.0) for j in js], 1.0, True, per_identity=True)
        elif len(js) > 1:
            add_row([(j, 1.0) for j in js], 1.0, False, per_identity=True)
    for f in columns:
        for d in problem.needs[f]:
            add_row([(column[f], 1.0)] + [(k, -1.0) for k in forms_of[d]], 0.0, False)
    for group in problem.groups:
        first = forms_of[group[0]]
        for other in group[1:]:
            add_row([(k, 1.0) for k in first] + [(k, -1.0) for k in forms_of[other]], 0.0, True)
    assert problem.budget is not None
    budget = problem.budget if cost_cap is None else min(problem.budget, cost_cap)
    add_row([(column[f], float(problem.cost[f])) for f in columns], float(budget), False)
    if value_floor is not None:
        add_row(
            [(column[f], -float(problem.value[f])) for f in columns], -float(value_floor), False
        )

    start = [0]
    index: list[int] = []
    coefficient: list[float] = []
    for column_entries in entries:
        merged: dict[int, float] = {}
        for row, value in column_entries:
            merged[row] = merged.get(row, 0.0) + value
        for row in sorted(merged):
            if merged[row] != 0.0:
                index.append(row)
                coefficient.append(merged[row])
        start.append(len(index))
    return _Lp(columns, start, index, coefficient, upper, equality, identity_row)


def _solve_lp(problem: Problem, lp: _Lp, objective: list[int]) -> tuple[Any, Any] | None:
    """Primal and row duals of the relaxation, or None when HiGHS gives no usable answer."""
    import highspy
    import numpy as np
    from highspy._core import _Highs  # the public wrapper prints a banner on stdout

    n, m = len(lp.columns), len(lp.upper)
    model = highspy.HighsLp()
    model.num_col_ = n
    model.num_row_ = m
    model.col_cost_ = np.array([float(objective[f]) for f in lp.columns])
    model.col_lower_ = np.zeros(n)
    model.col_upper_ = np.ones(n)
    upper = np.array(lp.upper)
    model.row_upper_ = upper
    model.row_lower_ = np.where(np.array(lp.equality), upper, -highspy.kHighsInf)
    model.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    model.a_matrix_.start_ = np.array(lp.start, dtype=np.int32)
    model.a_matrix_.index_ = np.array(lp.index, dtype=np.int32)
    model.a_matrix_.value_ = np.array(lp.coefficient)
    model.sense_ = highspy.ObjSense.kMaximize
    solver = _Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    # Measured: HiGHS presolve cost more than it saved on these LPs (100k forms: 3.8 s
    # with it, 1.6 s without; 10k: 60 ms against 37 ms).
    solver.setOptionValue("presolve", "off")
    solver.passModel(model)
    solver.run()
    if solver.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    solution = solver.getSolution()
    if not solution.dual_valid:
        return None
    return np.array(solution.col_value), np.array(solution.row_dual)


def _lp_fixing(
    problem: Problem,
    state: list[int | None],
    forms_of: tuple[tuple[int, ...], ...],
    known: tuple[int, ...] | None = None,
    level: Level = Level.VALUE,
) -> tuple[int | None, tuple[int, ...] | None, list[int], list[int]] | None:
    """Fixings by value, or by cost (weight) among the bundles worth at least as much
    as ``known`` (and no dearer), maximising the negated cost (weight).

    Each later level keeps exactly what the next phase has to look at, so the cost,
    tie-break and uniqueness phases only see forms that can take part in a tie.
    """
    import numpy as np

    if level is Level.VALUE:
        objective = list(problem.value)
        lp = _build_lp(problem, state)
    else:
        assert known is not None
        value_floor = sum(problem.value[f] for f in known)
        if level is Level.COST:
            objective = [-c for c in problem.cost]
            lp = _build_lp(problem, state, value_floor=value_floor)
        else:
            objective = [-w for w in problem.weight]
            cost_cap = sum(problem.cost[f] for f in known)
            lp = _build_lp(problem, state, value_floor=value_floor, cost_cap=cost_cap)
    if not lp.columns:
        return None
    answer = _solve_lp(problem, lp, objective)
    if answer is None:
        return None
    primal, duals = answer
    # The Lagrangian keeps "at most one form per identity" (exactly one when required)
    # in its subproblem and prices every other row with y (y >= 0 on <= rows):
    #   V(x) <= L(y) = y.b + sum over identities of the best max(0, d_j) of its forms,
    # with d = v - A'y. Keeping the identity rows matters: priced, they give the chosen
    # form of each identity a zero reduced cost and nothing could be fixed.
    equality = np.array(lp.equality)
    priced = ~np.array(lp.identity_row)
    y = np.where(priced, np.where(equality, duals, np.maximum(duals, 0.0)), 0.0)
    b = np.array(lp.upper)
    start = np.array(lp.start)
    n = len(lp.columns)
    column_of_entry = np.repeat(np.arange(n), np.diff(start))
    terms = np.array(lp.coefficient) * y[np.array(lp.index, dtype=np.int64)]
    aty = np.bincount(column_of_entry, weights=terms, minlength=n)
    magnitude = np.bincount(column_of_entry, weights=np.abs(terms), minlength=n)
    values = np.array([float(objective[f]) for f in lp.columns])
    reduced = values - aty
    identity = np.array([problem.identity_of[f] for f in lp.columns], dtype=np.int64)
    m = len(problem.identities)
    best = np.full(m, -np.inf)
    np.maximum.at(best, identity, reduced)
    present = np.isfinite(best)
    required = np.zeros(m, dtype=bool)
    required[list(problem.required)] = True
    contribution = np.where(required, best, np.maximum(best, 0.0))
    contribution[~present] = 0.0
    lagrangian = float(y @ b) + float(contribution.sum())
    # Generous rounding margin: float sums of n terms err by about n * 1e-16 relative.
    scale = float(np.abs(y * b).sum() + np.abs(values).sum() + magnitude.sum())
    margin = 1e-9 * scale + 1e-6
    bound: int | None
    incumbent: tuple[int, ...] | None
    if level is not Level.VALUE:
        bound, incumbent = None, known
    else:
        bound = math.floor(lagrangian + margin)
        incumbent = _incumbent(problem, state, forms_of, lp.columns, primal)
        if known is not None and (
            incumbent is None
            or sum(problem.value[f] for f in known) > sum(problem.value[f] for f in incumbent)
        ):
            incumbent = known
    if incumbent is None:
        return bound, None, [], []
    floor_value = sum(objective[f] for f in incumbent)
    # Forcing x_j = 1 replaces its identity's best choice by d_j.
    without = lagrangian - contribution[identity] + reduced + margin < floor_value
    out = [lp.columns[j] for j in np.nonzero(without)[0]]
    # Leaving an identity out replaces its best choice by 0; when that cannot reach the
    # incumbent the identity is admitted, and if one form is left it is that form.
    admitted = required | (present & (lagrangian - contribution + margin < floor_value))
    left = np.bincount(identity[~without], minlength=m)
    single = admitted & (left == 1)
    into = [lp.columns[j] for j in np.nonzero(~without & single[identity])[0]]
    return bound, incumbent, out, into


def _incumbent(
    problem: Problem,
    state: list[int | None],
    forms_of: tuple[tuple[int, ...], ...],
    columns: list[int],
    primal: Any,
) -> tuple[int, ...] | None:
    """A legal selection near the LP optimum.

    Forms are offered in LP order (most "in" first, then by value density); each is
    added with everything it drags in (the cheapest form of each identity it needs,
    its group partners, recursively) when the whole addition fits. Required
    identities go first. Then each admitted identity is upgraded to a more valuable
    form when that still fits. Rounding the LP and repairing it lost hundreds of
    value units to dropped dependencies; building closures loses almost nothing.
    """
    budget = problem.budget
    assert budget is not None
    weight = {f: float(primal[j]) for j, f in enumerate(columns)}
    builder = _Builder(problem, state, forms_of, budget, weight)
    order = sorted(
        columns,
        key=lambda f: (-round(weight[f], 6), -problem.value[f] / max(problem.cost[f], 1), f),
    )
    in_order: dict[int, list[int]] = {}
    for f in order:
        in_order.setdefault(problem.identity_of[f], []).append(f)
    for identity in problem.required:
        if not any(builder.try_add(f) for f in in_order.get(identity, ())):
            return None
    for f in order:
        if problem.value[f] > 0:
            builder.try_add(f)
    for f in sorted(columns, key=lambda f: -problem.value[f]):
        builder.try_upgrade(f)
    return tuple(sorted(builder.chosen.values()))


class _Builder:
    """Grows a legal selection one whole addition at a time."""

    def __init__(
        self,
        problem: Problem,
        state: list[int | None],
        all_forms_of: tuple[tuple[int, ...], ...],
        budget: int,
        weight: dict[int, float],
    ) -> None:
        self.problem = problem
        self.budget = budget
        self.spent = 0
        self.chosen: dict[int, int] = {}
        forms_of = [[f for f in forms if state[f] is None] for forms in all_forms_of]
        # What an addition drags in: the form the LP leans to most, else the cheapest.
        # (Pulling the cheapest form of a needed identity blocked the valuable form the
        # LP had chosen for it, measured at ~500 value units lost on 1,000 forms.)
        self.pick = [
            min(forms, key=lambda f: (-round(weight[f], 6), problem.cost[f], f)) if forms else None
            for forms in forms_of
        ]
        self.groups_of: dict[int, list[tuple[int, ...]]] = {}
        for group in problem.groups:
            for identity in group:
                self.groups_of.setdefault(identity, []).append(group)

    def _addition(self, form: int) -> dict[int, int] | None:
        problem = self.problem
        addition: dict[int, int] = {}
        stack = [form]
        while stack:
            f = stack.pop()
            identity = problem.identity_of[f]
            if identity in self.chosen or identity in addition:
                continue
            addition[identity] = f
            partners = [*problem.needs[f]]
            for group in self.groups_of.get(identity, ()):
                partners.extend(group)
            for partner in partners:
                if partner not in self.chosen and partner not in addition:
                    pick = self.pick[partner]
                    if pick is None:
                        return None
                    stack.append(pick)
        return addition

    def try_add(self, form: int) -> bool:
        identity = self.problem.identity_of[form]
        if identity in self.chosen:
            return self.chosen[identity] == form
        addition = self._addition(form)
        if addition is None:
            return False
        cost = sum(self.problem.cost[f] for f in addition.values())
        if self.spent + cost > self.budget:
            return False
        self.chosen.update(addition)
        self.spent += cost
        return True

    def try_upgrade(self, form: int) -> None:
        problem = self.problem
        identity = problem.identity_of[form]
        current = self.chosen.get(identity)
        if current is None or current == form or problem.value[form] <= problem.value[current]:
            return
        extra = problem.cost[form] - problem.cost[current]
        if self.spent + extra <= self.budget and all(d in self.chosen for d in problem.needs[form]):
            self.chosen[identity] = form
            self.spent += extra


# ---------------------------------------------------------------------------
# propagation and the core


def _core(
    problem: Problem,
    state: list[int | None],
    bound: int | None,
    incumbent: tuple[int, ...] | None,
    forms_of: tuple[tuple[int, ...], ...],
) -> Reduction:
    changed = True
    while changed:
        changed = False
        admitted = {problem.identity_of[f] for f in range(problem.size) if state[f] == 1}
        if len(admitted) != sum(1 for s in state if s == 1):
            raise _Contradiction
        available = {problem.identity_of[f] for f in range(problem.size) if state[f] != 0}

        def out(f: int) -> None:
            nonlocal changed
            if state[f] is None:
                state[f] = 0
                changed = True
            elif state[f] == 1:
                raise _Contradiction

        for f in range(problem.size):
            # an admitted identity has its one form already
            if state[f] is None and problem.identity_of[f] in admitted:
                out(f)
            if state[f] != 0 and any(d not in available for d in problem.needs[f]):
                out(f)
        for group in problem.groups:
            if any(i not in available for i in group):
                for i in group:
                    for f in forms_of[i]:
                        out(f)
        if any(i not in available for i in problem.required):
            raise _Contradiction

    admitted = {problem.identity_of[f] for f in range(problem.size) if state[f] == 1}
    chosen = tuple(f for f in range(problem.size) if state[f] == 1)
    free = [f for f in range(problem.size) if state[f] is None]
    must = {i for i in problem.required if i not in admitted}
    for f in chosen:
        must.update(d for d in problem.needs[f] if d not in admitted)
    core_groups: list[tuple[int, ...]] = []
    for group in problem.groups:
        if any(i in admitted for i in group):
            must.update(i for i in group if i not in admitted)
        else:
            core_groups.append(group)
    identities = sorted({problem.identity_of[f] for f in free})
    position = {identity: k for k, identity in enumerate(identities)}
    # Propagation left each group either wholly open or wholly out; drop the latter.
    core_groups = [g for g in core_groups if all(i in position for i in g)]
    if any(i not in position for i in must):
        raise _Contradiction
    spent = sum(problem.cost[f] for f in chosen)
    budget = None if problem.budget is None else problem.budget - spent
    if budget is not None and budget < 0:
        raise _Contradiction
    core = replace(
        problem,
        form_ids=tuple(problem.form_ids[f] for f in free),
        identity_of=tuple(position[problem.identity_of[f]] for f in free),
        identities=tuple(problem.identities[i] for i in identities),
        cost=tuple(problem.cost[f] for f in free),
        value=tuple(problem.value[f] for f in free),
        weight=tuple(problem.weight[f] for f in free),
        needs=tuple(
            tuple(sorted(position[d] for d in problem.needs[f] if d not in admitted)) for f in free
        ),
        groups=tuple(sorted({tuple(sorted(position[i] for i in group)) for group in core_groups})),
        required=tuple(sorted(position[i] for i in must)),
        budget=budget,
    )
    return Reduction(
        chosen=chosen,
        core=core,
        core_forms=tuple(free),
        bound=bound,
        incumbent=incumbent,
    )
