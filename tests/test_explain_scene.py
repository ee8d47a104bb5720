"""The scene, the diagnostics and the reports: what the inspector states, and that it
states no more than the request and the result say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import audited, form, request, solve

import assembler
from assembler.explain.diagnostics import Label
from assembler.explain.explanation import Explanation, explain
from assembler.explain.html import render_html
from assembler.explain.limits import ExplainLimits
from assembler.explain.load import InvalidResult, paired, result_from_dict
from assembler.explain.scene import NOT_ESTABLISHED, SegmentKind
from assembler.explain.text import render_report
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates
from assembler.stages.trace import undecided_result

ROOT = Path(__file__).resolve().parents[1]
QUICK = ExplainLimits(top=2, audit=True)


def example(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "models" / "examples" / f"{name}.json").read_text())
    return data


def case(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "corpus" / f"{name}.json").read_text())["request"]
    return data


def explained(data: dict[str, Any], strategy: str = "exact") -> Explanation:
    result = assembler.assemble(data, strategy=strategy)
    if strategy in ("exact", "enumerate"):
        assert assembler.verify(data, result) == []
    explanation = explain(data, result, limits=QUICK)
    audited(explanation.counterfactuals)
    return explanation


def label_of(explanation: Explanation, topic: str) -> Label:
    return next(d.label for d in explanation.diagnostics if d.topic == topic)


def test_a_bundle_scene_accounts_for_every_candidate_and_unit() -> None:
    data = example("review-migration")
    explanation = explained(data)
    scene, result = explanation.scene, explanation.result
    capacity = scene.capacity
    assert (capacity.budget, capacity.used, capacity.slack) == (4000, 3870, 130)
    assert capacity.mandatory is None and capacity.excess is None
    # the bar's segments are the used categories plus the slack, nothing invented
    assert sum(s.cost for s in capacity.segments) == 4000
    assert [s.kind for s in capacity.segments][-1] is SegmentKind.SLACK
    assert sum(c.cost for c in scene.categories) == result.cost
    assert sum(c.offered for c in scene.categories) == len(data["candidates"])
    assert [i.id for i in scene.admitted] == list(result.selected)
    rejected = [i.id for s in scene.rejected for i in s.items]
    assert sorted(rejected) == sorted(
        d.id for d in result.decisions if d.verdict.value == "rejected"
    )
    assert all(i.reason is s.reason for s in scene.rejected for i in s.items)
    # the unit is named, and what the request does not state stays unknown
    assert "4000 cost units" in scene.scenario
    assert "context window and output allowance are not stated (unknown)" in scene.boundary
    assert scene.not_established == NOT_ESTABLISHED
    assert label_of(explanation, "context window") is Label.UNKNOWN
    assert label_of(explanation, "received and used") is Label.NOT_EVALUATED
    assert label_of(explanation, "legality") is Label.CONFIRMED
    assert label_of(explanation, "re-solved") is Label.CONFIRMED
    seals = dict(scene.lineage.seals)
    assert seals["call-review-0041"] == (("draft-review-0041", "lineage"),)


def test_a_refusal_scene_shows_the_closure_over_the_budget() -> None:
    explanation = explained(example("mandatory-over-budget"))
    capacity = explanation.scene.capacity
    assert (capacity.budget, capacity.mandatory, capacity.excess) == (4000, 4600, 600)
    assert capacity.used is None and capacity.slack is None
    assert sum(s.cost for s in capacity.segments) == 4600 == capacity.scale
    assert explanation.scene.counted_as == "in the mandatory closure"
    assert label_of(explanation, "refusal") is Label.CONFIRMED
    report = render_report(explanation)
    assert "mandatory closure 4600, excess 600" in report
    assert "saved on the mandatory closure: 1100 cost units [proven]" in report


def test_a_refusal_by_gates_prices_nothing() -> None:
    explanation = explained(example("required-ineligible"))
    capacity = explanation.scene.capacity
    assert capacity.mandatory is None and capacity.used is None
    assert [s.kind for s in capacity.segments] == [SegmentKind.UNPRICED]
    assert "not the budget" in capacity.caption
    assert next(i.kind.value for i in explanation.counterfactuals.items) == "refusal"


def test_an_undecided_result_claims_nothing_about_a_bundle() -> None:
    data = request(budget=50)
    data["candidates"] = [form("a", 10, 0.4), form("b", 20, 0.6)]
    parsed = parse_request(data)
    result = undecided_result(parsed, apply_gates(parsed), "exact")
    explanation = explain(data, result, limits=QUICK)
    audited(explanation.counterfactuals)
    assert explanation.scene.capacity.used is None
    assert label_of(explanation, "optimum") is Label.UNKNOWN
    # the fresh solve does decide; the page says this result was not that one
    assert label_of(explanation, "re-solved") is Label.CONFIRMED
    assert "another answer" in render_report(explanation)


def test_a_baseline_is_measured_against_the_exact_answer() -> None:
    explanation = explained(case("greedy-suboptimal-tight"), strategy="greedy")
    exact = solve(case("greedy-suboptimal-tight"))
    statement = next(d.statement for d in explanation.diagnostics if d.topic == "exact answer")
    lost = exact.value - explanation.result.value
    assert lost > 0 and f"is {lost} value points below it" in statement


def test_an_illegal_bundle_is_reported_as_broken_rules() -> None:
    data = case("authority-injection-medium")
    explanation = explained(data, strategy="top-k")
    assert explanation.violations, "top-k is expected to admit a gated instruction here"
    broken = [d for d in explanation.diagnostics if d.topic.startswith("broken rule")]
    assert broken and all(d.label is Label.CONFIRMED for d in broken)


def test_labels_are_reported_but_never_read() -> None:
    data = request(budget=100)
    data["candidates"] = [form("a", 10, 0.9, labels=["distractor"]), form("b", 10, 0.1)]
    explanation = explained(data)
    assert label_of(explanation, "labels") is Label.POTENTIAL


def test_a_result_is_read_back_and_checked_against_its_request() -> None:
    data = example("shared-resolver")
    result = solve(data)
    again = result_from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    parsed = parse_request(data)
    assert paired(parsed, result.to_dict()) == result
    other = parse_request(example("review-migration"))
    with pytest.raises(InvalidResult) as caught:
        paired(other, result)
    assert caught.value.field == "budget"
    moved = json.loads(json.dumps(result.to_dict()))
    moved["budget"] = 4000
    with pytest.raises(InvalidResult) as caught:
        paired(other, moved)
    assert caught.value.field == "decisions"
    with pytest.raises(InvalidResult) as caught:
        result_from_dict({"status": "bundle"})
    assert isinstance(caught.value, ValueError) and isinstance(
        caught.value, assembler.AssemblerError
    )


def test_the_page_is_self_contained() -> None:
    page = render_html(explained(example("tool-results")))
    lowered = page.lower()
    assert "<script" not in lowered and "<link" not in lowered and "@import" not in lowered
    assert "http://" not in lowered and "https://" not in lowered and "url(" not in lowered
    assert "default-src 'none'" in page
    assert 'data-figure="budget">' in page


def test_a_rendered_result_shows_its_bytes_and_keeps_the_no_content_gate() -> None:
    data = example("agent-tool-call")
    result = assembler.assemble(data, render="openai-chat")
    assert result.rendering is not None
    assert assembler.verify_rendering(data, result, result.rendering) == []
    # read back from its JSON, rendering included
    again = result_from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result
    explanation = explain(data, again, limits=ExplainLimits(top=5, audit=True))
    audited(explanation.counterfactuals)
    rendered = explanation.scene.rendered
    assert rendered is not None and rendered.size == len(result.rendering.data)
    assert [i[0] for i in rendered.items] == [i.id for i in result.rendering.manifest.items]
    assert label_of(explanation, "rendering") is Label.CONFIRMED
    assert label_of(explanation, "re-solved") is Label.CONFIRMED
    assert any(s.reason.value == "no-content" for s in explanation.scene.rejected)
    # the counterfactuals keep the gate: no derived bundle admits a form without content
    contentless = {c["id"] for c in data["candidates"] if "content" not in c}
    assert contentless and explanation.counterfactuals.audited
    for _, answer in explanation.counterfactuals.audited:
        assert not contentless & set(answer.selected)
    assert f"rendering: {rendered.size} bytes (UTF-8, openai-chat)" in render_report(explanation)


def test_counted_costs_ask_for_the_priced_request() -> None:
    from assembler.render import Utf8Bytes

    data = example("agent-tool-call")
    result = assembler.assemble(data, render="text", counter=Utf8Bytes())
    with pytest.raises(InvalidResult) as caught:
        explain(data, result, limits=QUICK)
    assert caught.value.field == "rendering.manifest.costs"
    assert "priced_request" in str(caught.value)


def test_a_gated_form_of_high_relevance_is_named_by_its_whole_id() -> None:
    # the id has a space: it must not be cut at it
    data = request(budget=100, seal=["old note"])
    data["candidates"] = [form("old note", 5, 0.9), form("kept", 5, 0.5)]
    explanation = explained(data)
    (gated,) = (d for d in explanation.diagnostics if d.topic == "gated despite relevance")
    assert gated.forms == ("old note",)
    assert "old note (0.9, sealed)" in gated.statement
