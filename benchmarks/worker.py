"""One measurement process: one role (ours, or a peer) on the instances of one size.

Input: ``python -m benchmarks.worker SPEC.json OUT.json`` where the spec gives the
role (``ours`` | ``cpsat`` | ``highs``), the size, the instance seeds, the time
limit and the number of extra same-instance runs.
Output: OUT.json with every per-instance measurement and the process's peak
resident memory.

Each role runs in a fresh process so that sizes and roles do not pollute each
other's memory high-water mark or allocator state. Before timing, each process
runs its whole path once on a small warm-up instance, so that imports (OR-Tools,
HiGHS, numpy) and first-call costs are not charged to the first size measured;
the cost of a cold process is reported separately by ``benchmarks.machine``.
"""

from __future__ import annotations

import gc
import os
import random
import resource
import sys
import time
from typing import Any

WARMUP_FORMS = 200
WARMUP_SEED = 987_654_321


def instance(size: int, seed: int) -> dict[str, Any]:
    from assembler.hunt.generate import Shape, generate

    return generate(random.Random(seed), Shape.scale(size))


def rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _result_summary(result: Any) -> dict[str, Any]:
    return {
        "status": result.status.value,
        "optimal": result.optimal,
        "value": result.value,
        "cost": result.cost,
        "bound": result.bound,
        "gap": result.gap,
        "selected": len(result.selected),
        "timings": {stage: seconds for stage, seconds in result.timings},
    }


# ---------------------------------------------------------------------------
# ours


