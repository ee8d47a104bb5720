"""The OpenAI Responses adapter: reasoning kept whole with its turn, outputs with calls."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.providers.openai_responses import tokens as counted
from assembler.render.meters import meter_for
from benchmarks.transcripts import responses_body


def _turns(items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The runs of items the model produced together."""
    runs: list[list[dict[str, Any]]] = []
    previous = False
    for item in items:
        produced = item.get("type") in ("reasoning", "function_call") or (
            item.get("role") == "assistant"
        )
        if produced and previous:
            runs[-1].append(item)
        elif produced:
            runs.append([item])
        previous = produced
    return runs


@pytest.mark.parametrize("seed", range(4))
def test_reasoning_items_stay_whole_with_their_turn(seed: int) -> None:
    body = responses_body(seed, rounds=16)
    given = copy.deepcopy(body)
    budget = counted(meter_for("gpt-4o"), body) // 4
    fitted = assembler.fit(body, model="gpt-4o", budget=budget)
    assert body == given and fitted.tokens <= budget and fitted.counter == "tiktoken:o200k_base"
    turns = _turns(given["input"])
    for turn in _turns(fitted.messages):
        assert turn in turns  # a kept turn is a given turn, item for item, unedited
    kept_calls = {i["call_id"] for i in fitted.messages if i.get("type") == "function_call"}
    answered = {i["call_id"] for i in fitted.messages if i.get("type") == "function_call_output"}
    assert kept_calls == answered
    assert fitted.body()["model"] == "gpt-4o"
    assert assembler.verify(fitted.request, fitted.result) == []


def test_an_output_without_its_call_is_refused_by_index() -> None:
    items = [{"role": "user", "content": "hi"},
             {"type": "function_call_output", "call_id": "c9", "output": "x"}]  # fmt: skip
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(items, model="gpt-4o")
    assert caught.value.field == "input[1].call_id"


def test_a_reasoning_item_must_precede_what_it_produced() -> None:
    items = [{"role": "user", "content": "hi"},
             {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "AAAA"},
             {"role": "user", "content": "and?"}]  # fmt: skip
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(items, model="o3")
    assert caught.value.field == "input[1]" and "reasoning" in str(caught.value)


def test_an_unanswered_call_is_refused_by_index() -> None:
    items = [{"role": "user", "content": "hi"},
             {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
             {"role": "user", "content": "and?"}]  # fmt: skip
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(items, model="gpt-4o")
    assert caught.value.field == "input[1]" and "not answered" in str(caught.value)


def test_opaque_items_and_approvals_are_kept_whole() -> None:
    items: list[dict[str, Any]] = [
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "Q" * 400},
        {"role": "user", "content": "deploy it " * 50},
        {"type": "mcp_approval_request", "id": "apr_1", "server_label": "ops",
         "name": "deploy", "arguments": "{}"},
        {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": True},
        {"role": "assistant", "content": "done " * 300},
        {"role": "user", "content": "thanks, what next?"},
    ]  # fmt: skip
    fitted = assembler.fit(items, model="gpt-4o", budget=700)
    assert items[0] in fitted.messages  # the compaction item is required, and whole
    kinds = [i.get("type") for i in fitted.messages]
    assert ("mcp_approval_request" in kinds) == ("mcp_approval_response" in kinds)
