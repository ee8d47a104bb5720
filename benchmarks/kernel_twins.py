"""Each compiled kernel beside its pure-Python twin, on the same inputs, in one process.

Run ``python -m benchmarks.kernel_twins`` (the kernels built: ``python setup.py
build_ext --inplace``). Output: a table on stdout and ``benchmarks/results/kernels.json``;
exit 1 when a kernel and its twin answer differently (or a kernel is not compiled).

Inputs: the agent transcripts of ``benchmarks.agentcases`` (40, 120 and 200 rounds,
rendered requests) and ``Shape.scale`` requests (1,000 and 100,000 forms). Per kernel
and input, the CPU time (``process_time``) of its call, median of interleaved calls
(compiled, twin, compiled, ...), and whether the two answers are equal:

* ``mckp``: ``solve_coupled`` on the gated problem's columns (the exact decision; the
  transcripts: the generated requests carry no content, so a rendering gates them all);
* ``decode``: ``decoded`` on msgspec's Structs of the request's candidates;
* ``gates``: ``first_pass`` on the parsed request's candidates.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def _cases(quick: bool) -> list[tuple[str, dict[str, Any]]]:
    from assembler.hunt.generate import Shape, generate

    from .agentcases import transcript

    cases = [(f"transcript-{n}", transcript(n).request()) for n in (40, 120, 200)]
    sizes = (1000,) if quick else (1000, 100_000)
    cases += [(f"forms-{n}", generate(random.Random(1), Shape.scale(n))) for n in sizes]
    return cases


def _calls(request: dict[str, Any]) -> dict[str, tuple[str, Callable[[Any], Any]]]:
    """Each kernel's call on this request: its twin's module and the call given it."""
    import msgspec

    from assembler.exact import mckp
    from assembler.exact.closure import build_problem
    from assembler.exact.knapsack import OPTION_LIMIT
    from assembler.model import decode
    from assembler.model.parse import parse_request
    from assembler.model.types import Candidate, Kind, Operation, Role
    from assembler.stages.gates import apply_gates

    parsed = parse_request(request)
    problem = build_problem(parsed, apply_gates(parsed, require_content=True))
    forms = msgspec.convert(request["candidates"], decode._form_type(256))
    task = parsed.task
    calls: dict[str, tuple[str, Callable[[Any], Any]]] = {
        "decode": (
            "assembler.model.decode_twin",
            lambda m: m.decoded(
                forms, Candidate, decode._KIND_ROLE, decode._TOOL_KINDS, Kind.TOOL_CALL,
                msgspec.UNSET,
            ),
        ),
        "gates": (
            "assembler.stages.gates_twin",
            lambda m: m.first_pass(
                parsed.candidates, frozenset(task.seal), dict(parsed.sources), task.scope,
                task.operation is Operation.CURRENT, True, Role.INSTRUCTION,
            ),
        ),
    }  # fmt: skip
    if problem.size and not any(problem.needs) and problem.budget is not None:
        columns = mckp._columns(problem)
        budget = problem.budget
        calls["mckp"] = (
            "assembler.exact.mckp_twin",
            lambda m: m.solve_coupled(
                *columns, budget, math.inf, mckp.STATE_LIMIT, OPTION_LIMIT
            ),
        )
    return calls


def _timed(call: Callable[[Any], Any], module: Any, repeats: int) -> list[float]:
    spent = []
    for _ in range(repeats):
        began = time.process_time()
        call(module)
        spent.append(time.process_time() - began)
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel_twins", description=__doc__)
    parser.add_argument("--repeats", type=int, default=15, help="calls per side and input")
    parser.add_argument("--quick", action="store_true", help="no 100,000-form request")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import importlib
    import os

    from assembler import kernels

    from . import machine

    load_before = os.getloadavg()[0]
    rows: list[dict[str, Any]] = []
    failed = False
    for case, request in _cases(args.quick):
        for name, (twin_name, call) in _calls(request).items():
            twin = importlib.import_module(twin_name)
            compiled = kernels.kernel(twin_name)
            if compiled is twin:
                print(f"{twin_name}: not compiled here", file=sys.stderr)
                return 1
            answer = call(twin)
            same = call(compiled) == answer
            if name == "mckp" and answer[0] != 0:
                continue  # handed back (shared resolvers, no fit): the chain answers
            failed |= not same
            repeats = max(3, args.repeats // 5) if case == "forms-100000" else args.repeats
            fast, slow = [], []
            for _ in range(3):
                fast += _timed(call, compiled, repeats)
                slow += _timed(call, twin, repeats)
            kernel_ms, twin_ms = statistics.median(fast) * 1e3, statistics.median(slow) * 1e3
            rows.append({"kernel": name, "case": case, "compiled_ms": round(kernel_ms, 4),
                         "twin_ms": round(twin_ms, 4), "speedup": round(twin_ms / kernel_ms, 1),
                         "identical": same})  # fmt: skip
    load_after = os.getloadavg()[0]
    where = machine.describe()
    lines = [
        f"Load average {load_before:.2f} before, {load_after:.2f} after; CPU medians of "
        f"interleaved calls in one process; {where['cpu']}, {where['cores']} cores, commit "
        f"{where['commit']}.",
        "",
        "| kernel | input | compiled | twin | twin / compiled | answers |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['kernel']} | {row['case']} | {row['compiled_ms']:.3f} ms | "
            f"{row['twin_ms']:.3f} ms | {row['speedup']:.1f}x | "
            f"{'identical' if row['identical'] else 'DIFFER'} |"
        )
    print("\n".join(lines))
    if not args.no_write:
        record = {"machine": machine.describe(), "load": [load_before, load_after], "rows": rows}
        (RESULTS / "kernels.json").write_text(json.dumps(record, indent=1) + "\n", "utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
