"""The Gemini adapter: model turns whole (thoughts and signatures), responses with calls."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.providers.gemini import tokens as counted
from assembler.render.meters import meter_for
from benchmarks.transcripts import gemini_body


@pytest.mark.parametrize("seed", range(4))
def test_model_turns_are_sent_whole_and_roles_alternate(seed: int) -> None:
    body = gemini_body(seed, rounds=16)
    given = copy.deepcopy(body)
    budget = counted(meter_for("gemini-2.5-flash"), body) // 4
    fitted = assembler.fit(body, model="gemini-2.5-flash", budget=budget)
    assert body == given and fitted.tokens <= budget
    assert fitted.counter.startswith("estimate:")
    model_turns = [c for c in given["contents"] if c["role"] == "model"]
    for content in fitted.messages:
        if content["role"] == "model":
            assert content in model_turns
    roles = [c["role"] for c in fitted.messages]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    assert fitted.body()["systemInstruction"] == body["systemInstruction"]
    assert assembler.verify(fitted.request, fitted.result) == []


def test_a_response_without_its_call_is_refused_by_index() -> None:
    contents: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"text": "hi"}]},
        {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
    ]
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(contents, model="gemini-2.5-pro")
    assert caught.value.field == "messages[2].parts[0].functionResponse"


def test_a_call_turn_must_follow_a_user_turn() -> None:
    contents: list[dict[str, Any]] = [
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
    ]
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit({"contents": contents}, model="gemini-2.5-pro")
    assert caught.value.field == "contents[0]" and "function-call-turn" in str(caught.value)


def test_an_openai_list_given_a_gemini_model_is_named_as_such() -> None:
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit([{"role": "user", "content": "hi"}], model="gemini-2.5-flash")
    assert caught.value.field == "messages[0].parts" and "OpenAI" in str(caught.value)
