"""The soak: N clients x sessions x deltas against a real ``assembler serve``, with faults.

Run: ``python -m benchmarks.soak [--clients 200] [--deltas 20] [--minutes 10]
[--forms 120] [--no-faults] [--out DIR]``. Output: ``soak.json`` (every figure) and a
section appended to ``SOAK.md`` in ``DIR`` (``benchmarks/results``), a summary on
stderr; exit 0, or 1 when a goal of issues 25 and 37 is missed (an ``internal-error``, a lost
or merged reply, a proven answer unlike ``assemble()``'s, a ledger that fails
``ledger verify``, RSS not flat).

The server is started as ``python -m assembler serve --port P --ledger L``. Each
client (a thread with one keep-alive connection) opens a session with the first
request of an agent-loop scenario (``benchmarks.scenarios.agentloop``), applies its
deltas one by one, sometimes assembles one of its requests once, closes it and
starts the next, until the time is up. Every reply is read whole and parsed; a
session reply must carry exactly the version its calls imply (a reply lost, doubled
or merged would break that). Every proven answer (``optimal``) is kept as a digest
with the request it answers and, after the run, compared with a fresh ``assemble()``
of that request (each distinct request once).

Faults, when on, come at random moments from a thread of their own: clients that
disconnect mid-body, bodies that stall until the body deadline cuts them, headers
sent a byte at a time, a batch of 64 stalled bodies at once (while it lasts the other
clients' calls are timed apart), clients that never read their large replies, keys made
to look like other keys, bodies past the size limit or in UTF-16, one client holding
``hog_sockets`` idle sockets from 127.0.0.2 and reconnecting each a second after the
server closes it, and two restarts with the ledger kept: SIGTERM (the
server drains and exits 0) and SIGKILL. Clients ride through a restart: a refused
connection is retried, a session the new process does not know is opened again.

Measured: calls and replies per second, latency p50/p99 (of answered calls), replies
by error code, connection errors, the server's RSS every second (flat: after the
warm-up, within 20% of its median, judged on the first process, before any restart),
the load average, and the 64-stall window's latencies against the time limit.
``run(Plan(...))`` is what the quick soak in ``tests/test_serve_soak.py`` drives.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
FAULTS = ("disconnect", "slow-body", "slow-headers", "stall-64", "unread", "hostile-keys",
          "huge-body", "sigterm", "sigkill")  # fmt: skip
# keys that would look like other keys, or like nothing: each must be refused
_HOSTILE_KEYS = ("ab%E2%80%AEcd", "a%E2%80%8Bb", "%EF%BB%BFa", "a%C2%A0b", "cafe%CC%81",
                 "a%E2%81%A6b", "%FF", "a%00b")  # fmt: skip
# a restart must come back within this long
_START_WAIT = 60.0
_CALL_WAIT = 120.0


@dataclass(frozen=True, slots=True)
class Plan:
    clients: int = 200
    deltas: int = 20
    seconds: float = 600.0
    forms: int = 120
    # distinct scenarios shared by the clients (each distinct request is checked once)
    scenarios: int = 40
    faults: tuple[str, ...] = FAULTS
    # the mean pause between two faults (restarts come at fixed moments instead)
    fault_every: float = 5.0
    # when the restarts come, as fractions of the run
    sigterm_at: float = 0.55
    sigkill_at: float = 0.8
    server_args: tuple[str, ...] = ("--body-timeout", "5", "--header-timeout", "5",
                                    "--write-timeout", "5")  # fmt: skip
    # one client holding this many idle sockets from an address of its own, opening
    # each again as soon as the server closes it (0: none)
    hog_sockets: int = 1000
    warm_up: float = 0.15
    seed: int = 0
    # seconds the server is watched idle after the last client, every session closed
    idle_after: float = 35.0
    # the server records every compilation (a SIGKILL then tests its recovery)
    ledger: bool = True


@dataclass(slots=True)
class _Tally:
    """What every client saw, under one lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: int = 0
    latencies: list[float] = field(default_factory=list)
    codes: dict[str, int] = field(default_factory=dict)
    broken: list[str] = field(default_factory=list)
    bugs: list[str] = field(default_factory=list)
    proven: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    proven_count: int = 0
    stall_latencies: list[float] = field(default_factory=list)
    stalling: bool = False

    def count(self, code: str) -> None:
        with self.lock:
            self.codes[code] = self.codes.get(code, 0) + 1


