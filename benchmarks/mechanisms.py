"""Two speed mechanisms against their plain alternatives: ``python -m benchmarks.mechanisms``.

Input: ``[--sizes 1000,10000,100000] [--repeats N] [--out DIR]``.
Output: ``mechanisms.json`` and ``mechanisms.md`` in ``benchmarks/results/`` (or
``--out``), CPU times side by side in one run, with the load average:

* **the candidate shell** (``model/parse.py``): building ``Candidate`` objects by
  filling a shell with its slots (what the parser does) against calling the frozen
  constructor, per candidate, beside a whole ``parse_request`` of ``n`` forms for scale;
* **CP-SAT's model** (``exact/cpsat.py``): importing what the backend needs in a fresh
  process (``cp_model_helper``) against ``cp_model`` (which imports pandas), and
  writing the model of an ``n``-form problem as its protocol buffer (``ProtoModel``)
  against building the same model with ``cp_model.CpModel``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import machine
from .solvers import cp_model_of

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = RESULTS.parent.parent


def _cpu(call: Callable[[], object], repeats: int) -> float:
    """The least CPU seconds of ``repeats`` calls."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


def shell_against_constructor(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    from assembler.hunt.generate import Shape, generate
    from assembler.model.parse import _CandidateShell, parse_request
    from assembler.model.types import Candidate, Kind, Role

    def by_shell(n: int) -> list[Candidate]:
        out = []
        for i in range(n):
            shell = _CandidateShell()
            shell.id = shell.identity = f"c{i}"
            shell.cost, shell.form, shell.relevance, shell.required = 1, "full", 0.5, False
            shell.scope, shell.transfer_from, shell.source, shell.version = "s", None, None, None
            shell.channel, shell.role, shell.depends_on, shell.group = None, Role.EVIDENCE, (), None
            shell.lineage, shell.content, shell.labels, shell.kind = (), None, (), Kind.EVIDENCE
            shell.tool_call_id, shell.tool_name, shell.turn, shell.position = None, None, 0, i
            shell.__class__ = Candidate  # what the parser does
            out.append(shell)
        return out

    def by_constructor(n: int) -> list[Candidate]:
        # the same values, positionally: the cheapest way to call the constructor
        middle = (1, "full", 0.5, False, "s", None, None, None, None, Role.EVIDENCE, (), None)
        end = ((), None, (), Kind.EVIDENCE, None, None, 0)
        return [Candidate(f"c{i}", f"c{i}", *middle, *end, i) for i in range(n)]

    rows = []
    for n in sizes:
        request = generate(random.Random(0), Shape.scale(n))
        load = os.getloadavg()[0]
        shell = constructor = parse = float("inf")
        for _ in range(repeats):  # interleaved
            shell = min(shell, _cpu(lambda n=n: by_shell(n), 1))
            constructor = min(constructor, _cpu(lambda n=n: by_constructor(n), 1))
            parse = min(parse, _cpu(lambda r=request: parse_request(r), 1))
        rows.append(
            {
                "forms": n,
                "shell_s": shell,
                "constructor_s": constructor,
                "parse_s": parse,
                "load": [load, os.getloadavg()[0]],
            }
        )
    return rows


_IMPORT = """
import sys, time
started = time.perf_counter(); cpu = time.process_time()
import importlib
importlib.import_module(sys.argv[1])
print(time.perf_counter() - started, time.process_time() - cpu, "pandas" in sys.modules)
"""


def imports(repeats: int) -> list[dict[str, Any]]:
    rows = []
    for module in ("ortools.sat.python.cp_model_helper", "ortools.sat.python.cp_model"):
        samples = []
        for _ in range(repeats):
            done = subprocess.run(
                [sys.executable, "-c", _IMPORT, module],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            wall, cpu, pandas = done.stdout.split()
            samples.append((float(wall), float(cpu), pandas == "True"))
        rows.append(
            {
                "module": module,
                "wall_s": statistics.median(s[0] for s in samples),
                "cpu_s": statistics.median(s[1] for s in samples),
                "loads_pandas": samples[0][2],
            }
        )
    return rows


def model_builds(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    from assembler.deadline import NEVER
    from assembler.exact import cpmodel, cpsat
    from assembler.exact.closure import build_problem
    from assembler.hunt.generate import Shape, generate
    from assembler.model.parse import parse_request
    from assembler.stages.gates import apply_gates

    def with_cp_model(problem: Any) -> Any:
        return cp_model_of(problem)[0]  # the encoding of cpsat.CpSatSearch._encode

    helper = cpmodel.cp_helper()
    rows = []
    for n in sizes:
        parsed = parse_request(generate(random.Random(0), Shape.scale(n)))
        problem = build_problem(parsed, apply_gates(parsed))
        assert str(with_cp_model(problem).proto) == str(
            cpsat.CpSatSearch(helper, problem, NEVER, 1).model.proto
        )
        load = os.getloadavg()[0]
        proto = reference = float("inf")
        for _ in range(repeats):  # interleaved
            proto = min(proto, _cpu(lambda p=problem: cpsat.CpSatSearch(helper, p, NEVER, 1), 1))
            reference = min(reference, _cpu(lambda p=problem: with_cp_model(p), 1))
        rows.append(
            {
                "forms": n,
                "proto_s": proto,
                "cp_model_s": reference,
                "load": [load, os.getloadavg()[0]],
            }
        )
    return rows


def report(data: dict[str, Any]) -> str:
    described = data["machine"]
    lines = [
        "# Speed mechanisms against their plain alternatives",
        "",
        f"`python -m benchmarks.mechanisms` (commit {described.get('commit')},"
        f" {described.get('cores')} cores, Python {described.get('python')}): least CPU"
        " time of interleaved repeats in one process, the load average around each size.",
        "",
        "## The candidate shell (`model/parse.py`)",
        "",
        "| forms | shell | frozen constructor | constructor - shell | whole parse | load |",
        "|---:|---:|---:|---:|---:|---|",
    ]
    for row in data["shell"]:
        extra = row["constructor_s"] - row["shell_s"]
        lines.append(
            f"| {row['forms']:,} | {row['shell_s'] * 1e3:.1f} ms |"
            f" {row['constructor_s'] * 1e3:.1f} ms | +{extra * 1e3:.1f} ms"
            f" ({extra / row['parse_s']:.0%} of the parse) | {row['parse_s'] * 1e3:.1f} ms |"
            f" {row['load'][0]:.2f}-{row['load'][1]:.2f} |"
        )
    lines += [
        "",
        "## CP-SAT without `cp_model` (`exact/cpsat.py`)",
        "",
        "Importing, in a fresh process (medians):",
        "",
        "| module | wall | CPU | loads pandas |",
        "|---|---:|---:|---|",
    ]
    for row in data["imports"]:
        lines.append(
            f"| `{row['module']}` | {row['wall_s'] * 1e3:.0f} ms | {row['cpu_s'] * 1e3:.0f} ms |"
            f" {'yes' if row['loads_pandas'] else 'no'} |"
        )
    lines += [
        "",
        "Writing the model of an n-form problem (the same proto either way):",
        "",
        "| forms | `ProtoModel` | `cp_model.CpModel` | load |",
        "|---:|---:|---:|---|",
    ]
    for row in data["builds"]:
        lines.append(
            f"| {row['forms']:,} | {row['proto_s'] * 1e3:.1f} ms | {row['cp_model_s'] * 1e3:.1f} ms"
            f" | {row['load'][0]:.2f}-{row['load'][1]:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mechanisms", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    data = {
        "machine": machine.describe(),
        "shell": shell_against_constructor(sizes, args.repeats),
        "imports": imports(args.repeats),
        "builds": model_builds([n for n in sizes if n <= 10_000], args.repeats),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "mechanisms.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    text = report(data)
    (args.out / "mechanisms.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
