"""Smoke test of the session benchmark: it runs end to end on tiny sizes (real server
processes included) and writes its files. No timing is asserted (performance goals
live in benchmarks/, never in tests); the benchmark itself fails when an answer
differs from a fresh assemble() or a bundle fails the verifier."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from benchmarks.scenarios.agentloop import agent_loop

CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))


def test_session_benchmark_writes_its_results(tmp_path: Path) -> None:
    bench = importlib.import_module("benchmarks.session")
    code = bench.main(
        ["--seeds", "1", "--forms", "60", "--calls", "3", "--session-forms", "20",
         "--turns", "4", "--cold-repeats", "1", "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    data = json.loads((tmp_path / "session.json").read_text())
    loop = data["agent_loop"][0]
    assert (loop["forms_first"], loop["calls"], loop["optimal"]) == (60, 3, 3)
    assert all(2 <= added <= 5 for added in loop["added_per_call"])
    # the notes scoped elsewhere never change the problem: every solve is reused
    unchanged = data["unchanged_problem"][0]
    assert (unchanged["calls"], unchanged["solve_reused"]) == (3, 3)
    trip = data["round_trip"][0]
    assert trip["calls"] == 4 and trip["lines_ms_median"] > 0 and trip["http_ms_median"] > 0
    assert data["cold"]["compile"]["ms_median"] > 0
    assert "## Server round trip" in (tmp_path / "SESSION.md").read_text()


def test_the_agent_loop_is_the_same_for_a_seed_and_adds_two_to_five() -> None:
    first, again = agent_loop(4, 100, 30), agent_loop(4, 100, 30)
    assert first == again and len(first.first["candidates"]) == 100
    assert all(2 <= len(delta["add"]) <= 5 for delta in first.deltas)
    assert {"tool_call", "tool_result"} <= {c["kind"] for d in first.deltas for c in d["add"]}
    assert agent_loop(5, 100, 30) != first