def _ours_once(
    request: dict[str, Any], time_limit: float, *, staged: bool = True, only_e2e: bool = False
) -> dict[str, Any]:
    import assembler
    from assembler.deadline import Deadline
    from assembler.exact.backend import Ask
    from assembler.exact.closure import build_problem
    from assembler.exact.cpsat import CpSat
    from assembler.exact.fixings import reduce_problem
    from assembler.model.parse import parse_request
    from assembler.stages.gates import apply_gates

    run: dict[str, Any] = {}
    # 1. the headline: dict in, Result out, exactly as a caller does it
    run["load_before"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    cpu = time.process_time()
    t = time.perf_counter()
    result = assembler.assemble(request, strategy="exact", time_limit=time_limit)
    run["e2e_wall_s"] = time.perf_counter() - t
    run["e2e_cpu_s"] = time.process_time() - cpu
    run["e2e"] = _result_summary(result)
    run["rss_after_e2e_mb"] = rss_mb()
    if only_e2e:
        return run
    # 2. the independent verifier on that result
    t = time.perf_counter()
    violations = assembler.verify(request, result)
    run["verify_s"] = time.perf_counter() - t
    run["violations"] = [v.to_dict() for v in violations]
    # 3. greedy on the same instance
    t = time.perf_counter()
    greedy = assembler.assemble(request, strategy="greedy")
    run["greedy_wall_s"] = time.perf_counter() - t
    run["greedy"] = _result_summary(greedy)
    if not staged:
        return run
    # 4. stage by stage through the module APIs (reduce and the core solve are not
    #    separately visible in Result.timings)
    stages: dict[str, float] = {}
    t = time.perf_counter()
    parsed = parse_request(request)
    stages["parse"] = time.perf_counter() - t
    t = time.perf_counter()
    gates = apply_gates(parsed)
    stages["gates"] = time.perf_counter() - t
    t = time.perf_counter()
    problem = build_problem(parsed, gates)
    stages["closure"] = time.perf_counter() - t
    t = time.perf_counter()
    reduction = reduce_problem(problem)
    stages["reduce"] = time.perf_counter() - t
    run["forms_eligible"] = problem.size
    if reduction is None:
        run["reduce_stats"] = None
    else:
        run["reduce_stats"] = dict(reduction.stats)
        run["reduce_bound"] = reduction.bound
        t = time.perf_counter()
        outcome = CpSat().solve(reduction.core, Ask(Deadline.after(time_limit), 1))
        stages["core_solve"] = time.perf_counter() - t
        run["core_solve_status"] = outcome.status.value
    run["stages"] = stages
    return run


def _ours(spec: dict[str, Any]) -> dict[str, Any]:
    time_limit = float(spec["time_limit"])
    t = time.perf_counter()
    _ours_once(instance(WARMUP_FORMS, WARMUP_SEED), time_limit, staged=True)
    report: dict[str, Any] = {"warmup_s": time.perf_counter() - t, "baseline_rss_mb": rss_mb()}
    runs = []
    noise: list[float] = []
    for k, seed in enumerate(spec["seeds"]):
        t = time.perf_counter()
        request = instance(spec["size"], seed)
        generated = time.perf_counter() - t
        gc.collect()
        run = _ours_once(request, time_limit, staged=True)
        run["seed"] = seed
        run["generate_s"] = generated
        runs.append(run)
        if k == 0:
            # the same instance again: how much of the spread is measurement noise
            noise.append(run["e2e"]["timings"]["total"])
            for _ in range(int(spec.get("noise", 0))):
                gc.collect()
                again = _ours_once(request, time_limit, only_e2e=True)
                noise.append(again["e2e"]["timings"]["total"])
        del request
    report["runs"] = runs
    report["noise_seed"] = spec["seeds"][0] if spec["seeds"] else None
    report["noise_totals_s"] = noise
    report["peak_rss_mb"] = rss_mb()
    return report


# ---------------------------------------------------------------------------
# peers


def _front(request: dict[str, Any]) -> tuple[Any, dict[str, float], bool]:
    """Parse, gates and closure (the stages every exact path shares)."""
    from assembler.exact.closure import build_problem
    from assembler.exact.refusal import required_refusal
    from assembler.model.parse import parse_request
    from assembler.stages.gates import apply_gates

    t0 = time.perf_counter()
    parsed = parse_request(request)
    t1 = time.perf_counter()
    gates = apply_gates(parsed)
    t2 = time.perf_counter()
    refused = required_refusal(parsed, gates) is not None
    problem = build_problem(parsed, gates)
    t3 = time.perf_counter()
    return problem, {"parse": t1 - t0, "gates": t2 - t1, "closure": t3 - t2}, refused


def _peer(spec: dict[str, Any]) -> dict[str, Any]:
    from benchmarks.solvers import cpsat_alone, highs_milp

    solve = cpsat_alone if spec["role"] == "cpsat" else highs_milp
    time_limit = float(spec["time_limit"])
    t = time.perf_counter()
    problem, _, _ = _front(instance(WARMUP_FORMS, WARMUP_SEED))
    solve(problem, time_limit)
    report: dict[str, Any] = {"warmup_s": time.perf_counter() - t, "baseline_rss_mb": rss_mb()}
    runs = []
    for seed in spec["seeds"]:
        request = instance(spec["size"], seed)
        gc.collect()
        problem, front, refused = _front(request)
        del request
        if refused:
            runs.append({"seed": seed, "refused": True, "front": front})
            continue
        out = solve(problem, time_limit)
        out["seed"] = seed
        out["front"] = front
        out["e2e_s"] = sum(front.values()) + out["total_s"]
        runs.append(out)
        del problem
    report["runs"] = runs
    report["peak_rss_mb"] = rss_mb()
    return report


def _measure(spec: dict[str, Any]) -> dict[str, Any]:
    report = _ours(spec) if spec["role"] == "ours" else _peer(spec)
    report.update(role=spec["role"], size=spec["size"], time_limit=spec["time_limit"])
    return report


def main(argv: list[str] | None = None) -> int:
    from benchmarks.processes import child_main

    args = sys.argv[1:] if argv is None else argv
    return child_main(args, _measure, "python -m benchmarks.worker SPEC.json OUT.json")


if __name__ == "__main__":
    sys.exit(main())
