"""The server under pressure (issue 37): fairness, idle sockets, unread replies, signals.

Run: ``python -m benchmarks.pressure [--only NAME ...] [--out DIR]``. Output:
``pressure.json`` (every figure) and ``PRESSURE.md`` (the table of goals, newest run
replacing the last) in ``DIR`` (``benchmarks/results``); exit 0, or 1 when a goal is
missed. Each case starts its own ``python -m assembler serve`` at its defaults:

* ``fairness``: 100 clients at once, each one session of 20 calls (its opening and 19
  deltas of an agent-loop scenario, 120 forms), one keep-alive connection each; a call
  told ``server-busy`` or ``time-limit`` is sent again after the ``retry_after`` its
  reply gives (at most 40 times, then the client gives up). Goals: no client gives
  up, the p99 of a call's latency (first send to its answer, retries included) at most
  twice its p50, every answer equal to a fresh ``assemble()`` of its request.
* ``idle-sockets``: one client holds 1,100 idle sockets (700 from an address of its
  own, 127.0.0.2, then 400 from the others' 127.0.0.1) while 8 other clients each open
  a connection per call for 10 s. Goal: every call of theirs answered within 1 s.
* ``unread-replies``: 16 clients send a 20 MB request with ``render=text`` (a ~40 MB
  reply) and never read a byte. Figures: the server's peak RSS against its RSS before,
  ``/healthz`` at the peak, how the clients were answered, and when the write timeout
  cut the last of them. Goals: RSS within the documented bound (the process, the body
  memory, the replies of the ``--concurrency`` solves running when it filled and their
  solving, ``docs/guides/sessions.md``), every connection cut or answered by the write
  timeout, the body memory back to 0.
* ``sigterm-pending``: 400 lines sent to ``assembler serve`` on a pipe whose stdout
  nobody reads, then SIGTERM. Goal: exit within the time limit + 6 s (and the replies
  it could not write counted on stderr).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
CASES = ("fairness", "idle-sockets", "unread-replies", "sigterm-pending")
_WAIT = 120.0


class _Server:
    """``assembler serve --port 0`` with its extra options; RSS read from /proc."""

    def __init__(self, *args: str) -> None:
        argv = [sys.executable, "-m", "assembler", "serve", "--port", "0", *args]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)  # fmt: skip
        assert self.proc.stdout is not None
        self.port = int(json.loads(self.proc.stdout.readline())["port"])

    def rss(self, field: str = "VmRSS") -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
        return 0

    def health(self) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=_WAIT)
        try:
            connection.request("GET", "/healthz")
            data: dict[str, Any] = json.loads(connection.getresponse().read())
            return data
        finally:
            connection.close()

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=_WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _digest(result: dict[str, Any]) -> str:
    data = {k: v for k, v in result.items() if k != "timings"}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# ---------------------------------------------------------------------------


def fairness(clients: int = 100, calls: int = 20, forms: int = 120,
             scenarios: int = 10, tries: int = 40) -> dict[str, Any]:  # fmt: skip
    import assembler
    from benchmarks.scenarios.agentloop import agent_loop

    loops = [agent_loop(seed=2000 + s, forms=forms, calls=calls - 1) for s in range(scenarios)]
    server = _Server()
    lock = threading.Lock()
    latencies: list[float] = []
    by_step: dict[int, list[float]] = {}
    totals: dict[int, float] = {}
    retries: dict[str, int] = {}
    gave_up: list[int] = []
    answers: dict[tuple[int, int], set[str]] = {}
    barrier = threading.Barrier(clients)

    def client(number: int) -> None:
        loop = loops[number % scenarios]
        key = f"client-{number}"
        plan = [("PUT", f"/sessions/{key}", loop.first)]
        plan += [("POST", f"/sessions/{key}/delta", delta) for delta in loop.deltas]
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=_WAIT)
        barrier.wait()
        for step, (method, path, body) in enumerate(plan):
            data = json.dumps(body).encode()
            began = time.monotonic()
            for _ in range(tries + 1):
                try:
                    connection.request(method, path, body=data)
                    response = connection.getresponse()
                    reply = json.loads(response.read())
                except (OSError, http.client.HTTPException):
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", server.port,
                                                            timeout=_WAIT)  # fmt: skip
                    continue
                if response.getheader("connection", "").lower() == "close":
                    connection.close()
                if response.status == 200:
                    break
                code = reply["error"]["code"]
                with lock:
                    retries[code] = retries.get(code, 0) + 1
                time.sleep(reply["error"].get("retry_after", 0.1))
            else:
                with lock:
                    gave_up.append(number)
                return
            with lock:
                latencies.append(time.monotonic() - began)
                totals[number] = totals.get(number, 0.0) + latencies[-1]
                by_step.setdefault(step, []).append(latencies[-1])
                answers.setdefault((number % scenarios, step), set()).add(_digest(reply["result"]))
        connection.close()

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - began
    health = server.health()
    server.stop()
    unlike = []
    requests = [[loop.first, *loop.requests()] for loop in loops]
    for (scenario, step), digests in sorted(answers.items()):
        request = requests[scenario][step]
        if digests != {_digest(assembler.assemble(request, time_limit=_WAIT).to_dict())}:
            unlike.append([scenario, step])
    p50, p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
    return {
        "clients": clients, "calls": calls, "forms": forms, "elapsed_s": round(elapsed, 1),
        "answered": len(latencies), "gave_up": len(gave_up), "retries": retries,
        "p50_s": round(p50, 3), "p99_s": round(p99, 3), "max_s": round(max(latencies), 3),
        "p99_over_p50": round(p99 / p50, 2), "answers_unlike_assemble": unlike,
        # each client's time for its 20 calls: the slowest against the quickest
        "client_totals_s": [round(min(totals.values()), 2), round(max(totals.values()), 2)],
        # the same ratio among the calls of one step (every client's n-th call): how
        # evenly the clients are served, apart from what a step itself costs
        "step_p99_over_p50_max": round(max(_percentile(by_step[k], 0.99)
                                           / _percentile(by_step[k], 0.5) for k in by_step), 2),
        "p50_by_step_s": [round(_percentile(by_step[k], 0.5), 3) for k in sorted(by_step)],
        "server_errors": health.get("errors"),
        "goals": {"no client gives up": not gave_up, "p99 <= 2x p50": p99 <= 2 * p50,
                  "every answer equals assemble()": not unlike
                  and len(latencies) == clients * calls},
    }  # fmt: skip


def idle_sockets(sockets: int = 1100, clients: int = 8, seconds: float = 10.0) -> dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    request = (ROOT / "models/examples/review-migration.json").read_text()
    server = _Server()
    held = []
    for number in range(sockets):
        sock = socket.socket()
        sock.bind(("127.0.0.2" if number < sockets * 7 // 11 else "127.0.0.1", 0))
        sock.connect(("127.0.0.1", server.port))
        held.append(sock)
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[str] = []
    until = time.monotonic() + seconds

    def client() -> None:
        while time.monotonic() < until:
            began = time.monotonic()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=_WAIT)
                connection.request("POST", "/assemble", body=request)
                response = connection.getresponse()
                response.read()
                connection.close()
                ok = response.status == 200
            except (OSError, http.client.HTTPException) as exc:
                ok, response = False, exc  # type: ignore[assignment]
            with lock:
                latencies.append(time.monotonic() - began)
                if not ok:
                    failures.append(str(getattr(response, "status", response)))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    health = server.health()
    for sock in held:
        sock.close()
    server.stop()
    worst = max(latencies)
    return {
        "idle_sockets": sockets, "clients": clients, "calls": len(latencies),
        "failures": failures[:10], "failed": len(failures),
        "p50_s": round(_percentile(latencies, 0.5), 3),
        "max_s": round(worst, 3), "connections": health["connections"],
        "evicted": health["connections_evicted"], "refused": health["connections_refused"],
        "goals": {"others served within 1 s": worst <= 1.0 and not failures},
    }  # fmt: skip


def unread_replies(clients: int = 16, megabytes: int = 20) -> dict[str, Any]:
    forms = 500
    size = megabytes * 10**6 // forms
    candidates = [{"id": f"c{i:05}", "cost": 1, "relevance": 0.5, "content": "x" * size}
                  for i in range(forms)]  # fmt: skip
    body = json.dumps({"task": {"id": "big", "budget": forms}, "candidates": candidates}).encode()
    server = _Server()
    time.sleep(1.0)
    before = server.rss()
    config = server.health()
    # one such call alone, read by its client: what a solve of it holds at its peak
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=_WAIT)
    connection.request("POST", "/assemble?render=text", body=body)
    reply_bytes = len(connection.getresponse().read())
    connection.close()
    solve_peak = server.rss("VmHWM") - before
    sockets = []
    for _ in range(clients):
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        head = (f"POST /assemble?render=text HTTP/1.1\r\nHost: x\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")  # fmt: skip
        threading.Thread(target=sock.sendall, args=(head.encode() + body,), daemon=True).start()
        sockets.append(sock)
    began = time.monotonic()
    peak: dict[str, Any] = {}
    cut_at = None
    deadline = began + config["write_timeout"] + config["time_limit"] + 60
    while time.monotonic() < deadline:
        health = server.health()
        if health["body_memory"] >= peak.get("body_memory", -1):
            peak = health
        idle = health["replies_unread"] == 0 and health["in_flight"] == 0
        if time.monotonic() - began > 2 and idle:
            cut_at = time.monotonic() - began
            break
        time.sleep(0.25)
    high = server.rss("VmHWM")
    time.sleep(6.0)  # the idle server gives memory back
    after = server.rss()
    final = server.health()
    for sock in sockets:
        sock.close()
    server.stop()
    # the documented bound: the process before, the body memory, and for each of the
    # solves running when it filled, its reply and what it holds at its peak
    bound = before + config["max_body_memory"] + config["concurrency"] * (solve_peak + reply_bytes)
    return {
        "clients": clients, "request_bytes": len(body), "reply_bytes": reply_bytes,
        "rss_before_mb": round(before / 2**20, 1), "solve_peak_mb": round(solve_peak / 2**20, 1),
        "rss_peak_mb": round(high / 2**20, 1),
        "rss_after_mb": round(after / 2**20, 1), "bound_mb": round(bound / 2**20, 1),
        "unbounded_mb": round((before + clients * (reply_bytes + len(body))) / 2**20, 1),
        "at_peak": {k: peak.get(k) for k in ("body_memory", "reply_memory", "replies_unread",
                                              "in_flight", "status")},
        "all_cut_after_s": None if cut_at is None else round(cut_at, 1),
        "errors": final["errors"], "body_memory_after": final["body_memory"],
        "goals": {"RSS within the documented bound": high <= bound,
                  "every connection cut or answered by the write timeout": cut_at is not None,
                  "body memory back to 0": final["body_memory"] == 0},
    }  # fmt: skip


def sigterm_pending(lines: int = 400) -> dict[str, Any]:
    request = json.loads((ROOT / "models/examples/review-migration.json").read_text())
    proc = subprocess.Popen([sys.executable, "-m", "assembler", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip

    def feed() -> None:
        assert proc.stdin is not None
        try:
            for number in range(lines):
                proc.stdin.write(json.dumps({"id": number, "request": request}).encode() + b"\n")
                proc.stdin.flush()
        except OSError:
            pass

    threading.Thread(target=feed, daemon=True).start()
    time.sleep(5.0)
    proc.send_signal(signal.SIGTERM)
    began = time.monotonic()
    try:
        code = proc.wait(timeout=_WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
    took = time.monotonic() - began
    assert proc.stderr is not None
    said = proc.stderr.read().decode(errors="replace").strip().splitlines()
    return {
        "lines": lines, "exit": code, "exit_after_s": round(took, 2), "time_limit": 10.0,
        "stderr": said[-1:] if said else [],
        "goals": {"exit within time_limit + 6 s": took <= 16.0 and code == 0},
    }  # fmt: skip


RUNNERS: dict[str, Any] = {"fairness": fairness, "idle-sockets": idle_sockets,
           "unread-replies": unread_replies, "sigterm-pending": sigterm_pending}  # fmt: skip


def markdown(report: dict[str, Any], machine: dict[str, Any]) -> str:
    lines = [
        "# The server under pressure (issue 37)",
        "",
        f"`python -m benchmarks.pressure` ({machine.get('date')}, commit"
        f" {machine.get('commit')}; {machine.get('cpu')}, {machine.get('cores')} cores; load"
        f" average {report['load'][0]:.2f} before, {report['load'][1]:.2f} after). Every"
        " server at its defaults. The cases and their goals: the module's docstring.",
        "",
        "| case | figures | goal | met |",
        "|---|---|---|---|",
    ]
    for name, case in report["cases"].items():
        figures = {k: v for k, v in case.items() if k != "goals"}
        shown = "; ".join(f"{k} {v}" for k, v in figures.items())
        for goal, met in case["goals"].items():
            lines.append(f"| {name} | {shown} | {goal} | {'yes' if met else 'NO'} |")
            shown = ""
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pressure",
                                     description=__doc__.split("\n")[0])  # fmt: skip
    parser.add_argument("--only", action="append", choices=CASES, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from . import machine

    load = os.getloadavg()[0]
    cases = {}
    for name in args.only or CASES:
        print(f"  pressure: {name} ...", file=sys.stderr, flush=True)
        cases[name] = RUNNERS[name]()
        print(f"  {json.dumps(cases[name])}", file=sys.stderr, flush=True)
    report = {"cases": cases, "load": [load, os.getloadavg()[0]]}
    described = machine.describe()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "pressure.json").write_text(json.dumps({"machine": described, **report},
                                                       indent=1) + "\n")  # fmt: skip
    (args.out / "PRESSURE.md").write_text(markdown(report, described))
    return 0 if all(all(c["goals"].values()) for c in cases.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
