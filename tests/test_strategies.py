"""The strategy registry: each strategy once by its name, and ``cpsat`` an alias of
``exact`` wherever a strategy name is accepted (API, command line, corpus, sweeps,
hunts, the server, a ledger's replay of a record written under the old name)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import form, request

import assembler
from assembler.explain.limits import ExplainLimits
from assembler.ledger.replay import replay
from assembler.model.parse import parse_request
from assembler.strategies import (
    EXACT_STRATEGIES,
    STRATEGIES,
    STRATEGY_ALIASES,
    canonical_strategy,
    load_strategy,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "models" / "examples" / "review-migration.json"


def _request() -> dict[str, object]:
    req = request(budget=60)
    req["candidates"] = [
        form("a", 30, 0.9, depends_on=["r"]),
        form("r", 10, 0.0),
        form("b", 40, 0.8),
        form("c", 20, 0.5),
    ]
    return req


def test_the_registry_lists_each_strategy_once_and_reads_an_alias_as_its_strategy() -> None:
    assert list(STRATEGIES) == ["exact", "enumerate", "greedy", "top-k", "weighted", "dump"]
    assert "cpsat" in STRATEGIES and STRATEGIES["cpsat"] == STRATEGIES["exact"]
    assert STRATEGIES.get("cpsat") == STRATEGIES["exact"] and "magic" not in STRATEGIES
    assert canonical_strategy("cpsat") == "exact" and canonical_strategy("greedy") == "greedy"
    assert canonical_strategy("magic") == "magic"
    assert load_strategy("cpsat") is load_strategy("exact")
    assert set(STRATEGY_ALIASES.values()) <= set(STRATEGIES)
    assert set(EXACT_STRATEGIES) <= set(STRATEGIES)


def test_an_alias_call_answers_as_the_strategy_it_names() -> None:
    by_alias = assembler.assemble(_request(), strategy="cpsat")
    by_name = assembler.assemble(_request(), strategy="exact")
    assert by_alias.strategy == by_name.strategy == "exact"
    assert by_alias == by_name
    assert (by_alias.selected, by_alias.package_id, by_alias.trace_id) == (
        by_name.selected,
        by_name.package_id,
        by_name.trace_id,
    )
    assert assembler.verify(_request(), by_alias) == []


def test_the_command_line_takes_the_alias() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "compile", str(EXAMPLE), "--strategy", "cpsat"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["strategy"] == "exact"


def test_the_inspector_and_sweeps_take_the_alias() -> None:
    alias = assembler.Settings(strategy="cpsat")
    assert ExplainLimits(settings=alias).settings.strategy == "cpsat"
    with pytest.raises(assembler.InvalidRequest):
        ExplainLimits(settings=assembler.Settings(strategy="greedy"))
    from assembler.tooling.sweep.command import _config, _parser

    args = _parser().parse_args(["--strategies", "cpsat,greedy,exact"])
    assert _config(args).strategies == ("exact", "greedy")


def test_replaying_a_record_written_under_the_old_name_is_identical(tmp_path: Path) -> None:
    # what a ledger written before the rename holds: the run and the result say "cpsat"
    req = _request()
    result = assembler.assemble(req)
    with assembler.Ledger(tmp_path / "old.db") as ledger:
        recording = ledger.requested(parse_request(req), assembler.Settings(strategy="cpsat"))
        recording.answered(replace(result, strategy="cpsat"))
        compilation = ledger.compilation(1)
    assert compilation.run["strategy"] == "cpsat" and compilation.result is not None
    assert compilation.result["strategy"] == "cpsat"
    again = replay(compilation)
    assert again.identical, again.differences


def test_the_server_takes_the_alias() -> None:
    line = json.dumps({"id": 1, "request": _request(), "strategy": "cpsat"})
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "serve"],
        input=line + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout.splitlines()[0])
    assert reply["exit"] == 0 and reply["result"]["strategy"] == "exact"
