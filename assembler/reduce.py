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
from typing import Any

from .closure import Problem

__all__ = ["Reduction", "reduce_problem"]

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


class _Contradiction(Exception):
    """The fixings leave no legal selection (only possible when none exists)."""


def reduce_problem(problem: Problem, *, use_lp: bool = True) -> Reduction | None:
    """The reduction of ``problem``, or None when it is proven to have no legal selection."""
    state: list[int | None] = [None] * problem.size
    stats = {"forms": problem.size}
    fixed_out = _presolve(problem)
    for f in fixed_out:
        state[f] = 0
    stats["presolve_out"] = len(fixed_out)
    bound: int | None = None
    incumbent: tuple[int, ...] | None = None
    if use_lp and problem.budget is not None and problem.size >= LP_MIN_FORMS:
        fixing = _lp_fixing(problem, state)
        if fixing is not None:
            bound, incumbent, out, into = fixing
            for f in out:
                state[f] = 0
            for f in into:
                state[f] = 1
            stats["lp_out"] = len(out)
            stats["lp_in"] = len(into)
    try:
        reduction = _core(problem, state, bound, incumbent)
    except _Contradiction:
        return None
    reduction.stats.update(stats)
    reduction.stats["core"] = reduction.core.size
    return reduction


# ---------------------------------------------------------------------------
# presolve


def _presolve(problem: Problem) -> list[int]:
    needed = {d for needs in problem.needs for d in needs}
    coupled = {i for group in problem.groups for i in group}
    required = set(problem.required)
    out: list[int] = []
    for forms in problem.forms_of():
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


def _build_lp(problem: Problem, state: list[int | None]) -> _Lp:
    columns = [f for f in range(problem.size) if state[f] is None]
    column = {f: j for j, f in enumerate(columns)}
    entries: list[list[tuple[int, float]]] = [[] for _ in columns]
    upper: list[float] = []
    equality: list[bool] = []

    def add_row(terms: list[tuple[int, float]], bound: float, is_equality: bool) -> None:
        row = len(upper)
        for j, coefficient in terms:
            entries[j].append((row, coefficient))
        upper.append(bound)
        equality.append(is_equality)

    forms_of: list[list[int]] = [[] for _ in problem.identities]
    for f in columns:
        forms_of[problem.identity_of[f]].append(column[f])
    required = set(problem.required)
    for identity, js in enumerate(forms_of):
        if identity in required:
            add_row([(j, 1.0) for j in js], 1.0, True)
        elif len(js) > 1:
            add_row([(j, 1.0) for j in js], 1.0, False)
    for f in columns:
        for d in problem.needs[f]:
            add_row([(column[f], 1.0)] + [(k, -1.0) for k in forms_of[d]], 0.0, False)
    for group in problem.groups:
        first = forms_of[group[0]]
        for other in group[1:]:
            add_row([(k, 1.0) for k in first] + [(k, -1.0) for k in forms_of[other]], 0.0, True)
    assert problem.budget is not None
    add_row([(column[f], float(problem.cost[f])) for f in columns], float(problem.budget), False)

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
    return _Lp(columns, start, index, coefficient, upper, equality)


def _solve_lp(problem: Problem, lp: _Lp) -> tuple[Any, Any] | None:
    """Primal and row duals of the relaxation, or None when HiGHS gives no usable answer."""
    import highspy
    import numpy as np
    from highspy._core import _Highs  # the public wrapper prints a banner on stdout

    n, m = len(lp.columns), len(lp.upper)
    model = highspy.HighsLp()
    model.num_col_ = n
    model.num_row_ = m
    model.col_cost_ = np.array([float(problem.value[f]) for f in lp.columns])
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
    solver.passModel(model)
    solver.run()
    if solver.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    solution = solver.getSolution()
    if not solution.dual_valid:
        return None
    return np.array(solution.col_value), np.array(solution.row_dual)


