"""``assembler cache plan`` and the clairvoyant limit on small sessions.

The exact program is checked against what it must contain (the cache-blind policy's
own plan, so its least price at full value is at most the cache-blind price) and
against the proven bound (never above an exact price, at any level); the command's
output, JSON and errors are checked as a user sees them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cacheplan import LEVELS, plan, plan_session
from assembler.cli import main


def _turn(turn: int, cost: int, relevance: float) -> dict[str, Any]:
    return {
        "id": f"turn-{turn}",
        "kind": "user_turn",
        "channel": "user",
        "turn": turn,
        "cost": cost,
        "relevance": relevance,
        "scope": "shared",
        "content": f"turn {turn} " + "x" * 40,
    }


def session(calls: int = 3, provider: str = "anthropic") -> dict[str, Any]:
    head = {
        "id": "system",
        "role": "instruction",
        "channel": "system",
        "cost": 1500,
        "required": True,
        "scope": "shared",
        "content": "be exact " * 10,
    }
    out = []
    for t in range(calls):
        turns = [_turn(k, 400 + 150 * k, round(0.9 - 0.2 * (t - k), 3)) for k in range(t + 1)]
        request = {"task": {"id": "plan-test", "budget": 2600}, "candidates": [head, *turns]}
        out.append({"at": 30.0 * t + (400 if t == 2 else 0), "request": request})
    return {"provider": provider, "calls": out}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_exact_limit_contains_the_blind_plan_and_bounds_it_from_below(provider: str) -> None:
    parsed = plan_session(session(provider=provider))
    exact = plan(parsed)
    assert exact.exact and exact.frontier
    assert exact.price_at(exact.blind_value) <= exact.blind_price + 1e-6
    bounded = plan(parsed, exact=False)
    assert not bounded.exact
    for (share, value, least), (_s, _v, bound) in zip(exact.levels, bounded.levels, strict=True):
        assert bound <= least + 1e-6, (share, value, least, bound)
    # the levels are shares of the cache-blind value, in order
    assert [share for share, _v, _p in exact.levels] == list(LEVELS)


def test_the_command_prints_the_limit_and_its_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session()), encoding="utf-8")
    assert main(["cache", "plan", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("LIMIT (exact), anthropic claude-sonnet-4.5, 3 calls")
    assert "cache-blind policy: value" in out and "100%" in out
    assert main(["cache", "plan", str(path), "--bound", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "lower bound" and len(data["levels"]) == len(LEVELS)


def test_bad_sessions_are_one_line_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = session()
    bad["calls"][1]["request"]["task"]["budget"] = -5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    assert main(["cache", "plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: calls[1].request.task.budget") and err.count("\n") == 1
    backwards = session()
    backwards["calls"][2]["at"] = 0
    path.write_text(json.dumps(backwards), encoding="utf-8")
    assert main(["cache", "plan", str(path)]) == 2
    assert "calls[2].at" in capsys.readouterr().err
    assert main(["cache", "plan", str(tmp_path / "missing.json")]) == 2


def test_a_session_too_large_to_enumerate_gets_the_bound(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    large = session(calls=2)
    for call in large["calls"]:
        call["request"]["candidates"] += [
            {"id": f"doc-{i}", "kind": "evidence", "cost": 50, "relevance": 0.5,
             "scope": "shared", "content": f"document {i}"}
            for i in range(20)
        ]  # fmt: skip
    path = tmp_path / "large.json"
    path.write_text(json.dumps(large), encoding="utf-8")
    assert main(["cache", "plan", str(path)]) == 0
    assert capsys.readouterr().out.startswith("LIMIT (proven lower bound)")
    assert main(["cache", "plan", str(path), "--exact"]) == 2
    assert "more than 4096 selections" in capsys.readouterr().err
