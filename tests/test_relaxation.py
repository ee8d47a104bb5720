"""The LP's Lagrangian bound and the budget row's: valid for any dual, even one
stopped by the time limit."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from strategies import problems

from assembler.exact.backend import SolveStatus
from assembler.exact.closure import Problem
from assembler.exact.relaxation import budget_relaxation, relax
from assembler.strategies.bruteforce import BruteForce

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
        relaxation = relax(problem, state, list(problem.value), time_limit=time_limit)
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
