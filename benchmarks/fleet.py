"""The fleet: ``assembler serve`` replicas sharing one PostgreSQL ledger.

Run: ``python -m benchmarks.fleet [--postgres URL] [--forms 1000] [--rounds 8]
[--seconds 30] [--clients 300] [--deltas 5] [--out DIR]``. Output: ``fleet.json`` and
``FLEET.md`` in ``DIR`` (``benchmarks/results``), a summary on stderr; exit 0, or 1 when
an answer differs, a compilation is lost or recorded twice, or the chain breaks. The
server is a throwaway one (``benchmarks/pgserver.py``) unless ``--postgres`` names one.

Measured, each replica ``python -m assembler serve --port 0 --ledger URL`` over loopback:

* **rebuild**: a session of ``--forms`` candidates opened at replica A; then, timed
  by the client, one after the other on replica B: the delta (B does not hold the
  session: it rebuilds it from the ledger, then answers), and ``POST /assemble`` of the
  request that delta makes (a fresh call); the answers are compared (goal: the delta at
  most 1.5x the fresh call, the same answer);
* **throughput**: client processes sending session deltas (~200-form sessions) for
  ``--seconds`` to one replica, then to two (each with ``--concurrency 2``), side by
  side in one run (goal: 2 replicas >= 1.6x one, on this 2-core machine, where the
  clients and the database share the same cores);
* **kill**: three replicas, ``--clients`` client threads each opening a session and
  sending ``--deltas`` deltas round-robin over the replicas, one replica SIGKILLed with
  a solve in flight once a third are answered and restarted on its port; a call that
  meets the dead replica is sent again, with its version, to the next (goal: 0 lost,
  0 recorded twice, every session continued, the chain verified).
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from . import machine, pgserver

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
TOKEN = "fleet-benchmark-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
GOAL_REBUILD = 1.5
GOAL_SCALE = 1.6


class Replica:
    def __init__(self, url: str, token: str, *args: str, port: int = 0) -> None:
        command = [sys.executable, "-m", "assembler", "serve", "--port", str(port),
                   "--ledger", url, "--token-file", token, *args]  # fmt: skip
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("a replica did not start")
        self.port = int(json.loads(line)["port"])

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=60)


def call(port: int, method: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, json.dumps(body).encode(), AUTH)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def request(seed: int, forms: int) -> dict[str, Any]:
    rng = random.Random(seed)
    candidates: list[dict[str, Any]] = [
        {"id": "system", "cost": 60, "relevance": 1.0, "required": True, "role": "instruction",
         "channel": "system", "content": "Answer from the evidence. " * 20},
    ]  # fmt: skip
    for i in range(forms - 1):
        candidates.append({
            "id": f"doc-{i}", "identity": f"doc-{i // 2}", "cost": rng.randint(30, 400),
            "relevance": round(rng.uniform(0.05, 0.95), 3),
            "content": f"document {i} of {seed}: " + "lorem ipsum " * rng.randint(5, 40),
        })  # fmt: skip
    return {"task": {"id": f"t{seed}", "budget": 25 * forms}, "candidates": candidates}


def delta(seed: int, number: int) -> dict[str, Any]:
    rng = random.Random(seed * 7919 + number)
    change: dict[str, Any] = {"add": [{
        "id": f"msg-{number}", "cost": rng.randint(20, 300),
        "relevance": round(rng.uniform(0.2, 0.95), 3), "content": f"message {number} {seed}",
    }]}  # fmt: skip
    if number > 1:
        change["remove"] = [f"msg-{number - 1}"]
    return change


def _applied(req: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    gone = set(change.get("remove", []))
    out = {**req, "candidates": [c for c in req["candidates"] if c["id"] not in gone]}
    out["candidates"] += change.get("add", [])
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("status", "selected", "package_id", "trace_id", "cost", "value", "optimal")
    return all(a[k] == b[k] for k in keys)


def rebuild(url: str, token: str, forms: int, rounds: int) -> dict[str, Any]:
    load_before = os.getloadavg()
    a, b = Replica(url, token), Replica(url, token)
    delta_ms, fresh_ms, held_ms, differ = [], [], [], 0
    try:
        for r in range(rounds):
            opening = request(5000 + r, forms)
            key = f"rebuild-{r}"
            status, _ = call(a.port, "PUT", f"/sessions/{key}", opening)
            assert status == 200
            change = delta(r, 1)
            start = time.perf_counter()
            status, rebuilt = call(b.port, "POST", f"/sessions/{key}/delta?version=0", change)
            delta_ms.append((time.perf_counter() - start) * 1e3)
            assert status == 200, rebuilt
            start = time.perf_counter()
            status, fresh = call(b.port, "POST", "/assemble", _applied(opening, change))
            fresh_ms.append((time.perf_counter() - start) * 1e3)
            differ += not _same(rebuilt["result"], fresh["result"])
            # the next delta at B, which now holds the session
            start = time.perf_counter()
            call(b.port, "POST", f"/sessions/{key}/delta?version=1", delta(r, 2))
            held_ms.append((time.perf_counter() - start) * 1e3)
    finally:
        a.stop()
        b.stop()
    ratio = statistics.median(delta_ms) / statistics.median(fresh_ms)
    return {
        "forms": forms,
        "rounds": rounds,
        "rebuilt_delta_ms_median": statistics.median(delta_ms),
        "fresh_call_ms_median": statistics.median(fresh_ms),
        "held_delta_ms_median": statistics.median(held_ms),
        "ratio": ratio,
        "answers_differ": differ,
        "goal_met": ratio <= GOAL_REBUILD and differ == 0,
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


def _load(ports: list[int], seconds: float, seed: int, forms: int, out: Any) -> None:
    """One client process: sessions round-robin over ``ports``, deltas until the end."""
    threads = []
    stop = time.monotonic() + seconds
    counts = [0] * 4

    def client(index: int) -> None:
        port = ports[index % len(ports)]
        key = f"load-{seed}-{index}"
        status, _ = call(port, "PUT", f"/sessions/{key}", request(seed * 100 + index, forms))
        assert status == 200
        number = 0
        while time.monotonic() < stop:
            number += 1
            status, _ = call(port, "POST", f"/sessions/{key}/delta", delta(index, number))
            if status == 200:
                counts[index] += 1

    for index in range(4):
        threads.append(threading.Thread(target=client, args=(index,)))
        threads[-1].start()
    for thread in threads:
        thread.join()
    out.put(sum(counts))


def throughput(url: str, token: str, seconds: float, forms: int = 200) -> dict[str, Any]:
    rows = []
    for count in (1, 2, 1, 2):  # side by side, twice
        load_before = os.getloadavg()
        replicas = [Replica(url, token, "--concurrency", "2") for _ in range(count)]
        ports = [r.port for r in replicas]
        results: Any = multiprocessing.get_context("spawn").Queue()
        procs = [
            multiprocessing.get_context("spawn").Process(
                target=_load, args=(ports, seconds, 10 * len(rows) + p, forms, results)
            )
            for p in range(3)
        ]
        for proc in procs:
            proc.start()
        answered = sum(results.get(timeout=seconds + 300) for _ in procs)
        for proc in procs:
            proc.join()
        for r in replicas:
            r.stop()
        rows.append({"replicas": count, "deltas": answered, "per_second": answered / seconds,
                     "loadavg_before": load_before})  # fmt: skip
    one = statistics.mean(r["per_second"] for r in rows if r["replicas"] == 1)
    two = statistics.mean(r["per_second"] for r in rows if r["replicas"] == 2)
    return {"seconds": seconds, "forms": forms, "runs": rows, "one_per_second": one,
            "two_per_second": two, "ratio": two / one,
            "goal_met": two / one >= GOAL_SCALE}  # fmt: skip


class _Client:
    def __init__(self, index: int, ports: list[int], deltas: int) -> None:
        self.index, self.ports, self.deltas = index, ports, deltas
        self.key = f"kill-{index}"
        self.request = request(9000 + index, 40)
        self.traces: list[str] = []
        self.retries = 0
        self.error: str | None = None

    def send(self, attempt: int, method: str, path: str, body: Any) -> dict[str, Any]:
        for tries in range(400):
            port = self.ports[(self.index + attempt + tries) % len(self.ports)]
            try:
                status, reply = call(port, method, path, body)
            except (ConnectionError, http.client.HTTPException, OSError):
                self.retries += 1
                time.sleep(0.05)
                continue
            if status == 503:
                time.sleep(0.05 * (1 + tries % 5))
                continue
            if status != 200:
                raise RuntimeError(f"{method} {path}: {status} {reply}")
            return reply
        raise RuntimeError(f"{method} {path}: no replica answered")

    def run(self, opened: threading.Barrier) -> None:
        try:
            reply = self.send(0, "PUT", f"/sessions/{self.key}", self.request)
            self.traces.append(reply["result"]["trace_id"])
            opened.wait()
            for number in range(1, self.deltas + 1):
                change = delta(self.index, number)
                path = f"/sessions/{self.key}/delta?version={number - 1}"
                reply = self.send(number, "POST", path, change)
                if reply["session"]["version"] != number:
                    raise RuntimeError(f"version {reply['session']['version']}, not {number}")
                self.traces.append(reply["result"]["trace_id"])
        except (RuntimeError, threading.BrokenBarrierError) as exc:
            self.error = str(exc)


def kill(url: str, token: str, clients: int, deltas: int) -> dict[str, Any]:
    import assembler
    from assembler.ledger import CompilationOutcome
    from assembler.ledger.verify import verify

    load_before = os.getloadavg()
    started = time.perf_counter()
    replicas = [Replica(url, token, "--concurrency", "1") for _ in range(3)]
    ports = [r.port for r in replicas]
    fleet = [_Client(i, ports, deltas) for i in range(clients)]
    opened = threading.Barrier(clients)
    threads = [threading.Thread(target=c.run, args=(opened,)) for c in fleet]
    for thread in threads:
        thread.start()
    while sum(len(c.traces) - 1 for c in fleet) < clients * deltas // 3:
        time.sleep(0.01)
    victim = replicas[1]
    while call(victim.port, "GET", "/healthz", None)[1].get("solving", 0) < 1:
        pass
    victim.stop(signal.SIGKILL)
    time.sleep(0.5)
    replicas[1] = Replica(url, token, "--concurrency", "1", port=victim.port)
    for thread in threads:
        thread.join()
    for r in replicas:
        r.stop()
    with assembler.Ledger(url, readonly=True) as ledger:
        report = verify(ledger)
        summaries = ledger.summaries()
    lost = duplicated = 0
    for c in fleet:
        recorded = [s.trace_id for s in summaries if s.session == c.key
                    and s.outcome is not CompilationOutcome.INTERRUPTED]  # fmt: skip
        lost += sum((Counter(c.traces) - Counter(recorded)).values())
        duplicated += sum((Counter(recorded) - Counter(c.traces)).values())
    return {
        "replicas": 3,
        "clients": clients,
        "deltas": deltas,
        "seconds": time.perf_counter() - started,
        "sessions_continued": sum(c.error is None for c in fleet),
        "errors": [c.error for c in fleet if c.error][:5],
        "calls_sent_again": sum(c.retries for c in fleet),
        "compilations": sum(s.outcome is not CompilationOutcome.INTERRUPTED for s in summaries),
        "interrupted": sum(s.outcome is CompilationOutcome.INTERRUPTED for s in summaries),
        "lost": lost,
        "duplicated": duplicated,
        "chain_faults": len(report.problems),
        "loadavg_before": load_before,
        "loadavg_after": os.getloadavg(),
    }


def _markdown(data: dict[str, Any]) -> str:
    m, r, t, k = data["machine"], data["rebuild"], data["throughput"], data["kill"]
    runs = ", ".join(f"{row['replicas']}: {row['per_second']:.0f}/s" for row in t["runs"])
    return "\n".join(
        [
            "# The fleet: replicas sharing one PostgreSQL ledger",
            "",
            f"`python -m benchmarks.fleet` on {m['cpu']} ({m['cores']} cores), {m['date']},"
            f" commit {m['commit']}. The replicas, the PostgreSQL server and the clients share"
            " the machine's 2 cores; load averages are recorded per part.",
            "",
            "| case | goal | measured | met |",
            "|---|---|---|---|",
            f"| a delta to a session this replica does not hold ({r['forms']:,} forms) |"
            f" <= {GOAL_REBUILD}x a fresh call, same answer |"
            f" {r['rebuilt_delta_ms_median']:.1f} ms against {r['fresh_call_ms_median']:.1f} ms"
            f" ({r['ratio']:.2f}x; {r['answers_differ']} answers differ; the next delta at the"
            f" replica then holding it: {r['held_delta_ms_median']:.1f} ms) |"
            f" {'yes' if r['goal_met'] else 'no'} |",
            f"| throughput, 2 replicas against 1 ({t['forms']}-form sessions, {t['seconds']:g} s"
            f" each, twice side by side) | >= {GOAL_SCALE}x |"
            f" {t['two_per_second']:.0f} against {t['one_per_second']:.0f} deltas/s"
            f" ({t['ratio']:.2f}x; runs {runs}) | {'yes' if t['goal_met'] else 'no'} |",
            f"| SIGKILL of a replica under load ({k['clients']} clients x {k['deltas']} deltas,"
            f" 3 replicas) | 0 lost, every session answered by another replica |"
            f" {k['lost']} lost, {k['duplicated']} recorded twice,"
            f" {k['sessions_continued']}/{k['clients']} sessions continued,"
            f" {k['calls_sent_again']} calls sent again, {k['interrupted']} interrupted,"
            f" {k['chain_faults']} chain faults, {k['seconds']:.0f} s |"
            f" {'yes' if k['lost'] == k['duplicated'] == k['chain_faults'] == 0 else 'no'} |",
            "",
            f"Load before each part: rebuild {r['loadavg_before'][0]:.2f}, throughput"
            f" {t['runs'][0]['loadavg_before'][0]:.2f}, kill {k['loadavg_before'][0]:.2f}.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet", description=__doc__)
    parser.add_argument("--postgres", metavar="URL")
    parser.add_argument("--forms", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--deltas", type=int, default=5)
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = None if args.postgres else pgserver.start()
    admin = args.postgres or (server.url if server else "")
    data: dict[str, Any] = {"machine": machine.describe()}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            token = os.path.join(scratch, "token")
            Path(token).write_text(TOKEN)
            os.chmod(token, 0o600)

            def fresh(name: str) -> str:
                return pgserver.create_database(admin, f"fleet_{name}_{os.getpid()}")

            data["rebuild"] = rebuild(fresh("rebuild"), token, args.forms, args.rounds)
            data["throughput"] = throughput(fresh("load"), token, args.seconds)
            data["kill"] = kill(fresh("kill"), token, args.clients, args.deltas)
    finally:
        if server is not None:
            server.stop()
    (out / "fleet.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "FLEET.md").write_text(_markdown(data))
    print(_markdown(data), file=sys.stderr)
    k = data["kill"]
    bad = data["rebuild"]["answers_differ"] or k["lost"] or k["duplicated"] or k["chain_faults"]
    return 1 if bad or k["sessions_continued"] != k["clients"] else 0


if __name__ == "__main__":
    sys.exit(main())