def _lp_fixing(
    problem: Problem, state: list[int | None]
) -> tuple[int, tuple[int, ...] | None, list[int], list[int]] | None:
    import numpy as np

    lp = _build_lp(problem, state)
    if not lp.columns:
        return None
    answer = _solve_lp(problem, lp)
    if answer is None:
        return None
    primal, duals = answer
    equality = np.array(lp.equality)
    y = np.where(equality, duals, np.maximum(duals, 0.0))
    b = np.array(lp.upper)
    start = np.array(lp.start)
    column_of_entry = np.repeat(np.arange(len(lp.columns)), np.diff(start))
    terms = np.array(lp.coefficient) * y[np.array(lp.index, dtype=np.int64)]
    aty = np.bincount(column_of_entry, weights=terms, minlength=len(lp.columns))
    magnitude = np.bincount(column_of_entry, weights=np.abs(terms), minlength=len(lp.columns))
    values = np.array([float(problem.value[f]) for f in lp.columns])
    reduced = values - aty
    lagrangian = float(y @ b) + float(np.maximum(reduced, 0.0).sum())
    # Generous rounding margin: float sums of n terms err by about n * 1e-16 relative.
    scale = float(np.abs(y * b).sum() + np.abs(values).sum() + magnitude.sum())
    margin = 1e-9 * scale + 1e-6
    bound = math.floor(lagrangian + margin)

    incumbent = _incumbent(problem, state, lp.columns, primal)
    if incumbent is None:
        return bound, None, [], []
    floor_value = sum(problem.value[f] for f in incumbent)
    out = [
        lp.columns[j]
        for j in np.nonzero((reduced < 0) & (lagrangian + reduced + margin < floor_value))[0]
    ]
    into = [
        lp.columns[j]
        for j in np.nonzero((reduced > 0) & (lagrangian - reduced + margin < floor_value))[0]
    ]
    return bound, incumbent, out, into


def _incumbent(
    problem: Problem, state: list[int | None], columns: list[int], primal: Any
) -> tuple[int, ...] | None:
    """A legal selection near the LP optimum: round down, repair, then fill greedily."""
    chosen: dict[int, int] = {}  # identity -> form
    for j in sorted(range(len(columns)), key=lambda j: -float(primal[j])):
        f = columns[j]
        if primal[j] > 1 - 1e-6 and problem.identity_of[f] not in chosen:
            chosen[problem.identity_of[f]] = f
    _repair(problem, chosen)
    required = set(problem.required)
    if not required <= set(chosen):
        return None
    budget = problem.budget
    assert budget is not None
    spent = sum(problem.cost[f] for f in chosen.values())
    if spent > budget:
        return None
    coupled = {i for group in problem.groups for i in group}
    candidates = [
        f
        for f in columns
        if problem.value[f] > 0 and state[f] is None and problem.identity_of[f] not in coupled
    ]
    candidates.sort(key=lambda f: (-problem.value[f] / max(problem.cost[f], 1), f))
    for f in candidates:
        identity = problem.identity_of[f]
        if identity in chosen or spent + problem.cost[f] > budget:
            continue
        if all(d in chosen for d in problem.needs[f]):
            chosen[identity] = f
            spent += problem.cost[f]
    return tuple(sorted(chosen.values()))


def _repair(problem: Problem, chosen: dict[int, int]) -> None:
    """Drop forms until every need and every group is whole."""
    changed = True
    while changed:
        changed = False
        for identity, f in list(chosen.items()):
            if any(d not in chosen for d in problem.needs[f]):
                del chosen[identity]
                changed = True
        for group in problem.groups:
            inside = [i for i in group if i in chosen]
            if inside and len(inside) < len(group):
                for i in inside:
                    del chosen[i]
                changed = True


# ---------------------------------------------------------------------------
# propagation and the core


def _core(
    problem: Problem,
    state: list[int | None],
    bound: int | None,
    incumbent: tuple[int, ...] | None,
) -> Reduction:
    forms_of = problem.forms_of()
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
            if state[f] is None and problem.identity_of[f] in admitted:
                if any(state[g] == 1 for g in forms_of[problem.identity_of[f]]):
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
