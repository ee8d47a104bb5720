"""The strategy registry: each strategy once, by its one name, wherever a strategy name
is accepted (API, command line, sweeps, the server); ``cpsat``, the exact strategy's
name before any release, is no strategy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import form, request

import assembler
from assembler.strategies import EXACT_STRATEGIES, STRATEGIES, load_strategy

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


def test_the_registry_lists_each_strategy_once_by_its_name() -> None:
    assert list(STRATEGIES) == ["exact", "enumerate", "greedy", "top-k", "weighted", "dump"]
    assert set(EXACT_STRATEGIES) <= set(STRATEGIES)
    assert "cpsat" not in STRATEGIES
    with pytest.raises(assembler.UnknownStrategy) as caught:
        load_strategy("cpsat")
    assert "exact" in str(caught.value)


def test_a_result_names_the_strategy_that_answered() -> None:
    for name in ("exact", "greedy"):
        assert assembler.assemble(_request(), strategy=name).strategy == name
    with pytest.raises(assembler.UnknownStrategy):
        assembler.assemble(_request(), strategy="cpsat")


def test_the_command_line_offers_the_registered_names_only() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "compile", str(EXAMPLE), "--strategy", "cpsat"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "invalid choice: 'cpsat'" in done.stderr


def test_sweeps_take_each_strategy_once() -> None:
    from assembler.cli.sweep import _config, _parser

    args = _parser().parse_args(["--strategies", "exact,greedy,exact"])
    assert _config(args).strategies == ("exact", "greedy")


def test_the_server_answers_with_the_exact_strategy_by_default() -> None:
    line = json.dumps({"id": 1, "request": _request()})
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
