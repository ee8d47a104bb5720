"""The best bundle the format can send (``model/sendable.py``, ``exact/sendable.py``,
``verifiers/sendable.py``).

With a format set, the format's structural rules are constraints of the exact problem:
the answer is the optimum among the selections the renderer sends, or UNSENDABLE
naming the rules. The oracle here shares nothing with the rules module: it renders
every legal selection with the renderer itself and keeps those it accepts.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest
from conftest import form, request, solve
from drawn import conversations
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import RenderError
from assembler.exact.closure import build_problem
from assembler.model.objective import bundle_key
from assembler.model.parse import parse_request
from assembler.model.rendering import Headers
from assembler.render.formats import body_of
from assembler.render.layout import layout
from assembler.stages.gates import apply_gates
from assembler.strategies.bruteforce import BruteForce

FORMATS = [f.value for f in assembler.RenderFormat]


def _issue_request() -> dict[str, Any]:
    # the issue's repro: a user turn of cost 200 at 0.1 after an assistant turn of cost
    # 100 at 0.9, budget 300, a query: the assistant turn opens the conversation
    req = request(300, query="What now?")
    req["candidates"] = [
        form("assistant", 100, 0.9, kind="assistant_turn", content="hi"),
        form("user", 200, 0.1, kind="user_turn", content="hello"),
    ]
    return req


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_issue_s_two_turns_are_sent_by_each_format_s_best_bundle(fmt: str) -> None:
    result = solve(_issue_request(), render=fmt)
    assert result.rendering is not None and result.optimal
    if fmt == "anthropic-messages":
        # both would open with the assistant turn: the user turn alone is the best
        assert result.selected == ("user",)
    else:
        assert result.selected == ("assistant", "user")


def test_a_baseline_s_unsendable_bundle_is_reported_by_the_verifier() -> None:
    req = _issue_request()
    greedy = assembler.assemble(req, strategy="greedy")
    assert set(greedy.selected) == {"assistant", "user"}
    found = assembler.verify(req, greedy, render="anthropic-messages")
    assert [v.kind for v in found] == ["format-rule"]
    assert "first-message-user" in found[0].detail
    assert assembler.verify(req, greedy, render="openai-chat") == []
    with pytest.raises(RenderError):
        assembler.assemble(req, strategy="greedy", render="anthropic-messages")


def test_a_cached_layout_that_would_open_with_a_kept_assistant_turn_keeps_less() -> None:
    # the previous call sent the assistant turn first: a selection holding both keeps
    # that order and cannot be sent to Anthropic, though laid out afresh it could
    req = request(100, query="What now?")
    req["candidates"] = [
        form("a", 10, 0.9, kind="assistant_turn", content="hi"),
        form("e", 10, 0.5, content="a document"),
    ]
    blocks = [{"id": c["id"], "content_sha256": _sha(c["content"]), "tokens": 10}
              for c in req["candidates"]]  # fmt: skip
    req["cache"] = {"provider": "anthropic", "min_prefix_tokens": 1, "previous": {"blocks": blocks}}
    blind = assembler.assemble(req)
    assert set(blind.selected) == {"a", "e"}
    found = assembler.verify(req, blind, render="anthropic-messages")
    assert found and "first-message-user" in found[0].detail
    result = solve(req, render="anthropic-messages")
    assert result.rendering is not None
    assert result.selected == ("e",)


def test_no_sendable_bundle_at_any_budget_is_refused_naming_the_rule() -> None:
    req = request(300, query="What now?")
    req["candidates"] = [
        form("assistant", 100, 0.9, kind="assistant_turn", content="hi", required=True)
    ]
    result = solve(req, render="anthropic-messages")
    refusal = result.refusal
    assert refusal is not None and refusal.code is assembler.RefusalCode.UNSENDABLE
    assert refusal.rules == ("first-message-user",)
    assert refusal.mandatory_cost is None and refusal.forms == ()
    assert solve(req, render="gemini").selected == ("assistant",)


def test_a_sendable_bundle_over_the_budget_is_priced() -> None:
    # Gemini needs a message: the cheapest one costs 20, the budget is 10
    req = request(10)
    req["candidates"] = [form("e", 20, 0.5, content="x"), form("s", 5, 0.5, kind="system",
                                                                role="instruction",
                                                                channel="system", content="y")]
    refusal = solve(req, render="gemini").refusal
    assert refusal is not None and refusal.rules == ("contents-non-empty",)
    assert (refusal.mandatory_cost, refusal.excess, refusal.forms) == (20, 10, ("e",))
    # a text body is sent with the system item alone
    assert solve(req, render="text").selected == ("s",)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _renders(parsed: assembler.Request, selected: list[str], fmt: str, headers: Headers) -> bool:
    """Whether the renderer itself sends ``selected`` in ``fmt``."""
    try:
        blocks = layout(parsed, selected, headers)
        body_of(blocks, assembler.RenderFormat(fmt), placed=parsed.cache is not None).value()
    except RenderError:
        return False
    return True


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.sampled_from(FORMATS), st.sampled_from(list(Headers)))
def test_the_answer_is_the_best_bundle_the_renderer_sends(
    req: dict[str, Any], fmt: str, headers: Headers
) -> None:
    """Every legal selection rendered by the renderer: the best it accepts is the
    answer, and when it accepts none the answer is UNSENDABLE (or a refusal before it)."""
    req = copy.deepcopy(req)
    req.pop("cache", None)  # the cache-aware order is judged against enumerate below
    parsed = parse_request(req)
    gates = apply_gates(parsed, require_content=True)
    problem = build_problem(parsed, gates)
    sendable = []
    for selection in BruteForce()._legal(problem):
        ids = [problem.form_ids[f] for f in selection]
        if _renders(parsed, ids, fmt, headers):
            chosen = set(selection)
            members = tuple(f in chosen for f in range(problem.size))
            value = sum(problem.value[f] for f in selection)
            cost = sum(problem.cost[f] for f in selection)
            weight = sum(problem.weight[f] for f in selection)
            sendable.append((bundle_key(value, cost, weight, members), ids))
    result = assembler.assemble(req, render=fmt, headers=headers.value)
    if not sendable:
        event(f"refused: {result.refusal and result.refusal.code.value}")
        assert result.status is assembler.Status.REFUSED
        return
    best = sorted(min(sendable)[1])
    event(f"bundle, {fmt}")
    assert sorted(result.selected) == best and result.optimal
    assert result.rendering is not None


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.sampled_from(FORMATS))
def test_exact_matches_the_oracle_with_the_format_s_rules_and_a_cache(
    req: dict[str, Any], fmt: str
) -> None:
    """With a cache section too (its previous blocks in any order): exact and the
    brute-force oracle agree, and the answer renders."""
    exact = assembler.assemble(req, render=fmt)
    oracle = assembler.assemble(req, render=fmt, strategy="enumerate")
    event(f"{exact.status.value}, cache: {'cache' in req}")
    assert exact.selected == oracle.selected
    assert (exact.package_id, exact.trace_id) == (oracle.package_id, oracle.trace_id)
    assert (exact.refusal is None) == (oracle.refusal is None)
    if exact.refusal is not None and oracle.refusal is not None:
        assert exact.refusal.to_dict() == oracle.refusal.to_dict()
    assert (exact.rendering is not None) == (exact.status is assembler.Status.BUNDLE)


def test_a_block_sent_between_a_call_and_its_result_ends_the_kept_run() -> None:
    # a cache section whose previous blocks put evidence between a tool call and its
    # result (a caller's, not this layout's): keeping the evidence after the call would
    # leave the result nowhere (the layout dropped it, and the body broke
    # tool-call-answered); the run ends after the call, whose result follows it
    req = request(25, query="What next?")
    req["candidates"] = [
        form("evidence-0", 0, 0.3, content="evidence 0"),
        form("tool-1", 5, 0.9, kind="tool_call", turn=3, tool_call_id="c1", tool_name="read",
             content='{"q": 1}'),
        form("result-1", 10, 0.4, kind="tool_result", tool_call_id="c1", content="output 1"),
    ]  # fmt: skip
    blocks = [{"id": c["id"], "content_sha256": _sha(c["content"]), "tokens": c["cost"]}
              for c in req["candidates"][:2][::-1]]  # fmt: skip
    req["cache"] = {"provider": "openai", "min_prefix_tokens": 1, "previous": {"blocks": blocks}}
    for fmt in ("text", "openai-chat", "openai-responses"):
        result = solve(req, render=fmt)
        assert result.rendering is not None and result.cache is not None
        assert set(result.selected) == {"evidence-0", "tool-1", "result-1"}
        assert result.cache.kept == 1
        items = [item.id for item in result.rendering.manifest.items]
        assert items == ["tool-1", "result-1", "evidence-0"]


def test_the_rewrite_budgets_test_keeps_the_formats_rules() -> None:
    # a malformed tool definition (cost 0) reaches the rewrite floor within the headroom
    # only when the format's rules are ignored: the knapsack program's answer to the
    # rewrite budget's test must keep them, else the record states a rewrite budget the
    # bundle (the system prompt, cost 20 > 15) is outside of
    req = request(20, query="What next?")
    req["candidates"] = [
        form("user-0", 0, 0, kind="user_turn", turn=0, content=""),
        form("system-1", 20, 0.1, kind="system", role="instruction", channel="system",
             content="be brief"),
        form("tool-2", 0, 0.1, kind="tool_definition", content='{"description": "no name"}'),
    ]  # fmt: skip
    block = {"id": "user-0", "content_sha256": _sha(""), "tokens": 0, "breakpoint": True}
    previous = {"blocks": [block]}
    req["cache"] = {"provider": "anthropic", "min_prefix_tokens": 1, "previous": previous}
    for fmt in ("openai-chat", "anthropic-messages", "gemini"):
        result = solve(req, render=fmt)
        assert result.selected == ("system-1",) and result.cache is not None
        assert result.to_dict()["cache"]["rewrite_budget"] == 20
