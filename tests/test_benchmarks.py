"""Smoke test of the benchmark runner: it runs end to end and writes its files.

No timing is asserted here (performance goals live in benchmarks/, never in tests).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

# benchmarks/ lives in the checkout, next to tests/, and is not an installed package
CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))


def _module(name: str) -> Any:
    return importlib.import_module(name)


def test_runner_writes_table_json_and_plot(tmp_path: Path) -> None:
    out = tmp_path / "results"
    code = _module("benchmarks").main(
        [
            "--sizes",
            "30,60",
            "--repeats",
            "1",
            "--noise",
            "1",
            "--time-limit",
            "2",
            "--import-repeats",
            "1",
            "--limit-sizes",
            "300",
            "--limits",
            "0.05,2",
            "--adversarial-sizes",
            "60,120",
            "--adversarial-shapes",
            "chain,below-mandatory",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    for name in ("RESULTS.md", "results.json", "scaling.png"):
        assert (out / name).is_file(), name
    assert (out / "scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    data = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {"machine", "settings", "import", "sizes", "elapsed_s"} <= data.keys()
    assert {"cpu", "cores", "ram_gib", "python", "versions", "date"} <= data["machine"].keys()
    assert {"import_s", "loaded_by_import", "first_call_100_s"} <= data["import"].keys()
    assert data["import"]["loaded_by_import"]["ortools"] is False
    assert [size["size"] for size in data["sizes"]] == [30, 60]
    for size in data["sizes"]:
        assert size["errors"] == []
        ours = size["ours"]
        assert {"total", "stages", "optimal", "runs", "greedy_loss", "core"} <= ours.keys()
        assert {"parse", "gates", "closure", "solve", "trace", "total", "reduce", "verify"} <= (
            ours["stages"].keys()
        )
        assert {"median", "min", "max"} <= ours["total"].keys()
        assert ours["violations"] == 0
        assert ours["rss_one_solve_mb"] > 0
        assert ours["noise"]["n"] == 2
        assert set(size["peers"]) == {"cpsat", "highs"}
        for peer in size["peers"].values():
            assert {"e2e", "solve", "statuses", "speedup_e2e", "disagreements"} <= peer.keys()
            assert peer["disagreements"] == []

    # the time-limit sweep: one call per limit, each judged by the verifier
    (sweep,) = data["limits"]
    assert [run["limit"] for run in sweep["runs"]] == [0.05, 2.0]
    for run in sweep["runs"]:
        assert {"overrun_s", "beyond_parse_s", "cpu_s", "load_before"} <= run.keys()
        assert run["violations"] == []
    # the adversarial family: each shape at each size, in its own process
    assert [shape["shape"] for shape in data["adversarial"]] == ["chain", "below-mandatory"]
    for shape in data["adversarial"]:
        assert [run["size"] for run in shape["runs"]] == [60, 120]
        assert all(run["violations"] == [] for run in shape["runs"])
    below = data["adversarial"][1]["runs"]
    assert all(run["status"] == "refused" for run in below)
    assert all(run["refusal"]["lower"] > run["refusal"]["budget"] for run in below)
    assert (out / "adversarial.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    text = (out / "RESULTS.md").read_text(encoding="utf-8")
    for heading in (
        "## Machine",
        "## Results",
        "## Time limits",
        "## Adversarial shapes",
        "## Where the time goes",
        "## Peers",
    ):
        assert heading in text

    # re-rendering from the JSON measures nothing and writes the same sections
    (out / "RESULTS.md").unlink()
    assert (
        _module("benchmarks").main(["--render", str(out / "results.json"), "--out", str(out)]) == 0
    )
    assert "## Results" in (out / "RESULTS.md").read_text(encoding="utf-8")


def test_quick_defaults_and_no_peers() -> None:
    parse_args = _module("benchmarks.runner").parse_args
    args = parse_args(["--quick", "--no-peers"])
    assert args.sizes == [100, 1000]
    assert args.repeats == 2
    assert args.no_peers
    full = parse_args([])
    assert full.sizes == [100, 1000, 10_000, 100_000]
    assert full.time_limit == 5.0
    assert full.limit_sizes == [10_000, 100_000, 300_000]
    assert full.limits == [0.05, 1.0, 5.0]
    assert full.adversarial_sizes == [2_500, 5_000, 10_000, 20_000]
    assert full.adversarial_limit == 1.0


def test_render_benchmark_runs_and_writes_its_report(tmp_path: Path) -> None:
    from benchmarks.render import main as render_main

    assert render_main(["--sizes", "40", "--repeats", "1", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "render.json").read_text(encoding="utf-8"))
    assert report["sizes"][0]["size"] == 40 and report["counting_1mb"]
    assert (tmp_path / "RENDER.md").read_text(encoding="utf-8").startswith("# Render")


def test_the_workers_verdict_flags_slower_and_fewer_proofs_only() -> None:
    workers = _module("benchmarks.workers")

    def row(count: int, proven: int, ratio: float) -> dict[str, Any]:
        spread = {"median": ratio, "min": ratio, "max": ratio}
        return {"workers": count, "runs": 9, "proven": proven, "wall": spread, "ratio": spread}

    assert workers.verdict([row(1, 9, 1.0), row(2, 9, 1.05), row(4, 9, 0.5)]) == []
    found = workers.verdict([row(1, 9, 1.0), row(2, 8, 1.0), row(4, 9, 1.2)])
    assert len(found) == 2
    assert found[0].startswith("2 workers prove 8/9")
    assert found[1].startswith("4 workers: 1.20x")
