"""The cyclic garbage collector and a call: ``python -m benchmarks.collector``.

Input: ``[--sizes 1000,10000,100000] [--rounds N] [--calls N] [--policies ...] [--out DIR]``.
Output: ``collector.json`` and ``collector.md`` in ``benchmarks/results/`` (or
``--out``): for each size and policy, the CPU time of ``parse_request(dict)`` and of
``assemble(dict)`` (and of its Python stages: parse, gates, closure and trace, from
``Result.timings``), with the full collections the collector ran during the call.

The policies, each measured in fresh processes (a collector setting is the whole
process's), interleaved round by round so that the machine's load falls on all alike:

* ``paused``: the collector off for the call, back on after it: what every call did
  before 0.2 (``no_cyclic_gc``);
* ``default``: the collector as Python sets it: what a library call meets now;
* ``process``: the policy ``assembler`` commands and ``assembler serve`` set for their
  own process (``assembler.cli.process.collector_policy``);
* ``threshold=T``: gen0 threshold T set after the imports, with a ``gc.freeze()`` of
  what exists then (exploring the policy).

Each process builds its request (``assembler.hunt.generate``, ``Shape.scale(n)``,
seed 0) before anything is timed, answers it once untimed, and then times ``calls``
parses and assembles one after the other, as a process answering calls would (no
collection is forced between them). The load average is recorded before and after
every process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from . import machine

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent
PYTHON_STAGES = ("parse", "gates", "closure", "trace")
DEFAULT_POLICIES = ("paused", "default", "process")

# One measuring process: argv = [size, policy, calls, time_limit]; prints one JSON line.
_PROBE = """
import gc, json, random, sys, time
size, policy, calls, limit = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
if policy == "process":
    # where the command's entry point sets it: before the command's imports
    from assembler.cli.process import collector_policy
    collector_policy()
import assembler
from assembler.model.parse import parse_request
from assembler.hunt.generate import Shape, generate
request = generate(random.Random(0), Shape.scale(size))
assembler.assemble(request, time_limit=limit)  # imports and solvers loaded, untimed
if policy.startswith("threshold="):
    gc.freeze()
    gc.set_threshold(int(policy.split("=")[1]), 10, 10)
full = [0, 0.0]
began = [0.0]
def note(phase, info):
    if info["generation"] != 2:
        return
    if phase == "start":
        began[0] = time.process_time()
    else:
        full[0] += 1
        full[1] += time.process_time() - began[0]
gc.callbacks.append(note)
def timed(call):
    full[0], full[1] = 0, 0.0
    if policy == "paused":
        gc.disable()
    started = time.process_time()
    try:
        out = call()
    finally:
        spent = time.process_time() - started
        if policy == "paused":
            gc.enable()
    return spent, out, full[0], full[1]
rows = []
for _ in range(calls):
    parse_s, _, parse_full, parse_full_s = timed(lambda: parse_request(request))
    total_s, result, full_n, full_s = timed(lambda: assembler.assemble(request, time_limit=limit))
    stages = dict(result.timings)
    rows.append({
        "parse_s": parse_s, "parse_full_collections": parse_full, "parse_full_s": parse_full_s,
        "assemble_s": total_s, "full_collections": full_n, "full_s": full_s,
        "python_stages_s": sum(stages.get(s, 0.0) for s in STAGES),
        "optimal": result.optimal, "status": result.status.value,
    })
print(json.dumps(rows))
""".replace("STAGES", repr(PYTHON_STAGES))


def _process(size: int, policy: str, calls: int, time_limit: float) -> dict[str, Any]:
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(size), policy, str(calls), str(time_limit)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{policy} at {size}: {done.stderr.strip()[-2000:]}")
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    return {"load_before": load, "load_after": os.getloadavg()[0], "calls": rows}


def measure(
    sizes: list[int], policies: list[str], rounds: int, calls: int, time_limit: float
) -> list[dict[str, Any]]:
    out = []
    for size in sizes:
        runs: dict[str, list[dict[str, Any]]] = {policy: [] for policy in policies}
        for index in range(rounds):
            # interleaved, the order turned each round
            order = policies if index % 2 == 0 else list(reversed(policies))
            for policy in order:
                runs[policy].append(_process(size, policy, calls, time_limit))
                print(f"  {size} forms, {policy}: round {index + 1}", file=sys.stderr)
        for policy in policies:
            calls_of = [row for run in runs[policy] for row in run["calls"]]
            loads = [run[key] for run in runs[policy] for key in ("load_before", "load_after")]
            out.append(
                {
                    "size": size,
                    "policy": policy,
                    "calls": len(calls_of),
                    **{
                        key: statistics.median(row[key] for row in calls_of)
                        for key in (
                            "parse_s",
                            "parse_full_collections",
                            "assemble_s",
                            "python_stages_s",
                            "full_collections",
                            "full_s",
                        )
                    },
                    "optimal": all(row["optimal"] for row in calls_of),
                    "statuses": sorted({row["status"] for row in calls_of}),
                    "load": [min(loads), max(loads)],
                    "runs": runs[policy],
                }
            )
    return out


def report(rows: list[dict[str, Any]], described: dict[str, Any]) -> str:
    lines = [
        "# The cyclic collector and a call",
        "",
        "`python -m benchmarks.collector`: CPU medians of fresh processes, interleaved"
        f" (commit {described.get('commit')}, {described.get('cores')} cores,"
        f" Python {described.get('python')}). *Python stages*: parse + gates + closure +"
        " trace of the `assemble()` call (`Result.timings`, wall); *full*: the collector's"
        " generation-2 collections during the call. Ratios are against `paused` at the"
        " same size.",
        "",
        "A full collection walks every object the collector tracks, and comes each time a"
        " quarter more have been promoted into its oldest generation since the last one: a"
        " large call, which builds hundreds of thousands of objects that live as long as it"
        " does, meets several. At 100k forms the call is cut by its time limit, so its CPU"
        " varies with how far the search got; the parse and the full collections compare.",
        "",
        "| forms | policy | parse | (full) | assemble | Python stages | full collections | load |",
        "|---:|---|---:|---:|---:|---:|---:|---|",
    ]
    base = {row["size"]: row for row in rows if row["policy"] == "paused"}
    for row in rows:
        ref = base.get(row["size"])

        def ratio(key: str, row: dict[str, Any] = row, ref: dict[str, Any] | None = ref) -> str:
            if ref is None or row is ref or not ref[key]:
                return ""
            return f" ({row[key] / ref[key]:.2f}x)"

        lines.append(
            f"| {row['size']:,} | {row['policy']} | {row['parse_s'] * 1e3:.1f} ms"
            f"{ratio('parse_s')} | {row['parse_full_collections']:g} |"
            f" {row['assemble_s'] * 1e3:.0f} ms{ratio('assemble_s')} |"
            f" {row['python_stages_s'] * 1e3:.1f} ms{ratio('python_stages_s')} |"
            f" {row['full_collections']:g} ({row['full_s'] * 1e3:.0f} ms) |"
            f" {row['load'][0]:.2f}-{row['load'][1]:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.collector", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--policies", default=",".join(DEFAULT_POLICIES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    policies = [name for name in args.policies.split(",") if name]
    rows = measure(sizes, policies, args.rounds, args.calls, args.time_limit)
    described = machine.describe()
    args.out.mkdir(parents=True, exist_ok=True)
    data = {"machine": described, "rows": rows}
    (args.out / "collector.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    text = report(rows, described)
    (args.out / "collector.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
