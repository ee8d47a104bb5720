"""The speed cases of issue 28, before and after a change, side by side in one run.

Run ``python -m benchmarks.speed --before REV [--after REV] [--label NAME]`` (``--help``),
or ``python -m benchmarks.speed --kernels`` for the working tree's pure-Python twins
(``ASSEMBLER_KERNELS=python``, the "before" side) beside its compiled kernels.
Output: a table on stdout and appended to ``benchmarks/results/SPEED.md``, every time
in ``benchmarks/results/speed.json``; exit 1 when an answer differs between the sides.

One set of inputs is built here; the working tree and ``REV`` (checked out with ``git
worktree`` into a temporary directory) each answer them in child processes through
the public API only (``assemble``, ``Session``), the two sides alternating round by
round so that the machine's pace moves both alike. Per case, the median wall time of
every call over all rounds (wall time, and the process's CPU time over the call,
which the other agents' load on the machine moves far less; CP-SAT's workers count in
it), each side's answers digested (status, selection,
``package_id``, ``trace_id``, rendered bytes) and compared. The load average is read
before and after. The collector runs as the library leaves it (Python's defaults:
no call tunes it), and each side's threshold is recorded.

Cases:
* ``transcript-N``: an N-round agent transcript (``agentcases``) rendered to
  ``openai-chat``, cache-blind;
* ``cached-N`` and ``blind-N``: the same transcript's request after one more round,
  rendered to ``anthropic-messages``, with a ``cache`` section naming what the call
  before it sent (Anthropic's breakpoints; computed by each side from its own
  rendering of the earlier request) and without it;
* ``turn-N``: a ``Session`` holding the transcript but its last round, then the delta
  adding that round (``apply``), rendered to ``openai-chat``;
* ``forms-N``: ``Shape.scale(N)`` requests, end to end, unrendered;
* ``loop-5000``: the agent loop scenario's session deltas (a tool call and its
  result, sometimes more) on a first request of 5,000 forms;
* ``rescore-5000`` and ``fresh-5000``: relevance-only deltas (the conversation's
  candidates re-scored by recency) on that session, and a fresh ``assemble`` of the
  same request; ``rescore-400`` and ``fresh-400`` the same on the 100-round transcript
  (~400 candidates), rendered to ``openai-chat``.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
_LIMIT = 30.0
_PROVIDER = {"provider": "anthropic", "model": "claude-sonnet-4-5"}


# -- the inputs (this checkout's generators) -----------------------------------------


def _inputs(quick: bool) -> dict[str, Any]:
    import random

    from assembler.hunt.generate import Shape, generate
    from benchmarks.scenarios.agentloop import agent_loop

    from .agentcases import transcript

    cases: list[dict[str, Any]] = []
    # 100 rounds: ~400 candidates, the size of issue 24's cache-aware goal
    for rounds in (40, 100, 120, 200):
        t = transcript(rounds)
        before, delta = t.next_turn()
        cases.append(
            {
                "name": f"transcript-{rounds}",
                "kind": "call",
                "request": t.request(),
                "render": "openai-chat",
            }
        )
        cases.append(
            {
                "name": f"turn-{rounds}",
                "kind": "turn",
                "first": before,
                "deltas": [delta],
                "render": "openai-chat",
            }
        )
        cases.append(
            {
                "name": f"cached-{rounds}",
                "kind": "cached",
                "previous": before,
                "request": t.request(),
            }
        )
        if rounds == 100:
            # ~400 candidates: a session re-scoring its conversation, and a fresh call
            cases.append({"name": "rescore-400", "kind": "rescore", "request": t.request()})
    sizes = (100, 1000) if quick else (100, 1000, 10_000)
    for n in sizes:
        seeds = 2 if n >= 10_000 else 5
        requests = [generate(random.Random(seed), Shape.scale(n)) for seed in range(seeds)]
        cases.append({"name": f"forms-{n}", "kind": "calls", "requests": requests})
    calls = 6 if quick else 12
    loop = agent_loop(0, forms=5000, calls=calls)
    cases.append(
        {"name": "loop-5000", "kind": "loop", "first": loop.first, "deltas": list(loop.deltas)}
    )
    return {"cases": cases}


# -- one side (a child process) --------------------------------------------------------


def _digest(result: Any) -> list[Any]:
    rendering = result.rendering
    text = None if rendering is None else hashlib.sha256(rendering.text.encode()).hexdigest()
    return [result.status.value, list(result.selected), result.package_id, result.trace_id, text]


def _timed(call: Any) -> tuple[Any, tuple[float, float]]:
    """The call's answer, its wall time and the process's CPU time over it (every
    thread's: CP-SAT's workers included)."""
    started, spent = time.perf_counter(), time.process_time()
    out = call()
    return out, (time.perf_counter() - started, time.process_time() - spent)


def _rescore(request: dict[str, Any]) -> dict[str, Any]:
    """Recency re-scoring: every conversation candidate a little less relevant."""
    kinds = {"tool_call", "tool_result", "assistant_turn", "user_turn", "memory"}
    return {
        "relevance": {
            c["id"]: round(c.get("relevance", 0.0) * 0.95, 3)
            for c in request["candidates"]
            if c.get("kind") in kinds and not c.get("required")
        }
    }


def _case(
    case: dict[str, Any], repeats: int
) -> tuple[dict[str, list[float]], dict[str, list[float]], list[Any]]:
    import assembler

    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    answers: list[Any] = []
    name, kind = case["name"], case["kind"]

    def note(key: str, seconds: tuple[float, float]) -> None:
        times.setdefault(key, []).append(seconds[0])
        cpu.setdefault(key, []).append(seconds[1])

    if kind == "call":
        for _ in range(repeats):
            result, seconds = _timed(
                lambda: assembler.assemble(
                    case["request"], render=case["render"], time_limit=_LIMIT
                )
            )
            note(name, seconds)
        answers.append(_digest(result))
    elif kind == "calls":
        for request in case["requests"]:
            for _ in range(max(1, repeats // 2)):
                result, seconds = _timed(lambda r=request: assembler.assemble(r, time_limit=_LIMIT))
                note(name, seconds)
            answers.append(_digest(result))
    elif kind == "cached":
        previous = assembler.assemble(
            case["previous"], render="anthropic-messages", time_limit=_LIMIT
        )
        rendering = previous.rendering
        assert rendering is not None
        blocks = rendering.manifest.cache_blocks(rendering.text)
        cache = {**_PROVIDER, "previous": {"blocks": blocks}}
        cached = {**case["request"], "cache": cache}
        blind = name.replace("cached", "blind")
        for _ in range(repeats):
            result, seconds = _timed(
                lambda: assembler.assemble(cached, render="anthropic-messages", time_limit=_LIMIT)
            )
            note(name, seconds)
            plain, seconds = _timed(
                lambda: assembler.assemble(
                    case["request"], render="anthropic-messages", time_limit=_LIMIT
                )
            )
            note(blind, seconds)
        answers += [_digest(result), _digest(plain)]
    elif kind == "turn":
        for _ in range(repeats):
            session = assembler.Session(case["first"], time_limit=_LIMIT, render=case["render"])
            session.answer()
            for delta in case["deltas"]:
                result, seconds = _timed(lambda d=delta, s=session: s.apply(d))
                note(name, seconds)
        answers.append(_digest(result))
    elif kind == "rescore":
        session = assembler.Session(case["request"], time_limit=_LIMIT, render="openai-chat")
        session.answer()
        for _ in range(max(2, repeats)):
            rescore = _rescore(session.to_dict())
            result, seconds = _timed(lambda d=rescore: session.apply(d))
            note(name, seconds)
            request = session.to_dict()
            fresh, seconds = _timed(
                lambda r=request: assembler.assemble(r, time_limit=_LIMIT, render="openai-chat")
            )
            note("fresh-400", seconds)
            answers += [_digest(result), _digest(fresh)]
    elif kind == "loop":
        session = assembler.Session(case["first"], time_limit=_LIMIT)
        session.answer()
        for delta in case["deltas"]:
            result, seconds = _timed(lambda d=delta: session.apply(d))
            note(name, seconds)
            answers.append(_digest(result))
        for _ in range(max(2, repeats)):
            rescore = _rescore(session.to_dict())
            result, seconds = _timed(lambda d=rescore: session.apply(d))
            note("rescore-5000", seconds)
            request = session.to_dict()
            fresh, seconds = _timed(lambda r=request: assembler.assemble(r, time_limit=_LIMIT))
            note("fresh-5000", seconds)
            answers += [_digest(result), _digest(fresh)]
    return times, cpu, answers


def _side(inputs: Path, repeats: int) -> None:
    import assembler

    data = json.loads(inputs.read_text(encoding="utf-8"))
    # the first calls of a process load the solvers: one untimed pass over the smaller
    # cases first
    for case in data["cases"]:
        if case["kind"] in ("call", "cached", "turn") and case["name"].endswith("-40"):
            _case(case, 1)
    out: dict[str, Any] = {
        "package": assembler.__file__,
        "gc": list(gc.get_threshold()),
        "times": {},
        "cpu": {},
        "answers": {},
    }
    for case in data["cases"]:
        times, cpu, answers = _case(case, repeats)
        out["times"].update(times)
        out["cpu"].update(cpu)
        out["answers"][case["name"]] = answers
    json.dump(out, sys.stdout)


# -- both sides ----------------------------------------------------------------------


def _run_side(path: Path, inputs: Path, repeats: int, kernels: str | None = None) -> dict[str, Any]:
    from benchmarks.revisions import call_in

    env = None if kernels is None else {"ASSEMBLER_KERNELS": kernels}
    answers: dict[str, Any] = call_in(path, Path(__file__), "_side", inputs, repeats, env=env)
    return answers


def _commit(path: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    dirty = subprocess.run(
        ["git", "-C", str(path), "status", "--porcelain", "--", "assembler"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__)
    parser.add_argument("--before", help="the git revision to compare with")
    parser.add_argument(
        "--kernels", action="store_true", help="the pure-Python twins beside the compiled kernels"
    )
    parser.add_argument("--after", help="a git revision instead of the working tree")
    parser.add_argument("--label", default="", help="what the change is, for the table")
    parser.add_argument("--rounds", type=int, default=3, help="child processes per side")
    parser.add_argument("--repeats", type=int, default=5, help="calls per case per round")
    parser.add_argument("--quick", action="store_true", help="no 10,000-form requests")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if (args.before is None) == (not args.kernels):
        parser.error("give --before REV or --kernels")
    sys.path.insert(0, str(ROOT))
    from benchmarks import machine

    inputs = _inputs(args.quick)
    load_before = os.getloadavg()
    sides: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    from benchmarks.revisions import checked_out

    revisions = (None, None) if args.kernels else (args.before, args.after)
    twins, compiled = ("python", "compiled") if args.kernels else (None, None)
    with (
        checked_out(*revisions) as (before, after),
        tempfile.TemporaryDirectory() as scratch,
    ):
        given = Path(scratch) / "inputs.json"
        given.write_text(json.dumps(inputs), encoding="utf-8")
        for _ in range(args.rounds):
            sides["before"].append(_run_side(before, given, args.repeats, twins))
            sides["after"].append(_run_side(after, given, args.repeats, compiled))
        measured = _commit(after)
    if args.kernels:
        args.before, measured = f"{measured} pure-Python twins", f"{measured} compiled"
    load_after = os.getloadavg()
    differ = [
        name
        for name in sides["before"][0]["answers"]
        if any(
            run["answers"][name] != sides["before"][0]["answers"][name]
            for run in sides["before"] + sides["after"]
        )
    ]
    medians: dict[str, dict[str, float]] = {}
    cpu_medians: dict[str, dict[str, float]] = {}
    for side, runs in sides.items():
        for key in runs[0]["times"]:
            samples = [t for run in runs for t in run["times"][key]]
            medians.setdefault(key, {})[side] = statistics.median(samples)
            spent = [t for run in runs for t in run["cpu"][key]]
            cpu_medians.setdefault(key, {})[side] = statistics.median(spent)
    record = {
        "label": args.label,
        "before": args.before,
        "after": measured,
        "machine": machine.describe(),
        "load": [round(x, 2) for x in (*load_before[:1], *load_after[:1])],
        "gc": {side: runs[0]["gc"] for side, runs in sides.items()},
        "rounds": args.rounds,
        "repeats": args.repeats,
        "medians_ms": {
            k: {s: round(v * 1000, 3) for s, v in m.items()} for k, m in medians.items()
        },
        "cpu_medians_ms": {
            k: {s: round(v * 1000, 3) for s, v in m.items()} for k, m in cpu_medians.items()
        },
        "answers_differ": differ,
    }
    table = _table(record)
    print(table)
    if not args.no_write:
        store = RESULTS / "speed.json"
        history = json.loads(store.read_text()) if store.exists() else []
        history.append(record)
        store.write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
        with (RESULTS / "SPEED.md").open("a", encoding="utf-8") as out:
            out.write("\n" + table + "\n")
    if differ:
        print(f"answers differ: {differ}", file=sys.stderr)
    return 1 if differ else 0


def _table(record: dict[str, Any]) -> str:
    lines = [
        f"### {record['label'] or 'change'}: {record['before']} -> {record['after']}",
        "",
        f"Load average {record['load'][0]} before, {record['load'][1]} after; "
        f"{record['rounds']} rounds x {record['repeats']} calls per side, interleaved; "
        f"collector thresholds {record['gc']['after']} (the library's defaults). "
        + (
            "Answers identical on every case."
            if not record["answers_differ"]
            else f"Answers differ: {', '.join(record['answers_differ'])}."
        ),
        "",
        "| case | before | after | after / before | CPU before | CPU after | CPU ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    cpu = record.get("cpu_medians_ms", {})
    for key, m in record["medians_ms"].items():
        row = f"| {key} | {m['before']:.2f} ms | {m['after']:.2f} ms | {_ratio(m)} |"
        c = cpu.get(key)
        row += (
            " - | - | - |"
            if c is None
            else (f" {c['before']:.2f} ms | {c['after']:.2f} ms | {_ratio(c)} |")
        )
        lines.append(row)
    return "\n".join(lines)


def _ratio(m: dict[str, float]) -> str:
    return f"{m['after'] / m['before']:.2f}x" if m["before"] else "-"


if __name__ == "__main__":
    raise SystemExit(main())
