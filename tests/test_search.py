"""The small exact search: its node limit hands the core on instead of guessing."""

from __future__ import annotations

import random

import pytest
from conftest import form, request

from assembler.exact.backend import SolveStatus
from assembler.exact.closure import build_problem
from assembler.exact.search import SmallSearch
from assembler.hunt.generate import Shape, generate
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates
from assembler.strategies.bruteforce import BruteForce


def problem_of(req: dict) -> object:  # type: ignore[type-arg]
    parsed = parse_request(req)
    return build_problem(parsed, apply_gates(parsed))


def test_node_limit_gives_up_with_none() -> None:
    req = request(budget=50)
    req["candidates"] = [form(f"c{i}", 10 + i, 0.5) for i in range(20)]
    assert SmallSearch(node_limit=5, seconds=None).solve(problem_of(req)) is None  # type: ignore[arg-type]
    # without its 3 ms budget, so that a loaded machine cannot make it give up
    found = SmallSearch(seconds=None).solve(problem_of(req))  # type: ignore[arg-type]
    assert found is not None and found.status is SolveStatus.OPTIMAL


def test_infeasible_required_material_is_reported() -> None:
    req = request(budget=5, required=["a"])
    req["candidates"] = [form("a", 10)]
    found = SmallSearch(seconds=None).solve(problem_of(req))  # type: ignore[arg-type]
    assert found is not None and found.status is SolveStatus.INFEASIBLE


def test_canonical_rule_breaks_exact_ties() -> None:
    # a, b: same value and cost; the tie-break weights decide, as in the oracle.
    req = request(budget=10)
    req["candidates"] = [form("a", 10, 0.5), form("b", 10, 0.5)]
    found = SmallSearch(seconds=None).solve(problem_of(req))  # type: ignore[arg-type]
    assert found is not None and len(found.selection) == 1


@pytest.mark.parametrize("seed", [24, 479, 838, 1165])
def test_free_valuable_forms_count_in_the_bound(seed: int) -> None:
    # These generated requests exposed a bound that left out the value of zero-cost
    # forms (the hull started at the free form instead of at "none") and so pruned
    # the optimum away; the search must agree with the oracle on them.
    problem = problem_of(generate(random.Random(seed), Shape.small(10)))
    expected = BruteForce().solve(problem)  # type: ignore[arg-type]
    found = SmallSearch(node_limit=10**7, seconds=None).solve(problem)  # type: ignore[arg-type]
    assert found is not None
    assert (found.status, found.selection) == (expected.status, expected.selection)
