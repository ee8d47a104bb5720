"""The time limit at scale: every call returns within its limit plus a small allowance.

Input (child process): ``python -m benchmarks.limits SPEC.json OUT.json``, the spec
naming one size, the limits and the seed. Output: OUT.json with one ``timed_call``
record per limit. ``summarise`` and ``markdown`` turn the records into the "Time
limits" section of RESULTS.md (the runner drives all of it).

Each size runs in a fresh process: the instance (``Shape.scale``, the benchmark
shape) is generated once, the process warms up on a 200-form instance, then each
limit is one call on the same instance, shortest limit first.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from .processes import child_main
from .timed import describe, fmt_seconds, judged, timed_call

__all__ = ["DEFAULT_LIMITS", "DEFAULT_SIZES", "markdown", "measure", "summarise"]

DEFAULT_SIZES = (10_000, 100_000, 300_000)
DEFAULT_LIMITS = (0.05, 1.0, 5.0)
# the goals: past the limit and past the limit plus parsing, in seconds
GOALS = {
    (100_000, 5.0): ("overrun_s", 0.2, "returns within 5.2 s"),
    (100_000, 0.05): ("beyond_parse_s", 0.2, "parse time + < 0.2 s"),
}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    import assembler
    from assembler.hunt.generate import Shape, generate

    assembler.assemble(generate(random.Random(987_654_321), Shape.scale(200)))
    request = generate(random.Random(spec["seed"]), Shape.scale(spec["size"]))
    runs = []
    for limit in sorted(spec["limits"]):
        run = timed_call(request, float(limit), verify=spec.get("verify", True))
        run["size"] = spec["size"]
        runs.append(run)
    return {"size": spec["size"], "seed": spec["seed"], "runs": runs}


def summarise(raw: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for size in raw:
        for run in size.get("runs", []):
            goal = GOALS.get((run["size"], run["limit"]))
            met = None
            if goal is not None:
                key, allowance, _ = goal
                met = run[key] < allowance
            rows.append({**run, "goal": None if goal is None else goal[2], "met": met})
    return rows


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    header = [
        "forms",
        "limit",
        "parse",
        "returned after (caller's clock; `total` timing)",
        "overrun (returned − limit)",
        "beyond parse (returned − max(limit, parse))",
        "goal",
        "met",
        "answer",
        "CPU",
        "load before",
        "violations",
    ]
    lines = [
        "## Time limits",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for run in rows:
        cells = [
            f"{run['size']:,}",
            f"{run['limit']:g} s",
            fmt_seconds(run["timings"].get("parse")),
            f"{fmt_seconds(run['wall_s'])}; {fmt_seconds(run['timings'].get('total'))}",
            fmt_seconds(run["overrun_s"]),
            fmt_seconds(run["beyond_parse_s"]),
            run["goal"] or "—",
            "—" if run["met"] is None else ("yes" if run["met"] else "no"),
            describe(run),
            fmt_seconds(run["cpu_s"]),
            "—" if run["load_before"] is None else f"{run['load_before']:.2f}",
            judged(run),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "One instance per size (`Shape.scale`, seed 0), one call per limit in a fresh "
        "process per size. *Returned after* is the caller's wall clock around `assemble` "
        "(what the overrun columns and the goals read), then the call's own `total` "
        "timing, taken before the call frees the parsed request and its working data. "
        "The limit covers the whole call, parsing included; a request that takes longer "
        "to parse than its limit gets the parse time plus the allowance: the gates, the "
        "check of the deadline and the trace. *CPU* is the process's CPU time for the "
        "call: on a loaded machine wall time exceeds it.",
        "",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return child_main(args, measure, "python -m benchmarks.limits SPEC.json OUT.json")


if __name__ == "__main__":
    sys.exit(main())
