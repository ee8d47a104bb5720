"""The Anthropic adapter: thinking kept whole or dropped with its turn, alternation."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from benchmarks.transcripts import anthropic_body


def test_a_turn_with_thinking_is_sent_whole_or_not_at_all() -> None:
    body = anthropic_body(7, rounds=16)
    fitted = assembler.fit(body, model="claude-sonnet-4-5", budget=3000)
    given = [m for m in body["messages"] if m["role"] == "assistant"]
    for m in fitted.messages:
        if m["role"] == "assistant":
            assert m in given
    assert fitted.body()["model"] == body["model"] and fitted.tokens <= 3000


def test_a_result_without_its_call_is_refused() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    ]
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(messages, model="claude-sonnet-4-5")
    assert caught.value.field == "messages[0].content"


def test_dropping_a_user_turn_never_makes_two_assistant_turns_meet() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start " * 10}]
    for k in range(12):
        messages += [{"role": "assistant", "content": f"reply {k} " * 60},
                     {"role": "user", "content": f"follow-up {k} " * 60}]  # fmt: skip
    fitted = assembler.fit(messages, model="claude-sonnet-4-5", budget=1500)
    roles = [m["role"] for m in fitted.messages]
    assert fitted.dropped and roles[0] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))
