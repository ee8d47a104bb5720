"""Sweeps (assembler.sweep, issue 15).

A sweep's cell counts what the hunt counts on the same examples (one judge); its
answer is the same in this process, on a local pool and on a Dask LocalCluster; the
cells of one index differ only by their knob; the JSON documents every column; bad
arguments exit 2 with one line.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from assembler.cli.sweep import COLUMNS, main
from assembler.engines import EngineKind, EngineSpec, SerialEngine, open_engine
from assembler.hunt import HuntConfig, hunt
from assembler.sweep import SweepConfig, parse_budget, parse_shape, sweep
from assembler.sweep.grid import example_request

SEED = 2
EXAMPLES = 80


def _config(**changes: Any) -> SweepConfig:
    values: dict[str, Any] = {
        "seed": SEED,
        "examples": EXAMPLES,
        "shapes": (parse_shape("small-10"), parse_shape("small-5")),
        "budgets": (parse_budget("mixed"), parse_budget("0.3")),
        "strategies": ("greedy", "top-k", "exact"),
    }
    values.update(changes)
    return SweepConfig(**values)


@pytest.fixture(scope="module")
def serial() -> Any:
    with SerialEngine() as engine:
        return sweep(_config(), engine)


def test_a_cell_counts_what_the_hunt_finds(serial: Any) -> None:
    report = hunt(HuntConfig("greedy", seed=SEED, examples=EXAMPLES, out=None, shrink_per_kind=0))
    counts = report.counts()
    cell = next(
        c
        for c in serial.cells
        if (c.shape, c.budget, c.strategy) == ("small-10", "mixed", "greedy")
    )
    assert cell.examples == report.examples and cell.skipped == report.skipped
    assert cell.false_refusals == counts["false-refusal"] > 0
    assert cell.illegal == counts["false-bundle"]
    assert cell.value_lost_cases == counts["suboptimal-value"] > 0
    assert cell.dearer == counts["suboptimal-cost"]
    assert cell.value_lost > 0 and 0 < (cell.value_lost_percent or 0) < 100


def test_the_grid_is_complete_and_the_exact_strategy_loses_nothing(serial: Any) -> None:
    assert serial.complete and len(serial.cells) == 2 * 2 * 3
    assert serial.examples == 2 * 2 * EXAMPLES
    for cell in serial.cells:
        assert cell.examples == EXAMPLES and cell.exact_problems == 0
        if cell.strategy == "exact":
            assert (cell.false_refusals, cell.illegal, cell.value_lost, cell.dearer) == (0, 0, 0, 0)
        if cell.strategy == "top-k":
            assert cell.illegal > 0  # it ignores the gates
        assert cell.latency_p50_ms is not None and cell.exact_p50_ms is not None


def test_a_local_pool_gives_the_same_table(serial: Any) -> None:
    with open_engine(EngineSpec(EngineKind.LOCAL, 2)) as engine:
        pooled = sweep(_config(batch=7), engine)
    assert [c.answer() for c in pooled.cells] == [c.answer() for c in serial.cells]


@pytest.mark.cluster
def test_the_dask_engine_gives_the_same_table(
    serial: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--seed", str(SEED), "--examples", str(EXAMPLES), "--shapes", "small-10,small-5"]
    argv += ["--budgets", "mixed,0.3", "--strategies", "greedy,top-k,exact", "--json"]
    assert main([*argv, "--engine", "dask", "--workers", "2", "--batch", "16"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"].startswith("dask, LocalCluster") and data["complete"]
    expected = [c.answer() for c in serial.cells]
    assert [{key: cell[key] for key in expected[0]} for cell in data["cells"]] == expected


def test_cells_of_one_index_differ_only_by_their_budget() -> None:
    small = parse_shape("small-10")
    low = example_request(SEED, 5, small, parse_budget("0.2"))
    high = example_request(SEED, 5, small, parse_budget("0.6"))
    assert low["task"]["budget"] < high["task"]["budget"]
    low["task"].pop("budget"), high["task"].pop("budget")
    assert low == high


def test_json_documents_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--examples", "5", "--strategies", "greedy", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["columns"]) == set(data["cells"][0]) == {name for name, _, _ in COLUMNS}
    assert all(text for text in data["columns"].values())


def test_text_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", "--examples", "8", "--budgets", "0.1,mixed"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| shape")
    assert "| small-10 | 0.1    | greedy" in out and "false-ref" in out and "16 requests" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--shapes", "huge-3"], "unknown shape"),
        (["--shapes", "scale-999999"], "at most"),
        (["--budgets", "1.5"], "[0, 1]"),
        (["--budgets", "lots"], "unknown budget"),
        (["--strategies", "nope"], "unknown strategies"),
        (["--examples", "0"], "--examples"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--engine dask"),
        (["--workers", "0"], "--workers"),
        (["--bogus"], "unrecognized"),
    ],
)
def test_bad_arguments_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
