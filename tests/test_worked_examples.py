"""The worked examples of the stated model, as named tests (exact and enumerate)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import form, request, solve

from assembler.strategies import EXACT_STRATEGIES


def build(*candidates: dict[str, Any], **task: Any) -> dict[str, Any]:
    req = request(**task)
    req["candidates"] = list(candidates)
    return req


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_mandatory_4600_against_4000_is_refused_with_excess_600(strategy: str) -> None:
    req = build(
        form("constraints", 1100, 0.9),
        form("schema", 1400, 0.8),
        form("runbook", 900, 0.7),
        form("incident", 1200, 0.6),
        form("nice-to-have", 50, 0.99),
        budget=4000,
        required=["constraints", "schema", "runbook", "incident"],
    )
    result = solve(req, strategy)
    assert result.status.value == "refused"
    refusal = result.refusal
    assert refusal is not None
    assert refusal.code.value == "MANDATORY_OVER_BUDGET"
    assert (refusal.budget, refusal.mandatory_cost, refusal.excess) == (4000, 4600, 600)
    assert refusal.conflict == ("constraints", "incident", "runbook", "schema")
    assert set(refusal.forms) == {"constraints", "schema", "runbook", "incident"}
    # Nothing is silently trimmed: every eligible candidate says the request was refused.
    assert {d.reason.value for d in result.decisions} == {"refused"}

    req["task"]["budget"] = 4600
    result = solve(req, strategy)
    assert result.status.value == "bundle" and result.slack == 0
    assert set(result.selected) == {"constraints", "schema", "runbook", "incident"}


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_conflict_is_minimal_not_every_required_identity(strategy: str) -> None:
    req = build(
        form("big-a", 700, 0.5),
        form("big-b", 600, 0.5),
        form("small", 10, 0.5),
        budget=1000,
        required=["big-a", "big-b", "small"],
    )
    refusal = solve(req, strategy).refusal
    assert refusal is not None and refusal.conflict == ("big-a", "big-b")
    assert refusal.mandatory_cost == 1310 and refusal.excess == 310


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_mandatory_cost_is_the_cheapest_closure_not_first_forms(strategy: str) -> None:
    req = build(
        form("doc-full", 900, 0.9, identity="doc"),
        form("doc-anchor", 90, 0.2, identity="doc"),
        form("other", 200, 0.5),
        budget=250,
        required=["doc", "other"],
    )
    refusal = solve(req, strategy).refusal
    assert refusal is not None and refusal.mandatory_cost == 290
    assert refusal.forms == ("doc-anchor", "other")


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_shared_resolver_is_paid_once(strategy: str) -> None:
    req = build(
        form("ref-1", 20, 0.8, identity="incident-17", form="reference", depends_on=["resolver"]),
        form("ref-2", 20, 0.7, identity="incident-18", form="reference", depends_on=["resolver"]),
        form("resolver", 650, 0.0),
        budget=690,
    )
    result = solve(req, strategy)
    assert set(result.selected) == {"ref-1", "ref-2", "resolver"}
    assert result.cost == 690
    assert result.decision("resolver").reason.value == "dependency"
    req["task"]["budget"] = 689
    assert set(solve(req, strategy).selected) == {"ref-1", "resolver"}


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_claim_travels_with_its_qualification(strategy: str) -> None:
    req = build(
        form("claim", 120, 0.9, group="migration-claim"),
        form("qualification", 80, 0.1, group="migration-claim"),
        form("filler", 100, 0.3),
        budget=199,
    )
    # Both fit only together (200 > 199): the claim may not travel alone.
    assert solve(req, strategy).selected == ("filler",)
    req["task"]["budget"] = 200
    result = solve(req, strategy)
    assert result.selected == ("claim", "qualification")
    assert result.decision("qualification").reason.value == "group"


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_one_content_four_forms_picks_exactly_one(strategy: str) -> None:
    forms = [
        form("doc-full", 900, 0.9, identity="doc", form="full"),
        form("doc-compact", 300, 0.7, identity="doc", form="compact"),
        form("doc-anchor", 90, 0.3, identity="doc", form="anchor"),
        form("doc-ref", 20, 0.6, identity="doc", form="reference", depends_on=["resolver"]),
        form("resolver", 650, 0.0),
    ]
    expected = {1000: {"doc-full"}, 899: {"doc-compact"}, 299: {"doc-anchor"}, 89: set()}
    for budget, selected in expected.items():
        result = solve(build(*forms, budget=budget), strategy)
        assert set(result.selected) == selected, budget
        for other in {"doc-full", "doc-compact", "doc-anchor", "doc-ref"} - selected:
            reason = result.decision(other).reason.value
            assert reason == ("alternative" if selected else "not-chosen")


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_stale_and_wrong_scope_high_scores_are_rejected(strategy: str) -> None:
    req = build(
        form("wrong-project", 100, 0.99, scope="project-b"),
        form("stale", 100, 0.9, scope="project-a", source="decision-record", version="C1"),
        form("current", 100, 0.75, scope="project-a", source="decision-record", version="C5"),
        budget=1000,
        scope="project-a",
    )
    req["sources"] = {"decision-record": "C5"}
    result = solve(req, strategy)
    assert result.selected == ("current",)
    assert result.decision("wrong-project").reason.value == "scope"
    assert result.decision("stale").reason.value == "stale"


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_greedy_false_refusal_shape_is_solved_exactly(strategy: str) -> None:
    # Greedy takes the dearer standalone form of a; the exact solver shares the resolver.
    req = build(
        form("a-full", 500, 0.9, identity="a"),
        form("a-ref", 20, 0.6, identity="a", depends_on=["resolver"]),
        form("b-ref", 20, 0.6, identity="b", depends_on=["resolver"]),
        form("resolver", 400, 0.0),
        budget=600,
        required=["a", "b"],
    )
    result = solve(req, strategy)
    assert set(result.selected) == {"a-ref", "b-ref", "resolver"}


@pytest.mark.parametrize("strategy", EXACT_STRATEGIES)
def test_full_form_beats_dearer_reference_plus_resolver(strategy: str) -> None:
    req = build(
        form("doc-full", 400, 0.8, identity="doc"),
        form("doc-ref", 20, 0.8, identity="doc", depends_on=["resolver"]),
        form("resolver", 650, 0.0),
        budget=1000,
    )
    result = solve(req, strategy)
    assert result.selected == ("doc-full",) and result.cost == 400
