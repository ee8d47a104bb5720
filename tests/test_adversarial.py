"""The adversarial shapes: valid requests of exactly n forms, solved exactly, and the
time limit's promise on them (status and bound semantics, never seconds)."""

from __future__ import annotations

from typing import Any

import pytest

import assembler
from benchmarks.scenarios.adversarial import Adversary, build

SHAPES = list(Adversary)


def checked(request: dict[str, Any], **kwargs: Any) -> assembler.Result:
    result = assembler.assemble(request, **kwargs)
    assert assembler.verify(request, result) == [], result.to_dict()
    return result


@pytest.mark.parametrize("kind", SHAPES)
def test_each_shape_has_exactly_n_forms_and_is_deterministic(kind: Adversary) -> None:
    first = build(kind, 500, seed=3)
    assert len(first.request["candidates"]) == 500
    assert build(kind, 500, seed=3) == first
    assembler.parse_request(first.request)


@pytest.mark.parametrize("kind", SHAPES)
@pytest.mark.parametrize("n_forms", [8, 11, 14])
def test_small_shapes_agree_with_the_brute_force_oracle(kind: Adversary, n_forms: int) -> None:
    request = build(kind, n_forms).request
    exact = checked(request)
    oracle = checked(request, strategy="enumerate")
    assert (exact.status, exact.selected, exact.trace_id) == (
        oracle.status,
        oracle.selected,
        oracle.trace_id,
    )


@pytest.mark.parametrize("n_forms", [60, 600])
def test_the_known_mandatory_cost_is_the_exact_one(n_forms: int) -> None:
    at = build(Adversary.AT_MANDATORY, n_forms)
    result = checked(at.request)
    assert result.status.value == "bundle" and result.optimal
    assert result.cost == at.mandatory_cost  # nothing else fits beside it
    below = build(Adversary.BELOW_MANDATORY, n_forms)
    refusal = checked(below.request).refusal
    assert refusal is not None
    assert refusal.mandatory_cost == below.mandatory_cost
    assert refusal.mandatory_cost_lower == refusal.mandatory_cost_upper == below.mandatory_cost


@pytest.mark.parametrize("limit", [0.001, 0.02, 0.2])
def test_a_refusal_under_a_limit_states_an_interval_holding_the_true_cost(limit: float) -> None:
    built = build(Adversary.BELOW_MANDATORY, 4000)
    result = checked(built.request, time_limit=limit)
    assert result.status.value in {"refused", "undecided"}
    if result.refusal is None:
        return
    refusal = result.refusal
    budget = built.request["task"]["budget"]
    truth = built.mandatory_cost
    assert truth is not None
    assert refusal.mandatory_cost_lower is not None
    assert budget < refusal.mandatory_cost_lower <= truth
    if refusal.mandatory_cost_upper is not None:
        assert truth <= refusal.mandatory_cost_upper
    if refusal.mandatory_cost is not None:
        assert refusal.mandatory_cost == truth
        assert refusal.excess == truth - budget
    else:
        assert refusal.excess is None


@pytest.mark.parametrize("kind", SHAPES)
def test_a_tiny_limit_on_a_large_shape_keeps_status_and_bound_semantics(kind: Adversary) -> None:
    request = build(kind, 6000).request
    for limit in (0.001, 0.05):
        result = checked(request, time_limit=limit)
        if result.status.value == "bundle":
            assert result.bound is not None and result.bound >= result.value
            assert result.optimal or result.gap is not None
        elif result.status.value == "undecided":
            assert not result.selected and not result.optimal
        else:
            assert kind is Adversary.BELOW_MANDATORY


def test_the_conflict_search_stops_at_the_deadline_with_a_proven_conflict() -> None:
    # no time left: not one deletion test runs (each walks the closure, and they ran
    # past the limit when only the pricings read the deadline); every required identity
    # is kept, which is still a proven conflict, and the message says it is not minimal
    from drawn import problem_of

    from assembler.deadline import Deadline
    from assembler.exact.backend import Ask
    from assembler.exact.refusal import over_budget_refusal
    from assembler.exact.solve import exact_backend

    problem = problem_of(build(Adversary.BELOW_MANDATORY, 600).request)
    backend = exact_backend()
    closure = backend.solve(problem.mandatory(), Ask(Deadline.after(30.0), 1))
    refusal = over_budget_refusal(
        problem, backend, deadline=Deadline.after(0.0), workers=1, priced=closure.selection
    )
    assert set(refusal.conflict) == {problem.identities[i] for i in problem.required}
    assert "not proven a minimal conflict" in refusal.message
    assert refusal.mandatory_cost is not None  # the pricing was proven: only the conflict is cut
    full = over_budget_refusal(
        problem, backend, deadline=Deadline.after(30.0), workers=1, priced=closure.selection
    )
    assert "not proven a minimal conflict" not in full.message
