"""The two solver peers the exact path is measured against, on the same ``Problem``.

Input: an ``assembler.exact.closure.Problem`` (the unreduced problem: gates applied,
closure and groups built) and a time limit in seconds.
Output: a plain dict (JSON-ready) with the status, the answer's value and cost,
a proven value bound and gap when the limit was hit, and the wall-clock split
between building the model and solving it.

Both peers are written here, independently of ``assembler.exact.cpsat``, so that they
stay a fixed reference while the solver internals change: they encode the same
rules (C2 one form per identity, exactly one when required; C4 a form needs one
form of each identity it depends on; C5 coupled identities admitted together;
C6 the budget) and optimise the same lexicographic order as far as noted.

* ``cpsat_alone``: CP-SAT as tuned in issue 5 (``linearization_level=2``, one
  worker, seed 0) on the full problem. Phase 1 maximises ``V * K - C`` (value
  first, cost second, one solve; two solves when that would overflow 62 bits),
  phase 2 minimises the tie-break weight ``H`` with phase 1 fixed and its answer
  as a hint. The last level of the order (canonical form order among bundles
  equal in V, C and H, and the uniqueness proof the exact backend runs) is
  skipped: ties in H are vanishingly rare on these instances.
* ``highs_milp``: HiGHS branch and cut (one thread) in two solves: maximise V,
  then minimise C with ``V >= V*`` added and the first answer as a start. Both
  objectives are integers, so an absolute gap below 1 is a proof
  (``mip_abs_gap = 0.999``, ``mip_rel_gap = 0``). The tie-break level H is
  skipped: its weights reach 2**32 per form and do not survive a float objective.

Both share one deadline over all their phases, like the exact path's time limit.
"""

from __future__ import annotations

import time
from typing import Any

from assembler.exact.closure import Problem

__all__ = ["cp_model_of", "cpsat_alone", "highs_milp"]

_INT62 = 1 << 62


def _gap(value: int | None, bound: int | None) -> float | None:
    """The same relative gap as ``assembler.Result.gap``."""
    if value is None or bound is None:
        return None
    return max(0, bound - value) / max(bound, 1)


def _answer(problem: Problem, selection: list[int]) -> tuple[int, int, int]:
    value = sum(problem.value[f] for f in selection)
    cost = sum(problem.cost[f] for f in selection)
    weight = sum(problem.weight[f] for f in selection)
    return value, cost, weight


# ---------------------------------------------------------------------------
# CP-SAT alone


def _finish(
    out: dict[str, Any],
    problem: Problem,
    phases: list[dict[str, Any]],
    started: float,
    built: float,
    status: str,
    chosen: list[int] | None,
    bound: int | None,
) -> dict[str, Any]:
    """Both peers' report: timings, then the answer's value, cost, weight and gap."""
    done = time.perf_counter()
    out.update(status=status, solve_s=done - built, total_s=done - started, phases=phases)
    if chosen is None:
        out.update(value=None, cost=None, bound=bound, gap=None)
        return out
    value, cost, weight = _answer(problem, chosen)
    out.update(value=value, cost=cost, weight=weight, bound=bound, gap=_gap(value, bound))
    return out


