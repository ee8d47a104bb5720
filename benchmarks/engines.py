"""How fast a hunt runs on each engine, and what one batch costs: ``python -m benchmarks.engines``.

Input: command-line options (``--help``): examples per hunt, repeats, no-op jobs.
Output: ``engines.md`` (tables) and ``engines.json`` (every measurement) in ``--out``
(default ``benchmarks/results``), a short summary on stderr; exit 1 when two engines
gave different answers (the hunt's answer must not depend on where it ran).

Method:
* Engines: ``local`` with 1 and 2 worker processes (the command line's local engine),
  and ``dask`` on a ``LocalCluster`` of 1 and 2 single-threaded worker processes,
  each started once and warmed up (solvers loaded) before any timing; start-up is
  reported apart.
* Hunt rate: ``hunt --against greedy --seed 0 --examples N`` without shrinking, at the
  engine's default batch (8 local, 64 dask) and at 64 on local too; examples per
  second of search. Repeats go round-robin over the engines, so that a burst of load
  from elsewhere on this shared machine hits every engine alike; the median is
  reported with the range, and ``os.getloadavg()`` before and after each run.
* Scaling efficiency: rate with 2 workers / (2 x rate with 1 worker), same engine.
* Per-batch overhead: ``map(abs, range(J))``, jobs that do nothing, through the
  engine's whole path (submit, schedule, run, fetch, hand back in order): wall time /
  J is the cost a batch adds; divided by (batch x time per example) it is the share
  of a worker's time the engine takes.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from assembler.tooling.engine import Engine, EngineKind, EngineSpec, open_engine
from assembler.tooling.hunt import HuntConfig, hunt

from . import machine

ROOT = Path(__file__).resolve().parent.parent
ENGINES = (("local", 1), ("local", 2), ("dask", 1), ("dask", 2))


def _open(kind: str, workers: int) -> tuple[Engine, float]:
    started = time.perf_counter()
    engine = open_engine(EngineSpec(EngineKind(kind), workers), in_process=False)
    # one batch each, so that every worker has loaded the solvers before timing
    list(engine.map(abs, range(4 * workers)))
    hunt(HuntConfig("greedy", examples=16 * workers, out=None, shrink_per_kind=0), engine=engine)
    return engine, time.perf_counter() - started


def _drain(engine: Engine, jobs: int) -> list[int]:
    return list(engine.map(abs, range(jobs)))


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _timed(run: Callable[[], Any]) -> tuple[float, Any, list[float], list[float]]:
    before = _load()
    started = time.perf_counter()
    result = run()
    return time.perf_counter() - started, result, before, _load()


def measure(examples: int, repeats: int, jobs: int) -> dict[str, Any]:
    engines: dict[str, Engine] = {}
    startup: dict[str, float] = {}
    try:
        for kind, workers in ENGINES:
            name = f"{kind}-{workers}"
            engines[name], startup[name] = _open(kind, workers)
        batches = {name: [engines[name].default_batch] for name in engines}
        for name in ("local-1", "local-2"):
            batches[name].append(64)
        runs: list[dict[str, Any]] = []
        answers: dict[str, Any] = {}
        for repeat in range(repeats):
            for name, engine in engines.items():
                for batch in batches[name]:
                    config = HuntConfig(
                        "greedy", examples=examples, out=None, shrink_per_kind=0, batch=batch
                    )
                    seconds, report, before, after = _timed(partial(hunt, config, engine=engine))
                    answers.setdefault(name, report.answer())
                    runs.append(
                        {
                            "engine": name,
                            "batch": batch,
                            "repeat": repeat,
                            "examples": report.examples,
                            "search_seconds": round(report.seconds, 4),
                            "rate": round(report.rate, 1),
                            "wall_seconds": round(seconds, 4),
                            "load_before": before,
                            "load_after": after,
                        }
                    )
                    print(f"  {name} batch {batch}: {report.rate:.0f}/s", file=sys.stderr)
                seconds, _, before, after = _timed(partial(_drain, engine, jobs))
                runs.append(
                    {
                        "engine": name,
                        "noop_jobs": jobs,
                        "repeat": repeat,
                        "ms_per_job": round(1000 * seconds / jobs, 4),
                        "load_before": before,
                        "load_after": after,
                    }
                )
    finally:
        for engine in engines.values():
            engine.close()
    reference = answers["local-1"]
    return {
        "examples": examples,
        "repeats": repeats,
        "noop_jobs": jobs,
        "startup_seconds": {name: round(s, 2) for name, s in startup.items()},
        "same_answer": all(answer == reference for answer in answers.values()),
        "runs": runs,
    }


def _median(runs: list[dict[str, Any]], key: str) -> tuple[float, float, float]:
    values = [run[key] for run in runs]
    return statistics.median(values), min(values), max(values)


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    runs = data["runs"]
    rates: dict[str, dict[int, tuple[float, float, float]]] = {}
    overhead: dict[str, tuple[float, float, float]] = {}
    for name in data["startup_seconds"]:
        hunts = [r for r in runs if r["engine"] == name and "rate" in r]
        for batch in sorted({r["batch"] for r in hunts}):
            rates.setdefault(name, {})[batch] = _median(
                [r for r in hunts if r["batch"] == batch], "rate"
            )
        noop = [r for r in runs if r["engine"] == name and "ms_per_job" in r]
        overhead[name] = _median(noop, "ms_per_job")
    default = {name: rates[name][min(rates[name], key=lambda b: b)] for name in rates}
    dask_default = max(rates["dask-1"])
    efficiency = {
        "local": default["local-2"][0] / (2 * default["local-1"][0]),
        "dask": rates["dask-2"][dask_default][0] / (2 * rates["dask-1"][dask_default][0]),
    }
    per_example_ms = 1000 / rates["local-1"][64][0]
    return {
        "rates": {n: {str(b): v for b, v in r.items()} for n, r in rates.items()},
        "overhead_ms": overhead,
        "scaling_efficiency": {k: round(v, 3) for k, v in efficiency.items()},
        "ms_per_example_local_1": round(per_example_ms, 3),
    }


def _markdown(data: dict[str, Any], summary: dict[str, Any], about: dict[str, Any]) -> str:
    loads = [run["load_before"][0] for run in data["runs"]] + [
        run["load_after"][0] for run in data["runs"]
    ]
    per_example = summary["ms_per_example_local_1"]
    lines = [
        "# Engines: hunt throughput and per-batch overhead",
        "",
        f"Measured by `python -m benchmarks.engines` on {about.get('cpu')} ({os.cpu_count()}"
        f" cores), commit {about.get('commit')}, {about.get('date')}. The machine was shared:"
        f" 1-minute load average {min(loads):.2f}-{max(loads):.2f} during the runs (2 cores),"
        " so absolute rates are noisy; the engines ran round-robin in one process so that"
        " they saw the same load.",
        "",
        f"Hunt: greedy, seed 0, {data['examples']} examples, no shrinking;"
        f" {data['repeats']} repeats; median [min, max] examples per second of search."
        f" Every engine gave the same answer: {'yes' if data['same_answer'] else 'NO'}.",
        "",
        "| engine | workers | start-up s | batch | examples/s | per-batch overhead ms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, by_batch in summary["rates"].items():
        kind, workers = name.split("-")
        low = summary["overhead_ms"][name]
        for batch, (med, lo, hi) in by_batch.items():
            lines.append(
                f"| {kind} | {workers} | {data['startup_seconds'][name]} | {batch} |"
                f" {med:.0f} [{lo:.0f}, {hi:.0f}] | {low[0]:.2f} [{low[1]:.2f}, {low[2]:.2f}] |"
            )
    eff = summary["scaling_efficiency"]
    dask_overhead = summary["overhead_ms"]["dask-1"][0]
    share = dask_overhead / (dask_overhead + 64 * per_example)
    lines += [
        "",
        "Scaling efficiency (rate with 2 workers / 2 x rate with 1): local"
        f" {eff['local']:.2f},"
        f" dask {eff['dask']:.2f}. They are only as good as the machine was quiet: with"
        " other work on the 2 cores (the load above), two workers never had two cores to"
        " themselves and the repeats spread widely; a ratio above 1 is noise, not"
        f" speed-up. One example cost ~{per_example:.2f} ms of a worker here (local, 1 worker,"
        " batch 64; the README's figure for an idle core, ~500 examples/s, is ~2 ms).",
        "",
        "Per-batch overhead: the wall time per no-op job through the engine's whole path"
        " (submit, schedule, run, fetch, hand back in order), with the hunt's window of 3"
        " jobs in flight per worker. How to size a cluster from it (an estimate: nothing"
        f" was measured beyond 2 workers): a Dask batch of B examples spends about"
        f" {dask_overhead:.1f} / ({dask_overhead:.1f} + B x {per_example:.2f}) of its time"
        f" on the engine, {100 * share:.0f}% at the default B = 64. No-op jobs went through"
        f" at ~{1000 / dask_overhead:.0f} per second with one worker; if that is the"
        " client's and scheduler's ceiling, a cluster is fed at most"
        f" ~{1000 / dask_overhead * 64:,.0f} examples/s at B = 64, and one whose workers"
        " together judge more than that wants a larger --batch (which never changes the"
        " answer).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    # the scheduler of a LocalCluster lives in this process: keep its INFO lines out
    logging.getLogger("distributed").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engines", description=__doc__)
    parser.add_argument("--examples", type=int, default=2000, help="examples per hunt")
    parser.add_argument("--repeats", type=int, default=3, help="round-robin repeats")
    parser.add_argument("--jobs", type=int, default=500, help="no-op jobs per overhead run")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    if args.examples < 64 or args.repeats < 1 or args.jobs < 1:
        parser.error("--examples >= 64, --repeats >= 1 and --jobs >= 1")
    about = machine.describe()
    data = measure(args.examples, args.repeats, args.jobs)
    summary = summarise(data)
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {"machine": about, **data, "summary": summary}
    (args.out / "engines.json").write_text(json.dumps(payload, indent=2) + "\n")
    (args.out / "engines.md").write_text(_markdown(data, summary, about))
    print(_markdown(data, summary, about), file=sys.stderr)
    return 0 if data["same_answer"] else 1


if __name__ == "__main__":
    sys.exit(main())
