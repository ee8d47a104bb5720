"""The OpenAI adapter and fit: coupling, forms, errors, the relevance function."""

from __future__ import annotations

import json
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.adapters import FitRefused


def _call(call_id: str) -> dict[str, Any]:
    function = {"name": "f", "arguments": json.dumps({"q": call_id})}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _transcript(rounds: int, size: int = 400) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be exact."},
        {"role": "user", "content": "Start."},
    ]
    for k in range(rounds):
        messages += [
            _call(f"c{k}"),
            {"role": "tool", "tool_call_id": f"c{k}", "content": f"{k} " * size},
        ]
    return [*messages, {"role": "user", "content": "Now answer."}]


def test_orphaned_and_unanswered_tool_messages_are_refused_by_field() -> None:
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(
            [
                {"role": "user", "content": "a"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ],
            model="gpt-4o",
        )
    assert caught.value.field == "messages[1].tool_call_id"
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(
            [{"role": "user", "content": "a"}, _call("x"), {"role": "user", "content": "b"}],
            model="gpt-4o",
        )
    assert caught.value.field == "messages[1].tool_calls"
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit([{"role": "robot", "content": "a"}], model="gpt-4o")
    assert caught.value.field == "messages[0].role"


def test_budget_is_checked_against_the_window() -> None:
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(_transcript(1), model="gpt-4o", budget=200_000)
    assert caught.value.field == "budget" and "input window" in str(caught.value)


def test_required_material_over_budget_is_a_refusal_not_a_trim() -> None:
    with pytest.raises(FitRefused) as caught:
        assembler.fit(_transcript(1), model="gpt-4o", budget=5)
    assert caught.value.result.status is assembler.Status.REFUSED


def test_long_results_get_shorter_forms_and_calls_stay_with_results() -> None:
    messages = _transcript(12)
    fitted = assembler.fit(messages, model="gpt-4o", budget=1500)
    assert fitted.tokens <= 1500 and fitted.shortened
    kept = fitted.messages
    for position, m in enumerate(kept):
        if m["role"] == "tool":
            assert kept[position - 1].get("tool_calls") or kept[position - 1]["role"] == "tool"
    assert kept[0] == messages[0] and kept[1] == messages[1] and kept[-1] == messages[-1]
    forms = {m["content"][:1] for m in kept if m["role"] == "tool" and m not in messages}
    assert forms  # a shortened form was sent


def test_relevance_function_decides_what_stays() -> None:
    messages = _transcript(8, size=150)
    # value the oldest results most: the newest are the ones left out or shortened
    fitted = assembler.fit(
        messages, model="gpt-4o", budget=1200, relevance=lambda i, m: 1.0 if i < 6 else 0.2
    )
    assert all(i >= 6 for i in (*fitted.dropped, *fitted.shortened))
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(messages, model="gpt-4o", relevance=lambda i, m: 2)
    assert caught.value.field.startswith("relevance(")


def test_everything_fits_and_nothing_changes_when_the_budget_allows() -> None:
    messages = _transcript(3, size=20)
    fitted = assembler.fit(messages, model="gpt-4o")
    assert fitted.messages == messages and not fitted.dropped and not fitted.shortened
