"""Session and server benchmarks: ``python -m benchmarks.session`` (``--help``).

Input: command-line options. Output: ``benchmarks/results/session.json`` (every
measurement) and ``benchmarks/results/SESSION.md`` (the tables), a summary on stderr;
exit 0, or 1 when an answer differs from a fresh ``assemble()`` or a bundle fails the
independent verifier.

Measured side by side, each with ``os.getloadavg()`` and CPU time (this machine has
2 cores shared with other engineers: wall times are noisy, CPU time is the figure to
decide on):

* **agent loop** (the named scenario, ``benchmarks.scenarios.agentloop``): 50 model
  calls, each adding 2-5 candidates (a tool call and its result, sometimes a summary,
  a memory, the assistant's turn) to a first request of ~5,000 forms. Per call,
  ``Session.apply(delta)`` and a fresh ``assemble()`` of the whole request, interleaved,
  answers compared. Goal (issue 13): a delta < 15 ms and >= 10x faster than fresh.
* **serve round trip**: a 100-call session (a first request of 200 forms) through a
  real ``assembler serve`` process, over JSON lines and over HTTP (one keep-alive
  connection), against ``Session.apply`` in process. Goal: < 2x the in-process call.
* **cold compile**: ``python -m assembler compile`` of that session's last request in
  a fresh process, beside a bare interpreter and the import of OR-Tools' ``cp_model``
  alone. Goal: < 400 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import assembler
from benchmarks.scenarios.agentloop import AgentLoop, agent_loop

from . import machine

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
GOAL_DELTA_MS = 15.0
GOAL_SPEEDUP = 10.0
GOAL_ROUND_TRIP_RATIO = 2.0
GOAL_COLD_MS = 400.0
# the stages a result times, in the order of the chain
STAGES = ("parse", "gates", "closure", "solve", "trace")


class Mismatch(Exception):
    pass


def _answer(result: assembler.Result | dict[str, Any]) -> dict[str, Any]:
    data = dict(result.to_dict() if isinstance(result, assembler.Result) else result)
    data.pop("timings", None)
    return data


def _checked(request: dict[str, Any], result: assembler.Result, fresh: assembler.Result) -> None:
    if _answer(result) != _answer(fresh):
        raise Mismatch(f"session answer differs from a fresh assemble: {result.trace_id}")
    problems = assembler.verify(request, result)
    if problems:
        raise Mismatch(f"the verifier rejected a bundle: {problems[0]}")


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _timed(call: Any) -> tuple[Any, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    out = call()
    return out, (time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3


# ---------------------------------------------------------------------------
# the agent loop, in process


def agent_loop_case(seed: int, forms: int, calls: int, time_limit: float) -> dict[str, Any]:
    loop = agent_loop(seed, forms, calls)
    whole = list(loop.requests())
    load_before = os.getloadavg()
    session, open_ms, open_cpu = _timed(
        lambda: assembler.Session(loop.first, time_limit=time_limit)
    )
    session.answer()
    rows: list[dict[str, float]] = []
    for delta, request in zip(loop.deltas, whole, strict=True):
        result, delta_ms, delta_cpu = _timed(lambda d=delta: session.apply(d))
        fresh, fresh_ms, fresh_cpu = _timed(
            lambda r=request: assembler.assemble(r, time_limit=time_limit)
        )
        _checked(request, result, fresh)
        timings = dict(fresh.timings)
        rows.append({
            "delta_ms": delta_ms, "delta_cpu_ms": delta_cpu,
            "fresh_ms": fresh_ms, "fresh_cpu_ms": fresh_cpu,
            "fresh_parse_ms": timings.get("parse", 0.0) * 1e3,
            "optimal": float(result.optimal),
            "solve_reused": float(dict(result.timings).get("solve") == 0.0),
            **{f"delta_{k}_ms": v * 1e3 for k, v in result.timings if k in STAGES},
            **{f"fresh_{k}_ms": v * 1e3 for k, v in fresh.timings if k in STAGES},
        })  # fmt: skip
    delta_cpu = _median([r["delta_cpu_ms"] for r in rows])
    fresh_cpu = _median([r["fresh_cpu_ms"] for r in rows])
    return {
        "seed": seed,
        "forms_first": len(loop.first["candidates"]),
        "forms_last": len(whole[-1]["candidates"]),
        "calls": calls,
        "added_per_call": [len(d["add"]) for d in loop.deltas],
        "open_ms": open_ms,
        "open_cpu_ms": open_cpu,
        "delta_ms_median": _median([r["delta_ms"] for r in rows]),
        "delta_cpu_ms_median": delta_cpu,
        "fresh_ms_median": _median([r["fresh_ms"] for r in rows]),
        "fresh_cpu_ms_median": fresh_cpu,
        "fresh_parse_ms_median": _median([r["fresh_parse_ms"] for r in rows]),
        "speedup_cpu": fresh_cpu / delta_cpu if delta_cpu else float("nan"),
        "optimal": int(sum(r["optimal"] for r in rows)),
        "solve_reused": int(sum(r["solve_reused"] for r in rows)),
        # wall medians of each stage, as the results time them, in the session and fresh
        "stages_ms_median": {
            side: {k: _median([r.get(f"{side}_{k}_ms", 0.0) for r in rows]) for k in STAGES}
            for side in ("delta", "fresh")
        },
        "rows": rows,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


def unchanged_problem_case(seed: int, forms: int, calls: int, time_limit: float) -> dict[str, Any]:
    """Deltas that leave the problem as it was: each adds a note scoped to another
    project (the scope gate rejects it), so the proven optimum is reused and a delta
    costs what surrounds the solve. Compared with a fresh ``assemble()``, as above."""
    loop = agent_loop(seed, forms, 1)
    load_before = os.getloadavg()
    session = assembler.Session(loop.first, time_limit=time_limit)
    session.answer()
    rows: list[dict[str, float]] = []
    for call in range(calls):
        note = {"id": f"elsewhere-{call}", "cost": 40, "relevance": 0.9, "scope": "proj-z",
                "kind": "memory", "content": f"a note of another project ({call})"}  # fmt: skip
        result, delta_ms, delta_cpu = _timed(lambda n=note: session.apply({"add": [n]}))
        request = session.to_dict()
        fresh, fresh_ms, fresh_cpu = _timed(
            lambda r=request: assembler.assemble(r, time_limit=time_limit)
        )
        _checked(request, result, fresh)
        rows.append({
            "delta_ms": delta_ms, "delta_cpu_ms": delta_cpu,
            "fresh_ms": fresh_ms, "fresh_cpu_ms": fresh_cpu,
            "solve_reused": float(dict(result.timings).get("solve") == 0.0),
        })  # fmt: skip
    delta_cpu = _median([r["delta_cpu_ms"] for r in rows])
    fresh_cpu = _median([r["fresh_cpu_ms"] for r in rows])
    return {
        "seed": seed,
        "forms_first": len(loop.first["candidates"]),
        "calls": calls,
        "delta_ms_median": _median([r["delta_ms"] for r in rows]),
        "delta_cpu_ms_median": delta_cpu,
        "fresh_ms_median": _median([r["fresh_ms"] for r in rows]),
        "fresh_cpu_ms_median": fresh_cpu,
        "speedup_cpu": fresh_cpu / delta_cpu if delta_cpu else float("nan"),
        "solve_reused": int(sum(r["solve_reused"] for r in rows)),
        "rows": rows,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


# ---------------------------------------------------------------------------
# the server, over both transports


def _server(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "assembler", "serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )


def _cpu_of(pid: int) -> float:
    """Seconds of CPU a process has used (user + system), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _over_lines(loop: AgentLoop, time_limit: float) -> tuple[list[float], float, list[Any]]:
    server = _server("--time-limit", str(time_limit))
    assert server.stdin is not None and server.stdout is not None

    def call(message: dict[str, Any]) -> dict[str, Any]:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        reply: dict[str, Any] = json.loads(server.stdout.readline())
        return reply

    # a first pass warms the server (OR-Tools is imported on its first exact solve)
    for key in ("warm-up", "bench"):
        call({"session": key, "request": loop.first})
        cpu = _cpu_of(server.pid)
        times, results = [], []
        for delta in loop.deltas:
            start = time.perf_counter()
            reply = call({"session": key, "delta": delta})
            times.append((time.perf_counter() - start) * 1e3)
            results.append(reply["result"])
        cpu = _cpu_of(server.pid) - cpu
    server.stdin.close()
    server.wait(timeout=60)
    return times, cpu * 1e3 / len(loop.deltas), results


