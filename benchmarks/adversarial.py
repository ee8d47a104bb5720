"""The adversarial family: shapes built to make a careless stage quadratic, at a limit.

Run alone: ``python -m benchmarks.adversarial [--sizes 2500,5000,10000,20000]
[--time-limit 1] [--shapes giant-group,chain,...] [--out DIR]``, which writes
ADVERSARIAL.md, adversarial.json and adversarial.png; ``python -m benchmarks`` runs it
too and puts the same section in RESULTS.md.
Input (child process): ``python -m benchmarks.adversarial --child SPEC.json OUT.json``,
one shape at every size. Output: one ``timed_call`` record per size.

The shapes are ``benchmarks.scenarios.adversarial`` (one giant group, a long dependency
chain, dense shared dependencies, all-equal values and costs, the budget exactly at
and one below the mandatory cost). Each shape runs in a fresh process, sizes in
increasing order, after a warm-up on a 200-form instance. The goal (issue 12): at
20,000 forms and a 1 s limit every call returns within 1.2 s. The plot shows two
curves per shape: the whole call, and the stages outside the time-limited search
(parse, gates, closure, trace), whose slope shows whether they stay linear.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .processes import ROOT, child_main, run_child
from .timed import describe, fmt_seconds, judged, timed_call

__all__ = ["DEFAULT_SIZES", "SHAPES", "main", "markdown", "measure", "plot", "run_all"]

DEFAULT_SIZES = (2_500, 5_000, 10_000, 20_000)
DEFAULT_TIME_LIMIT = 1.0
SHAPES = (
    "giant-group",
    "chain",
    "dense-shared",
    "all-equal",
    "at-mandatory",
    "below-mandatory",
)
GOAL_SIZE, GOAL_LIMIT, GOAL_RETURN = 20_000, 1.0, 1.2


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    import assembler
    from assembler.hunt.generate import Shape, generate
    from benchmarks.scenarios.adversarial import Adversary, build

    assembler.assemble(generate(random.Random(987_654_321), Shape.scale(200)))
    kind = Adversary(spec["shape"])
    runs = []
    for size in sorted(spec["sizes"]):
        built = build(kind, size, spec.get("seed", 0))
        run = timed_call(built.request, float(spec["time_limit"]))
        run.update(shape=kind.value, size=size, mandatory_cost=built.mandatory_cost)
        runs.append(run)
    return {"shape": kind.value, "runs": runs}


def run_all(
    shapes: list[str], sizes: list[int], time_limit: float, log: Any = None
) -> list[dict[str, Any]]:
    """Every shape in its own fresh process; the raw records, or an error per shape."""
    out = []
    with tempfile.TemporaryDirectory(prefix="assembler-adversarial-") as tmp:
        for shape in shapes:
            started = time.perf_counter()
            spec = {"shape": shape, "sizes": sizes, "time_limit": time_limit}
            budget = 120 + len(sizes) * (20 * time_limit + 60)
            report = run_child(
                "benchmarks.adversarial", spec, shape, Path(tmp), budget, leading=("--child",)
            )
            out.append({"shape": shape, **report})
            if log is not None:
                status = "error" if "error" in out[-1] else "ok"
                log(f"  adversarial {shape:<16} {status}  ({time.perf_counter() - started:.1f} s)")
    return out


def problems(raw: list[dict[str, Any]]) -> list[str]:
    found = []
    for shape in raw:
        if "error" in shape:
            found.append(f"adversarial {shape['shape']}: {shape['error']}")
        for run in shape.get("runs", []):
            if run.get("violations"):
                found.append(
                    f"adversarial {run['shape']} at {run['size']}: "
                    f"{len(run['violations'])} verifier violation(s)"
                )
    return found


def markdown(raw: list[dict[str, Any]], plot_name: str | None = None) -> list[str]:
    if not raw:
        return []
    header = [
        "shape",
        "forms",
        "returned after (caller's clock; `total` timing)",
        "overrun (returned − limit)",
        "parse / gates / closure / solve / trace",
        "answer",
        "known mandatory cost",
        "CPU",
        "load before",
        "violations",
    ]
    lines = [
        "## Adversarial shapes",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    limit = None
    verdicts = []
    for shape in raw:
        if "error" in shape:
            lines.append(f"| {shape['shape']} | error | " + " | ".join(["—"] * 8) + " |")
            continue
        for run in shape["runs"]:
            limit = run["limit"]
            t = run["timings"]
            stages = " / ".join(
                fmt_seconds(t.get(k)) for k in ("parse", "gates", "closure", "solve", "trace")
            )
            mandatory = run.get("mandatory_cost")
            cells = [
                run["shape"],
                f"{run['size']:,}",
                f"{fmt_seconds(run['wall_s'])}; {fmt_seconds(t.get('total'))}",
                fmt_seconds(run["overrun_s"]),
                stages,
                describe(run),
                "—" if mandatory is None else str(mandatory),
                fmt_seconds(run["cpu_s"]),
                "—" if run["load_before"] is None else f"{run['load_before']:.2f}",
                judged(run),
            ]
            lines.append("| " + " | ".join(cells) + " |")
            if run["size"] == GOAL_SIZE and run["limit"] == GOAL_LIMIT:
                # the caller's clock: it also counts freeing the request as the call returns
                verdicts.append((run["shape"], run["wall_s"]))
    if verdicts:
        slow = [f"{shape} ({fmt_seconds(wall)})" for shape, wall in verdicts if wall >= GOAL_RETURN]
        lines += [
            "",
            f"Goal (issue 12): at {GOAL_SIZE:,} forms and a {GOAL_LIMIT:g} s limit every "
            f"shape returns within {GOAL_RETURN:g} s: "
            + ("met." if not slow else "not met by " + ", ".join(slow) + "."),
        ]
    lines += [
        "",
        f"Each call has a {limit:g} s limit. The budget shapes know their mandatory cost "
        "by construction; a refusal states the interval it proved. *CPU* is the process's "
        "CPU time for the call; under load, wall time exceeds it. Every answer was judged "
        "by the verifier after the clock stopped.",
        "",
    ]
    if plot_name:
        lines += [f"![adversarial shapes: time against size]({plot_name})", ""]
    return lines


def plot(raw: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (whole, outside) = plt.subplots(1, 2, figsize=(12, 5), dpi=110)
    limit = None
    for shape in raw:
        runs = shape.get("runs", [])
        if not runs:
            continue
        xs = [r["size"] for r in runs]
        limit = runs[0]["limit"]
        whole.plot(xs, [r["wall_s"] for r in runs], "o-", label=shape["shape"])
        linear = [
            sum(r["timings"].get(k, 0.0) for k in ("parse", "gates", "closure", "trace"))
            for r in runs
        ]
        outside.plot(xs, linear, "o-", label=shape["shape"])
    if limit is not None:
        whole.axhline(limit, color="tab:red", lw=0.8, ls=":", label=f"limit {limit:g} s")
        whole.axhline(GOAL_RETURN, color="k", lw=0.8, ls="--", label=f"goal {GOAL_RETURN:g} s")
    for ax, title in (
        (whole, "whole call (limit-bound search included)"),
        (outside, "parse + gates + closure + trace"),
    ):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("forms")
        ax.set_ylabel("seconds (wall)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.adversarial",
        description="Time the adversarial request shapes at a limit, one process per shape.",
    )
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--no-plot", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        usage = "python -m benchmarks.adversarial --child SPEC.json OUT.json"
        return child_main(args[1:], measure, usage)
    options = _parse(args)
    sizes = [int(x) for x in options.sizes.split(",") if x.strip()]
    shapes = [x.strip() for x in options.shapes.split(",") if x.strip()]
    unknown = sorted(set(shapes) - set(SHAPES))
    if unknown:
        print(f"unknown shapes: {', '.join(unknown)}", file=sys.stderr)
        return 2
    raw = run_all(shapes, sizes, options.time_limit, log=lambda m: print(m, file=sys.stderr))
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "adversarial.json").write_text(json.dumps(raw, indent=1) + "\n")
    plot_name = None
    if not options.no_plot:
        plot_name = "adversarial.png"
        plot(raw, options.out / plot_name)
    text = "\n".join(["# Adversarial shapes", "", *markdown(raw, plot_name)[2:]]) + "\n"
    (options.out / "ADVERSARIAL.md").write_text(text, encoding="utf-8")
    found = problems(raw)
    for line in found:
        print(f"PROBLEM: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