class _Server:
    """``assembler serve`` on a fixed port (so that clients find it again after a
    restart) with a ledger; its RSS sampled every second."""

    def __init__(self, port: int, ledger: Path | None, args: tuple[str, ...], log: Path) -> None:
        self.port = port
        self.ledger = ledger
        self.args = args
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.incarnation = 0
        self.rss: list[tuple[float, int, int]] = []  # (t, incarnation, bytes)
        self.exits: list[int] = []

    def start(self) -> None:
        argv = [sys.executable, "-m", "assembler", "serve", "--port", str(self.port), *self.args]
        if self.ledger is not None:
            argv += ["--ledger", str(self.ledger)]
        with open(self.log, "ab") as err:
            # a bug's traceback goes to the log
            env = {**os.environ, "ASSEMBLER_TRACEBACK": "1"}
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=err, env=env)  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server did not start: see {self.log}")
        self.incarnation += 1

    def stop(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=_START_WAIT)
        self.exits.append(code)
        return code

    def sample(self, t: float) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    self.rss.append((t, self.incarnation, int(line.split()[1]) * 1024))
        except OSError:
            pass


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _digest(result: dict[str, Any]) -> str:
    data = {k: v for k, v in result.items() if k != "timings"}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class _Client:
    """One client: sessions one after the other, each a scenario's deltas."""

    def __init__(self, number: int, plan: Plan, loops: list[Any], server: _Server,
                 tally: _Tally, until: float) -> None:  # fmt: skip
        self.number = number
        self.plan = plan
        self.loops = loops
        self.server = server
        self.tally = tally
        self.until = until
        self.rng = random.Random(f"{plan.seed}/{number}")
        self.conn: http.client.HTTPConnection | None = None

    def _call(self, method: str, path: str, body: bytes | None) -> tuple[int, dict[str, Any]]:
        """One call, retried over a refused or dropped connection (a restart); the
        status and the reply, parsed."""
        while True:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.server.port,
                                                       timeout=_CALL_WAIT)  # fmt: skip
            started = time.monotonic()
            try:
                self.conn.request(method, path, body=body,
                                  headers={"Content-Type": "application/json"})  # fmt: skip
                response = self.conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                self.tally.count("connection-error")
                if time.monotonic() > self.until + _START_WAIT:
                    raise
                time.sleep(0.2)
                continue
            took = time.monotonic() - started
            if response.getheader("connection", "").lower() == "close":
                self.conn.close()
                self.conn = None
            try:
                reply = json.loads(raw)
                assert isinstance(reply, dict) and "exit" in reply
            except (ValueError, AssertionError):
                with self.tally.lock:
                    self.tally.broken.append(f"{method} {path}: not one JSON reply: {raw[:120]!r}")
                return response.status, {}
            with self.tally.lock:
                self.tally.calls += 1
                if response.status == 200:
                    self.tally.latencies.append(took)
                    if self.tally.stalling:
                        self.tally.stall_latencies.append(took)
                if "error" in reply:
                    code = reply["error"]["code"]
                    self.tally.codes[code] = self.tally.codes.get(code, 0) + 1
                    if code == "internal-error" and len(self.tally.bugs) < 20:
                        self.tally.bugs.append(f"{method} {path}: {reply['error']['message']}")
            return response.status, reply

    def _proven(self, scenario: int, step: int, reply: dict[str, Any]) -> None:
        result = reply.get("result")
        if result is not None and result.get("optimal"):
            digest = _digest(result)
            with self.tally.lock:
                self.tally.proven_count += 1
                self.tally.proven.setdefault((scenario, step), set()).add(digest)

    def run(self) -> None:
        sessions = 0
        try:
            while time.monotonic() < self.until:
                scenario = self.rng.randrange(len(self.loops))
                self._session(scenario, f"c{self.number}-s{sessions}")
                sessions += 1
        finally:
            if self.conn is not None:
                self.conn.close()

    def _session(self, scenario: int, key: str) -> None:
        loop = self.loops[scenario]
        first = json.dumps(loop.first).encode()
        version = None  # the session's version on the server, as its replies say
        step = 0
        while step <= len(loop.deltas) and time.monotonic() < self.until:
            if version is None:
                status, reply = self._call("PUT", f"/sessions/{key}", first)
                if status == 200:
                    self._check(reply, key, 0)
                    self._proven(scenario, 0, reply)
                    version, step = 0, 1
                else:
                    time.sleep(self._after(reply))
                continue
            if step > len(loop.deltas):
                break
            delta = json.dumps(loop.deltas[step - 1]).encode()
            # the version makes a delta sent again safe: a reply lost after the delta was
            # applied (a time-limit reply whose solve finished after all) is answered again
            status, reply = self._call(
                "POST", f"/sessions/{key}/delta?version={version}", delta
            )
            code = reply.get("error", {}).get("code")
            if status == 200:
                self._check(reply, key, version + 1)
                self._proven(scenario, step, reply)
                version += 1
                step += 1
            elif code in ("session-unknown", "session-expired"):
                # a restart lost it: open it again, from the first request
                version = None
                step = 0
            elif status >= 500:
                # busy, or the time limit: send it again, at the same version, when the
                # server says
                time.sleep(self._after(reply))
            else:
                # the session refused a delta its replies said it could take: a reply
                # was lost (or a delta applied twice)
                with self.tally.lock:
                    self.tally.broken.append(f"session {key} step {step}: {reply.get('error')}")
                version = None
                step = 0
        if self.rng.random() < 0.2:
            # a one-off call of a request the session went through
            at = self.rng.randrange(len(loop.deltas) + 1)
            request = loop.first if at == 0 else _request_at(loop, at)
            status, reply = self._call("POST", "/assemble", json.dumps(request).encode())
            if status == 200:
                self._proven(scenario, at, reply)
        # closed even when the time is up (a session left open holds the server's memory)
        for _ in range(50):
            status, _ = self._call("DELETE", f"/sessions/{key}", None)
            if status < 500:
                break
            time.sleep(self.rng.uniform(0.05, 0.5))

    def _after(self, reply: dict[str, Any]) -> float:
        """How long to wait before sending a refused call again: what the server said,
        or a short random pause."""
        after = reply.get("error", {}).get("retry_after")
        return float(after) if after is not None else self.rng.uniform(0.05, 0.5)

    def _check(self, reply: dict[str, Any], key: str, version: int) -> None:
        about = reply.get("session", {})
        if about.get("key") != key or about.get("version") != version:
            with self.tally.lock:
                self.tally.broken.append(
                    f"session {key}: a reply for version {about.get('version')} of"
                    f" {about.get('key')!r} where version {version} was due"
                )


