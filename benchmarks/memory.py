"""Peak memory per form: what a request of n forms costs to answer, end to end.

Input: ``python -m benchmarks.memory [--sizes 10000,100000] [--seeds 0] [--out DIR]``.
Output: ``memory.json`` and ``memory.md`` in ``benchmarks/results/`` (or ``--out``):
for each size and seed, the peak resident memory of a fresh process that reads the
request as JSON text, parses it, assembles it (5 s limit) and writes the result JSON
(what ``assembler compile`` does), with its baseline after the imports subtracted;
and the peak of parsing alone. Divided by the forms: bytes per form.

Each measurement runs in its own process (``ru_maxrss`` is a process's high-water
mark), with the request written to a file first, so that generating it is not
counted. The load average is recorded with every measurement: the machine may be
shared, and memory, unlike time, is not skewed by that.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

# One measuring process: argv = [phase, path]; prints the baseline and peak RSS (KiB).
# Both come from /proc/self/status: VmHWM is this process's own high-water mark (the
# rusage maximum is inherited from the parent at fork, which holds the request).
_PROBE = """
import gc, json, sys
def status(field):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return int(line.split()[1])
import assembler
from assembler.model.parse import request_from_json
phase, path = sys.argv[1], sys.argv[2]
# imports and the solvers' libraries are loaded before the baseline is taken
assembler.assemble({"task": {"id": "t", "budget": 5}, "candidates": [{"id": "a", "cost": 1}]})
import highspy
from assembler.exact.cpmodel import cp_helper
helper = cp_helper()
model = helper.CpModelProto()
model.variables.add().domain.extend((0, 1))
helper.SolveWrapper().solve(model)
highspy.Highs()
gc.collect()
base = status("VmRSS")
with open(path, "rb") as handle:
    text = handle.read()
limits = assembler.Limits(max_candidates=10**7, max_request_bytes=2**34)
request = request_from_json(text, limits=limits)
if phase == "end-to-end":
    del text
    result = assembler.assemble(request, time_limit=5.0, limits=limits)
    out = json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
peak = status("VmHWM")
print(json.dumps({"base_kib": base, "peak_kib": peak}))
"""


def measure(size: int, seed: int) -> dict[str, Any]:
    from assembler.hunt.generate import generate
    from assembler.hunt.shapes import Shape

    request = generate(random.Random(seed), Shape.scale(size))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "request.json"
        path.write_text(json.dumps(request), encoding="utf-8")
        row: dict[str, Any] = {"forms": size, "seed": seed, "bytes": path.stat().st_size}
        for phase in ("parse", "end-to-end"):
            done = subprocess.run(
                [sys.executable, "-c", _PROBE, phase, str(path)],
                capture_output=True,
                text=True,
                check=True,
            )
            probe = json.loads(done.stdout.strip().splitlines()[-1])
            grown = (probe["peak_kib"] - probe["base_kib"]) * 1024
            row[phase] = {
                "peak_mib": round(probe["peak_kib"] / 1024, 1),
                "grown_mib": round(grown / 2**20, 1),
                "bytes_per_form": round(grown / size),
            }
        row["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    return row


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Peak memory per form",
        "",
        "`python -m benchmarks.memory`: a fresh process per measurement reads the request",
        "JSON, parses it and (end to end) assembles it with a 5 s limit and writes the",
        "result JSON. Growth = peak RSS minus the RSS after imports and a first solve.",
        "",
        "| forms | JSON bytes | parse: growth (per form) | end to end: growth (per form)"
        " | peak RSS | load |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        parse, whole = row["parse"], row["end-to-end"]
        lines.append(
            f"| {row['forms']:,} (seed {row['seed']}) | {row['bytes'] / 2**20:.1f} MiB"
            f" | {parse['grown_mib']} MiB ({parse['bytes_per_form']:,} B)"
            f" | {whole['grown_mib']} MiB ({whole['bytes_per_form']:,} B)"
            f" | {whole['peak_mib']} MiB | {row['loadavg'][0]} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = [
        measure(int(size), int(seed))
        for size in args.sizes.split(",")
        for seed in args.seeds.split(",")
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "memory.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    (args.out / "memory.md").write_text(report(rows), encoding="utf-8")
    sys.stdout.write(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
