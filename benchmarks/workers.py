"""Worker counts side by side (issue 16): does ``workers=N`` ever cost time or proofs?

Run: ``python -m benchmarks.workers [--families scale-1k,scale-10k,chain-cycle]
[--instances K] [--repeats R] [--workers 1,2,4] [--time-limit S] [--quick] [--out DIR]``,
which writes WORKERS.md and workers.json (~3 min with the defaults on 2 busy cores;
``--quick`` ~1 min). Input (child process): ``python -m benchmarks.workers --child
SPEC.json OUT.json``, one family. Output: one ``timed_call`` record per call.

The families: ``scale-1k`` and ``scale-10k`` are the main benchmark's instances
(``Shape.scale``, seeds 0, 1, ...); ``chain-cycle`` is ``Shape.tangled`` at 650-1,000
forms (the size drawn from the seed), where dependency chains, cycles and groups make
small cores that are hard to prove. Each family runs in one fresh process; every
worker count runs on every instance, interleaved round-robin (the order of the worker
counts rotates with the instance and the repeat), so a change in the machine's load
falls on all of them alike. Each record keeps the wall and CPU time of the call (CPU
over all threads), the 1-minute load before it and the answer; every answer is judged
by the verifier after the clock stopped, and the proven answers of one instance must
have the same ``package_id`` and ``trace_id`` for every worker count.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .processes import ROOT, child_main, run_child
from .timed import fmt_seconds, timed_call

__all__ = ["FAMILIES", "instance", "main", "markdown", "measure", "summarise"]

FAMILIES = ("scale-1k", "scale-10k", "chain-cycle")
DEFAULT_INSTANCES = {"scale-1k": 5, "scale-10k": 5, "chain-cycle": 8}
DEFAULT_WORKERS = (1, 2, 4)
# The 1k calls take ~40 ms, where the machine's noise is larger than any margin worth
# stating: more repeats there, at no great cost (10 x 15 calls ~ 20 s).
DEFAULT_REPEATS = {"scale-1k": 10, "scale-10k": 3, "chain-cycle": 3}
DEFAULT_TIME_LIMIT = 10.0  # the default limit of a call, as a caller meets it
# More workers may cost this much before they count as slower: the median, over the
# family's calls, of each call's wall time divided by one worker's on the same instance
# and repeat (a paired ratio: pooled medians jump between instances that differ 4-10x
# in time). Below it is the measured noise of re-running the same calls on a shared
# machine.
MARGIN = 0.10


def instance(family: str, seed: int) -> dict[str, Any]:
    """The request of ``family`` for ``seed``."""
    from assembler.hunt.generate import Shape, generate
    from benchmarks.scenarios.adversarial import tangled

    if family == "scale-1k":
        return generate(random.Random(seed), Shape.scale(1_000))
    if family == "scale-10k":
        return generate(random.Random(seed), Shape.scale(10_000))
    if family == "chain-cycle":
        rng = random.Random(seed)
        return generate(rng, tangled(rng.randint(650, 1_000)))
    raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    import assembler
    from assembler.hunt.generate import Shape, generate

    warm = generate(random.Random(987_654_321), Shape.scale(200))
    workers = list(spec["workers"])
    for count in workers:
        assembler.assemble(warm, workers=count)
    requests = [(seed, instance(spec["family"], seed)) for seed in spec["seeds"]]
    runs = []
    for repeat in range(spec["repeats"]):
        for position, (seed, request) in enumerate(requests):
            shift = (repeat + position) % len(workers)
            for count in workers[shift:] + workers[:shift]:
                run = timed_call(request, float(spec["time_limit"]), workers=count)
                run.update(family=spec["family"], seed=seed, repeat=repeat)
                runs.append(run)
    return {"family": spec["family"], "runs": runs}


def run_all(args: argparse.Namespace, log: Any = None) -> list[dict[str, Any]]:
    out = []
    with tempfile.TemporaryDirectory(prefix="assembler-workers-") as tmp:
        for family in args.families:
            started = time.perf_counter()
            seeds = list(range(args.instances or DEFAULT_INSTANCES[family]))
            spec = {
                "family": family,
                "seeds": seeds,
                "repeats": args.repeats,
                "workers": args.workers,
                "time_limit": args.time_limit,
            }
            repeats = args.repeats or DEFAULT_REPEATS[family]
            spec["repeats"] = repeats
            calls = len(seeds) * repeats * len(args.workers)
            budget = 120 + calls * (2 * args.time_limit + 30)
            report = run_child(
                "benchmarks.workers", spec, family, Path(tmp), budget, leading=("--child",)
            )
            out.append({"family": family, **report})
            if log is not None:
                status = "error" if "error" in report else "ok"
                log(f"  workers {family:<12} {status}  ({time.perf_counter() - started:.1f} s)")
    return out


# ---------------------------------------------------------------------------
# summary


def _spread(samples: list[float]) -> dict[str, float] | None:
    if not samples:
        return None
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples)}


def summarise(raw: dict[str, Any]) -> dict[str, Any]:
    """One family's records as rows per worker count, per instance, and the checks."""
    runs = raw.get("runs", [])
    counts = sorted({run["workers"] for run in runs})
    base = min(counts) if counts else 1
    by_call = {(run["seed"], run["repeat"], run["workers"]): run for run in runs}
    rows = []
    for count in counts:
        mine = [run for run in runs if run["workers"] == count]
        ratios = [
            run["wall_s"] / by_call[(run["seed"], run["repeat"], base)]["wall_s"]
            for run in mine
            if (run["seed"], run["repeat"], base) in by_call
        ]
        rows.append(
            {
                "workers": count,
                "runs": len(mine),
                "proven": sum(1 for run in mine if run["optimal"]),
                "wall": _spread([run["wall_s"] for run in mine]),
                "cpu": _spread([run["cpu_s"] for run in mine]),
                "ratio": _spread(ratios),
                "load": _spread([run["load_before"] for run in mine if run["load_before"]]),
            }
        )
    instances = []
    for seed in sorted({run["seed"] for run in runs}):
        cells = {}
        for count in counts:
            mine = [run for run in runs if run["seed"] == seed and run["workers"] == count]
            cells[str(count)] = {
                "wall": statistics.median(run["wall_s"] for run in mine),
                "cpu": statistics.median(run["cpu_s"] for run in mine),
                "proven": sum(1 for run in mine if run["optimal"]),
                "runs": len(mine),
                "values": sorted({run["value"] for run in mine}),
            }
        forms = next(run["forms"] for run in runs if run["seed"] == seed)
        instances.append({"seed": seed, "forms": forms, "cells": cells})
    disagreements = []
    for seed in sorted({run["seed"] for run in runs}):
        proven = {
            (run["package_id"], run["trace_id"])
            for run in runs
            if run["seed"] == seed and run["optimal"]
        }
        if len(proven) > 1:
            disagreements.append(seed)
    violations = sum(len(run["violations"] or ()) for run in runs)
    return {
        "family": raw["family"],
        "rows": rows,
        "instances": instances,
        "disagreements": disagreements,
        "violations": violations,
        "verdict": verdict(rows),
    }


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    """Worker counts that are slower than the first beyond the margin, or prove less."""
    if not rows:
        return []
    first = rows[0]
    found = []
    for row in rows[1:]:
        if row["proven"] < first["proven"]:
            found.append(f"{row['workers']} workers prove {row['proven']}/{row['runs']}")
        ratio = row["ratio"]
        if ratio is not None and ratio["median"] > 1 + MARGIN:
            found.append(
                f"{row['workers']} workers: {ratio['median']:.2f}x one worker's wall time "
                f"(median over the calls; family medians {fmt_seconds(row['wall']['median'])} "
                f"against {fmt_seconds(first['wall']['median'])})"
            )
    return found


