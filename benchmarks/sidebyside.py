"""Not slower than before: ``python -m benchmarks.sidebyside --before REV``.

Input: a git revision to measure beside the working tree (``--before``), repeats.
Output: ``benchmarks/results/sidebyside.json`` and ``SIDEBYSIDE.md`` (median CPU time
per case on each side, their ratio, the machine's load before and after); exit 0.

Both sides run in the same minutes, interleaved (a child process per side and case,
the order alternating between repeats), on the same seeded inputs, through the public
API only (``assemble``, ``Session.apply``), so that the ratio says what a change did
whatever the machine's pace (the load is recorded, CPU time beside wall time):

* fresh calls at 100, 1,000 and 10,000 forms (``Shape.scale``, five seeds each);
* a rendered call at 1,000 forms (``openai-chat``);
* session deltas at ~5,000 forms (the agent loop: a tool call and its result per call);
* re-scoring deltas at ~5,000 forms (a thousand relevances per call; a revision
  without the ``relevance`` delta sends those candidates whole in ``update``).

Each child process may set the command's collector policy (``--collector command``:
the threshold ``assembler`` sets for its own process, ``assembler/cli/process.py``) or
leave Python's default (``--collector default``), the same on both sides.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
CASES = ("fresh-100", "fresh-1000", "fresh-10000", "render-1000", "delta-5000", "rescore-5000")

_CHILD = r"""
import gc, json, random, resource, sys
case, collector = sys.argv[1], sys.argv[2]
if collector == "command":
    gc.set_threshold(100_000, 50, 100)
import assembler
from benchmarks.scenarios.agentloop import agent_loop
from assembler.hunt.generate import generate
from assembler.hunt.shapes import Shape

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

rows = []
kind, size = case.split("-")
size = int(size)
if kind in ("fresh", "render"):
    requests = [generate(random.Random(s), Shape.scale(size)) for s in range(5)]
    if kind == "render":
        for r in requests:
            for c in r["candidates"]:
                c.setdefault("content", "content of " + c["id"])
    options = {"render": "openai-chat"} if kind == "render" else {}
    assembler.assemble(requests[0], time_limit=60, **options)  # the imports, once
    for r in requests:
        start = cpu()
        assembler.assemble(r, time_limit=60, **options)
        rows.append(cpu() - start)
else:
    loop = agent_loop(0, size, 12)
    session = assembler.Session(loop.first, time_limit=60)
    session.answer()
    rng = random.Random(0)
    ids = [c["id"] for c in loop.first["candidates"]]
    current = {c["id"]: c for c in loop.first["candidates"]}
    from assembler.session import DELTA_KEYS
    for delta in loop.deltas:
        if kind == "rescore":
            scores = {i: round(rng.random(), 3) for i in rng.sample(ids, 1000)}
            current.update((i, {**current[i], "relevance": r}) for i, r in scores.items())
            # a revision without re-scoring deltas sends the candidates whole
            delta = ({"relevance": scores} if "relevance" in DELTA_KEYS
                     else {"update": [current[i] for i in scores]})
        start = cpu()
        session.apply(delta)
        rows.append(cpu() - start)
print(json.dumps(rows))
"""


def _measure(path: Path, case: str, collector: str) -> list[float]:
    from benchmarks.revisions import run_side

    rows: list[float] = run_side(path, ["-c", _CHILD, case, collector], case)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sidebyside", description=__doc__)
    parser.add_argument("--before", required=True, help="the git revision to measure beside")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    parser.add_argument("--collector", choices=("command", "default"), default="command")
    parser.add_argument("--cases", default=",".join(CASES), help="a comma-separated subset")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    load_before = os.getloadavg()
    measured: dict[str, dict[str, list[float]]] = {c: {"before": [], "after": []} for c in cases}
    from benchmarks.revisions import checked_out

    with checked_out(args.before, None) as (before, after):
        sides = [("before", before), ("after", after)]
        for repeat in range(args.repeats):
            for case in cases:
                for side, path in sides if repeat % 2 == 0 else sides[::-1]:
                    measured[case][side] += _measure(path, case, args.collector)
                    print(f"round {repeat + 1}: {case} {side}", file=sys.stderr)
    rows = []
    for case in cases:
        b = statistics.median(measured[case]["before"]) * 1e3
        a = statistics.median(measured[case]["after"]) * 1e3
        rows.append({"case": case, "before_ms": round(b, 2), "after_ms": round(a, 2),
                     "ratio": round(a / b, 3)})  # fmt: skip
    data = {
        "before": args.before,
        "collector": args.collector,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
        "samples": measured,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sidebyside.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    lines = [
        "# Side by side",
        "",
        f"Before: `{args.before}`; after: the working tree. Median CPU time per call, "
        f"{args.repeats} interleaved rounds, collector policy `{args.collector}`; load "
        f"{data['load_before']} before, {data['load_after']} after.",
        "",
        "| case | before ms | after ms | after / before |",
        "|---|---|---|---|",
        *(f"| {r['case']} | {r['before_ms']} | {r['after_ms']} | {r['ratio']} |" for r in rows),
    ]
    (args.out / "SIDEBYSIDE.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
