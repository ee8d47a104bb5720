"""Smoke test of the cache benchmark: a short run end to end, its files and its checks.

No timing is asserted (performance goals live in benchmarks/, never in tests).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# benchmarks/ lives in the checkout, next to tests/, and is not an installed package
CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))

from benchmarks import cache  # noqa: E402

BASELINES = {"exact", "hysteresis", "window", "compaction", "trim_messages"}


def test_a_short_run_writes_its_report_and_every_policy_is_valid(tmp_path: Path) -> None:
    argv = ["--turns", "24", "--retrieval-calls", "15", "--cache-aware", "0.05:0.25",
            "--planned", "0,0.05", "--small-calls", "2", "--tiered-calls", "50"]  # fmt: skip
    assert cache.main([*argv, "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "cache.json").read_text(encoding="utf-8"))
    assert {"machine", "load_before", "load_after", "settings", "sessions"} <= data.keys()
    assert [s["session"] for s in data["sessions"]] == [
        "coding-recency", "coding-static", "retrieval-refresh",
    ]  # fmt: skip
    for session in data["sessions"]:
        rows = {row["policy"]: row for row in session["policies"]}
        assert set(rows) == BASELINES | {"cache-aware t=0.05 h=0.25", "planned t=0",
                                         "planned t=0.05"}  # fmt: skip
        assert rows["exact"]["value_share"] == 1.0
        for row in rows.values():
            # the baselines keep pairs, the head and the budget by construction; the
            # cache-aware policy is an exact one
            assert row["violations"] == {"orphaned": 0, "missing_required": 0, "over_budget": 0}
            assert 0 < row["value_share"] <= 1.0
            assert 0 <= row["prefix_kept_mean"] <= 1
            for provider in ("anthropic/claude-sonnet-4-5", "openai/gpt-5"):
                f = row["providers"][provider]
                assert f["read"] + f["written"] + f["uncached"] == f["tokens"]
                assert 0 < f["vs_uncached"] <= 1.25
                # the clairvoyant bound is below every policy's price at its value
                assert f["limit"] <= f["price"] + 0.1, (row["policy"], provider, f)
        assert rows["exact"]["providers"]["openai/gpt-5"]["vs_exact"] == 1.0
        # the cache-aware decision's predicted reads against the simulator's replay
        for name in ("cache-aware t=0.05 h=0.25", "planned t=0.05"):
            replayed = rows[name]["replayed_read"]
            assert replayed > 0 and abs(rows[name]["predicted_read"] - replayed) <= 0.01 * replayed
        # the planner at t=0 sends the cache-blind bytes: the same price, call by call
        for provider in ("anthropic/claude-sonnet-4-5", "openai/gpt-5"):
            assert rows["planned t=0"]["providers"][provider] == rows["exact"]["providers"][
                provider
            ] | {"limit": rows["planned t=0"]["providers"][provider]["limit"],
                 "vs_limit": rows["planned t=0"]["providers"][provider]["vs_limit"]}  # fmt: skip
    # the small sessions: the exact program's optimum is below every policy's price
    assert [s["session"] for s in data["small"]] == [
        "coding-recency-small", "coding-static-small", "retrieval-refresh-small",
    ]  # fmt: skip
    for session in data["small"]:
        for solved in session["exact"].values():
            assert all(x["lower"] <= x["best"] * (1 + 1e-4) + 0.1 for x in solved)
        for row in session["policies"]:
            for f in row["providers"].values():
                assert f.get("vs_optimum", 1.0) >= 0.999, (session["session"], row["policy"], f)
    # the session crossing 272K: never compacting pays the tier, the others compact
    tiered = {r["policy"]: r["providers"]["openai/gpt-5.6"] for r in data["tiered"]["policies"]}
    assert set(tiered) == {"exact", "compact at the line", "planned below the line"}
    assert tiered["exact"]["above_line"] > 0 and tiered["planned below the line"]["above_line"] == 0
    text = (tmp_path / "CACHE.md").read_text(encoding="utf-8")
    assert text.startswith("# Cache benchmark") and "## coding-static" in text
    assert "## Goals (issue 45)" in text and "## Small sessions" in text
    assert "## Goals (issue 33)" in text and "vs limit" in text
    assert (tmp_path / "cache.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_quick_and_full_sizes_and_the_cache_aware_plug() -> None:
    assert (cache.parse_args(["--quick"]).turns, cache.parse_args([]).turns) == (150, 1000)
    assert cache.parse_args([]).retrieval_calls == 300
    # adding the cache-aware policy is one (tolerance, headroom) pair per sweep point
    names = set(cache.policies([(0.05, 0.25)]))
    assert names == BASELINES | {"cache-aware t=0.05 h=0.25"}
    assert "planned t=0.05" in cache.policies([], (0.05,))
