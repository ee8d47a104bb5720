"""Refusals a linear pass proves (``exact/refusal.py``): answered by that pass whatever the
time limit, with section 7's fields as honest as the proof.

The required identities' cheapest eligible costs alone over the budget prove
MANDATORY_OVER_BUDGET: no search may stand between that sum and the refusal. When those
cheapest forms are a closure by themselves, the refusal is fully proven, and its
figures are those of the brute-force oracle's pricing.
"""

from __future__ import annotations

import random
from typing import Any

from drawn import requests
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from profiles import examples
from tests_support import solve_exact

import assembler
from assembler.exact.backend import UNBOUNDED, Ask, SolveOutcome
from assembler.exact.closure import Problem, build_problem
from assembler.exact.refusal import linear_refusal, required_refusal
from assembler.hunt.generate import Shape, generate
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates
from assembler.strategies.bruteforce import BruteForce


class _NoSearch:
    """A backend that fails the test if it is asked anything: the answer must come
    from the linear pass."""

    name = "exact"

    def solve(self, problem: Problem, ask: Ask) -> SolveOutcome:
        raise AssertionError("a refusal the linear pass proves was searched for")


def _many_required(seed: int, forms: int, required: int, over: int) -> dict[str, Any]:
    """A realistic request with ``required`` of its eligible identities required and a
    budget ``over`` times below their cheapest costs' sum."""
    request = generate(random.Random(seed), Shape.scale(forms))
    parsed = parse_request(request)
    gates = apply_gates(parsed)
    cheapest: dict[str, int] = {}
    for c in parsed.candidates:
        if gates.is_eligible(c.id):
            cheapest[c.identity] = min(cheapest.get(c.identity, c.cost), c.cost)
    chosen = sorted(random.Random(1).sample(sorted(cheapest), required))
    request["task"]["required"] = chosen
    request["task"]["budget"] = sum(cheapest[i] for i in chosen) // over
    return request


def test_909_required_identities_twelve_times_over_the_budget_are_refused_by_one_pass() -> None:
    # the shape: 909 required identities of a 3,000-form request, the budget a
    # twelfth of their cheapest costs; refused after seconds of pricing before, and
    # undecided under a 1 s limit
    request = _many_required(909, 3000, 909, 12)
    parsed = parse_request(request)
    gates = apply_gates(parsed)
    result = solve_exact(parsed, gates, _NoSearch(), time_limit=1.0, workers=1)
    assert result.status is assembler.Status.REFUSED
    refusal = result.refusal
    assert refusal is not None and refusal.code is assembler.RefusalCode.MANDATORY_OVER_BUDGET
    lower, upper = refusal.mandatory_cost_lower, refusal.mandatory_cost_upper
    assert lower is not None and upper is not None and refusal.budget < lower <= upper
    assert refusal.conflict and refusal.forms
    assert assembler.verify(request, result) == []
    # the same through assemble(), at a limit that left it undecided before
    fresh = assembler.assemble(request, time_limit=1.0)
    assert fresh.status is assembler.Status.REFUSED and fresh.refusal == refusal


def test_independent_required_identities_are_priced_and_filtered_exactly() -> None:
    # no dependency, no group: the cheapest closure is each identity's cheapest form,
    # and the deletion filter a subtraction per identity
    candidates = []
    for i in range(300):
        candidates.append({"id": f"r{i:03}-full", "identity": f"r{i:03}", "cost": 10 + i % 7,
                           "relevance": 0.5, "required": True})  # fmt: skip
        candidates.append({"id": f"r{i:03}-short", "identity": f"r{i:03}", "cost": 5 + i % 3,
                           "relevance": 0.2})  # fmt: skip
    request = {"task": {"id": "t", "budget": 400}, "candidates": candidates}
    parsed = parse_request(request)
    result = solve_exact(parsed, apply_gates(parsed), _NoSearch(), time_limit=1.0, workers=1)
    refusal = result.refusal
    assert refusal is not None
    cheapest = sum(5 + i % 3 for i in range(300))
    assert refusal.mandatory_cost == refusal.mandatory_cost_lower == cheapest
    assert refusal.mandatory_cost_upper == cheapest and refusal.excess == cheapest - 400
    assert refusal.forms == tuple(sorted(f"r{i:03}-short" for i in range(300)))
    # minimal: the conflict's costs exceed the budget, and without any one of them fit
    costs = {f"r{i:03}": 5 + i % 3 for i in range(300)}
    total = sum(costs[i] for i in refusal.conflict)
    assert total > 400 and all(total - costs[i] <= 400 for i in refusal.conflict)
    assert "not proven" not in refusal.message
    assert assembler.verify(request, result) == []


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(Shape.small(9)), st.data())
def test_a_refusal_the_pass_proves_states_what_the_oracle_proves(
    req: dict[str, Any], data: st.DataObject
) -> None:
    # require some eligible identities and squeeze the budget below their cheapest
    # costs: the pass answers, and each figure it states as proven is the oracle's
    parsed = parse_request(req)
    eligible = build_problem(parsed, apply_gates(parsed)).identities
    assume(eligible)
    picked = data.draw(st.lists(st.sampled_from(eligible), min_size=1, unique=True))
    req["task"]["required"] = sorted({*req["task"].get("required", []), *picked})
    parsed = parse_request(req)
    gates = apply_gates(parsed)
    assume(required_refusal(parsed, gates) is None)
    problem = build_problem(parsed, gates)
    cheapest: dict[int, int] = {}
    for f, identity in enumerate(problem.identity_of):
        cheapest[identity] = min(cheapest.get(identity, problem.cost[f]), problem.cost[f])
    lower = sum(cheapest[r] for r in problem.required)
    assume(lower > 0)
    req["task"]["budget"] = data.draw(st.integers(0, lower - 1))
    parsed = parse_request(req)
    gates = apply_gates(parsed)
    problem = build_problem(parsed, gates)
    refusal = linear_refusal(problem)
    assert refusal is not None
    result = solve_exact(parsed, gates, _NoSearch(), time_limit=10.0, workers=1)
    assert result.refusal == refusal
    assert assembler.verify(req, result) == []
    budget = req["task"]["budget"]

    def priced(required: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
        found = BruteForce().solve(problem.mandatory(required), UNBOUNDED)
        return sum(problem.cost[f] for f in found.selection), found.selection

    cost, closure = priced(problem.required)
    assert refusal.mandatory_cost_lower is not None and refusal.mandatory_cost_upper is not None
    assert refusal.mandatory_cost_lower <= cost <= refusal.mandatory_cost_upper
    if refusal.mandatory_cost is not None:
        # proven: the oracle's least cost, and its cheapest closure under rules 2-4,
        # form for form, unless the message says the tie-break was not searched
        assert refusal.mandatory_cost == cost
        if "tie-break" not in refusal.message:
            assert refusal.forms == tuple(sorted(problem.form_ids[f] for f in closure))
    # the conflict is proven (its own cheapest closure exceeds the budget), and minimal
    # unless the message says otherwise
    conflict = tuple(problem.identities.index(i) for i in refusal.conflict)
    assert priced(conflict)[0] > budget
    if "not proven a minimal conflict" not in refusal.message:
        for identity in conflict:
            assert priced(tuple(i for i in conflict if i != identity))[0] <= budget
