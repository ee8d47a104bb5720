"""Ledger benchmarks: ``python -m benchmarks.ledger`` (``--help`` for the options).

Input: command-line options. Output: ``benchmarks/results/ledger.json`` (every
measurement) and ``benchmarks/results/LEDGER.md`` (the tables), and a summary on stderr.
Exit 0, or 1 when a recorded answer differs from the unrecorded one or a bundle fails
the independent verifier.

Measured, side by side in one process on the same seeded instances:

* recording overhead per compilation at 100 and 1,000 forms: the time spent in the
  recorder (``requested`` before the solve + the outcome after it), timed around those
  calls, and assemble with and without ``ledger=`` interleaved (goal: under 2 ms and
  under 10% of assemble). Each candidate carries content (about 4 bytes per unit of
  cost, so a 1,000-form request offers about 0.5 MB of text), which the ledger hashes
  and stores.
* the ledger's size after a 1,000-turn agent session (a system prompt and tool
  descriptions every turn, a sliding window of the last 40 messages, 12 documents
  retrieved per turn from a pool of 300, each document in a full and a compact form),
  against the bytes of the requests as sent.
* replay throughput: ``replay`` of every compilation of that session (each re-solves
  its request and compares), against assemble alone on the same requests.

* PostgreSQL against SQLite (``benchmarks/ledger_pg.py``): recording a 100-form
  compilation into each, and 8 writer processes on one ledger in each lock mode; on a
  throwaway server (``benchmarks/pgserver.py``) unless ``--postgres URL`` names one,
  skipped with ``--no-postgres``.

The machine is shared: ``os.getloadavg()`` is recorded before and after each part.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import assembler
from assembler.ledger.replay import replay

from . import machine
from .ledger_cases import _answer, _Timed, _verified, _words, instance

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
GOAL_MS = 2.0
GOAL_FRACTION = 0.10


def overhead(
    forms: int, scenario: str, instances: int, repeats: int, folder: Path
) -> dict[str, Any]:
    """The recorder's time inside assemble, and assemble with and without it, interleaved.

    ``recurring``: the same candidates offered again (as an agent re-offers its system
    prompt and history), after one recorded warm-up; ``fresh``: every repeat a new
    request whose every candidate and content is new to the ledger.
    """
    load_before = os.getloadavg()
    recorder_ms: list[float] = []
    recorder_cpu_ms: list[float] = []
    plain_ms: list[float] = []
    plain_cpu_ms: list[float] = []
    recorded_ms: list[float] = []
    mismatches = 0
    with assembler.Ledger(folder / f"overhead-{forms}-{scenario}.db") as ledger:
        timed = _Timed(ledger)
        for i in range(instances):
            request = instance(forms, 1000 + i)
            assembler.assemble(request, time_limit=10, ledger=timed)  # warm-up
            for r in range(repeats):
                if scenario == "fresh":
                    request = instance(forms, 100_000 * (i + 1) + r)
                start, cpu = time.perf_counter(), time.process_time()
                plain = assembler.assemble(request, time_limit=10)
                plain_ms.append((time.perf_counter() - start) * 1e3)
                plain_cpu_ms.append((time.process_time() - cpu) * 1e3)
                timed.seconds = timed.cpu_seconds = 0.0
                start = time.perf_counter()
                recorded = assembler.assemble(request, time_limit=10, ledger=timed)
                recorded_ms.append((time.perf_counter() - start) * 1e3)
                recorder_ms.append(timed.seconds * 1e3)
                recorder_cpu_ms.append(timed.cpu_seconds * 1e3)
                _verified(request, recorded)
                mismatches += _answer(plain) != _answer(recorded)
    plain = statistics.median(plain_ms)
    spent = statistics.median(recorder_ms)
    return {
        "forms": forms,
        "scenario": scenario,
        "content_bytes_per_request": sum(len(c.get("content", "")) for c in request["candidates"]),
        "instances": instances,
        "repeats": repeats,
        "recorder_ms_median": spent,
        "recorder_ms_p90": statistics.quantiles(recorder_ms, n=10)[-1],
        "recorder_cpu_ms_median": statistics.median(recorder_cpu_ms),
        "assemble_ms_median": plain,
        "assemble_cpu_ms_median": statistics.median(plain_cpu_ms),
        "assemble_recorded_ms_median": statistics.median(recorded_ms),
        "difference_ms_median": statistics.median(recorded_ms) - plain,
        "recorder_fraction": spent / plain,
        "goal_met": spent < GOAL_MS and spent / plain < GOAL_FRACTION,
        "answers_differ": mismatches,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


class _Session:
    """A deterministic agent session: each turn's request as the agent would build it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.system = _words(self.rng, 2400)
        self.tools = [_words(self.rng, 600) for _ in range(8)]
        self.pool = [(_words(self.rng, 3000), _words(self.rng, 400)) for _ in range(300)]
        self.history: list[tuple[str, str]] = []

    def turn(self, number: int) -> dict[str, Any]:
        rng = self.rng
        self.history.append((f"user-{number}", _words(rng, rng.randint(80, 600))))
        if number:
            self.history.append((f"assistant-{number - 1}", _words(rng, rng.randint(200, 1500))))
        window = self.history[-40:]
        candidates: list[dict[str, Any]] = [
            {"id": "system", "cost": 600, "relevance": 1, "required": True, "role": "instruction",
             "channel": "system", "scope": "shared", "content": self.system},
        ]  # fmt: skip
        for i, text in enumerate(self.tools):
            candidates.append({"id": f"tool-{i}", "cost": 150, "relevance": 0.6,
                               "scope": "shared", "content": text})  # fmt: skip
        for age, (name, text) in enumerate(reversed(window)):
            relevance = round(max(0.1, 0.95 - 0.02 * age), 3)
            candidates.append({"id": name, "cost": len(text) // 4, "relevance": relevance,
                               "required": age == 0, "scope": "shared",
                               "content": text})  # fmt: skip
        for doc in rng.sample(range(len(self.pool)), 12):
            full, compact = self.pool[doc]
            relevance = round(rng.uniform(0.3, 0.9), 3)
            candidates.append(
                {
                    "id": f"doc-{doc}-full",
                    "identity": f"doc-{doc}",
                    "cost": 750,
                    "relevance": relevance,
                    "scope": "shared",
                    "content": full,
                }
            )
            candidates.append({"id": f"doc-{doc}-compact", "identity": f"doc-{doc}",
                               "cost": 100, "relevance": round(relevance * 0.6, 3),
                               "scope": "shared", "content": compact})  # fmt: skip
        return {"task": {"id": "agent-session", "budget": 8000}, "candidates": candidates}


