"""The part the required material reaches holds the cheapest closure."""

from __future__ import annotations

from drawn import problem_of, problems
from hypothesis import HealthCheck, given, settings
from profiles import examples

from assembler.exact.backend import SolveStatus
from assembler.exact.closure import Problem
from assembler.exact.reach import required_reach
from assembler.strategies.bruteforce import BruteForce
from benchmarks.scenarios.adversarial import Adversary, build


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_pricing_on_the_reached_part_finds_the_same_closure(problem: Problem) -> None:
    mandatory = problem.mandatory()
    whole = BruteForce().solve(mandatory)
    sub, forms = required_reach(mandatory)
    part = BruteForce().solve(sub)
    assert whole.status is SolveStatus.OPTIMAL and part.status is SolveStatus.OPTIMAL
    assert tuple(forms[f] for f in part.selection) == whole.selection


def test_optional_material_is_left_out() -> None:
    problem = problem_of(build(Adversary.AT_MANDATORY, 600).request)
    sub, _ = required_reach(problem)
    assert 0 < sub.size < problem.size / 2
    assert all(name.startswith("req-") for name in sub.identities)
