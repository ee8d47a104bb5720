"""The LP relaxation and its Lagrangian bound: what forcing each form would cost.

Input: a ``Problem``, which forms are still open, the level's objective (value, or
negated cost or weight with a value floor and a cost cap), and a deadline.
Output: a ``Relaxation``: a proven upper bound ``L`` on the objective of every legal
selection, the LP's primal values, and for each open form how much forcing it in
lowers that bound (``loss_in``), and for each identity how much leaving it out does
(``loss_out``). A fixing rule reads these against a threshold (``fixings.py``).

Why the bound is exact whatever the LP solver returns: for ANY dual vector y (signs
respected on inequality rows), V(x) <= L(y) = y.b + sum over identities of the best
max(0, d_j) of its forms (exactly one form when required) + sum over the auxiliary
columns of max(0, d_aux), with d = c - A'y, since 0 <= x <= 1 and "one form per
identity" is kept inside the subproblem. L is recomputed here from the duals with a
rounding margin, so a poor, approximate or time-limited dual only fixes less.

The matrix is built from flat integer arrays (no per-entry Python work beyond reading
the needs), and stays linear in forms + dependency edges + group memberships: each
needed or grouped identity gets an auxiliary column y_i = sum of its forms, each
dependency is the row x_f <= y_d, and a group is a chain of rows y_a = y_b. HiGHS gets
the remaining time as its time limit; large LPs use the interior point method, faster
than dual simplex from about 50,000 columns and slower below.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..deadline import Deadline
from .closure import Problem

__all__ = ["IPM_MIN_COLUMNS", "LpMemory", "Relaxation", "budget_relaxation", "relax"]

IPM_MIN_COLUMNS = 50_000
FREE = -1  # state of a form whose fate is still open (0: out, 1: in)


@dataclass(frozen=True, slots=True)
class Relaxation:
    columns: Any  # np.ndarray[int64]: the full-problem form of each LP column
    identity: Any  # np.ndarray[int64]: the identity of each column's form
    primal: Any  # np.ndarray[float]: the LP value of each column's form
    bound: float  # L(y), unrounded
    margin: float  # rounding margin: L + margin bounds every legal selection's objective
    loss_in: Any  # np.ndarray[float]: per column, how much forcing it in lowers L
    loss_out: Any  # np.ndarray[float]: per identity, leaving it out lowers L (inf: required)
    timed_out: bool  # the LP stopped at its time limit (the bound is still valid)

    @property
    def proven_bound(self) -> int:
        return int(np.floor(self.bound + self.margin))


class LpMemory:
    """The basis of the last LP solved with this memory, each column and row named by
    what it stands for (a form id, an identity, a dependency edge, a group pair), so
    that the next LP, that of the same request give or take a session's delta, starts
    from it and needs a handful of simplex iterations instead of a full solve.

    Only a start, never a premise: HiGHS takes the basis as an alien one (it repairs
    what no longer fits: forms gone, rows new) and solves to optimality from it, and
    the bound is recomputed from whatever duals come back (module docstring). A stale
    or foreign memory costs iterations, never exactness. Solves may share one memory
    from several threads (a session's proposals run outside its lock): the basis is
    one slot, read once per LP and replaced whole, so a reader sees one LP's basis or
    none, and the last LP to finish is the one remembered."""

    __slots__ = ("basis", "iterations")

    def __init__(self) -> None:
        # (status by column key, status by row key), or None
        self.basis: tuple[dict[Any, Any], dict[Any, Any]] | None = None
        # simplex iterations of the last LP solved with this memory (tests read it)
        self.iterations: int | None = None


def needs_arrays(problem: Problem) -> tuple[Any, Any]:
    """The needs of every form as CSR arrays (start offsets, flat identity indices)."""
    lengths = np.fromiter(map(len, problem.needs), dtype=np.int64, count=problem.size)
    start = np.zeros(problem.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=start[1:])
    flat = np.fromiter(
        itertools.chain.from_iterable(problem.needs), dtype=np.int64, count=int(start[-1])
    )
    return start, flat


def relax(
    problem: Problem,
    state: Any,
    objective: Any,
    *,
    deadline: Deadline,
    value_floor: int | None = None,
    cost_cap: int | None = None,
    memory: LpMemory | None = None,
) -> Relaxation | None:
    """The Lagrangian data of the LP over the open forms (``state == FREE``), or None
    when there is no open form or HiGHS gives nothing usable. With ``memory`` the
    simplex starts from the basis it holds and leaves its own there."""
    assert problem.budget is not None
    columns = np.flatnonzero(state == FREE)
    n = len(columns)
    if n == 0:
        return None
    m = len(problem.identities)
    identity_of = np.asarray(problem.identity_of, dtype=np.int64)
    column_identity = identity_of[columns]
    rows = _Rows()

    # one form per identity (exactly one when required): kept in the subproblem, not priced
    required = np.zeros(m, dtype=bool)
    required[list(problem.required)] = True
    counts = np.bincount(column_identity, minlength=m)
    has_row = required | (counts > 1)
    identity_row = np.full(m, -1, dtype=np.int64)
    count = int(has_row.sum())
    identity_row[has_row] = rows.reserve(count, required[has_row], priced=False) + np.arange(count)
    take = has_row[column_identity]
    rows.add(identity_row[column_identity[take]], np.flatnonzero(take), 1.0)

    # auxiliary columns y_i = sum of the forms of each needed or grouped identity
    start, flat = needs_arrays(problem)
    lengths = start[columns + 1] - start[columns]
    edge_column = np.repeat(np.arange(n), lengths)
    edge_offsets = np.repeat(start[columns], lengths) + _ranks(lengths)
    edge_need = flat[edge_offsets]
    grouped = np.fromiter(itertools.chain.from_iterable(problem.groups), dtype=np.int64)
    linked = np.zeros(m, dtype=bool)
    linked[edge_need] = True
    linked[grouped] = True
    aux_identities = np.flatnonzero(linked)
    aux_column = np.full(m, -1, dtype=np.int64)
    aux_column[aux_identities] = n + np.arange(len(aux_identities))
    aux_row = np.full(m, -1, dtype=np.int64)
    aux_row[aux_identities] = rows.reserve(len(aux_identities), True, upper=0.0) + np.arange(
        len(aux_identities)
    )
    rows.add(aux_row[aux_identities], aux_column[aux_identities], 1.0)
    in_aux = linked[column_identity]
    rows.add(aux_row[column_identity[in_aux]], np.flatnonzero(in_aux), -1.0)
    # a dependency: x_f - y_d <= 0
    if len(edge_need):
        first = rows.reserve(len(edge_need), False, upper=0.0)
        edge_rows = first + np.arange(len(edge_need))
        rows.add(edge_rows, edge_column, 1.0)
        rows.add(edge_rows, aux_column[edge_need], -1.0)
    # a group: y_a - y_b = 0 for consecutive members
    pairs = [(a, b) for group in problem.groups for a, b in itertools.pairwise(group)]
    if pairs:
        left, right = np.array(pairs, dtype=np.int64).T
        first = rows.reserve(len(pairs), True, upper=0.0)
        pair_rows = first + np.arange(len(pairs))
        rows.add(pair_rows, aux_column[left], 1.0)
        rows.add(pair_rows, aux_column[right], -1.0)
    # the budget (tightened to the cost cap at the weight level)
    cost = np.asarray(problem.cost, dtype=np.float64)[columns]
    budget = problem.budget if cost_cap is None else min(problem.budget, cost_cap)
    budget_row = rows.reserve(1, False, upper=float(budget))
    nonzero = np.flatnonzero(cost)
    rows.add(np.full(len(nonzero), budget_row), nonzero, cost[nonzero])
    if value_floor is not None:
        value = np.asarray(problem.value, dtype=np.float64)[columns]
        floor_row = rows.reserve(1, False, upper=-float(value_floor))
        nonzero = np.flatnonzero(value)
        rows.add(np.full(len(nonzero), floor_row), nonzero, -value[nonzero])

    total_columns = n + len(aux_identities)
    gains = np.zeros(total_columns)
    gains[:n] = np.asarray(objective, dtype=np.float64)[columns]
    matrix = rows.matrix(total_columns)
    warm = None
    # the interior point method (from IPM_MIN_COLUMNS columns, auxiliaries included)
    # takes no starting basis and, without crossover, leaves none
    if memory is not None and total_columns < IPM_MIN_COLUMNS:
        names = problem.identities
        form_ids = [problem.form_ids[c] for c in columns.tolist()]
        row_keys: list[Any] = [("one", names[i]) for i in np.flatnonzero(has_row).tolist()]
        row_keys += [("aux", names[i]) for i in aux_identities.tolist()]
        row_keys += [
            ("need", form_ids[c], names[d])
            for c, d in zip(edge_column.tolist(), edge_need.tolist(), strict=True)
        ]
        row_keys += [("pair", names[a], names[b]) for a, b in pairs]
        row_keys.append(("budget",))
        if value_floor is not None:
            row_keys.append(("floor",))
        assert len(row_keys) == rows.count
        column_keys: list[Any] = [*form_ids, *(("aux", names[i]) for i in aux_identities.tolist())]
        warm = _Warm(memory, column_keys, row_keys)
    answer = _solve(gains, matrix, rows, deadline, warm)
    if answer is None:
        return None
    primal, duals, timed_out = answer
    return _lagrangian(
        problem, columns, column_identity, required, gains, matrix, rows, primal, duals, timed_out
    )


def _ranks(lengths: Any) -> Any:
    """0, 1, ..., k-1 for each run of length k, concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total, dtype=np.int64) - starts


