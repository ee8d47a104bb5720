"""The independent judges beside the call they judge, on every adversarial shape.

Run: ``python -m benchmarks.judges [--forms 20000] [--rounds 3] [--time-limit 1]
[--out DIR]``. Output: ``judges.json`` and ``JUDGES.md`` in ``DIR``
(``benchmarks/results``), the table on stderr; exit 0, or 1 when a goal is missed or
a judge finds a violation.

For each shape of ``benchmarks.scenarios.adversarial`` at ``--forms`` forms (every
candidate given a short content, and the task a query, so that the same request can
be rendered): ``assemble()`` under the time limit, ``verify()`` of its result, and
``verify_rendering()`` of the same request assembled with an Anthropic body, run in
turns, ``--rounds`` times, in one process (the least wall time of each is kept, and
the load average is recorded with it). Goal (issue 25): ``verify()`` under 2 s and
under 2x ``assemble()``'s time on every shape at 20,000 forms.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
GOAL_SECONDS = 2.0
GOAL_RATIO = 2.0


def _timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float, float]:
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    out = call(*args, **kwargs)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def measure(forms: int, rounds: int, time_limit: float) -> list[dict[str, Any]]:
    import assembler
    from benchmarks.scenarios.adversarial import Adversary, build, with_content

    assembler.assemble(build(Adversary.CHAIN, 200).request)  # the solver loaded
    rows = []
    for kind in Adversary:
        request = with_content(build(kind, forms).request)
        best: dict[str, list[float]] = {"assemble": [], "verify": [], "verify_rendering": []}
        cpu: dict[str, list[float]] = {"assemble": [], "verify": [], "verify_rendering": []}
        found: list[Any] = []
        loads = []
        for _ in range(rounds):
            loads.append(os.getloadavg()[0])
            result, wall, used = _timed(assembler.assemble, request, time_limit=time_limit)
            best["assemble"].append(wall)
            cpu["assemble"].append(used)
            violations, wall, used = _timed(assembler.verify, request, result)
            best["verify"].append(wall)
            cpu["verify"].append(used)
            found += violations
            rendered = assembler.assemble(request, time_limit=time_limit,
                                          render="anthropic-messages")  # fmt: skip
            if rendered.rendering is not None:
                faithful, wall, used = _timed(
                    assembler.verify_rendering, request, rendered, rendered.rendering
                )
                best["verify_rendering"].append(wall)
                cpu["verify_rendering"].append(used)
                found += faithful
        least = {name: min(times) if times else None for name, times in best.items()}
        rows.append(
            {
                "shape": kind.value,
                "forms": forms,
                "status": result.status.value,
                "wall_s": least,
                "cpu_s": {name: min(t) if t else None for name, t in cpu.items()},
                "verify_over_assemble": least["verify"] / least["assemble"],
                "violations": [str(v) for v in found][:5],
                "load": [round(x, 2) for x in loads],
            }
        )
        print(f"  {kind.value:<20} assemble {least['assemble']:.3f} s  verify"
              f" {least['verify']:.3f} s", file=sys.stderr, flush=True)  # fmt: skip
    return rows


def goals(rows: list[dict[str, Any]]) -> dict[str, bool]:
    return {
        f"verify() < {GOAL_SECONDS:g} s on every shape": all(
            r["wall_s"]["verify"] < GOAL_SECONDS for r in rows
        ),
        f"verify() < {GOAL_RATIO:g}x assemble() on every shape": all(
            r["verify_over_assemble"] < GOAL_RATIO for r in rows
        ),
        "no violation found": all(not r["violations"] for r in rows),
    }


def markdown(rows: list[dict[str, Any]], met: dict[str, bool], machine: dict[str, Any],
             time_limit: float) -> str:  # fmt: skip
    loads = [x for r in rows for x in r["load"]]
    lines = [
        f"## The judges beside assemble() ({machine.get('date')}, commit {machine.get('commit')})",
        "",
        f"`python -m benchmarks.judges`: every adversarial shape at {rows[0]['forms']:,} forms,"
        f" assemble() under a {time_limit:g} s limit; the least wall time of"
        f" {len(rows[0]['load'])} rounds run in turns; load average"
        f" {min(loads):.2f}-{max(loads):.2f} on {machine.get('cores')} cores.",
        "",
        "| shape | status | assemble() | verify() | verify / assemble | verify_rendering() |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        wall = r["wall_s"]
        rendering = "-" if wall["verify_rendering"] is None else f"{wall['verify_rendering']:.3f} s"
        lines.append(
            f"| {r['shape']} | {r['status']} | {wall['assemble']:.3f} s | {wall['verify']:.3f} s"
            f" | {r['verify_over_assemble']:.2f}x | {rendering} |"
        )
    lines += ["", "| goal | met |", "|---|---|"]
    lines += [f"| {goal} | {'yes' if ok else 'NO'} |" for goal, ok in met.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.judges")
    parser.add_argument("--forms", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from . import machine

    rows = measure(args.forms, args.rounds, args.time_limit)
    met = goals(rows)
    described = machine.describe()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "judges.json").write_text(
        json.dumps({"machine": described, "rows": rows, "goals": met}, indent=1) + "\n"
    )
    text = markdown(rows, met, described, args.time_limit)
    (args.out / "JUDGES.md").write_text("# Judges\n\n" + text)
    print(text, file=sys.stderr)
    return 0 if all(met.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
