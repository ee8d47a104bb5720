"""Predicted against billed: usage parsing, the ledger's record and ``assembler ledger cache``.

The replayed session: a cache-aware ``Session`` answers a growing agent transcript; each
body it sends is billed as the simulator says the provider bills it (the usage an
Anthropic response would carry, worked out by ``assembler.cache`` from the sent
bytes), recorded with ``Session.record_usage`` in a real SQLite ledger, and read back
by the report and the command: hits, misses, where a miss diverged, and predicted
reads against the replay of the sent bodies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from drawn import agent_head, turn

import assembler
from assembler.cache import CacheSimulator, Call, blocks_of_rendering, cache_rules
from assembler.cache.usage import BilledUsage, SentBlock, divergence, parse_usage
from assembler.cli import main
from assembler.ledger.usage import cache_usage
from assembler.model.errors import InvalidRequest


def test_every_provider_usage_shape_parses() -> None:
    anthropic = {"input_tokens": 50, "cache_read_input_tokens": 2000,
                 "cache_creation_input_tokens": 300, "output_tokens": 9}  # fmt: skip
    assert parse_usage(anthropic) == BilledUsage("anthropic", 2350, 2000, 300)
    chat = {"prompt_tokens": 2400, "prompt_tokens_details": {"cached_tokens": 2048,
            "cache_write_tokens": 256}}  # fmt: skip
    assert parse_usage(chat) == BilledUsage("openai", 2400, 2048, 256)
    legacy = {"prompt_tokens": 1500, "prompt_tokens_details": {"cached_tokens": 1024}}
    assert parse_usage(legacy) == BilledUsage("openai", 1500, 1024, 0)
    top = {"prompt_tokens": 1500, "cache_write_tokens": 100}
    assert parse_usage(top).written == 100
    responses = {"input_tokens": 3000, "input_tokens_details": {"cached_tokens": 2944}}
    assert parse_usage(responses) == BilledUsage("openai", 3000, 2944, 0)
    gemini = {"usageMetadata": {"promptTokenCount": 5000, "cachedContentTokenCount": 4096}}
    assert parse_usage(gemini) == BilledUsage("gemini", 5000, 4096, 0)
    assert parse_usage({"prompt_token_count": 10, "cached_content_token_count": 0}).input == 10
    langchain = {"input_tokens": 900, "input_token_details": {"cache_read": 800,
                 "cache_creation": 50}}  # fmt: skip
    assert parse_usage(langchain) == BilledUsage("langchain", 900, 800, 50)

    class Usage:  # an SDK object, read by attribute
        input_tokens = 10
        cache_read_input_tokens = 5
        cache_creation_input_tokens = 0

    assert parse_usage(Usage()).input == 15
    for bad in ({}, {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 20}}, None):
        with pytest.raises(InvalidRequest, match=r"^usage"):
            parse_usage(bad)


def test_divergence_names_the_first_changed_block() -> None:
    a, b, c = (SentBlock(i, i * 64, 10) for i in "abc")
    changed = SentBlock("b", "f" * 64, 10)
    assert divergence([a, b], [a, b, c]) is None
    assert divergence([a, b, c], [a, changed, c]) == 1
    assert divergence([a, b, c], [a, b]) == 2
    assert divergence([a], [c]) == 0


def _billed(simulator: CacheSimulator, at: float, result: assembler.Result) -> dict[str, Any]:
    """The usage an Anthropic response carries for this body, as the simulator bills it."""
    assert result.rendering is not None
    cost = simulator.call(Call(at, blocks_of_rendering(result.rendering, ttl=300)))
    return {"input_tokens": cost.uncached, "cache_read_input_tokens": cost.read,
            "cache_creation_input_tokens": cost.written}  # fmt: skip


def _replayed_session(tmp_path: Path) -> tuple[Path, list[assembler.Result]]:
    candidates = agent_head()
    session = assembler.Session(
        {"task": {"id": "usage", "budget": 4000}, "candidates": candidates},
        render="anthropic-messages", cache="anthropic", time_limit=60,
    )  # fmt: skip
    rules = cache_rules("anthropic", "claude-sonnet-4-5")
    simulator = CacheSimulator(rules)
    path = tmp_path / "usage.db"
    results = []
    with assembler.Ledger(path, session="agent") as ledger:
        for t in range(6):
            result = session.answer() if t == 0 else session.apply(
                {"add": turn(t, 30, 200, 0.6, compact=False)})  # fmt: skip
            at = 20.0 * t
            usage = _billed(simulator, at, result)
            session.record_usage(ledger, usage, model="claude-sonnet-4-5", at=at)
            results.append(result)
        # a body whose system prompt changed: it misses from the first block on
        changed = {
            "task": {"id": "usage", "budget": 4000},
            "candidates": [{**candidates[0], "content": "be briefer"}, candidates[1]],
        }
        other = assembler.assemble(changed, render="anthropic-messages")
        usage = _billed(simulator, 140.0, other)
        from assembler.cache.usage import record_result_usage

        record_result_usage(ledger, other, usage, model="claude-sonnet-4-5",
                            provider="anthropic", at=140.0)  # fmt: skip
    return path, results


def test_the_ledger_reports_hits_misses_and_where_a_miss_diverged(tmp_path: Path) -> None:
    path, _results = _replayed_session(tmp_path)
    with assembler.Ledger(path, readonly=True) as ledger:
        report = cache_usage(ledger, "agent")
    assert len(report.rows) == 7
    assert not report.rows[0].hit and not report.rows[0].miss  # the first: nothing to read
    assert all(r.hit for r in report.rows[1:6])
    last = report.rows[6]
    assert last.miss and last.diverged == (0, "sys")
    # billed reads are the simulator's replay of the same bytes
    for row in report.rows:
        assert row.replayed is not None and row.replayed[0] == row.billed.read
    # the cache-aware decision's predicted reads against the replay: within 1% of tokens
    predicted = [r.predicted[0] for r in report.rows[1:6] if r.predicted is not None]
    replayed = [r.replayed[0] for r in report.rows[1:6] if r.replayed is not None]
    assert len(predicted) == 5 and sum(replayed) > 0
    assert abs(sum(predicted) - sum(replayed)) <= 0.01 * sum(replayed)


def test_the_command_prints_the_report_and_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _results = _replayed_session(tmp_path)
    assert main(["ledger", "cache", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("7 sent bodies: 5 hits, 1 misses")
    assert "miss, diverged at block 0 (sys)" in out
    assert main(["ledger", "cache", str(path), "--json", "--session", "agent"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["hits"] == 5 and len(data["bodies"]) == 7
    assert main(["ledger", "verify", str(path)]) == 0
    capsys.readouterr()


def test_fitted_record_usage_keeps_the_cache_part_and_the_calibration(tmp_path: Path) -> None:
    messages = [{"role": "system", "content": "be brief " * 50},
                {"role": "user", "content": "hello " * 30}]  # fmt: skip
    fitted = assembler.fit(messages, model="gpt-4o", budget=2000)
    with assembler.Ledger(tmp_path / "fit.db", session="s") as ledger:
        usage = {"prompt_tokens": fitted.tokens, "prompt_tokens_details": {"cached_tokens": 0}}
        fitted.record_usage(ledger, usage, at=0.0)
        fitted.record_usage(
            ledger, {**usage, "prompt_tokens_details": {"cached_tokens": 128}}, at=5.0
        )
        report = cache_usage(ledger)
        assert ledger.calibration(fitted.model, fitted.counter) >= 1.0
    assert [r.hit for r in report.rows] == [False, True]
    assert report.rows[1].diverged is None and report.rows[0].billed.provider == "openai"
