"""Inspector benchmarks: what a page costs beside assemble, and what the counterfactuals
prove within their limits.

Run: ``python -m benchmarks.explain [--sizes 100 1000 10000] [--counterfactual-sizes 100
1000] [--repeats 3]``. Writes ``benchmarks/results/explain.json`` and
``benchmarks/results/EXPLAIN.md``.

* The page: for each size, seeded requests from the generator (the shapes the main
  benchmarks use) are assembled, then explained without counterfactuals (pair, gates,
  verify, scene, diagnostics) and shown as the terminal report and the HTML page, each
  timed as its own stage. Goal: the page (explain + report + HTML) takes under half of
  assemble's time at 1k and 10k forms.
* The counterfactuals: for the smaller sizes, explained with the default limits (top 5
  per kind, 2 s per figure, 30 s overall); the time, the number of exact solves, and
  every figure's status by kind. Goal: at 100 forms, every figure proven except
  possibly the smallest budget, whose walk may need many solves (it is then a bound).
* ``os.getloadavg()`` before and after: this machine is shared, wall times are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from assembler import assemble
from assembler.explain import ExplainLimits, explain, render_html, render_report
from assembler.hunt.generate import Shape, generate

from .machine import describe

RESULTS = Path(__file__).resolve().parent / "results"


def _page(size: int, repeats: int) -> dict[str, Any]:
    rows = []
    for seed in range(repeats):
        req = generate(random.Random(seed), Shape.scale(size))
        started = time.perf_counter()
        result = assemble(req, time_limit=10)
        assembled = time.perf_counter() - started
        began = time.perf_counter()
        explanation = explain(req, result, limits=ExplainLimits(top=0))
        explained = time.perf_counter() - began
        began = time.perf_counter()
        report = render_report(explanation)
        reported = time.perf_counter() - began
        began = time.perf_counter()
        page = render_html(explanation)
        paged = time.perf_counter() - began
        rows.append(
            {
                "seed": seed,
                "assemble_s": assembled,
                "explain_s": explained,
                "report_s": reported,
                "html_s": paged,
                "page_bytes": len(page.encode("utf-8")),
                "report_bytes": len(report.encode("utf-8")),
            }
        )
    summary: dict[str, Any] = {"size": size, "runs": rows}
    for key in ("assemble_s", "explain_s", "report_s", "html_s", "page_bytes"):
        summary[f"{key}_median"] = statistics.median(r[key] for r in rows)
    summary["page_ratio"] = statistics.median(
        (r["explain_s"] + r["report_s"] + r["html_s"]) / r["assemble_s"] for r in rows
    )
    return summary


def _counterfactuals(size: int, repeats: int) -> dict[str, Any]:
    rows = []
    for seed in range(repeats):
        req = generate(random.Random(seed), Shape.scale(size))
        result = assemble(req, time_limit=10)
        began = time.perf_counter()
        answers = explain(req, result).counterfactuals
        elapsed = time.perf_counter() - began
        statuses: dict[str, Counter[str]] = {}
        for item in answers.items:
            for figure in item.figures:
                statuses.setdefault(f"{item.kind.value}/{figure.key}", Counter())[
                    figure.status.value
                ] += 1
        rows.append(
            {
                "seed": seed,
                "seconds": elapsed,
                "solves": answers.solves,
                "figures": {key: dict(counts) for key, counts in sorted(statuses.items())},
            }
        )
    return {
        "size": size,
        "runs": rows,
        "seconds_median": statistics.median(r["seconds"] for r in rows),
        "solves_median": statistics.median(r["solves"] for r in rows),
    }


def _totals(run: dict[str, Any]) -> Counter[str]:
    totals: Counter[str] = Counter()
    for counts in run["figures"].values():
        totals.update(counts)
    return totals


def _markdown(data: dict[str, Any]) -> str:
    lines = [
        "# Inspector benchmarks",
        "",
        f"Machine: {data['machine']}; load average {data['load_before']} before,"
        f" {data['load_after']} after (a shared machine: wall times are noisy).",
        "",
        "## The page (no counterfactuals)",
        "",
        "| forms | assemble | explain | report | HTML | page size | page / assemble |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in data["page"]:
        lines.append(
            f"| {row['size']:,} | {row['assemble_s_median'] * 1000:.1f} ms"
            f" | {row['explain_s_median'] * 1000:.1f} ms | {row['report_s_median'] * 1000:.1f} ms"
            f" | {row['html_s_median'] * 1000:.1f} ms | {row['page_bytes_median'] / 1024:.0f} KiB"
            f" | {row['page_ratio']:.2f} |"
        )
    lines += [
        "",
        "Goal: under 0.5 at 1k and 10k forms (explain verifies the result independently,",
        "which is most of its time).",
        "",
        "## Counterfactuals with the default limits (top 5, 2 s per figure, 30 s overall)",
        "",
        "| forms | seed | seconds | exact solves | proven | bound only | timed out |"
        " not evaluated |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size in data["counterfactuals"]:
        for run in size["runs"]:
            totals = _totals(run)
            lines.append(
                f"| {size['size']:,} | {run['seed']} | {run['seconds']:.1f} | {run['solves']}"
                f" | {totals['proven']} | {totals['bound only']} | {totals['timed out']}"
                f" | {totals['not evaluated']} |"
            )
    lines += ["", "Figures not proven, by question:", ""]
    for size in data["counterfactuals"]:
        missing: Counter[str] = Counter()
        for run in size["runs"]:
            for key, counts in run["figures"].items():
                missing[key] += sum(n for status, n in counts.items() if status != "proven")
        listed = ", ".join(f"{k} {n}" for k, n in sorted(missing.items()) if n) or "none"
        lines.append(f"* {size['size']:,} forms: {listed}")
    lines += [
        "",
        "Goal: at 100 forms every figure proven except possibly `left out/smallest_budget`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.explain")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--counterfactual-sizes", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    machine = describe()
    data: dict[str, Any] = {
        "machine": f"{machine['cpu']}, {machine['cores']} cores, commit {machine['commit']}",
        "page": [_page(size, args.repeats) for size in args.sizes],
        "counterfactuals": [_counterfactuals(s, args.repeats) for s in args.counterfactual_sizes],
    }
    data["load_before"] = [round(x, 2) for x in load_before]
    data["load_after"] = [round(x, 2) for x in os.getloadavg()]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "explain.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    (args.out / "EXPLAIN.md").write_text(_markdown(data), encoding="utf-8")
    print(_markdown(data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