def cp_model_of(problem: Problem) -> tuple[Any, list[Any]]:
    """The problem's constraints C2-C6 as a ``cp_model.CpModel``, and its variables."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = [model.new_bool_var(f"x{i}") for i in range(problem.size)]
    forms_of = problem.forms_of()
    required = set(problem.required)
    for identity, forms in enumerate(forms_of):
        literals = [x[f] for f in forms]
        if identity in required:
            model.add_exactly_one(literals)
        elif len(literals) > 1:
            model.add_at_most_one(literals)
    for form, needs in enumerate(problem.needs):
        for identity in needs:
            model.add_bool_or([~x[form], *(x[f] for f in forms_of[identity])])
    for group in problem.groups:
        first = cp_model.LinearExpr.sum([x[f] for f in forms_of[group[0]]])
        for identity in group[1:]:
            model.add(first == cp_model.LinearExpr.sum([x[f] for f in forms_of[identity]]))
    if problem.budget is not None and sum(problem.cost) > problem.budget:
        model.add(cp_model.LinearExpr.weighted_sum(x, list(problem.cost)) <= problem.budget)
    return model, x


def cpsat_alone(problem: Problem, time_limit: float) -> dict[str, Any]:
    from ortools.sat.python import cp_model

    started = time.perf_counter()
    deadline = started + time_limit
    out: dict[str, Any] = {"peer": "cpsat", "forms": problem.size}
    if problem.size == 0:
        out.update(status="optimal", value=0, cost=0, bound=0, gap=0.0, build_s=0.0)
        out.update(solve_s=0.0, total_s=time.perf_counter() - started, phases=[])
        return out

    model, x = cp_model_of(problem)
    built = time.perf_counter()
    out["build_s"] = built - started

    phases: list[dict[str, Any]] = []

    def run(name: str) -> tuple[Any, Any]:
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.max_time_in_seconds = max(0.001, deadline - time.perf_counter())
        params.num_workers = 1
        params.linearization_level = 2
        params.random_seed = 0
        t = time.perf_counter()
        status = solver.solve(model)
        phases.append(
            {"phase": name, "status": solver.status_name(status), "s": time.perf_counter() - t}
        )
        return status, solver

    def selection(solver: Any) -> list[int]:
        values = solver.response_proto.solution
        return [i for i in range(problem.size) if values[i]]

    def hint(chosen: list[int]) -> None:
        members = set(chosen)
        model.clear_hints()  # type: ignore[no-untyped-call]
        for i, var in enumerate(x):
            model.add_hint(var, i in members)

    def finish(status: str, chosen: list[int] | None, bound: int | None) -> dict[str, Any]:
        return _finish(out, problem, phases, started, built, status, chosen, bound)

    cost_cap = sum(problem.cost)
    if problem.budget is not None:
        cost_cap = min(cost_cap, problem.budget)
    scale = cost_cap + 1
    value_cap = sum(problem.value)
    value_expr = cp_model.LinearExpr.weighted_sum(x, list(problem.value))
    cost_expr = cp_model.LinearExpr.weighted_sum(x, list(problem.cost))

    # Phase 1: value first, cost second: one objective when the combined key fits in
    # 62 bits, else value, then cost with the value fixed
    combined = value_cap * scale + cost_cap < _INT62
    if combined:
        weights = [v * scale - c for v, c in zip(problem.value, problem.cost, strict=True)]
        expr = cp_model.LinearExpr.weighted_sum(x, weights)
    else:
        expr = value_expr
    model.maximize(expr)
    status, solver = run("value-cost" if combined else "value")
    if status == cp_model.INFEASIBLE:
        return finish("infeasible", None, None)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return finish("unknown", None, None)
    chosen = selection(solver)
    if status != cp_model.OPTIMAL:
        bound = int(solver.best_objective_bound)
        return finish("timeout", chosen, (bound + cost_cap) // scale if combined else bound)
    model.add(expr == round(solver.objective_value))
    if not combined:
        hint(chosen)
        model.minimize(cost_expr)
        status, solver = run("cost")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return finish("timeout", chosen, _answer(problem, chosen)[0])
        chosen = selection(solver)
        if status != cp_model.OPTIMAL:
            return finish("timeout", chosen, _answer(problem, chosen)[0])
        model.add(cost_expr == round(solver.objective_value))
    value = _answer(problem, chosen)[0]

    # Phase 2: the tie-break weights.
    hint(chosen)
    model.minimize(cp_model.LinearExpr.weighted_sum(x, list(problem.weight)))
    status, solver = run("tiebreak")
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        chosen = selection(solver)
    if status != cp_model.OPTIMAL:
        # value and cost are proven; only the tie-break is not
        return finish("timeout", chosen, value)
    return finish("optimal", chosen, value)


# ---------------------------------------------------------------------------
# HiGHS MILP


def _highs() -> Any:
    try:  # the public wrapper prints a banner on stdout
        from highspy._core import _Highs

        return _Highs()
    except ImportError:  # pragma: no cover - layout of other highspy versions
        import highspy

        return highspy.Highs()  # type: ignore[no-untyped-call]


def highs_milp(problem: Problem, time_limit: float) -> dict[str, Any]:
    import highspy
    import numpy as np

    started = time.perf_counter()
    deadline = started + time_limit
    n = problem.size
    out: dict[str, Any] = {"peer": "highs", "forms": n}
    if n == 0:
        out.update(status="optimal", value=0, cost=0, bound=0, gap=0.0, build_s=0.0)
        out.update(solve_s=0.0, total_s=time.perf_counter() - started, phases=[])
        return out

    inf = highspy.kHighsInf
    forms_of = problem.forms_of()
    required = set(problem.required)
    lower: list[float] = []
    upper: list[float] = []
    start = [0]
    index: list[int] = []
    coefficient: list[float] = []

    def row(entries: list[tuple[int, float]], lo: float, hi: float) -> None:
        for column, value in entries:
            index.append(column)
            coefficient.append(value)
        start.append(len(index))
        lower.append(lo)
        upper.append(hi)

    for identity, forms in enumerate(forms_of):
        if identity in required:
            row([(f, 1.0) for f in forms], 1.0, 1.0)
        elif len(forms) > 1:
            row([(f, 1.0) for f in forms], -inf, 1.0)
    for form, needs in enumerate(problem.needs):
        for identity in needs:
            others = [(f, -1.0) for f in forms_of[identity] if f != form]
            row([(form, 1.0), *others], -inf, 0.0)
    for group in problem.groups:
        first = forms_of[group[0]]
        for identity in group[1:]:
            row([(f, 1.0) for f in first] + [(f, -1.0) for f in forms_of[identity]], 0.0, 0.0)
    if problem.budget is not None:
        row([(f, float(problem.cost[f])) for f in range(n)], -inf, float(problem.budget))

    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(lower)
    lp.col_cost_ = np.array(problem.value, dtype=np.float64)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.ones(n)
    lp.row_lower_ = np.array(lower, dtype=np.float64)
    lp.row_upper_ = np.array(upper, dtype=np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(coefficient, dtype=np.float64)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    lp.sense_ = highspy.ObjSense.kMaximize
    h = _highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("random_seed", 0)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.999)
    h.passModel(lp)
    built = time.perf_counter()
    out["build_s"] = built - started
    phases: list[dict[str, Any]] = []

    def run(name: str) -> tuple[Any, list[int] | None]:
        h.setOptionValue("time_limit", max(0.001, deadline - time.perf_counter()))
        t = time.perf_counter()
        h.run()
        status = h.getModelStatus()
        phases.append(
            {"phase": name, "status": h.modelStatusToString(status), "s": time.perf_counter() - t}
        )
        info = h.getInfo()
        if info.primal_solution_status != 2:  # no feasible solution
            return status, None
        values = np.asarray(h.getSolution().col_value)
        return status, [int(i) for i in np.nonzero(values > 0.5)[0]]

    def finish(status: str, chosen: list[int] | None, bound: int | None) -> dict[str, Any]:
        return _finish(out, problem, phases, started, built, status, chosen, bound)

    optimal = highspy.HighsModelStatus.kOptimal
    infeasible = highspy.HighsModelStatus.kInfeasible
    # Phase 1: maximise value.
    status, chosen = run("value")
    if status == infeasible:
        return finish("infeasible", None, None)
    dual = h.getInfo().mip_dual_bound
    bound = int(np.floor(dual + 1e-6)) if np.isfinite(dual) else None
    if chosen is None:
        return finish("unknown", None, bound)
    if status != optimal:
        return finish("timeout", chosen, bound)
    value = _answer(problem, chosen)[0]
    # Phase 2: minimise cost among maximum-value selections.
    h.addRow(
        float(value),
        inf,
        n,
        np.arange(n, dtype=np.int32),
        np.array(problem.value, dtype=np.float64),
    )
    h.changeColsCost(n, np.arange(n, dtype=np.int32), np.array(problem.cost, dtype=np.float64))
    h.changeObjectiveSense(highspy.ObjSense.kMinimize)
    solution = highspy.HighsSolution()
    start_values = np.zeros(n)
    start_values[chosen] = 1.0
    solution.col_value = start_values.tolist()
    h.setSolution(solution)
    status, better = run("cost")
    if better is not None:
        chosen = better
    if status != optimal:
        # the value is proven (bound = value); the cost is not
        return finish("timeout", chosen, value)
    return finish("optimal", chosen, value)