def _over_http(loop: AgentLoop, time_limit: float) -> tuple[list[float], float, list[Any]]:
    server = _server("--port", "0", "--time-limit", str(time_limit))
    assert server.stdout is not None
    port = json.loads(server.stdout.readline())["port"]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(method: str, path: str, body: Any) -> dict[str, Any]:
        connection.request(method, path, body=json.dumps(body).encode(),
                           headers={"Content-Type": "application/json"})  # fmt: skip
        reply: dict[str, Any] = json.loads(connection.getresponse().read())
        return reply

    try:
        for key in ("warm-up", "bench"):
            call("PUT", f"/sessions/{key}", loop.first)
            cpu = _cpu_of(server.pid)
            times, results = [], []
            for delta in loop.deltas:
                start = time.perf_counter()
                reply = call("POST", f"/sessions/{key}/delta", delta)
                times.append((time.perf_counter() - start) * 1e3)
                results.append(reply["result"])
            cpu = _cpu_of(server.pid) - cpu
    finally:
        connection.close()
        server.terminate()
        server.wait(timeout=60)
    return times, cpu * 1e3 / len(loop.deltas), results


def round_trip_case(seed: int, forms: int, calls: int, time_limit: float) -> dict[str, Any]:
    loop = agent_loop(seed, forms, calls)
    load_before = os.getloadavg()
    # the same warm-up pass as the servers get
    for _ in range(2):
        session = assembler.Session(loop.first, time_limit=time_limit)
        session.answer()
        local_ms, local_cpu, expected = [], [], []
        for delta in loop.deltas:
            result, wall, cpu = _timed(lambda d=delta, s=session: s.apply(d))
            local_ms.append(wall)
            local_cpu.append(cpu)
            expected.append(_answer(result))
    lines_ms, lines_cpu, lines_results = _over_lines(loop, time_limit)
    http_ms, http_cpu, http_results = _over_http(loop, time_limit)
    for results in (lines_results, http_results):
        if [_answer(r) for r in results] != expected:
            raise Mismatch("a served answer differs from the in-process session's")
    local = _median(local_ms)
    return {
        "seed": seed,
        "forms_first": len(loop.first["candidates"]),
        "forms_last": len(loop.first["candidates"]) + sum(len(d["add"]) for d in loop.deltas),
        "calls": calls,
        "in_process_ms_median": local,
        "in_process_cpu_ms_median": _median(local_cpu),
        "lines_ms_median": _median(lines_ms),
        "lines_server_cpu_ms_per_call": lines_cpu,
        "http_ms_median": _median(http_ms),
        "http_server_cpu_ms_per_call": http_cpu,
        "lines_ratio": _median(lines_ms) / local,
        "http_ratio": _median(http_ms) / local,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


# ---------------------------------------------------------------------------
# a cold command


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cold(argv: list[str], repeats: int) -> dict[str, Any]:
    walls, cpus = [], []
    for _ in range(repeats):
        cpu = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
        walls.append((time.perf_counter() - start) * 1e3)
        cpus.append((_children_cpu() - cpu) * 1e3)
        if done.returncode not in (0, 1):
            raise Mismatch(f"{' '.join(argv[:4])} exited {done.returncode}: {done.stderr[-300:]!r}")
    return {"ms_median": _median(walls), "cpu_ms_median": _median(cpus), "ms": walls}


def cold_case(seed: int, forms: int, calls: int, repeats: int) -> dict[str, Any]:
    loop = agent_loop(seed, forms, calls)
    request = list(loop.requests())[-1]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "session.json"
        path.write_text(json.dumps(request))
        compile_ = _cold([sys.executable, "-m", "assembler", "compile", str(path)], repeats)
    python = _cold([sys.executable, "-c", "pass"], repeats)
    imports = _cold([sys.executable, "-c", "import assembler"], repeats)
    cp_model = _cold([sys.executable, "-c", "import ortools.sat.python.cp_model"], repeats)
    return {
        "seed": seed,
        "forms": len(request["candidates"]),
        "compile": compile_,
        "python": python,
        "import_assembler": imports,
        "import_cp_model": cp_model,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


# ---------------------------------------------------------------------------
# report


def _met(ok: bool) -> str:
    return "met" if ok else "not met"


def _markdown(data: dict[str, Any]) -> str:
    m = data["machine"]
    lines = [
        "# Session and server benchmarks",
        "",
        f"`python -m benchmarks.session` on {m['cpu']} ({m['cores']} cores), {m['date']},"
        f" commit {m['commit']}. The machine is shared: load averages are recorded per part;"
        " CPU times are the figures to decide on. Every answer equalled a fresh `assemble()`"
        " and every bundle passed the verifier.",
        "",
        "## Agent loop (named scenario), medians per call",
        "",
        "`Session.apply(delta)` against a fresh `assemble()` of the same whole request,"
        " interleaved call by call. A delta parses and gates only what it brings or"
        " reaches, words again only the decisions it moves, and skips the solve when the"
        " problem is one already proven optimal; otherwise the solve runs whole, its first"
        " LP started from the basis the session's previous LP ended with.",
        "",
        "| seed | forms (first, last) | calls | delta wall / CPU | fresh wall / CPU (parse) |"
        " speedup (CPU) | goal < 15 ms | goal >= 10x | optimal | load before, after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["agent_loop"]:
        lines.append(
            f"| {row['seed']} | {row['forms_first']:,}, {row['forms_last']:,} | {row['calls']} |"
            f" {row['delta_ms_median']:.0f} / {row['delta_cpu_ms_median']:.0f} ms |"
            f" {row['fresh_ms_median']:.0f} / {row['fresh_cpu_ms_median']:.0f} ms"
            f" ({row['fresh_parse_ms_median']:.0f}) | {row['speedup_cpu']:.2f}x |"
            f" {_met(row['delta_cpu_ms_median'] < GOAL_DELTA_MS)} |"
            f" {_met(row['speedup_cpu'] >= GOAL_SPEEDUP)} | {row['optimal']}/{row['calls']} |"
            f" {row['loadavg_before'][0]:.2f}, {row['loadavg_after'][0]:.2f} |"
        )
    lines += [
        "",
        "Where a call's time goes: the median wall time of each stage, as the results time"
        " them (a delta's gates and trace are the kept ones; `solve reused` counts the calls"
        " whose problem was one already proven optimal).",
        "",
        "| seed | side | " + " | ".join(STAGES) + " | solve reused |",
        "|---|---|" + "---|" * len(STAGES) + "---|",
    ]
    for row in data["agent_loop"]:
        for side in ("delta", "fresh"):
            stages = row["stages_ms_median"][side]
            reused = f"{row['solve_reused']}/{row['calls']}" if side == "delta" else ""
            lines.append(
                f"| {row['seed']} | {side} | "
                + " | ".join(f"{stages[k]:.1f} ms" for k in STAGES)
                + f" | {reused} |"
            )
    lines += [
        "",
        "## Deltas that leave the problem as it was, medians per call",
        "",
        "Each delta adds a note scoped to another project (gated out): the problem is the"
        " one already proven optimal, so no solver runs, and the delta costs what surrounds"
        " the solve. Against a fresh `assemble()` of the same request.",
        "",
        "| seed | forms | calls | delta wall / CPU | fresh wall / CPU | speedup (CPU) |"
        " goal < 15 ms | goal >= 10x | solve reused | load before, after |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["unchanged_problem"]:
        lines.append(
            f"| {row['seed']} | {row['forms_first']:,} | {row['calls']} |"
            f" {row['delta_ms_median']:.1f} / {row['delta_cpu_ms_median']:.1f} ms |"
            f" {row['fresh_ms_median']:.0f} / {row['fresh_cpu_ms_median']:.0f} ms |"
            f" {row['speedup_cpu']:.1f}x | {_met(row['delta_cpu_ms_median'] < GOAL_DELTA_MS)} |"
            f" {_met(row['speedup_cpu'] >= GOAL_SPEEDUP)} |"
            f" {row['solve_reused']}/{row['calls']} |"
            f" {row['loadavg_before'][0]:.2f}, {row['loadavg_after'][0]:.2f} |"
        )
    lines += [
        "",
        "## Server round trip, medians per call",
        "",
        "A session through a real `assembler serve` process (JSON lines; HTTP on one"
        " keep-alive connection) against `Session.apply` in process; the server's CPU per"
        " call is read from /proc.",
        "",
        "| seed | forms (first, last) | calls | in process wall / CPU | JSON lines (server CPU)"
        " | HTTP (server CPU) | ratio lines, HTTP | goal < 2x | load before, after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["round_trip"]:
        worst = max(row["lines_ratio"], row["http_ratio"])
        lines.append(
            f"| {row['seed']} | {row['forms_first']:,}, {row['forms_last']:,} | {row['calls']} |"
            f" {row['in_process_ms_median']:.1f} / {row['in_process_cpu_ms_median']:.1f} ms |"
            f" {row['lines_ms_median']:.1f} ms ({row['lines_server_cpu_ms_per_call']:.1f}) |"
            f" {row['http_ms_median']:.1f} ms ({row['http_server_cpu_ms_per_call']:.1f}) |"
            f" {row['lines_ratio']:.2f}x, {row['http_ratio']:.2f}x |"
            f" {_met(worst < GOAL_ROUND_TRIP_RATIO)} |"
            f" {row['loadavg_before'][0]:.2f}, {row['loadavg_after'][0]:.2f} |"
        )
    cold = data["cold"]
    lines += [
        "",
        "## Cold command, medians of fresh processes",
        "",
        f"`python -m assembler compile` of the session's last request ({cold['forms']:,}"
        " forms), beside what any process pays.",
        "",
        "| what | wall | CPU |",
        "|---|---|---|",
    ]
    for label, key in (("`python -c pass`", "python"), ("`import assembler`", "import_assembler"),
                       ("`import ortools.sat.python.cp_model`", "import_cp_model"),
                       ("`assembler compile` (goal < 400 ms)", "compile")):  # fmt: skip
        lines.append(f"| {label} | {cold[key]['ms_median']:.0f} ms |"
                     f" {cold[key]['cpu_ms_median']:.0f} ms |")  # fmt: skip
    lines += [
        "",
        f"Goal < 400 ms: {_met(cold['compile']['ms_median'] < GOAL_COLD_MS)}. Load before,"
        f" after: {cold['loadavg_before'][0]:.2f}, {cold['loadavg_after'][0]:.2f}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.session", description=__doc__)
    parser.add_argument("--seeds", type=int, default=2, help="agent loops, each its own seed")
    parser.add_argument(
        "--forms", type=int, default=5000, help="forms of the agent loop's first request"
    )
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument(
        "--session-forms", type=int, default=200, help="the served session's first request"
    )
    parser.add_argument("--turns", type=int, default=100, help="calls of the served session")
    parser.add_argument("--cold-repeats", type=int, default=5)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"machine": machine.describe(), "settings": vars(args)}
    try:
        data["agent_loop"] = [
            agent_loop_case(seed, args.forms, args.calls, args.time_limit)
            for seed in range(args.seeds)
        ]
        data["unchanged_problem"] = [
            unchanged_problem_case(0, args.forms, min(args.calls, 20), args.time_limit)
        ]
        data["round_trip"] = [round_trip_case(0, args.session_forms, args.turns, args.time_limit)]
        data["cold"] = cold_case(0, args.session_forms, args.turns, args.cold_repeats)
    except Mismatch as exc:
        print(f"benchmarks.session: {exc}", file=sys.stderr)
        return 1
    (out / "session.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "SESSION.md").write_text(_markdown(data))
    for row in data["agent_loop"]:
        print(f"agent loop seed {row['seed']}: delta {row['delta_cpu_ms_median']:.0f} ms CPU,"
              f" fresh {row['fresh_cpu_ms_median']:.0f} ms CPU ({row['speedup_cpu']:.2f}x)",
              file=sys.stderr)  # fmt: skip
    for row in data["unchanged_problem"]:
        print(f"unchanged problem: delta {row['delta_cpu_ms_median']:.1f} ms CPU, fresh"
              f" {row['fresh_cpu_ms_median']:.0f} ms CPU ({row['speedup_cpu']:.1f}x)",
              file=sys.stderr)  # fmt: skip
    for row in data["round_trip"]:
        print(f"round trip: in process {row['in_process_ms_median']:.1f} ms, lines"
              f" {row['lines_ms_median']:.1f} ms, http {row['http_ms_median']:.1f} ms",
              file=sys.stderr)  # fmt: skip
    print(f"cold compile: {data['cold']['compile']['ms_median']:.0f} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