class _Rows:
    """Row bounds and matrix entries, gathered as arrays."""

    def __init__(self) -> None:
        self.count = 0
        self.upper: list[Any] = []
        self.equality: list[Any] = []
        self.priced: list[Any] = []
        self.entries: list[tuple[Any, Any, Any]] = []

    def reserve(self, count: int, equality: Any, *, upper: float = 1.0, priced: bool = True) -> int:
        """``count`` new rows; the index of the first."""
        first = self.count
        self.count += count
        self.upper.append(np.full(count, upper))
        self.equality.append(np.broadcast_to(np.asarray(equality, dtype=bool), (count,)))
        self.priced.append(np.full(count, priced))
        return first

    def add(self, rows: Any, columns: Any, values: Any) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        self.entries.append(
            (rows, np.asarray(columns, dtype=np.int64), np.broadcast_to(values, rows.shape))
        )

    def matrix(self, columns: int) -> tuple[Any, Any, Any]:
        """Column-wise (start, row index, value); no duplicate entries are ever added."""
        row = np.concatenate([e[0] for e in self.entries])
        column = np.concatenate([e[1] for e in self.entries])
        value = np.concatenate([np.asarray(e[2], dtype=np.float64) for e in self.entries])
        order = np.argsort(column, kind="stable")
        start = np.zeros(columns + 1, dtype=np.int64)
        np.cumsum(np.bincount(column, minlength=columns), out=start[1:])
        return start, row[order], value[order]

    def bounds(self) -> tuple[Any, Any, Any]:
        return (
            np.concatenate(self.upper),
            np.concatenate(self.equality),
            np.concatenate(self.priced),
        )