def session(turns: int, folder: Path, replays: int) -> dict[str, Any]:
    load_before = os.getloadavg()
    path = folder / "session.db"
    agent = _Session(7)
    sent_bytes = 0
    requests = []
    started = time.perf_counter()
    with assembler.Ledger(path, session="agent") as ledger:
        for number in range(turns):
            request = agent.turn(number)
            sent_bytes += len(json.dumps(request, ensure_ascii=False).encode("utf-8"))
            result = assembler.assemble(request, ledger=ledger)
            _verified(request, result)
            if len(requests) < replays:
                requests.append(request)
    recorded_s = time.perf_counter() - started
    size = sum(
        os.path.getsize(str(path) + suffix)
        for suffix in ("", "-wal")
        if os.path.exists(str(path) + suffix)
    )
    # replay: read back, re-solve, compare (the first `replays` compilations)
    with assembler.Ledger(path, readonly=True) as ledger:
        numbers = [s.number for s in ledger.summaries()][:replays]
        start = time.perf_counter()
        identical = sum(replay(ledger.compilation(n)).identical for n in numbers)
        replay_s = time.perf_counter() - start
    start = time.perf_counter()
    for request in requests:
        assembler.assemble(request)
    assemble_s = time.perf_counter() - start
    return {
        "turns": turns,
        "offered_per_turn_last": len(requests[-1]["candidates"]) if requests else 0,
        "requests_bytes": sent_bytes,
        "ledger_bytes": size,
        "ratio": sent_bytes / size,
        "recorded_session_s": recorded_s,
        "replays": len(numbers),
        "replays_identical": identical,
        "replay_per_s": len(numbers) / replay_s,
        "replay_ms_each": replay_s / len(numbers) * 1e3,
        "assemble_ms_each_same_requests": assemble_s / max(1, len(requests)) * 1e3,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


def _markdown(data: dict[str, Any]) -> str:
    lines = [
        "# Ledger benchmarks",
        "",
        f"`python -m benchmarks.ledger` on {data['machine']['cpu']} ({data['machine']['cores']}"
        f" cores), {data['machine']['date']}, commit {data['machine']['commit']}. The machine"
        " is shared: load averages are recorded per part.",
        "",
        "## Recording overhead per compilation",
        "",
        "The recorder's time is measured inside `assemble` (its two calls: the request"
        " before the solve, the outcome after it); *with - without* is assemble with"
        " `ledger=` minus assemble without it, interleaved on the same requests (noisier).",
        "*recurring*: the candidates were offered before (an agent's system prompt and"
        " history); *fresh*: every candidate and its content is new to the ledger.",
        "",
        "CPU columns are this process's CPU time (`time.process_time`), which a busy"
        " machine inflates less than wall time.",
        "",
        "| forms | scenario | content per request | recorder (median, p90) | recorder CPU |"
        " assemble alone (wall, CPU) | recorder / assemble | with - without |"
        " goal (< 2 ms and < 10%) | answers differ | load before |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in data["overhead"]:
        lines.append(
            f"| {row['forms']:,} | {row['scenario']} |"
            f" {row['content_bytes_per_request'] / 1e3:,.0f} kB |"
            f" {row['recorder_ms_median']:.2f} ms,"
            f" {row['recorder_ms_p90']:.2f} ms | {row['recorder_cpu_ms_median']:.2f} ms |"
            f" {row['assemble_ms_median']:.2f} ms, {row['assemble_cpu_ms_median']:.2f} ms |"
            f" {row['recorder_fraction']:.1%} | {row['difference_ms_median']:+.2f} ms |"
            f" {'met' if row['goal_met'] else 'not met'} | {row['answers_differ']} |"
            f" {row['loadavg_before'][0]:.2f} |"
        )
    s = data["session"]
    lines += [
        "",
        f"## A {s['turns']:,}-turn agent session",
        "",
        f"Requests as sent: {s['requests_bytes'] / 1e6:.1f} MB; ledger file:"
        f" {s['ledger_bytes'] / 1e6:.2f} MB ({s['ratio']:.0f}x smaller: each content is stored"
        f" once, documents compressed). {s['offered_per_turn_last']} candidates offered in the"
        f" last turn; recording the whole session took {s['recorded_session_s']:.1f} s.",
        "",
        "## Replay",
        "",
        f"{s['replays']} compilations replayed ({s['replays_identical']} identical):"
        f" {s['replay_per_s']:.0f} replays/s, {s['replay_ms_each']:.1f} ms each, against"
        f" {s['assemble_ms_each_same_requests']:.1f} ms for assemble alone on the same requests"
        " (a replay reads the record, re-solves and compares).",
        "",
    ]
    return "\n".join(lines)


def _postgres(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """The PostgreSQL parts, on ``--postgres`` or on a server started for them."""
    from . import ledger_pg, pgserver

    server = None
    admin = args.postgres
    if admin is None:
        server = pgserver.start()
        admin = server.url
    try:
        import psycopg

        with psycopg.connect(admin) as conn:
            version = conn.execute("SHOW server_version").fetchone()
        made = iter(range(1, 1000))

        def fresh() -> str:
            return pgserver.create_database(admin, f"bench_{os.getpid()}_{next(made)}")

        recording = [
            ledger_pg.recording(int(n), scenario, args.instances, args.repeats,
                                folder / f"pg-{n}-{scenario}-{durability}.db", fresh(),
                                durability)
            for n in args.pg_sizes.split(",")
            for durability in ("store", "server")
            for scenario in ("recurring", "fresh")
        ]  # fmt: skip
        wake = ledger_pg.wakeup(fresh())
        writers = [
            ledger_pg.writers(fresh(), lock, args.writer_seconds)
            for lock in ("advisory", "serializable")
        ]
        writers.append(ledger_pg.writers(str(folder / "writers.db"), "sqlite", args.writer_seconds))
    finally:
        if server is not None:
            server.stop()
    return {
        "server_version": None if version is None else version[0],
        "recording": recording,
        "wakeup": wake,
        "writers": writers,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ledger", description=__doc__)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument(
        "--postgres",
        metavar="URL",
        help="a PostgreSQL server's administrator URL (default: start one)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="SQLite only")
    parser.add_argument("--pg-sizes", default="100")
    parser.add_argument("--writer-seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"machine": machine.describe()}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        data["overhead"] = [
            overhead(int(n), scenario, args.instances, args.repeats, folder)
            for n in args.sizes.split(",")
            for scenario in ("recurring", "fresh")
        ]
        data["session"] = session(args.turns, folder, args.replays)
        if not args.no_postgres:
            data["postgres"] = _postgres(args, folder)
    (out / "ledger.json").write_text(json.dumps(data, indent=2) + "\n")
    text = _markdown(data)
    if "postgres" in data:
        from . import ledger_pg

        text += "\n".join(ledger_pg.markdown(data["postgres"]))
    (out / "LEDGER.md").write_text(text)
    for row in data["overhead"]:
        print(
            f"{row['forms']} forms, {row['scenario']}: recorder {row['recorder_ms_median']:.2f} ms"
            f" ({row['recorder_fraction']:.1%} of {row['assemble_ms_median']:.2f} ms)",
            file=sys.stderr,
        )
    s = data["session"]
    print(f"session: {s['requests_bytes']} B sent, ledger {s['ledger_bytes']} B;"
          f" replay {s['replay_per_s']:.0f}/s", file=sys.stderr)  # fmt: skip
    pg = data.get("postgres", {"recording": [], "writers": []})
    for row in pg["recording"]:
        print(f"{row['forms']} forms, {row['scenario']}: PostgreSQL"
              f" {row['postgresql_ms_median']:.2f} ms, SQLite {row['sqlite_ms_median']:.2f} ms"
              f" ({row['ratio']:.2f}x)", file=sys.stderr)  # fmt: skip
    for row in pg["writers"]:
        print(f"{row['writers']} writers, {row['store']}: {row['per_second']:.0f}/s,"
              f" {row['chain_faults']} faults, {row['lost']} lost,"
              f" {row['duplicated']} duplicated", file=sys.stderr)  # fmt: skip
    bad = any(row["answers_differ"] for row in data["overhead"] + pg["recording"])
    bad = bad or any(
        row["chain_faults"] or row["lost"] or row["duplicated"] for row in pg["writers"]
    )
    bad = bad or s["replays_identical"] != s["replays"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
