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

from assembler.engines import Engine, EngineKind, EngineSpec, SerialEngine, open_engine
from assembler.hunt import HuntConfig, hunt

from . import machine

ROOT = Path(__file__).resolve().parent.parent
# "serial" is the hunt in this process: its CPU time per example is the pure cost of
# judging, against which a Dask worker's CPU time per example shows that worker's overhead
ENGINES = (("serial", 1), ("local", 1), ("local", 2), ("dask", 1), ("dask", 2))


def _open(kind: str, workers: int) -> tuple[Engine, float]:
    started = time.perf_counter()
    if kind == "serial":
        engine: Engine = SerialEngine()
    else:
        engine = open_engine(EngineSpec(EngineKind(kind), workers), in_process=False)
    # one batch each, so that every worker has loaded the solvers before timing
    list(engine.map(abs, range(4 * workers)))
    hunt(HuntConfig("greedy", examples=16 * workers, out=None, shrink_per_kind=0), engine=engine)
    return engine, time.perf_counter() - started


def _drain(engine: Engine, jobs: int) -> list[int]:
    return list(engine.map(abs, range(jobs)))


def _cpu(engine: Engine) -> tuple[float, float | None]:
    """CPU seconds so far of this process (client, and a LocalCluster's scheduler and
    nannies) and of the Dask workers (None for a local pool: not visible from here)."""
    client = getattr(engine, "client", None)
    workers = None if client is None else sum(client.run(time.process_time).values())
    return time.process_time(), workers


def _per(after: float | None, before: float | None, count: int) -> float | None:
    return None if after is None or before is None else round(1000 * (after - before) / count, 4)


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
        for name in ("serial-1", "local-1", "local-2"):
            batches[name] = sorted({*batches[name], 64})
        runs: list[dict[str, Any]] = []
        answers: dict[str, Any] = {}
        for repeat in range(repeats):
            for name, engine in engines.items():
                for batch in batches[name]:
                    config = HuntConfig(
                        "greedy", examples=examples, out=None, shrink_per_kind=0, batch=batch
                    )
                    cpu = _cpu(engine)
                    seconds, report, before, after = _timed(partial(hunt, config, engine=engine))
                    cpu_after = _cpu(engine)
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
                            "parent_cpu_ms_per_example": _per(cpu_after[0], cpu[0], examples),
                            "worker_cpu_ms_per_example": _per(cpu_after[1], cpu[1], examples),
                            "load_before": before,
                            "load_after": after,
                        }
                    )
                    print(f"  {name} batch {batch}: {report.rate:.0f}/s", file=sys.stderr)
                if name == "serial-1":
                    continue
                cpu = _cpu(engine)
                seconds, _, before, after = _timed(partial(_drain, engine, jobs))
                cpu_after = _cpu(engine)
                runs.append(
                    {
                        "engine": name,
                        "noop_jobs": jobs,
                        "repeat": repeat,
                        "ms_per_job": round(1000 * seconds / jobs, 4),
                        "parent_cpu_ms_per_job": _per(cpu_after[0], cpu[0], jobs),
                        "worker_cpu_ms_per_job": _per(cpu_after[1], cpu[1], jobs),
                        "load_before": before,
                        "load_after": after,
                    }
                )
    finally:
        for engine in engines.values():
            engine.close()
    reference = answers["serial-1"]
    return {
        "examples": examples,
        "repeats": repeats,
        "noop_jobs": jobs,
        "startup_seconds": {name: round(s, 2) for name, s in startup.items()},
        "same_answer": all(answer == reference for answer in answers.values()),
        "runs": runs,
    }