def _big_request(forms: int, size: int) -> dict[str, Any]:
    candidates = [{"id": f"c{i:05}", "cost": 1, "relevance": 0.5, "content": "x" * size}
                  for i in range(forms)]  # fmt: skip
    return {"task": {"id": "big", "budget": forms}, "candidates": candidates}


def _request_at(loop: Any, step: int) -> dict[str, Any]:
    request: dict[str, Any] = json.loads(json.dumps(loop.first))
    for delta in loop.deltas[:step]:
        request["candidates"].extend(json.loads(json.dumps(delta.get("add", []))))
    return request


class _Faults:
    """Faults at random moments, restarts at fixed ones."""

    def __init__(self, plan: Plan, server: _Server, tally: _Tally, started: float) -> None:
        self.plan = plan
        self.server = server
        self.tally = tally
        self.started = started
        self.rng = random.Random(f"{plan.seed}/faults")
        self.done: dict[str, int] = {}
        self.restart_lock = threading.Lock()
        self.restarts: list[dict[str, Any]] = []

    def _socket(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.server.port), timeout=_CALL_WAIT)

    def disconnect(self) -> None:
        with self._socket() as sock:
            sock.sendall(b'POST /assemble HTTP/1.1\r\nHost: x\r\nContent-Length: 4000\r\n\r\n{"t')
            time.sleep(0.1)

    def slow_body(self) -> None:
        with self._socket() as sock:
            sock.sendall(b"POST /sessions/slow/delta HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 100\r\n\r\n{")  # fmt: skip
            sock.recv(65536)  # the read-timeout reply, at the body deadline

    def slow_headers(self) -> None:
        with self._socket() as sock:
            try:
                for byte in b"PUT /sessions/slowloris HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 600:
                    sock.sendall(bytes([byte]))
                    time.sleep(0.05)
            except OSError:
                return  # cut at the header deadline

    def stall_64(self) -> None:
        stalled = []
        try:
            for _ in range(64):
                sock = self._socket()
                sock.sendall(b"POST /assemble HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
                stalled.append(sock)
            self.tally.stalling = True
            for sock in stalled:
                sock.recv(65536)
        except OSError:
            pass
        finally:
            self.tally.stalling = False
            for sock in stalled:
                sock.close()

    def unread(self) -> None:
        """A client that sends a call with a large reply and never reads it: the write
        timeout must cut it (or it is told to retry)."""
        body = json.dumps(_big_request(200, 10_000)).encode()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(_CALL_WAIT)
        with sock:
            sock.connect(("127.0.0.1", self.server.port))
            sock.sendall(b"POST /assemble?render=text HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)  # fmt: skip
            time.sleep(self.rng.uniform(5.0, 8.0))

    def hostile_keys(self) -> None:
        """Keys that would look like other keys: every one refused, naming the key."""
        for key in _HOSTILE_KEYS:
            status, reply = self._once("PUT", f"/sessions/{key}", b'{"task": {"id": "t",'
                                       b' "budget": 1}, "candidates": []}')  # fmt: skip
            error = reply.get("error", {})
            if status >= 500:
                continue
            if (status, error.get("code"), error.get("field")) != (400, "invalid-request",
                                                                    "session"):  # fmt: skip
                with self.tally.lock:
                    self.tally.broken.append(f"hostile key {key}: {status} {reply}")

    def huge_body(self) -> None:
        """A body declared past the size limit (refused unread), and one in UTF-16."""
        for head, body, expected in (
            (b"Content-Length: %d\r\n" % (1 << 40), b"", (413, "request-too-large")),
            (b"", '{"task": {}}'.encode("utf-16"), (400, "invalid-request")),
        ):
            status, reply = self._once("POST", "/assemble", body, head)
            if status < 500 and (status, reply.get("error", {}).get("code")) != expected:
                with self.tally.lock:
                    self.tally.broken.append(f"huge or UTF-16 body: {status} {reply}")

    def _once(self, method: str, path: str, body: bytes, head: bytes = b"") -> tuple[int, Any]:
        """One raw call and its reply (a 5xx is the server busy or restarting)."""
        with self._socket() as sock:
            length = b"" if head else b"Content-Length: %d\r\n" % len(body)
            sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n".encode() + head + length
                         + b"\r\n" + body)  # fmt: skip
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return 599, {}
                data += chunk
            top, _, rest = data.partition(b"\r\n\r\n")
            status = int(top.split()[1])
            length_of = [int(line.split(b":")[1]) for line in top.split(b"\r\n")
                         if line.lower().startswith(b"content-length:")]  # fmt: skip
            while length_of and len(rest) < length_of[0]:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            exits = [line for line in top.lower().split(b"\r\n")
                     if line.startswith(b"x-assembler-exit:")]  # fmt: skip
            if not exits:
                with self.tally.lock:
                    self.tally.broken.append(f"{method} {path}: no X-Assembler-Exit: {top!r}")
            try:
                return status, json.loads(rest)
            except ValueError:
                return status, {}

    def hog(self, until: float) -> None:
        """One client holding ``hog_sockets`` idle sockets from 127.0.0.2, each opened
        again as soon as the server closes it, until ``until``."""
        held: list[socket.socket] = []
        opened = 0
        try:
            while time.monotonic() < until:
                alive = []
                for sock in held:
                    try:
                        if sock.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b"":
                            sock.close()
                            continue
                    except BlockingIOError:
                        pass
                    except OSError:
                        sock.close()
                        continue
                    alive.append(sock)
                held = alive
                while len(held) < self.plan.hog_sockets and time.monotonic() < until:
                    try:
                        sock = socket.socket()
                        sock.bind(("127.0.0.2", 0))
                        sock.connect(("127.0.0.1", self.server.port))
                    except OSError:
                        sock.close()
                        time.sleep(0.2)  # a restart: the port is closed for a moment
                        break
                    held.append(sock)
                    opened += 1
                # a client that reconnects each socket a second after it was closed
                time.sleep(1.0)
        finally:
            for sock in held:
                sock.close()
            self.done["hog-sockets-opened"] = opened

    def restart(self, sig: int) -> None:
        with self.restart_lock:
            began = time.monotonic()
            code = self.server.stop(sig)
            self.server.start()
            self.restarts.append({"signal": signal.Signals(sig).name, "exit": code,
                                  "at_s": round(began - self.started, 1),
                                  "down_s": round(time.monotonic() - began, 2)})  # fmt: skip

    def run(self, until: float) -> None:
        kinds = [k for k in self.plan.faults if k not in ("sigterm", "sigkill")]
        pending = []
        span = until - self.started
        if "sigterm" in self.plan.faults:
            pending.append((self.started + self.plan.sigterm_at * span, signal.SIGTERM))
        if "sigkill" in self.plan.faults:
            pending.append((self.started + self.plan.sigkill_at * span, signal.SIGKILL))
        workers: list[threading.Thread] = []
        if self.plan.hog_sockets:
            hog = threading.Thread(target=_quietly, args=(lambda: self.hog(until),), daemon=True)
            hog.start()
            workers.append(hog)
        order: list[str] = []
        while time.monotonic() < until:
            time.sleep(self.rng.expovariate(1 / self.plan.fault_every) if kinds else 0.5)
            now = time.monotonic()
            for at, sig in list(pending):
                if now >= at:
                    pending.remove((at, sig))
                    self.restart(sig)
                    self.done[signal.Signals(sig).name.lower()] = 1
            if kinds and time.monotonic() < until:
                if not order:
                    # every kind once per round, in a random order
                    order = self.rng.sample(kinds, len(kinds))
                kind = order.pop()
                action = getattr(self, kind.replace("-", "_"))
                worker = threading.Thread(target=_quietly, args=(action,), daemon=True)
                worker.start()
                workers.append(worker)
                self.done[kind] = self.done.get(kind, 0) + 1
        for worker in workers:
            worker.join(timeout=_CALL_WAIT)


def _quietly(action: Any) -> None:
    with contextlib.suppress(OSError):  # a fault that met a restart
        action()


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _check_answers(
    plan: Plan, loops: list[Any], proven: dict[tuple[int, int], set[str]]
) -> dict[str, Any]:
    """Every proven answer against a fresh assemble() of its request."""
    import assembler

    wrong = []
    for (scenario, step), digests in sorted(proven.items()):
        loop = loops[scenario]
        request = loop.first if step == 0 else _request_at(loop, step)
        expected = _digest(assembler.assemble(request, time_limit=120).to_dict())
        if digests != {expected}:
            wrong.append({"scenario": scenario, "step": step, "got": len(digests)})
    return {"distinct_requests": len(proven), "answers_unlike_assemble": wrong}


def _ledger_verified(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "verify", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    return {"exit": done.returncode, "output": (done.stdout + done.stderr).strip()[-400:]}


def _rss_report(server: _Server, plan: Plan, seconds: float) -> dict[str, Any]:
    first = [(t, rss) for t, incarnation, rss in server.rss if incarnation == 1]
    cut = plan.warm_up * seconds
    before_restart = plan.sigterm_at * seconds if "sigterm" in plan.faults else seconds
    settled = [rss for t, rss in first if cut <= t <= before_restart]
    report: dict[str, Any] = {
        "samples": [
            (round(t, 1), i, rss) for t, i, rss in server.rss[:: max(1, len(server.rss) // 300)]
        ],
        "peak_mb": round(max((r for _, _, r in server.rss), default=0) / 2**20, 1),
    }
    if settled:
        middle = statistics.median(settled)
        report.update(
            median_mb=round(middle / 2**20, 1),
            low_mb=round(min(settled) / 2**20, 1),
            high_mb=round(max(settled) / 2**20, 1),
            spread=round(max(abs(r - middle) for r in settled) / middle, 3),
        )
    return report


def run(plan: Plan, folder: Path | None = None, log: Any = None) -> dict[str, Any]:
    """One soak; the report (``ok`` says whether every goal held)."""
    from benchmarks.scenarios.agentloop import agent_loop

    say = log or (lambda text: None)
    work = Path(tempfile.mkdtemp(prefix="assembler-soak-")) if folder is None else folder
    loops = [agent_loop(seed=1000 + s, forms=plan.forms, calls=plan.deltas)
             for s in range(plan.scenarios)]  # fmt: skip
    ledger_path = work / "soak.db" if plan.ledger else None
    server = _Server(_free_port(), ledger_path, plan.server_args, work / "server.log")
    server.start()
    tally = _Tally()
    started = time.monotonic()
    until = started + plan.seconds
    loads: list[tuple[float, float]] = []
    clients = [_Client(n, plan, loops, server, tally, until) for n in range(plan.clients)]
    threads = [threading.Thread(target=c.run, daemon=True) for c in clients]
    faults = _Faults(plan, server, tally, started)
    fault_thread = threading.Thread(target=faults.run, args=(until,), daemon=True)
    for thread in threads:
        thread.start()
    if plan.faults:
        fault_thread.start()
    next_log = started
    while any(thread.is_alive() for thread in threads):
        now = time.monotonic()
        server.sample(now - started)
        loads.append((round(now - started, 1), os.getloadavg()[0]))
        if now >= next_log:
            say(f"  soak {now - started:6.0f} s  calls {tally.calls}  codes {tally.codes}")
            next_log = now + 30
        time.sleep(1.0)
    elapsed = time.monotonic() - started
    if plan.faults:
        fault_thread.join(timeout=_CALL_WAIT)
    # with every session closed, what the idle server keeps (its sweeps give memory back)
    idle_at = time.monotonic()
    while time.monotonic() < idle_at + plan.idle_after:
        server.sample(time.monotonic() - started)
        time.sleep(1.0)
    idle_rss = server.rss[-1][2] if server.rss else 0
    health = _health(server.port)
    server.stop(signal.SIGTERM)
    say("  checking every proven answer against assemble() ...")
    checked = _check_answers(plan, loops, tally.proven)
    ledger = (
        {"exit": 0, "output": "no ledger"} if ledger_path is None else _ledger_verified(ledger_path)
    )
    rss = _rss_report(server, plan, elapsed)
    report: dict[str, Any] = {
        "plan": asdict(plan),
        "elapsed_s": round(elapsed, 1),
        "calls": tally.calls,
        "calls_per_s": round(tally.calls / elapsed, 1),
        "results": len(tally.latencies),
        "results_per_s": round(len(tally.latencies) / elapsed, 1),
        "latency_p50_s": _percentile(tally.latencies, 0.5),
        "latency_p99_s": _percentile(tally.latencies, 0.99),
        "codes": dict(sorted(tally.codes.items())),
        "broken_replies": tally.broken[:20],
        "broken_count": len(tally.broken),
        "internal_errors": tally.bugs,
        "proven_answers": tally.proven_count,
        "check": checked,
        "ledger_verify": ledger,
        "faults": faults.done,
        "restarts": faults.restarts,
        "server_exits": server.exits,
        "stall_64": {
            "calls_during": len(tally.stall_latencies),
            "p50_s": _percentile(tally.stall_latencies, 0.5),
            "max_s": max(tally.stall_latencies, default=None),
        },
        "rss": rss,
        "idle_after": {
            "seconds": plan.idle_after,
            "rss_mb": round(idle_rss / 2**20, 1),
            "sessions": health.get("sessions"),
        },
        "load": {
            "min": min(load for _, load in loads),
            "max": max(load for _, load in loads),
            "mean": round(statistics.mean(load for _, load in loads), 2),
        },
        "last_health": health,
    }
    report["goals"] = _goals(report)
    report["ok"] = all(report["goals"].values())
    return report


def _health(port: int) -> dict[str, Any]:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/healthz")
        data: dict[str, Any] = json.loads(conn.getresponse().read())
        conn.close()
        return data
    except (OSError, ValueError):
        return {}


def _goals(report: dict[str, Any]) -> dict[str, bool]:
    spread = report["rss"].get("spread")
    limit = report["plan"]["server_args"]
    time_limit = float(limit[limit.index("--time-limit") + 1]) if "--time-limit" in limit else 10.0
    stall = report["stall_64"]
    return {
        "no internal-error": report["codes"].get("internal-error", 0) == 0,
        "no lost or merged reply": report["broken_count"] == 0,
        "every proven answer equals assemble()": not report["check"]["answers_unlike_assemble"],
        "the ledger verifies after the restarts": report["ledger_verify"]["exit"] == 0,
        "RSS flat within 20% after warm-up": spread is None or spread <= 0.2,
        # the server's promise to a call it answers: its turn within the time limit (or
        # server-busy), then its answer within the time limit and the 1 s grace
        "others served within the promise during 64 stalls": stall["max_s"] is None
        or stall["max_s"] <= 2 * time_limit + 1,
        "SIGTERM exits 0": all(
            r["exit"] == 0 for r in report["restarts"] if r["signal"] == "SIGTERM"
        ),
    }


def markdown(report: dict[str, Any], machine: dict[str, Any]) -> str:
    plan = report["plan"]
    rss = report["rss"]
    lines = [
        f"## Soak: {plan['clients']} clients x {plan['deltas']} deltas, {report['elapsed_s']:g} s"
        f" ({machine.get('date')}, commit {machine.get('commit')})",
        "",
        f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores,"
        f" {machine.get('ram_gib')} GiB;"
        f" load average {report['load']['min']:.2f}-{report['load']['max']:.2f} (mean"
        f" {report['load']['mean']:.2f}). Sessions of {plan['forms']} forms from"
        f" {plan['scenarios']} agent-loop scenarios; faults: {', '.join(plan['faults']) or 'none'}"
        f" (every ~{plan['fault_every']:g} s; done: {report['faults']}); restarts:"
        f" {report['restarts']}.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| replies | {report['calls']} ({report['calls_per_s']:g}/s) |",
        f"| of them results (HTTP 200) | {report.get('results', '-')}"
        f" ({report.get('results_per_s', '-')}/s) |",
        f"| latency of a result p50 / p99 | {_ms(report['latency_p50_s'])} /"
        f" {_ms(report['latency_p99_s'])} |",
        f"| replies by error code | {report['codes'] or 'none'} |",
        f"| lost or merged replies | {report['broken_count']} |",
        f"| proven answers, of distinct requests | {report['proven_answers']}, of"
        f" {report['check']['distinct_requests']}; unlike assemble():"
        f" {len(report['check']['answers_unlike_assemble'])} |",
        f"| ledger verify after the restarts | exit {report['ledger_verify']['exit']} |",
        f"| idle {report['idle_after']['seconds']:g} s after the last client |"
        f" {report['idle_after']['rss_mb']} MB, {report['idle_after']['sessions']} sessions |",
        f"| RSS after warm-up, first process | {rss.get('low_mb')}-{rss.get('high_mb')} MB"
        f" (median {rss.get('median_mb')}, spread {rss.get('spread')}); peak {rss['peak_mb']} MB |",
        f"| calls during the 64 stalled bodies | {report['stall_64']['calls_during']}, p50"
        f" {_ms(report['stall_64']['p50_s'])}, max {_ms(report['stall_64']['max_s'])} |",
        "",
        "| goal | met |",
        "|---|---|",
        *[f"| {goal} | {'yes' if met else 'NO'} |" for goal, met in report["goals"].items()],
        "",
    ]
    return "\n".join(lines)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--forms", type=int, default=120)
    parser.add_argument("--scenarios", type=int, default=40)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument("--fault-every", type=float, default=5.0)
    parser.add_argument("--hog-sockets", type=int, default=Plan().hog_sockets,
                        help="idle sockets one client holds and reopens (0: none)")  # fmt: skip
    parser.add_argument("--server-arg", action="append", default=None,
                        help="an option passed to assembler serve (repeat it)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from . import machine

    plan = Plan(
        clients=args.clients,
        deltas=args.deltas,
        seconds=args.minutes * 60,
        forms=args.forms,
        scenarios=args.scenarios,
        faults=() if args.no_faults else FAULTS,
        fault_every=args.fault_every,
        hog_sockets=0 if args.no_faults else args.hog_sockets,
        server_args=tuple(args.server_arg) if args.server_arg else Plan().server_args,
    )
    report = run(plan, log=lambda text: print(text, file=sys.stderr, flush=True))
    described = machine.describe()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "soak.json").write_text(
        json.dumps({"machine": described, **report}, indent=1) + "\n"
    )
    section = markdown(report, described)
    path = args.out / "SOAK.md"
    head = (
        ""
        if path.exists()
        else "# Soak runs (issue 25)\n\n`python -m benchmarks.soak`; newest last.\n\n"
    )
    with open(path, "a", encoding="utf-8") as out:
        out.write(head + section + "\n")
    print(section, file=sys.stderr)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
