"""Presolve: dominated alternatives and value-less filler, never an optimum's form."""

from __future__ import annotations

from conftest import form, request
from drawn import problem_of, problems
from hypothesis import HealthCheck, given, settings
from profiles import examples

from assembler.exact.closure import Problem
from assembler.exact.presolve import presolve
from assembler.strategies.bruteforce import BruteForce


def ids(problem: Problem, forms: list[int]) -> set[str]:
    return {problem.form_ids[f] for f in forms}


def test_a_dearer_less_valuable_alternative_goes_and_a_tie_class_stays() -> None:
    req = request()
    req["candidates"] = [
        form("a.full", 100, 0.9, identity="a"),
        form("a.worse", 120, 0.8, identity="a"),  # dominated by a.full
        form("a.ref", 10, 0.9, identity="a", depends_on=["r"]),  # needs more: stays
        form("r", 50, 0.0),
        form("filler", 5, 0.0),  # no value, nothing needs it
    ]
    problem = problem_of(req)
    out = ids(problem, presolve(problem, problem.forms_of()))
    assert out == {"a.worse", "filler"}


def test_the_lighter_of_two_equal_forms_dominates_the_heavier() -> None:
    req = request()
    req["candidates"] = [form("x.1", 10, 0.5, identity="x"), form("x.2", 10, 0.5, identity="x")]
    problem = problem_of(req)
    out = presolve(problem, problem.forms_of())
    assert len(out) == 1
    kept = next(f for f in range(problem.size) if f not in out)
    assert problem.weight[kept] < problem.weight[out[0]]


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_no_form_of_the_optimum_is_presolved_away(problem: Problem) -> None:
    optimum = BruteForce().solve(problem)
    assert not set(optimum.selection) & set(presolve(problem, problem.forms_of()))
