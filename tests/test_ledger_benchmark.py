"""Smoke test of the ledger benchmark: it runs end to end on a tiny size and writes its
files. No timing is asserted (performance goals live in benchmarks/, never in tests)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))


def test_ledger_benchmark_writes_its_results(tmp_path: Path) -> None:
    bench = importlib.import_module("benchmarks.ledger")
    code = bench.main(
        ["--sizes", "30", "--instances", "1", "--repeats", "2", "--turns", "12",
         "--replays", "5", "--out", str(tmp_path), "--no-postgres"]
    )  # fmt: skip
    assert code == 0
    data = json.loads((tmp_path / "ledger.json").read_text())
    assert [(r["forms"], r["scenario"]) for r in data["overhead"]] == [
        (30, "recurring"), (30, "fresh"),
    ]  # fmt: skip
    assert all(r["answers_differ"] == 0 for r in data["overhead"])
    session = data["session"]
    assert session["turns"] == 12 and session["replays_identical"] == session["replays"] == 5
    assert session["ledger_bytes"] > 0 and "## Replay" in (tmp_path / "LEDGER.md").read_text()