def _median(runs: list[dict[str, Any]], key: str) -> tuple[float, float, float] | None:
    values = [run[key] for run in runs if run.get(key) is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def summarise(data: dict[str, Any]) -> dict[str, Any]:
    runs = data["runs"]
    hunts: dict[str, dict[str, Any]] = {}
    noop: dict[str, dict[str, Any]] = {}
    for name in data["startup_seconds"]:
        mine = [r for r in runs if r["engine"] == name and "rate" in r]
        for batch in sorted({r["batch"] for r in mine}):
            same = [r for r in mine if r["batch"] == batch]
            hunts.setdefault(name, {})[str(batch)] = {
                key: _median(same, key)
                for key in ("rate", "parent_cpu_ms_per_example", "worker_cpu_ms_per_example")
            }
        empty = [r for r in runs if r["engine"] == name and "ms_per_job" in r]
        if empty:
            noop[name] = {
                key: _median(empty, key)
                for key in ("ms_per_job", "parent_cpu_ms_per_job", "worker_cpu_ms_per_job")
            }

    def rate(name: str, batch: int) -> float:
        value = hunts[name][str(batch)]["rate"]
        assert value is not None
        return float(value[0])

    dask_batch = max(int(b) for b in hunts["dask-1"])
    return {
        "hunts": hunts,
        "noop": noop,
        "scaling_efficiency": {
            "local": round(rate("local-2", 8) / (2 * rate("local-1", 8)), 3),
            "dask": round(rate("dask-2", dask_batch) / (2 * rate("dask-1", dask_batch)), 3),
        },
    }


def _fmt(value: tuple[float, float, float] | None, digits: int) -> str:
    if value is None:
        return "-"
    med, low, high = value
    return f"{med:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _markdown(data: dict[str, Any], summary: dict[str, Any], about: dict[str, Any]) -> str:
    loads = [run["load_before"][0] for run in data["runs"]] + [
        run["load_after"][0] for run in data["runs"]
    ]
    hunts, noop = summary["hunts"], summary["noop"]
    lines = [
        "# Engines: hunt throughput and per-batch overhead",
        "",
        f"Measured by `python -m benchmarks.engines` on {about.get('cpu')} ({os.cpu_count()}"
        f" cores), commit {about.get('commit')}, {about.get('date')}. The machine was shared:"
        f" 1-minute load average {min(loads):.2f}-{max(loads):.2f} during the runs (2 cores),"
        " so wall-clock rates are noisy; the engines ran round-robin in one process so that"
        " they saw the same load, and CPU times (less sensitive to load) are given beside.",
        "",
        f"Hunt: greedy, seed 0, {data['examples']} examples, no shrinking,"
        f" {data['repeats']} repeats; median [min, max]. `serial` is the hunt in the"
        " measuring process itself (the CPU cost of judging alone). Every engine gave the"
        f" same answer: {'yes' if data['same_answer'] else 'NO'}.",
        "",
        "| engine | workers | start-up s | batch | examples/s | client-side CPU ms per"
        " example | worker CPU ms per example |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, by_batch in hunts.items():
        kind, workers = name.split("-")
        for batch, row in by_batch.items():
            worker = row["parent_cpu_ms_per_example"] if kind == "serial" else None
            lines.append(
                f"| {kind} | {workers} | {data['startup_seconds'][name]} | {batch} |"
                f" {_fmt(row['rate'], 0)} |"
                f" {'-' if kind == 'serial' else _fmt(row['parent_cpu_ms_per_example'], 3)} |"
                f" {_fmt(worker or row['worker_cpu_ms_per_example'], 2)} |"
            )
    lines += [
        "",
        f"Per-batch overhead: {data['noop_jobs']} no-op jobs through the engine's whole path"
        " (submit, schedule, run, fetch, hand back in order), the hunt's window of 3 jobs in"
        " flight per worker. Client-side CPU is this process's (with a LocalCluster: the"
        " client, the scheduler and the nannies); worker CPU is measured on Dask's workers"
        " only.",
        "",
        "| engine | workers | wall ms per job | client-side CPU ms per job | worker CPU ms per"
        " job |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, row in noop.items():
        kind, workers = name.split("-")
        lines.append(
            f"| {kind} | {workers} | {_fmt(row['ms_per_job'], 2)} |"
            f" {_fmt(row['parent_cpu_ms_per_job'], 2)} | {_fmt(row['worker_cpu_ms_per_job'], 2)} |"
        )
    eff = summary["scaling_efficiency"]
    serial = hunts["serial-1"]["64"]["parent_cpu_ms_per_example"]
    client = noop["dask-1"]["parent_cpu_ms_per_job"]
    lines += [
        "",
        f"Scaling efficiency (examples/s with 2 workers / 2 x with 1): local {eff['local']:.2f},"
        f" dask {eff['dask']:.2f}. They are only as good as the machine was quiet: with other"
        " work on the 2 cores (the load above), two workers never had two cores to"
        " themselves, and a ratio above 1 is noise, not speed-up.",
    ]
    if serial is not None and client is not None:
        per_example, per_batch = serial[0], client[0]
        lines += [
            "",
            "Sizing a cluster (an estimate from CPU times: nothing was measured beyond 2"
            f" workers). Judging costs ~{per_example:.2f} ms of CPU per example, so a worker"
            f" core judges ~{1000 / per_example:.0f} examples/s. Each Dask batch costs the"
            f" client side ~{per_batch:.1f} ms of CPU (client and scheduler together here),"
            f" so one core there can hand out and merge ~{1000 / per_batch:.0f} batches/s:"
            f" at the default batch of 64, ~{64000 / per_batch:,.0f} examples/s, or"
            f" ~{64 * per_example / per_batch:.0f} busy worker cores. Beyond that raise"
            " --batch (the answer never changes with it); a larger batch only lengthens the"
            " overrun of a --seconds hunt and the work a lost worker takes with it.",
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