@dataclass(frozen=True, slots=True)
class _Warm:
    memory: LpMemory
    column_keys: list[Any]
    row_keys: list[Any]


def _solve(
    gains: Any,
    matrix: tuple[Any, Any, Any],
    rows: _Rows,
    deadline: Deadline,
    warm: _Warm | None = None,
) -> tuple[Any, Any, bool] | None:
    import highspy
    from highspy._core import _Highs  # the public wrapper prints a banner on stdout

    start, index, value = matrix
    upper, equality, _ = rows.bounds()
    n = len(gains)
    solver = _Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    # HiGHS' presolve costs more than it saves on these LPs, at every size measured
    solver.setOptionValue("presolve", "off")
    solver.setOptionValue("time_limit", deadline.limit())
    if n >= IPM_MIN_COLUMNS:
        # no crossover: any dual gives a valid bound here, and crossover costs seconds
        solver.setOptionValue("solver", "ipm")
        solver.setOptionValue("run_crossover", "off")
    # the arrays overload: HiGHS reads the buffers (a ``HighsLp`` built field by field
    # copies each array element by element, milliseconds on a session's LP)
    solver.passModel(
        n,
        rows.count,
        len(index),
        int(highspy.MatrixFormat.kColwise),
        int(highspy.ObjSense.kMaximize),
        0.0,
        np.ascontiguousarray(gains, dtype=np.float64),
        np.zeros(n),
        np.ones(n),
        np.ascontiguousarray(np.where(equality, upper, -highspy.kHighsInf), dtype=np.float64),
        np.ascontiguousarray(upper, dtype=np.float64),
        start.astype(np.int32),
        index.astype(np.int32),
        np.ascontiguousarray(value, dtype=np.float64),
        np.zeros(n, dtype=np.int32),  # every column continuous
    )
    # read once: another thread's LP may replace the memory meanwhile
    remembered = None if warm is None else warm.memory.basis
    if warm is not None and remembered is not None:
        _start(solver, warm, remembered)
    solver.run()
    status = solver.getModelStatus()
    timed_out = status == highspy.HighsModelStatus.kTimeLimit
    if warm is not None:
        _remember(solver, warm, status == highspy.HighsModelStatus.kOptimal)
    if status != highspy.HighsModelStatus.kOptimal and not timed_out:
        return None
    solution = solver.getSolution()
    if not solution.dual_valid:
        return None
    primal = np.clip(np.asarray(solution.col_value, dtype=np.float64), 0.0, 1.0)
    return primal, np.asarray(solution.row_dual, dtype=np.float64), timed_out


