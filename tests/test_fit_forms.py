"""Forms sized by value: a long tool result offers shortened forms at several sizes,
each priced exactly and valued by the share it keeps, so the exact choice uses the room
the budget has (the issue's case: a 117k-token result at budget 50,000 sent 1,256
characters, 0.8% of the budget)."""

from __future__ import annotations

import random

import pytest

import assembler

pytestmark = pytest.mark.unit


def _chat(rows: int) -> list[dict[str, object]]:
    rng = random.Random(7)
    words = ["order", "shipped", "carrier", "refund", "warehouse", "latency", "ticket", "4471"]
    log = "\n".join(f"{i} " + " ".join(rng.choice(words) for _ in range(12)) for i in range(rows))
    call = {"id": "c1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    return [
        {"role": "user", "content": "Why did order 4471 fail?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": log},
        {"role": "user", "content": "Summarise the failures."},
    ]


def test_a_long_result_uses_the_room_the_budget_has() -> None:
    chat = _chat(6800)
    whole = assembler.fit(chat, model="gpt-4.1", budget=1_000_000)
    assert whole.tokens > 110_000 and whole.shortened == ()
    for budget in (50_000, 20_000, 5_000):
        fitted = assembler.fit(chat, model="gpt-4.1", budget=budget)
        assert fitted.shortened == (2,) and fitted.tokens <= budget
        assert fitted.tokens >= 0.9 * budget, (budget, fitted.tokens)
        sent = fitted.messages[2]["content"]
        assert sent.startswith("0 ") and "elided" in sent  # its head, the marker, its tail
        assert sent.endswith(chat[2]["content"][-20:])  # type: ignore[index]


def test_each_size_is_priced_exactly_and_worth_its_share() -> None:
    fitted = assembler.fit(_chat(2000), model="gpt-4o", budget=8_000)
    forms = [c for c in fitted.request.candidates if c.identity == "m00002"]
    trimmed = [c for c in forms if c.form == "trimmed"]
    assert len(trimmed) >= 5 and len({c.id for c in forms}) == len(forms)
    # a larger shortened form is worth more, never as much as the whole result
    by_cost = sorted(trimmed, key=lambda c: c.cost)
    assert [c.relevance for c in by_cost] == sorted(c.relevance for c in by_cost)
    full = next(c for c in forms if c.form == "full")
    assert all(c.relevance < full.relevance for c in trimmed)
