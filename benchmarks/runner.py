"""The benchmark runner: ``python -m benchmarks`` (or ``assembler bench``).

Input: command-line options (``--help``).
Output: ``RESULTS.md`` (tables + machine), ``results.json`` (every measurement)
and ``scaling.png`` (log-log time against size) in ``--out``; a short summary on
stderr. Exit status 0, or 1 when a measurement process failed, a result broke its
request (the independent verifier found a violation), or a peer proved a
different optimum than ours.

Method (also written into RESULTS.md):
* Instances: ``assembler.hunt.generate.generate(random.Random(s), Shape.scale(n))``
  with ``s = seed * 1_000_000 + r`` for repeat ``r``: every repeat is a different
  instance, so the spread is over instances; the same seeds are used for every
  size and every role, so ours and the peers see exactly the same requests.
* Noise: the first instance of each size is re-run ``--noise`` extra times
  (end to end only), to separate measurement noise from instance spread.
* Processes: for each size, ours and each peer run in a fresh process (so peak
  memory is per size and role); each process warms up on a 200-form instance
  first; runs are sequential so that no two measurements share the 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import adversarial, limits, machine, report
from .processes import run_child
from .report import GOALS

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (100, 1000, 10_000, 100_000)
QUICK_SIZES = (100, 1000)
DEFAULT_TIME_LIMIT = 5.0
SPEEDUP_GOAL = 10.0
SPEEDUP_GOAL_SIZE = 10_000
PEERS = ("cpsat", "highs")


def default_repeats(size: int) -> int:
    return 5 if size < 50_000 else 3


def default_noise(size: int) -> int:
    return 3 if size < 50_000 else 1


def instance_seeds(seed: int, repeats: int) -> list[int]:
    return [seed * 1_000_000 + r for r in range(repeats)]


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from error
    if not sizes or any(n < 1 for n in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive integers")
    return sorted(set(sizes))


def _limits(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {text!r}") from error
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError("time limits must be positive")
    return sorted(set(values))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time the exact pipeline stage by stage against CP-SAT alone and "
        "HiGHS MILP on seeded instances; write RESULTS.md, results.json, scaling.png.",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        help="comma-separated form counts (default 100,1000,10000,100000)",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="instances per size (default 5, 3 from 50,000 forms)",
    )
    parser.add_argument(
        "--noise",
        type=int,
        default=None,
        help="extra runs of the first instance (default 3, 1 from 50,000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed (default 0)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        help="seconds for the exact path and for each peer (default 5)",
    )
    parser.add_argument("--no-peers", action="store_true", help="skip CP-SAT alone and HiGHS")
    parser.add_argument(
        "--limit-sizes",
        type=_sizes,
        default=None,
        help="form counts of the time-limit sweep (default 10000,100000,300000)",
    )
    parser.add_argument(
        "--limits",
        type=_limits,
        default=None,
        help="time limits of the sweep, seconds (default 0.05,1,5)",
    )
    parser.add_argument(
        "--adversarial-sizes",
        type=_sizes,
        default=None,
        help="form counts of the adversarial shapes (default 2500,5000,10000,20000)",
    )
    parser.add_argument(
        "--adversarial-limit",
        type=float,
        default=adversarial.DEFAULT_TIME_LIMIT,
        help="time limit of the adversarial shapes, seconds (default 1)",
    )
    parser.add_argument(
        "--adversarial-shapes",
        default=",".join(adversarial.SHAPES),
        help="comma-separated adversarial shapes (default all)",
    )
    parser.add_argument("--no-limits", action="store_true", help="skip the time-limit sweep")
    parser.add_argument("--no-adversarial", action="store_true", help="skip the adversarial shapes")
    parser.add_argument(
        "--quick", action="store_true", help="smoke test: sizes 100,1000, 2 repeats, 1 noise run"
    )
    parser.add_argument(
        "--import-repeats",
        type=int,
        default=5,
        help="fresh interpreters for the import time (default 5)",
    )
    parser.add_argument("--no-plot", action="store_true", help="do not draw scaling.png")
    parser.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="RESULTS_JSON",
        help="measure nothing: rewrite RESULTS.md and scaling.png from a results.json",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "benchmarks" / "results",
        help="output directory (default benchmarks/results)",
    )
    args = parser.parse_args(argv)
    if args.time_limit <= 0:
        parser.error("--time-limit must be positive")
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.noise is not None and args.noise < 0:
        parser.error("--noise must be at least 0")
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    if args.limit_sizes is None:
        args.limit_sizes = [1000] if args.quick else list(limits.DEFAULT_SIZES)
    if args.limits is None:
        args.limits = [0.05, 1.0] if args.quick else list(limits.DEFAULT_LIMITS)
    shapes = [x.strip() for x in args.adversarial_shapes.split(",") if x.strip()]
    if not shapes or set(shapes) - set(adversarial.SHAPES):
        parser.error(f"--adversarial-shapes: choose among {', '.join(adversarial.SHAPES)}")
    args.adversarial_shapes = shapes
    if args.adversarial_sizes is None:
        args.adversarial_sizes = [500, 1000] if args.quick else list(adversarial.DEFAULT_SIZES)
    if args.quick:
        args.repeats = 2 if args.repeats is None else args.repeats
        args.noise = 1 if args.noise is None else args.noise
    return args


# ---------------------------------------------------------------------------
# measurement processes


def _child(
    spec: dict[str, Any], workdir: Path, module: str = "benchmarks.worker"
) -> dict[str, Any]:
    """Run one role on one size in a fresh interpreter; its report, or an error."""
    runs = len(spec.get("seeds", ())) + len(spec.get("limits", ())) + int(spec.get("noise", 0))
    budget = 300 + runs * (12 * float(spec.get("time_limit", 5.0)) + 120)
    return run_child(module, spec, f"{spec['role']}-{spec['size']}", workdir, budget)


# ---------------------------------------------------------------------------
# aggregation


def spread(samples: list[float]) -> dict[str, Any] | None:
    if not samples:
        return None
    ordered = sorted(samples)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "q1": q1,
        "q3": q3,
        "n": len(ordered),
    }


def _median(samples: list[float]) -> float | None:
    return statistics.median(samples) if samples else None


def summarise_ours(raw: dict[str, Any]) -> dict[str, Any]:
    runs = raw["runs"]
    bundles = [r for r in runs if r["e2e"]["status"] == "bundle"]
    stages: dict[str, Any] = {}
    for stage in ("parse", "gates", "closure", "solve", "trace", "total"):
        stages[stage] = spread(
            [r["e2e"]["timings"][stage] for r in runs if stage in r["e2e"]["timings"]]
        )
    for stage in ("reduce", "core_solve"):
        stages[stage] = spread([r["stages"][stage] for r in runs if stage in r.get("stages", {})])
    stages["verify"] = spread([r["verify_s"] for r in runs])
    losses = []
    absolute = []
    for r in bundles:
        greedy = r["greedy"]
        if greedy["status"] == "bundle" and r["e2e"]["value"] > 0:
            absolute.append(r["e2e"]["value"] - greedy["value"])
            losses.append(absolute[-1] / r["e2e"]["value"])
    cores = [r["reduce_stats"]["core"] for r in runs if r.get("reduce_stats")]
    reduce_keys = sorted({k for r in runs if r.get("reduce_stats") for k in r["reduce_stats"]})
    limit = float(raw.get("time_limit", 0.0))
    # the caller's clock around the call, as the limit benchmarks read it (timed.py)
    returned = [r["e2e_wall_s"] for r in runs if "e2e_wall_s" in r]
    return {
        "total": stages["total"],
        # how far past its limit the slowest call returned (negative: all were early)
        "overrun": max((t - limit for t in returned), default=None),
        "cpu": spread([r["e2e_cpu_s"] for r in runs if "e2e_cpu_s" in r]),
        "loads": [r["load_before"] for r in runs if r.get("load_before") is not None],
        "stages": stages,
        "statuses": [r["e2e"]["status"] for r in runs],
        "optimal": sum(1 for r in runs if r["e2e"]["optimal"]),
        "runs": len(runs),
        "max_gap": max((r["e2e"]["gap"] or 0.0 for r in bundles), default=None),
        "violations": sum(len(r["violations"]) for r in runs),
        "greedy_total": spread([r["greedy"]["timings"]["total"] for r in runs]),
        "greedy_loss": spread(losses),
        "greedy_loss_abs": spread([float(a) for a in absolute]),
        "greedy_vs_proven": all(r["e2e"]["optimal"] for r in bundles),
        "core": spread([float(c) for c in cores]),
        "reduce_stats": {
            k: _median([float(r["reduce_stats"].get(k, 0)) for r in runs if r.get("reduce_stats")])
            for k in reduce_keys
        },
        "eligible": _median([float(r["forms_eligible"]) for r in runs if "forms_eligible" in r]),
        "noise": spread(raw.get("noise_totals_s", [])),
        "rss_one_solve_mb": runs[0]["rss_after_e2e_mb"] if runs else None,
        "rss_peak_mb": raw.get("peak_rss_mb"),
        "rss_baseline_mb": raw.get("baseline_rss_mb"),
        "generate": spread([r["generate_s"] for r in runs]),
    }


def _consistency(peer: dict[str, Any], mine: dict[str, Any]) -> str | None:
    """Why two answers to one instance cannot both be right, or None.

    The optimum V* lies in [value, bound] of each solver, so each value must stay
    within the other's bound, and two proven optima must agree on (value, cost).
    """
    ours = mine["e2e"]
    if ours["status"] != "bundle" or peer.get("value") is None:
        return None
    if ours["optimal"] and peer["status"] == "optimal":
        if (peer["value"], peer["cost"]) != (ours["value"], ours["cost"]):
            return "different proven optima (value, cost)"
        return None
    ours_bound = ours["value"] if ours["optimal"] else ours["bound"]
    if ours_bound is not None and peer["value"] > ours_bound:
        return "peer's value exceeds our proven bound"
    if peer.get("bound") is not None and ours["value"] > peer["bound"]:
        return "our value exceeds the peer's proven bound"
    return None


def summarise_peer(
    raw: dict[str, Any], ours_raw: dict[str, Any] | None, time_limit: float
) -> dict[str, Any]:
    runs = [r for r in raw["runs"] if not r.get("refused")]
    ours_by_seed = {r["seed"]: r for r in (ours_raw or {}).get("runs", [])}
    disagreements = []
    compared = 0
    for r in runs:
        mine = ours_by_seed.get(r["seed"])
        if mine is None:
            continue
        if mine["e2e"]["optimal"] and r["status"] == "optimal":
            compared += 1
        why = _consistency(r, mine)
        if why is not None:
            disagreements.append(
                {
                    "seed": r["seed"],
                    "why": why,
                    "peer": {k: r.get(k) for k in ("status", "value", "cost", "bound")},
                    "ours": {k: mine["e2e"][k] for k in ("optimal", "value", "cost", "bound")},
                }
            )
    stopped = [r for r in runs if r["status"] != "optimal"]
    gaps = [r["gap"] for r in stopped if r.get("gap") is not None]
    return {
        "e2e": spread([r["e2e_s"] for r in runs]),
        "solve": spread([r["total_s"] for r in runs]),
        "build": spread([r["build_s"] for r in runs]),
        "statuses": [r["status"] for r in runs],
        "optimal": sum(1 for r in runs if r["status"] == "optimal"),
        "runs": len(runs),
        "unproven": len(stopped),
        "max_gap": max(gaps) if gaps else None,
        # stopped with the value proven (gap 0): only cost or tie-break left open
        "value_proven": sum(1 for g in gaps if g == 0),
        "no_solution": sum(1 for r in stopped if r.get("value") is None),
        "overrun_s": max((r["total_s"] - time_limit for r in runs), default=0.0),
        "compared": compared,
        "disagreements": disagreements,
        "rss_peak_mb": raw.get("peak_rss_mb"),
    }


def _ratio(peer: dict[str, Any] | None, ours: dict[str, Any] | None) -> float | None:
    if not peer or not ours or not ours.get("median"):
        return None
    ratio: float = peer["median"] / ours["median"]
    return ratio


def summarise_size(size: int, raw: dict[str, Any], time_limit: float) -> dict[str, Any]:
    out: dict[str, Any] = {"size": size, "goal_s": GOALS.get(size), "errors": []}
    ours_raw = raw.get("ours")
    if ours_raw is None or "error" in ours_raw:
        out["errors"].append((ours_raw or {}).get("error", "ours did not run"))
        ours_raw = None
    else:
        out["ours"] = summarise_ours(ours_raw)
    out["peers"] = {}
    for peer in PEERS:
        peer_raw = raw.get(peer)
        if peer_raw is None:
            continue
        if "error" in peer_raw:
            out["errors"].append(peer_raw["error"])
            continue
        summary = summarise_peer(peer_raw, ours_raw, time_limit)
        if "ours" in out:
            summary["speedup_e2e"] = _ratio(summary["e2e"], out["ours"]["total"])
            summary["speedup_solve"] = _ratio(summary["solve"], out["ours"]["stages"]["solve"])
            # a peer that hit the limit was stopped early: the ratio is a lower bound
            summary["speedup_is_lower_bound"] = summary["unproven"] > 0
        out["peers"][peer] = summary
    out["goal_met"] = goal_met(size, out.get("ours"))
    return out


def goal_met(size: int, ours: dict[str, Any] | None) -> str | None:
    goal = GOALS.get(size)
    if goal is None or ours is None or ours["total"] is None:
        return None
    fast = ours["total"]["median"] < goal
    if fast and ours["optimal"] == ours["runs"]:
        return "yes"
    if fast and size == max(GOALS) and all(status == "bundle" for status in ours["statuses"]):
        return f"yes (bundle, gap <= {100 * (ours['max_gap'] or 0.0):.3g}%)"
    return "no"


# ---------------------------------------------------------------------------
# main


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    settings = {
        "sizes": args.sizes,
        "limit_sizes": [] if args.no_limits else args.limit_sizes,
        "limits": args.limits,
        "adversarial_sizes": [] if args.no_adversarial else args.adversarial_sizes,
        "adversarial_limit": args.adversarial_limit,
        "repeats": {str(n): args.repeats or default_repeats(n) for n in args.sizes},
        "noise": {
            str(n): args.noise if args.noise is not None else default_noise(n) for n in args.sizes
        },
        "seed": args.seed,
        "time_limit": args.time_limit,
        "peers": not args.no_peers,
        "workers": 1,
    }
    _log(
        f"benchmarks: sizes {args.sizes}, time limit {args.time_limit:g} s, "
        f"peers {'off' if args.no_peers else 'on'}"
    )
    data: dict[str, Any] = {"machine": machine.describe(), "settings": settings}
    _log("import time ...")
    data["import"] = machine.import_probe(args.import_repeats)
    sizes: list[dict[str, Any]] = []
    roles = ("ours",) if args.no_peers else ("ours", *PEERS)
    with tempfile.TemporaryDirectory(prefix="assembler-bench-") as tmp:
        for size in args.sizes:
            repeats = settings["repeats"][str(size)]
            seeds = instance_seeds(args.seed, repeats)
            raw: dict[str, Any] = {}
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
            for role in roles:
                t = time.perf_counter()
                spec = {
                    "role": role,
                    "size": size,
                    "seeds": seeds,
                    "time_limit": args.time_limit,
                    "noise": settings["noise"][str(size)] if role == "ours" else 0,
                }
                raw[role] = _child(spec, Path(tmp))
                status = "error" if "error" in raw[role] else "ok"
                _log(f"  {size:>7} forms  {role:<6} {status}  ({time.perf_counter() - t:.1f} s)")
            summary = summarise_size(size, raw, args.time_limit)
            summary["load_before"] = load
            summary["raw"] = raw
            sizes.append(summary)
            _log("    " + report.one_line(summary))
        data["sizes"] = sizes
        data["limits"] = []
        if not args.no_limits:
            for size in args.limit_sizes:
                t = time.perf_counter()
                spec = {"role": "limits", "size": size, "limits": args.limits, "seed": args.seed}
                data["limits"].append(_child(spec, Path(tmp), module="benchmarks.limits"))
                status = "error" if "error" in data["limits"][-1] else "ok"
                _log(f"  {size:>7} forms  limits {status}  ({time.perf_counter() - t:.1f} s)")
    data["adversarial"] = []
    if not args.no_adversarial:
        data["adversarial"] = adversarial.run_all(
            args.adversarial_shapes, args.adversarial_sizes, args.adversarial_limit, log=_log
        )
    data["elapsed_s"] = time.perf_counter() - started
    return data


def problems(data: dict[str, Any]) -> list[str]:
    found: list[str] = adversarial.problems(data.get("adversarial", []))
    for size in data.get("limits", []):
        if "error" in size:
            found.append(f"time limits: {size['error']}")
        for run in size.get("runs", []):
            if run.get("violations"):
                found.append(f"time limits, {run['size']} forms at {run['limit']:g} s: violations")
    for size in data["sizes"]:
        found.extend(f"{size['size']} forms: {error}" for error in size["errors"])
        ours = size.get("ours")
        if ours and ours["violations"]:
            found.append(f"{size['size']} forms: {ours['violations']} verifier violation(s)")
        for peer, summary in size["peers"].items():
            for d in summary["disagreements"]:
                found.append(
                    f"{size['size']} forms, seed {d['seed']}: {d['why']}: {peer} {d['peer']}, "
                    f"ours {d['ours']}"
                )
    return found


def rerender(path: Path) -> dict[str, Any]:
    """A results.json with its summaries recomputed from the raw measurements."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    limit = float(data["settings"]["time_limit"])
    sizes = []
    for size in data["sizes"]:
        summary = summarise_size(size["size"], size["raw"], limit)
        summary["load_before"] = size.get("load_before")
        summary["raw"] = size["raw"]
        sizes.append(summary)
    data["sizes"] = sizes
    return data


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    data = rerender(args.render) if args.render is not None else run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    plot = None
    if not args.no_plot:
        plot = args.out / "scaling.png"
        report.plot(data, plot)
        if data.get("adversarial"):
            adversarial.plot(data["adversarial"], args.out / "adversarial.png")
    (args.out / "RESULTS.md").write_text(report.markdown(data, plot), encoding="utf-8")
    found = problems(data)
    for line in found:
        _log(f"PROBLEM: {line}")
    _log(f"wrote {args.out} in {data['elapsed_s']:.0f} s")
    return 1 if found else 0