def _start(solver: Any, warm: _Warm, remembered: tuple[dict[Any, Any], dict[Any, Any]]) -> None:
    """Hand HiGHS the remembered basis: a column or row it has no status for enters
    nonbasic at its lower bound (a new form) or basic (a new row's slack)."""
    import highspy

    lower, basic = highspy.HighsBasisStatus.kLower, highspy.HighsBasisStatus.kBasic
    columns, rows = remembered
    basis = highspy.HighsBasis()
    basis.col_status = [columns.get(key, lower) for key in warm.column_keys]
    basis.row_status = [rows.get(key, basic) for key in warm.row_keys]
    basis.valid = True
    # alien: HiGHS makes a basis of it whatever its count of basic variables
    basis.alien = True
    if solver.setBasis(basis) == highspy.HighsStatus.kError:
        # a basis HiGHS will not take is no start: the simplex starts cold as without one
        solver.clearSolver()


def _remember(solver: Any, warm: _Warm, optimal: bool) -> None:
    """Keep this LP's final basis for the next start; an LP that did not finish leaves
    the memory empty (its basis is the middle of a search, not a good start)."""
    memory = warm.memory
    memory.iterations = int(solver.getInfo().simplex_iteration_count)
    basis = solver.getBasis() if optimal else None
    if basis is None or not basis.valid:
        memory.basis = None
        return
    memory.basis = (
        dict(zip(warm.column_keys, basis.col_status, strict=True)),
        dict(zip(warm.row_keys, basis.row_status, strict=True)),
    )


