"""The verifier catches every kind of illegal bundle and dishonest record."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import form, request, solve

from assembler import assemble, verify
from assembler.verifiers.bundle import ViolationKind


@pytest.fixture
def req() -> dict[str, Any]:
    r = request(budget=100, scope="p", required=["must"])
    r["candidates"] = [
        form("must", 10, 0.5, scope="p"),
        form("ref", 5, 0.9, scope="p", depends_on=["resolver"]),
        form("resolver", 30, 0.0, scope="p"),
        form("claim", 10, 0.8, scope="p", group="g"),
        form("qual", 10, 0.1, scope="p", group="g"),
        form("alt-a", 10, 0.7, scope="p", identity="alt"),
        form("alt-b", 5, 0.6, scope="p", identity="alt"),
        form("foreign", 1, 1.0, scope="q"),
    ]
    return r


def tampered(req: dict[str, Any], selected: list[str]) -> dict[str, Any]:
    """A result dict that claims ``selected`` with an otherwise consistent record."""
    result = assemble(req).to_dict()
    result["selected"] = selected
    for d in result["decisions"]:
        d["verdict"] = "admitted" if d["id"] in selected else "rejected"
    return result


def kinds(req: dict[str, Any], selected: list[str]) -> set[str]:
    return {v.kind for v in verify(req, tampered(req, selected))}


def test_the_solver_answer_is_clean(req: dict[str, Any]) -> None:
    assert verify(req, solve(req)) == []


def test_gate(req: dict[str, Any]) -> None:
    assert ViolationKind.GATE in kinds(req, ["must", "foreign"])


def test_dependency(req: dict[str, Any]) -> None:
    assert ViolationKind.DEPENDENCY in kinds(req, ["must", "ref"])


def test_group(req: dict[str, Any]) -> None:
    assert ViolationKind.GROUP in kinds(req, ["must", "claim"])


def test_two_forms_of_one_identity(req: dict[str, Any]) -> None:
    assert ViolationKind.DUPLICATE_IDENTITY in kinds(req, ["alt-a", "alt-b", "must"])


def test_required(req: dict[str, Any]) -> None:
    assert ViolationKind.REQUIRED in kinds(req, ["alt-a"])


def test_budget(req: dict[str, Any]) -> None:
    req["task"]["budget"] = 20
    assert ViolationKind.BUDGET in kinds(req, ["must", "claim", "qual"])


def test_record_lies_are_caught(req: dict[str, Any]) -> None:
    result = assemble(req).to_dict()
    result["cost"] += 1
    result["decisions"][0]["reason"] = "stale"
    result["package_id"] = "0" * 64
    details = " ".join(v.detail for v in verify(req, result))
    assert "cost is" in details and "first failing gate" in details and "package_id" in details


def test_missing_decision_is_caught(req: dict[str, Any]) -> None:
    result = assemble(req).to_dict()
    result["decisions"].pop()
    assert any(v.kind == ViolationKind.RECORD for v in verify(req, result))


def test_hiding_a_gate_behind_not_chosen_is_caught(req: dict[str, Any]) -> None:
    result = assemble(req).to_dict()
    for d in result["decisions"]:
        if d["id"] == "foreign":
            d["reason"] = "not-chosen"
    assert any("hiding" in v.detail for v in verify(req, result))


def test_refusal_claims_are_checked() -> None:
    req = request(budget=10, required=["a"])
    req["candidates"] = [form("a", 20)]
    result = assemble(req).to_dict()
    assert verify(req, result) == []
    result["refusal"]["mandatory_cost"] = 15
    result["refusal"]["conflict"] = ["nope"]
    details = " ".join(v.detail for v in verify(req, result))
    assert "mandatory_cost" in details and "conflict" in details


def test_a_false_required_missing_is_caught() -> None:
    req = request(required=["a"])
    req["candidates"] = [form("a", 1)]
    result = assemble(req).to_dict()
    result["status"] = "refused"
    result["selected"] = []
    result["refusal"] = {"code": "REQUIRED_MISSING", "identities": [{"identity": "a", "forms": []}]}
    assert any(v.kind == ViolationKind.REFUSAL for v in verify(req, result))


def _over_budget() -> tuple[dict[str, Any], dict[str, Any]]:
    req = request(budget=10, required=["a", "b"])
    req["candidates"] = [form("a", 20), form("b", 5)]
    result = assemble(req).to_dict()
    assert result["refusal"]["mandatory_cost"] == 25
    return req, result


def _refusal_details(req: dict[str, Any], result: dict[str, Any]) -> str:
    return " ".join(v.detail for v in verify(req, result) if v.kind == ViolationKind.REFUSAL)


def test_an_unproven_closure_may_state_an_interval_but_not_a_mandatory_cost() -> None:
    req, result = _over_budget()
    refusal = result["refusal"]
    refusal.update(mandatory_cost=None, excess=None, mandatory_cost_lower=11)
    assert verify(req, result) == []  # an honest interval [11, 25]
    refusal.update(excess=15)
    assert "stated unless proven" in _refusal_details(req, result)
    refusal.update(excess=None, mandatory_cost=25)
    assert "stated unless proven" in _refusal_details(req, result)


def test_a_proven_interval_must_state_its_cost_and_excess() -> None:
    req, result = _over_budget()
    result["refusal"].update(mandatory_cost=None, excess=None)
    assert "although proven" in _refusal_details(req, result)


@pytest.mark.parametrize("lower", [None, 10, 26])
def test_the_interval_must_bracket_the_listed_closure_above_the_budget(lower: Any) -> None:
    req, result = _over_budget()
    result["refusal"].update(mandatory_cost=None, excess=None, mandatory_cost_lower=lower)
    details = _refusal_details(req, result)
    assert "mandatory_cost_lower" in details or "below mandatory_cost_lower" in details


def test_an_unpriced_refusal_claims_only_its_lower_bound() -> None:
    req, result = _over_budget()
    refusal = result["refusal"]
    refusal.update(mandatory_cost=None, excess=None, mandatory_cost_lower=11)
    refusal.update(mandatory_cost_upper=None, forms=[], conflict=[])
    assert verify(req, result) == []
    refusal.update(conflict=["a"])
    assert "unpriced" in _refusal_details(req, result)


def test_every_answer_of_the_suite_goes_through_the_verifier() -> None:
    # conftest hands the verifier every answer the chain makes; an illegal answer must
    # reach it, whichever entry point made it
    from conftest import judge

    from assembler import Session, pipeline

    assert judge in pipeline.audit_hooks()
    seen: list[Any] = []

    def hook(_request: Any, _settings: Any, result: Any) -> None:
        seen.append(result)

    pipeline.add_audit_hook(hook)
    try:
        req = request(100)
        req["candidates"] = [form("a", 10)]
        answered = assemble(req)
        assert seen == [answered] and Session(req).answer() == seen[1]
    finally:
        pipeline.remove_audit_hook(hook)
    assert hook not in pipeline.audit_hooks()
