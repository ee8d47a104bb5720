"""The LP's Lagrangian bound and the budget row's: valid for any dual, even one
stopped by the time limit."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from drawn import problem_of, problems
from hypothesis import HealthCheck, given, settings
from profiles import examples

import assembler
from assembler.deadline import NEVER, Deadline
from assembler.exact.backend import SolveStatus
from assembler.exact.closure import Problem
from assembler.exact.relaxation import LpMemory, budget_relaxation, relax
from assembler.strategies.bruteforce import BruteForce

SETTINGS = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def optimum_value(problem: Problem) -> int | None:
    found = BruteForce().solve(problem)
    if found.status is not SolveStatus.OPTIMAL:
        return None
    return sum(problem.value[f] for f in found.selection)


@SETTINGS
@given(problems())
def test_the_lagrangian_bound_holds_whether_or_not_the_lp_finished(problem: Problem) -> None:
    found = BruteForce().solve(problem)
    state = np.full(problem.size, -1)
    for time_limit in (10.0, 1e-9):
        relaxation = relax(problem, state, list(problem.value), deadline=Deadline.after(time_limit))
        if relaxation is None or found.status is not SolveStatus.OPTIMAL:
            continue
        best = sum(problem.value[f] for f in found.selection)
        ceiling = relaxation.bound + relaxation.margin
        assert relaxation.proven_bound >= best
        # the fixings at the optimum's own value keep every form of it, and admit no
        # identity it leaves out: what makes the reduction exact
        column = {int(f): j for j, f in enumerate(relaxation.columns)}
        for f in found.selection:
            assert ceiling - relaxation.loss_in[column[f]] >= best
        admitted = {problem.identity_of[f] for f in found.selection}
        for identity in set(range(len(problem.identities))) - admitted:
            assert ceiling - relaxation.loss_out[identity] >= best


@SETTINGS
@given(problems())
def test_the_budget_rows_bound_holds_and_prefers_one_form_per_identity(problem: Problem) -> None:
    best = optimum_value(problem)
    forms = np.arange(problem.size)
    bound, preference = budget_relaxation(problem, forms)
    if best is not None:
        assert bound >= best
    preferred = forms[preference > 0]
    identities = [problem.identity_of[f] for f in preferred]
    assert len(identities) == len(set(identities))


def _open(problem: Problem) -> np.ndarray:
    return np.full(problem.size, -1)


@SETTINGS
@given(problems(), problems())
def test_an_lp_started_from_a_foreign_basis_bounds_as_a_cold_one(
    problem: Problem, earlier: Problem
) -> None:
    # a session's memory only starts the simplex: whatever basis it holds (here that of
    # an unrelated problem whose names partly coincide), the LP is solved to optimality
    # and the bound and the fixings' data are those of a cold start
    memory = LpMemory()
    relax(earlier, _open(earlier), list(earlier.value), deadline=NEVER, memory=memory)
    cold = relax(problem, _open(problem), list(problem.value), deadline=NEVER)
    warm = relax(problem, _open(problem), list(problem.value), deadline=NEVER, memory=memory)
    assert (cold is None) == (warm is None)
    if cold is None or warm is None:
        return
    assert abs(warm.bound - cold.bound) <= cold.margin + warm.margin
    best = optimum_value(problem)
    if best is not None:
        assert warm.proven_bound >= best


def test_a_remembered_basis_takes_the_next_lp_of_a_session_in_a_few_iterations() -> None:
    # the LP of a request and that of the same request plus a tool call and its result:
    # the second, started from the first one's basis, needs a handful of iterations
    from assembler.hunt.generate import Shape, generate

    request = generate(random.Random(7), Shape.scale(600))
    first = problem_of(request)
    request["candidates"] += [
        {"id": "call-1.use", "kind": "tool_call", "tool_call_id": "call-1",
         "tool_name": "grep", "cost": 40, "relevance": 0.9, "scope": "shared"},
        {"id": "call-1.result", "kind": "tool_result", "tool_call_id": "call-1",
         "cost": 900, "relevance": 0.9, "scope": "shared"},
    ]  # fmt: skip
    second = problem_of(request)
    memory = LpMemory()
    relax(first, _open(first), list(first.value), deadline=NEVER, memory=memory)
    cold_memory = LpMemory()
    cold = relax(second, _open(second), list(second.value), deadline=NEVER, memory=cold_memory)
    warm = relax(second, _open(second), list(second.value), deadline=NEVER, memory=memory)
    assert cold is not None and warm is not None
    assert cold.proven_bound == warm.proven_bound
    assert cold_memory.iterations is not None and memory.iterations is not None
    assert memory.iterations * 10 < cold_memory.iterations


def test_an_lp_that_cannot_start_within_its_share_is_not_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HiGHS reads no clock while it starts an LP: one whose entries (forms, dependency
    edges, memberships) need longer than its share is left out, the budget row's
    Lagrangian bounding the value instead; with time to start, it runs."""
    import sys

    from assembler.deadline import Deadline
    from assembler.exact import fixings
    from assembler.exact.closure import build_problem
    from assembler.stages.gates import apply_gates

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.dense import dense_request

    parsed = assembler.parse_request(dense_request(600, 30, seed=4))
    problem = build_problem(parsed, apply_gates(parsed))
    assert problem.entries > 30 * 500
    started: list[int] = []
    real = fixings.relax

    def counted(*args: Any, **kwargs: Any) -> Any:
        started.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fixings, "relax", counted)
    short = problem.entries * fixings.LP_START_SECONDS_PER_ENTRY / 2
    tight = fixings.plan(problem, deadline=Deadline.after(short))
    assert started == [] and tight.bound is not None and tight.incumbent is not None
    assert sum(problem.cost[f] for f in tight.incumbent) <= (problem.budget or 0)
    roomy = fixings.plan(problem, deadline=Deadline.after(30))
    assert started == [1] and roomy.relaxation is not None
    assert roomy.bound is not None and roomy.bound <= tight.bound