def _lagrangian(
    problem: Problem,
    columns: Any,
    column_identity: Any,
    required: Any,
    gains: Any,
    matrix: tuple[Any, Any, Any],
    rows: _Rows,
    primal: Any,
    duals: Any,
    timed_out: bool,
) -> Relaxation:
    start, index, value = matrix
    upper, equality, priced = rows.bounds()
    n = len(columns)
    # y >= 0 on <= rows, any sign on equalities; identity rows stay in the subproblem
    y = np.where(priced, np.where(equality, duals, np.maximum(duals, 0.0)), 0.0)
    y = np.nan_to_num(y, nan=0.0, posinf=0.0, neginf=0.0)
    column_of_entry = np.repeat(np.arange(len(gains)), np.diff(start))
    terms = value * y[index]
    aty = np.bincount(column_of_entry, weights=terms, minlength=len(gains))
    magnitude = np.bincount(column_of_entry, weights=np.abs(terms), minlength=len(gains))
    reduced = gains - aty
    form_reduced = reduced[:n]
    m = len(problem.identities)
    best = np.full(m, -np.inf)
    np.maximum.at(best, column_identity, form_reduced)
    present = np.isfinite(best)
    contribution = np.where(required, best, np.maximum(best, 0.0))
    contribution[~present] = 0.0
    aux = np.maximum(reduced[n:], 0.0)
    bound = float(y @ upper) + float(contribution.sum()) + float(aux.sum())
    # Generous rounding margin: float sums of n terms err by about n * 1e-16 relative.
    scale = float(np.abs(y * upper).sum() + np.abs(gains).sum() + magnitude.sum())
    margin = 1e-9 * scale + 1e-6
    # Forcing x_j = 1 replaces its identity's best choice by d_j; leaving an identity
    # out replaces it by 0 (impossible when required).
    loss_in = contribution[column_identity] - form_reduced
    loss_out = np.where(required, np.inf, contribution)
    return Relaxation(
        columns=columns,
        identity=column_identity,
        primal=primal[:n],
        bound=bound,
        margin=margin,
        loss_in=loss_in,
        loss_out=loss_out,
        timed_out=timed_out,
    )


def budget_relaxation(problem: Problem, open_forms: Any, *, steps: int = 24) -> tuple[int, Any]:
    """A proven upper bound on the value without an LP (none fitted in the time left),
    and a preference per open form (in ``open_forms`` order) for the incumbent.

    The Lagrangian of the budget row alone: for any lambda >= 0, V(x) <= L(lambda) =
    lambda * B + sum over identities of the best max(0, v - lambda * c) (exactly one form
    when required), dependencies and groups dropped. L is convex in lambda; bisection on
    its slope (B minus the cost of each identity's best form) finds its minimum in a few
    dozen vectorised passes, and every lambda tried gives a valid bound: the lowest is
    kept. The forms that are their identity's best there are what the multiple-choice
    knapsack relaxation takes: preferred 1, the rest 0. (A plain value density order
    admits cheap anchors whose identities can then not be upgraded.)"""
    assert problem.budget is not None
    forms = np.asarray(open_forms, dtype=np.int64)
    n = len(forms)
    if n == 0:
        return 0, np.zeros(0)
    identity = np.asarray(problem.identity_of, dtype=np.int64)[forms]
    order = np.argsort(identity, kind="stable")
    identity = identity[order]
    value = np.asarray(problem.value, dtype=np.float64)[forms[order]]
    cost = np.asarray(problem.cost, dtype=np.float64)[forms[order]]
    starts = np.flatnonzero(np.r_[True, identity[1:] != identity[:-1]])
    segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    required = np.zeros(len(problem.identities), dtype=bool)
    required[list(problem.required)] = True
    must = required[identity[starts]]
    budget = float(problem.budget)

    def at(multiplier: float) -> tuple[float, Any]:
        gain = value - multiplier * cost
        best = np.maximum.reduceat(gain, starts)
        taken = must | (best > 0)
        # each taken identity's first form of the best gain
        ties = np.flatnonzero((gain == best[segment]) & taken[segment])
        first = ties[np.r_[True, segment[ties[1:]] != segment[ties[:-1]]]] if len(ties) else ties
        chosen = np.zeros(n, dtype=bool)
        chosen[first] = True
        return multiplier * budget + float(best[taken].sum()), chosen

    low, high = 0.0, float((value / np.maximum(cost, 1e-9)).max()) + 1.0
    lowest, preferred = at(0.0)
    if cost[preferred].sum() > budget:
        for _ in range(steps):
            multiplier = (low + high) / 2
            lagrangian, chosen = at(multiplier)
            if lagrangian < lowest:
                lowest, preferred = lagrangian, chosen
            if cost[chosen].sum() > budget:
                low = multiplier
            else:
                high = multiplier
    scale = float(np.abs(value).sum() + high * (budget + float(cost.sum())))
    preference = np.zeros(n)
    preference[order] = preferred
    return int(np.floor(lowest + 1e-9 * scale + 1e-6)), preference
