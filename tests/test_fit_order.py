"""A fitted conversation reads in order: an answer is kept only with its question
(``answers_with_questions``, the default), a call with all its results, in every format.

Conversations of questions and answers, some after a tool call (a question often longer
than its answer, so that a packer would rather keep answers alone), fitted at
budgets well under their size; each kept assistant turn must come right after the user
turn it answers. With the rule off, the same fits keep answers without their questions
(the test can fail)."""

from __future__ import annotations

import random
from typing import Any

import pytest

import assembler

pytestmark = pytest.mark.unit


def _conversation(seed: int, fmt: str) -> list[dict[str, Any]]:
    """Questions and answers; every third answer comes after a tool call and its result."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []

    def say(role: str, text: str) -> None:
        if fmt == "gemini":
            out.append(
                {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]}
            )
        else:
            out.append({"role": role, "content": text})

    for turn in range(14):
        say("user", f"Q{turn}: " + "why " * rng.randint(2, 300))
        if turn % 3 == 1:
            call, result = f"c{turn}", "R " + "row " * rng.randint(5, 60)
            if fmt == "openai-chat":
                out.append(
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call,
                                "type": "function",
                                "function": {"name": "look", "arguments": "{}"},
                            }
                        ],
                    }
                )
                out.append({"role": "tool", "tool_call_id": call, "content": result})
            elif fmt == "anthropic-messages":
                out.append(
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": call, "name": "look", "input": {}}],
                    }
                )
                out.append(
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": call, "content": result}
                        ],
                    }
                )
            else:
                out.append({"role": "model", "parts": [{"functionCall": {"name": "look"}}]})
                out.append(
                    {
                        "role": "user",
                        "parts": [
                            {"functionResponse": {"name": "look", "response": {"output": result}}}
                        ],
                    }
                )
        say("assistant", f"A{turn}: " + "because " * rng.randint(2, 60))
    say("user", "Q-last")
    return out  # fmt: skip


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    """Every text of the list in order (neighbours of one role come back merged)."""
    out: list[str] = []
    for entry in messages:
        content = entry["parts"] if "parts" in entry else entry["content"]
        if isinstance(content, str):
            out.append(content)
        elif content:
            out.extend(b["text"] for b in content if isinstance(b.get("text"), str))
    return [t for t in out if t[:1] in ("Q", "A")]


def _orphans(messages: list[dict[str, Any]]) -> list[str]:
    """Kept answers whose own question is not right before them."""
    texts = _texts(messages)
    out = []
    for index, text in enumerate(texts):
        if text.startswith("A"):
            turn = text.split(":")[0][1:]
            if not (index and texts[index - 1].startswith(f"Q{turn}:")):
                out.append(text[:4])
    return out


MODELS = {"openai-chat": "gpt-4o", "anthropic-messages": "claude-sonnet-4-5",
          "gemini": "gemini-2.5-flash"}  # fmt: skip


@pytest.mark.parametrize("fmt", list(MODELS))
def test_an_answer_is_kept_only_with_its_question(fmt: str) -> None:
    orphaned_without_rule = 0
    for seed in range(6):
        messages = _conversation(seed, fmt)
        for budget in (300, 800, 1500):
            fitted = assembler.fit(messages, model=MODELS[fmt], budget=budget)
            assert _orphans(fitted.messages) == [], (seed, budget)
            loose = assembler.fit(
                messages, model=MODELS[fmt], budget=budget, answers_with_questions=False
            )
            orphaned_without_rule += bool(_orphans(loose.messages))
    assert orphaned_without_rule > 0  # the rule is what keeps them together
