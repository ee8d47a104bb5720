"""Counted as billed: a body-level counter plugged into fit, ``ctok`` as Claude's text
counter where it is installed, and the Claude estimate's factor per tokenizer
generation (measured against ``ctok``: ``python -m benchmarks.counting``)."""

from __future__ import annotations

import json

import pytest

import assembler
from assembler import InvalidRequest
from assembler.facts import model_profile
from assembler.render.meters import meter_for
from benchmarks.transcripts import anthropic_body

pytestmark = pytest.mark.unit


def test_a_body_counter_decides_the_budget() -> None:
    body = anthropic_body(2, rounds=3)
    seen: list[int] = []

    def bytes_of(sent: dict[str, object]) -> int:
        # stands in for client.messages.count_tokens(**body).input_tokens: a whole
        # body's count, here its JSON's bytes (well above the estimate)
        seen.append(1)
        return len(json.dumps(sent).encode())

    fitted = assembler.fit(body, budget=3000, count_body=bytes_of)
    assert seen and fitted.tokens == bytes_of(fitted.body()) <= 3000
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(body, budget=3000, count_body=lambda sent: 1 / 0)
    assert caught.value.field == "count_body"
    with pytest.raises(InvalidRequest):
        assembler.fit(body, budget=3000, count_body=lambda sent: "many")


def test_ctok_counts_claude_by_the_models_generation() -> None:
    ctok = pytest.importorskip("ctok")
    body = anthropic_body(2, rounds=3)
    older = assembler.fit(body, budget=3000, counter="ctok")
    newer = assembler.fit({**body, "model": "claude-opus-5"}, budget=3000, counter="ctok")
    assert (older.counter, newer.counter) == ("ctok:3.0", "ctok:4.8")
    assert newer.tokens <= 3000 and older.tokens <= 3000
    text = "The warehouse shipped order 4471 on Friday."
    frame = ctok.token_count("", "4.8")
    counter = assembler.render.meters.counter_named("ctok:4.8")
    assert counter.count(text) == ctok.token_count(text, "4.8") - frame


def test_the_estimate_follows_the_tokenizer_generation() -> None:
    # measured against ctok (benchmarks/results/COUNTING.md): the newer tokenizers
    # split words o200k_base keeps whole, so words weigh in their estimate
    older, newer = (meter_for(name).counter for name in ("claude-sonnet-4-5", "claude-opus-5"))
    assert model_profile("claude-opus-4-7").tokenizer == "4.7"
    words = "the order shipped on friday and the refund is pending " * 20
    assert newer.count(words) > 1.4 * older.count(words)
    assert "/word" in newer.name and newer.name.startswith("estimate:tiktoken:o200k_base")