def problems(summaries: list[dict[str, Any]], raw: list[dict[str, Any]]) -> list[str]:
    found = [
        f"workers {family['family']}: {family['error']}" for family in raw if "error" in family
    ]
    for summary in summaries:
        if summary["disagreements"]:
            found.append(
                f"workers {summary['family']}: proven answers differ by worker count on seeds "
                f"{summary['disagreements']}"
            )
        if summary["violations"]:
            found.append(f"workers {summary['family']}: {summary['violations']} violation(s)")
    return found


# ---------------------------------------------------------------------------
# report


def _cell(spread: dict[str, float] | None, ratio: bool = False) -> str:
    if spread is None:
        return "—"
    if ratio:
        return f"{spread['median']:.2f}x [{spread['min']:.2f}, {spread['max']:.2f}]"
    return (
        f"{fmt_seconds(spread['median'])} "
        f"[{fmt_seconds(spread['min'])}, {fmt_seconds(spread['max'])}]"
    )


def markdown(data: dict[str, Any]) -> list[str]:
    machine, settings = data["machine"], data["settings"]
    summaries = data["summaries"]
    lines = [
        "# Worker counts side by side",
        "",
        f"Measured {machine['date']} on commit {machine['commit']}"
        + (" (with uncommitted changes)" if machine.get("dirty") else "")
        + f" by `python -m benchmarks.workers` ({data['elapsed_s'] / 60:.1f} min).",
        "",
        f"- machine: {machine['cpu']}, `os.cpu_count()` = {machine['cores']} "
        f"({machine['usable_cores']} usable by this process); ortools "
        f"{machine['versions'].get('ortools')}",
        f"- 1-minute load average: {data['load_start']:.2f} at the start, "
        f"{data['load_end']:.2f} at the end (above 0: other work shared the cores)",
        f"- time limit {settings['time_limit']:g} s per call; workers "
        f"{', '.join(map(str, settings['workers']))}; "
        + _repeats(settings["repeats"])
        + " of every (instance, worker count), interleaved round-robin in one process per "
        "family",
        "",
        "## Summary",
        "",
        "| family | workers | calls | proven | wall, median [min, max] | CPU, median "
        "[min, max] | wall / 1 worker's on the same call, median [min, max] | load before |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for summary in summaries:
        for row in summary["rows"]:
            load = row["load"]
            lines.append(
                f"| {summary['family']} | {row['workers']} | {row['runs']} | "
                f"{row['proven']}/{row['runs']} | {_cell(row['wall'])} | {_cell(row['cpu'])} | "
                f"{_cell(row['ratio'], ratio=True)} | "
                + ("—" if load is None else f"{load['min']:.2f}-{load['max']:.2f}")
                + " |"
            )
    lines += [
        "",
        "A worker count counts as slower when the median of its calls' wall time divided by "
        f"one worker's on the same call exceeds 1 + {MARGIN:.0%}, and as proving less when "
        "it proves fewer calls.",
        "",
    ]
    for summary in summaries:
        found = summary["verdict"]
        lines.append(
            f"- {summary['family']}: "
            + ("no worker count slower or proving less." if not found else "; ".join(found))
        )
    lines += ["", "## Per instance (median over the repeats)", ""]
    counts = [str(c) for c in settings["workers"]]
    lines += [
        "| family | seed | forms | "
        + " | ".join(f"{c} worker(s): wall, CPU, proven" for c in counts)
        + " |",
        "|---|---|---|" + "---|" * len(counts),
    ]
    for summary in summaries:
        for item in summary["instances"]:
            cells = []
            for count in counts:
                cell = item["cells"].get(count)
                if cell is None:
                    cells.append("—")
                    continue
                cells.append(
                    f"{fmt_seconds(cell['wall'])}, {fmt_seconds(cell['cpu'])}, "
                    f"{cell['proven']}/{cell['runs']}"
                )
            lines.append(
                f"| {summary['family']} | {item['seed']} | {item['forms']:,} | "
                + " | ".join(cells)
                + " |"
            )
    agreed = all(not s["disagreements"] for s in summaries)
    violations = sum(s["violations"] for s in summaries)
    lines += [
        "",
        "## Answers",
        "",
        "- proven answers of one instance identical for every worker count (`package_id`, "
        f"`trace_id`): {'yes' if agreed else 'NO'}",
        f"- verifier violations over every call: {violations}",
        "",
        "Wall time is the call's `total` timing; CPU is the process's CPU time over all "
        "threads for the call. `wall / 1 worker's` divides each call's wall time by the one "
        "worker call on the same instance and repeat.",
        "",
    ]
    return lines


def _repeats(repeats: int | None) -> str:
    if repeats is not None:
        return f"{repeats} repeat(s)"
    return "repeats " + ", ".join(f"{k} {v}" for k, v in DEFAULT_REPEATS.items())


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.workers",
        description="Worker counts side by side on the benchmark families, interleaved.",
    )
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument(
        "--instances", type=int, default=None, help="per family (default 5, chain-cycle 8)"
    )
    parser.add_argument(
        "--repeats", type=int, default=None, help="per family (default 10 at 1k, else 3)"
    )
    parser.add_argument("--workers", default=",".join(map(str, DEFAULT_WORKERS)))
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: scale-1k and chain-cycle, 3 instances"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    args.families = [x.strip() for x in args.families.split(",") if x.strip()]
    unknown = sorted(set(args.families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {', '.join(unknown)}; choose among {', '.join(FAMILIES)}")
    try:
        args.workers = sorted({int(x) for x in args.workers.split(",") if x.strip()})
    except ValueError:
        parser.error("--workers takes a comma-separated list of integers")
    bad_repeats = args.repeats is not None and args.repeats < 1
    if not args.workers or args.workers[0] < 1 or bad_repeats or args.time_limit <= 0:
        parser.error("--workers, --repeats and --time-limit must be positive")
    if args.quick:
        args.families = [f for f in args.families if f != "scale-10k"] or ["scale-1k"]
        args.instances = args.instances or 3
        args.repeats = 1
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return child_main(argv[1:], measure, "python -m benchmarks.workers --child SPEC OUT")
    from .machine import describe

    args = _parse(argv)
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    raw = run_all(args, log=lambda m: print(m, file=sys.stderr))
    summaries = [summarise(family) for family in raw if "error" not in family]
    machine = describe()
    machine["usable_cores"] = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    )
    data = {
        "machine": machine,
        "settings": {
            "families": args.families,
            "instances": args.instances,
            "repeats": args.repeats,
            "workers": args.workers,
            "time_limit": args.time_limit,
        },
        "load_start": load_start,
        "load_end": os.getloadavg()[0],
        "elapsed_s": time.perf_counter() - started,
        "summaries": summaries,
        "raw": raw,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "workers.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (args.out / "WORKERS.md").write_text("\n".join(markdown(data)), encoding="utf-8")
    found = problems(summaries, raw)
    for line in found:
        print(f"PROBLEM: {line}", file=sys.stderr)
    for summary in summaries:
        print(f"{summary['family']}: " + ("; ".join(summary["verdict"]) or "ok"), file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
