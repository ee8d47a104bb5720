"""One timed call under a time limit, as the limit and adversarial benchmarks record it.

Input: a request dict and a time limit (and the worker count, and whether to run the
verifier after).
Output: a plain dict: wall and CPU seconds of ``assemble``, the machine's 1-minute load
before the call, its stage timings, the status, value, bound and gap, a refusal's
interval, the overrun past the limit (and past the limit plus parsing), and the
verifier's findings (judged after the clock stopped).

The overrun is what a caller waits beyond what it asked for: ``wall - limit``, the
caller's own clock around the call, which also counts what happens after the call's
``total`` timing is taken (freeing the parsed request and the stages' working data as
the call returns: ~40 ms at 100k forms). The issue's allowance excludes parsing the
request, which no limit can shorten; ``beyond parse`` is ``wall - max(limit, parse)``,
how long the call ran past both.
"""

from __future__ import annotations

import gc
import os
import time
from typing import Any

__all__ = ["describe", "fmt_seconds", "judged", "timed_call"]


def timed_call(
    request: dict[str, Any], time_limit: float, *, workers: int = 1, verify: bool = True
) -> dict[str, Any]:
    import assembler

    # the size limit of a request is the caller's to raise: the 300k sweep does
    candidates = len(request["candidates"])
    limits = assembler.Limits(max_candidates=max(candidates, assembler.Limits().max_candidates))
    gc.collect()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    cpu = time.process_time()
    wall = time.perf_counter()
    result = assembler.assemble(request, time_limit=time_limit, workers=workers, limits=limits)
    wall = time.perf_counter() - wall
    cpu = time.process_time() - cpu
    timings = dict(result.timings)
    parse = timings.get("parse", 0.0)
    run: dict[str, Any] = {
        "limit": time_limit,
        "workers": workers,
        "load_before": load,
        "wall_s": wall,
        "cpu_s": cpu,
        "timings": timings,
        "overrun_s": wall - time_limit,
        "beyond_parse_s": wall - max(time_limit, parse),
        "status": result.status.value,
        "optimal": result.optimal,
        "value": result.value,
        "bound": result.bound,
        "gap": result.gap,
        "forms": len(request["candidates"]),
        "package_id": result.package_id,
        "trace_id": result.trace_id,
    }
    if result.refusal is not None:
        refusal = result.refusal
        run["refusal"] = {
            "code": refusal.code.value,
            "budget": refusal.budget,
            "mandatory_cost": refusal.mandatory_cost,
            "lower": refusal.mandatory_cost_lower,
            "upper": refusal.mandatory_cost_upper,
            "conflict": len(refusal.conflict),
        }
    if verify and candidates <= assembler.Limits().max_candidates:
        run["violations"] = [v.to_dict() for v in assembler.verify(request, result)]
    else:
        # the verifier reads requests within the default size limit only
        run["violations"] = None
    return run


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1000:.0f} ms" if abs(seconds) < 1 else f"{seconds:.2f} s"


def describe(run: dict[str, Any]) -> str:
    """The answer of a ``timed_call`` in a few words: what it proved."""
    status = run["status"]
    if status == "bundle":
        if run["optimal"]:
            return "bundle, proven optimal"
        gap = run["gap"]
        return "bundle, gap " + ("unknown" if gap is None else f"{100 * gap:.3g}%")
    if status == "refused":
        refusal = run.get("refusal", {})
        if refusal.get("code") != "MANDATORY_OVER_BUDGET":
            return f"refused ({refusal.get('code', '?')})"
        if refusal.get("mandatory_cost") is not None:
            return f"refused, mandatory {refusal['mandatory_cost']} (proven)"
        upper = refusal.get("upper")
        return f"refused, mandatory in [{refusal.get('lower')}, {'?' if upper is None else upper}]"
    return "undecided" + ("" if run.get("bound") is None else f" (bound {run['bound']})")


def judged(run: dict[str, Any]) -> str:
    """The verifier's findings on a ``timed_call``, as a table cell."""
    violations = run.get("violations")
    if violations is None:
        return "not judged (over the verifier's size limit)"
    return str(len(violations))
