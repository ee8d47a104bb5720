"""The hostile soak (issue 46): every way one client tried to lock the others out, beside
honest clients, on a fleet of two replicas sharing a PostgreSQL ledger; this revision
and the one before side by side.

Run: ``python -m benchmarks.hostile [--before 9ba5c5c] [--seconds 30] [--soak-minutes
10] [--honest 4] [--quick] [--out DIR]``. Output: ``hostile.json`` and ``HOSTILE.md`` in
``DIR`` (``benchmarks/results``), a summary on stderr; exit 0, or 1 when a goal of issue
46 is missed on this revision.

Each side is a checkout (``revisions.checked_out``) whose package the replicas import:
``python -m assembler serve --port 0 --ledger postgresql://... --token-file T`` (with
the test strategies registered, for ``sleepy``), every part on fresh replicas and a
fresh database of one throwaway PostgreSQL server (``pgserver``). The honest clients
(threads, one keep-alive connection per replica each) open a session of ``--forms``
candidates, send its deltas with their versions alternately to either replica, assemble
its request once, close it and start the next; every call's latency and outcome is kept.
A call is *refused* when it is not answered (``server-busy``, ``time-limit``, a
connection refused, reset or timed out). The attackers come from other loopback
addresses (127.0.0.2, 127.0.0.3), to both replicas, each pattern at the size the tester
used:

* ``websocket``: upgrade requests one after the other, as fast as one thread sends them;
* ``stalled-bodies``: 64 bodies per replica that never end (the default --max-pending),
  each opened again when the server closes it;
* ``half-headers``: 500 connections per replica from each of two addresses whose headers
  never end (together the default --max-connections);
* ``idle-sockets``: 1,100 connections per replica that send nothing.

A socket the server closes is opened again a second later (as a client's pool would,
and as the soak's socket hog does); the honest clients send a call again once on a new
connection when a kept-alive one was closed while idle, as HTTP client libraries do.

Parts: for each pattern, on fresh replicas, the honest clients alone (*unloaded*) and
beside one attacker, in three alternating rounds so that the machine's load weighs on
both alike (goal: p99 at most twice the unloaded p99, 0 refused); time-limited deltas (a ``sleepy``
session, a delta with a 0.5 s limit on a 2 s solve, then the same delta again without a
version: applied twice if the first was applied) with no ledger, SQLite and PostgreSQL
(goal 0/0/0); a 10 s PostgreSQL outage under the honest clients (goal: 0 ``undecided``
answers, each call a retryable error, service back by itself); keys that display like
another key (goal: 0 kinds accepted); and the soak: every pattern at once, hostile
payloads (lone surrogates, lookalike keys, bodies that are not UTF-8) and the outage,
for ``--soak-minutes`` (goal: 0 internal errors). The load average is recorded at each
part's start.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import random
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import machine, pgserver
from .fleet import delta as fleet_delta
from .fleet import request as fleet_request
from .revisions import checked_out

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
BEFORE = "9ba5c5c"
TOKEN = "hostile-benchmark-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PATTERNS = ("websocket", "stalled-bodies", "half-headers", "idle-sockets")
GOAL_P99 = 2.0
# one of each kind of key that shows as another (issue 46 found nine kinds)
LOOKALIKES = {
    "combining grapheme joiner": "agent-7\u034f",
    "variation selector": "agent-7\ufe0f",
    "hangul filler": "agent\u3164-7",
    "hangul choseong filler": "agent-7\u115f",
    "halfwidth hangul filler": "agent-7\uffa0",
    "braille blank": "agent-7\u2800",
    "cyrillic a": "\u0430gent-7",
    "greek omicron": "agent-7-\u03bfk",
    "all-cyrillic lookalike": "\u0430\u0440\u0435",
    "fullwidth letter": "\uff41gent-7",
    "mathematical letter": "\U0001d41agent-7",
    "hyphen": "agent\u20107",
    "latin alpha": "\u0251gent-7",
    "dot above on i": "agent-i\u0307",
    "trailing space": "agent-7 ",
    "two spaces": "agent  7",
}
_UPGRADE = (
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)
# a client with the token (the server's own, misbehaving): its body never ends
_STALLED = (
    b"POST /assemble HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
    + b"\r\nContent-Length: 100\r\n\r\n{"
)
_HALF = b"POST /assemble HTTP/1.1\r\nHost: x\r\nX-Slow: "
_REFUSED = ("server-busy", "time-limit", "connection")
_CALL_WAIT = 60.0
# an attacker opens a socket the server closed again after this long
_REOPEN = 1.0


@dataclass(frozen=True, slots=True)
class Plan:
    seconds: float = 30.0
    soak_seconds: float = 600.0
    honest: int = 4
    forms: int = 60
    deltas: int = 6
    outage: float = 10.0
    # sockets per replica: stalled bodies, half headers per address, idle sockets
    stalled: int = 64
    half: int = 500
    idle: int = 1100
    time_limited: int = 3
    # alternating rounds of the honest clients alone and beside an attacker
    rounds: int = 3


# -- the fleet ------------------------------------------------------------------------


class Replica:
    """``assembler serve`` of one side's checkout on a loopback port."""

    def __init__(self, side: Path, scratch: Path, *args: str, env: dict[str, str] | None = None):
        tests = side / "tests"
        code = (
            f"import sys; sys.path.insert(0, {str(tests)!r}); import assembler.strategies as s;"
            " s.STRATEGIES['sleepy'] = 'tests_support:sleepy';"
            # the command's own process policy (the collector's), as `assembler serve`
            " from assembler.cli import entry_point; sys.exit(entry_point())"
        )
        self.log = scratch / f"replica-{os.getpid()}-{time.monotonic_ns()}.log"
        self._stderr = self.log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code, "serve", "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=scratch,
            env={**os.environ, "PYTHONPATH": str(side), "ASSEMBLER_KERNELS": "python",
                 **(env or {})},
        )  # fmt: skip
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a replica of {side} did not start: {self.log.read_text()[-2000:]}")
        self.port = int(json.loads(line)["port"])

    def health(self) -> dict[str, Any] | None:
        try:
            _, reply = call(self.port, "GET", "/healthz", None, timeout=5.0)
        except OSError:
            return None
        return reply if "status" in reply else None

    def stop(self) -> dict[str, Any]:
        """SIGTERM; its exit code and what its stderr says."""
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr.close()
        text = self.log.read_text(errors="replace")
        return {"exit": code, "tracebacks": text.count("Traceback"), "stderr_lines":
                len(text.splitlines())}  # fmt: skip


def call(
    port: int,
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str] | None = None,
    timeout: float = _CALL_WAIT,
) -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = None if body is None else body if isinstance(body, bytes) else json.dumps(body)
        connection.request(method, path, data, {**AUTH, **(headers or {})})
        response = connection.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, {"raw": raw[:200].decode("latin-1")}
    finally:
        connection.close()


# -- the honest clients -------------------------------------------------------------


@dataclass(slots=True)
class Outcome:
    at: float
    seconds: float
    # "ok", an error code, or "connection"
    what: str
    undecided: bool = False


class Honest(threading.Thread):
    """One client: sessions of deltas sent alternately to the replicas, with versions."""

    def __init__(self, number: int, ports: list[int], plan: Plan, stop: threading.Event):
        super().__init__(daemon=True)
        self.number, self.ports, self.plan, self.stop_at = number, ports, plan, stop
        self.outcomes: list[Outcome] = []
        self._connections: dict[int, http.client.HTTPConnection] = {}

    def run(self) -> None:
        session = 0
        while not self.stop_at.is_set():
            session += 1
            seed = self.number * 100_000 + session
            key = f"honest-{self.number}-{session}-{os.getpid()}"
            first = fleet_request(seed, self.plan.forms)
            # each session on new connections, as a client process would open them
            for port in list(self._connections):
                self._drop(port)
            if not self._call(0, "PUT", f"/sessions/{key}", first):
                time.sleep(0.2)
                continue
            version = 0
            for n in range(1, self.plan.deltas + 1):
                if self.stop_at.is_set():
                    return
                body = fleet_delta(seed, n)
                # a refused delta is sent again, with its version, until answered
                while not self.stop_at.is_set():
                    path = f"/sessions/{key}/delta?version={version}"
                    if self._call(n, "POST", path, body):
                        version += 1
                        break
                    time.sleep(0.2)
            self._call(session, "POST", "/assemble", first)
            self._call(session + 1, "DELETE", f"/sessions/{key}", None)

    def _call(self, turn: int, method: str, path: str, body: Any) -> bool:
        port = self.ports[turn % len(self.ports)]
        started = time.monotonic()
        what, undecided = "connection", False
        for attempt in (1, 2):
            reused = port in self._connections
            try:
                what, undecided = self._send(port, method, path, body)
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # a kept-alive connection the server closed while it was idle: sent
                # again on a new one, once, as HTTP clients do (urllib3, httpx)
                self._drop(port)
                if not (reused and attempt == 1):
                    break
            except (OSError, http.client.HTTPException, ValueError):
                self._drop(port)
                break
        self.outcomes.append(Outcome(started, time.monotonic() - started, what, undecided))
        return what == "ok"

    def _send(self, port: int, method: str, path: str, body: Any) -> tuple[str, bool]:
        connection = self._connections.get(port)
        if connection is None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=_CALL_WAIT)
            self._connections[port] = connection
        data = None if body is None else json.dumps(body).encode()
        connection.request(method, path, data, AUTH)
        response = connection.getresponse()
        reply = json.loads(response.read())
        if response.getheader("connection", "").lower() == "close":
            self._drop(port)
        if response.status == 200:
            result = reply.get("result") or {}
            return "ok", result.get("status") == "undecided"
        return str(reply.get("error", {}).get("code")), False

    def _drop(self, port: int) -> None:
        connection = self._connections.pop(port, None)
        if connection is not None:
            connection.close()


def honest_figures(outcomes: list[Outcome]) -> dict[str, Any]:
    answered = sorted(o.seconds for o in outcomes if o.what == "ok")
    codes = Counter(o.what for o in outcomes)
    return {
        "calls": len(outcomes),
        "answered": len(answered),
        "refused": sum(codes[c] for c in _REFUSED),
        "codes": dict(sorted(codes.items())),
        "undecided": sum(o.undecided for o in outcomes),
        "p50_ms": _ms(_quantile(answered, 0.50)),
        "p99_ms": _ms(_quantile(answered, 0.99)),
    }


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, int(q * len(values)))]


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)


@contextmanager
def honest_clients(ports: list[int], plan: Plan) -> Iterator[list[Honest]]:
    stop = threading.Event()
    clients = [Honest(n, ports, plan, stop) for n in range(plan.honest)]
    for client in clients:
        client.start()
    try:
        yield clients
    finally:
        stop.set()
        for client in clients:
            client.join(timeout=_CALL_WAIT + 5)


# -- the attackers ------------------------------------------------------------------


class Attack:
    """One pattern, against every port, until stopped, in a process of its own (its
    work must not slow the honest clients' threads); counts what the server did."""

    def __init__(self, pattern: str, ports: list[int], plan: Plan):
        self.pattern = pattern
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._counts: Any = context.Queue()
        self._proc = context.Process(
            target=_attack, args=(pattern, ports, plan, self._stop, self._counts), daemon=True
        )

    def start(self) -> None:
        self._proc.start()

    def stop(self) -> dict[str, int]:
        self._stop.set()
        try:
            counts: dict[str, int] = self._counts.get(timeout=60)
        finally:
            self._proc.join(timeout=30)
        return counts


def _attack(pattern: str, ports: list[int], plan: Plan, stop: Any, out: Any) -> None:
    attacker = _Attacker(pattern, ports, plan, stop)
    try:
        attacker.run()
    finally:
        out.put(dict(sorted(attacker.counts.items())))


class _Attacker:
    def __init__(self, pattern: str, ports: list[int], plan: Plan, stop: Any):
        self.pattern, self.ports, self.plan = pattern, ports, plan
        self.stop_at = stop
        self.counts: Counter[str] = Counter()
        self._held: dict[socket.socket, tuple[int, str, bytes]] = {}

    def run(self) -> None:
        if self.pattern == "websocket":
            self._upgrades()
            return
        wanted: list[tuple[int, str, bytes]] = []
        for port in self.ports:
            if self.pattern == "stalled-bodies":
                wanted += [(port, "127.0.0.2", _STALLED)] * self.plan.stalled
            elif self.pattern == "half-headers":
                for address in ("127.0.0.2", "127.0.0.3"):
                    wanted += [(port, address, _HALF)] * self.plan.half
            elif self.pattern == "idle-sockets":
                wanted += [(port, "127.0.0.2", b"")] * self.plan.idle
        missing = list(wanted)
        later: list[tuple[float, tuple[int, str, bytes]]] = []
        try:
            while not self.stop_at.is_set():
                failed = []
                while missing and not self.stop_at.is_set():
                    item = missing.pop()
                    if not self._open(*item):
                        failed.append(item)
                missing += failed
                # a socket the server closed is opened again a second later, as a
                # client's pool would (and the soak's socket hog does)
                now = time.monotonic()
                later += [(now + _REOPEN, item) for item in self._closed()]
                missing += [item for due, item in later if due <= now]
                later = [(due, item) for due, item in later if due > now]
        finally:
            for sock in self._held:
                sock.close()

    def _open(self, port: int, address: str, payload: bytes) -> bool:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(2.0)
        try:
            sock.bind((address, 0))
            sock.connect(("127.0.0.1", port))
            if payload:
                sock.sendall(payload)
        except OSError:
            sock.close()
            self.counts["connect-failed"] += 1
            time.sleep(0.01)
            return False
        self.counts["opened"] += 1
        self._held[sock] = (port, address, payload)
        return True

    def _closed(self) -> list[tuple[int, str, bytes]]:
        """The sockets the server wrote to or closed (each opened again)."""
        if not self._held:
            time.sleep(0.2)
            return []
        poll = select.poll()
        by_fd = {sock.fileno(): sock for sock in self._held}
        for fd in by_fd:
            poll.register(fd, select.POLLIN)
        readable = [by_fd[fd] for fd, _ in poll.poll(200)]
        again = []
        for sock in readable:
            try:
                data = sock.recv(4096)
            except OSError:
                data = b""
            status = data.split(b" ", 2)[1].decode("latin-1") if data.startswith(b"HTTP/") else ""
            self.counts[f"closed {status}".strip()] += 1
            again.append(self._held.pop(sock))
            sock.close()
        return again

    def _upgrades(self) -> None:
        turn = 0
        while not self.stop_at.is_set():
            port = self.ports[turn % len(self.ports)]
            turn += 1
            try:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sock.settimeout(5.0)
                sock.bind(("127.0.0.2", 0))
                sock.connect(("127.0.0.1", port))
                sock.sendall(_UPGRADE)
                data = sock.recv(4096)
                status = data.split(b" ", 2)[1].decode("latin-1") if data else "closed"
                json_reply = b"application/json" in data.lower()
                self.counts[f"{status}{' json' if json_reply else ''}"] += 1
                sock.close()
            except OSError as exc:
                self.counts[type(exc).__name__] += 1
                time.sleep(0.01)



class Payloads(threading.Thread):
    """Hostile bodies and keys, one every ``every`` seconds: lone surrogates in requests
    and deltas, lookalike keys, a body in UTF-16; counts the replies by code."""

    def __init__(self, ports: list[int], every: float = 0.2):
        super().__init__(daemon=True)
        self.ports, self.every = ports, every
        self.stop_at = threading.Event()
        self.codes: Counter[str] = Counter()

    def run(self) -> None:
        rng = random.Random(46)
        bodies: list[tuple[str, str, Any]] = [
            ("POST", "/assemble", b'{"task": {"id": "\\ud800", "budget": 10}, "candidates": []}'),
            ("POST", "/assemble", b'{"task": {"id": "t", "budget": 10}, "candidates": [{"id":'
             b' "a\\udfff", "cost": 1, "relevance": 0.5}]}'),
            ("POST", "/sessions/hostile/delta", b'{"add": [{"id": "\\udbff", "cost": 1,'
             b' "relevance": 0.5}]}'),
            ("POST", "/assemble", '{"task": {"id": "t", "budget": 1}, "candidates": []}'
             .encode("utf-16")),
        ]  # fmt: skip
        keys = list(LOOKALIKES.values())
        opened = False
        while not self.stop_at.wait(self.every):
            port = rng.choice(self.ports)
            try:
                if not opened:
                    opened = call(port, "PUT", "/sessions/hostile", fleet_request(1, 5))[0] == 200
                if rng.random() < 0.5:
                    method, path, body = rng.choice(bodies)
                else:
                    method, body = "PUT", fleet_request(2, 3)
                    path = "/sessions/" + quote(rng.choice(keys), safe="")
                status, reply = call(port, method, path, body, timeout=15.0)
                self.codes[str(reply.get("error", {}).get("code", status))] += 1
            except OSError:
                self.codes["connection"] += 1

    def stop(self) -> dict[str, int]:
        self.stop_at.set()
        self.join(timeout=30)
        return dict(sorted(self.codes.items()))


# -- the parts ----------------------------------------------------------------------


@dataclass
class Bench:
    side: Path
    scratch: Path
    admin: str
    token: str
    plan: Plan
    made: int = field(default=0)

    def database(self, name: str) -> str:
        self.made += 1
        label = f"hostile_{self.scratch.name}_{name.replace('-', '_')}_{os.getpid()}_{self.made}"
        return pgserver.create_database(self.admin, label)

    def fleet(self, name: str, *args: str) -> list[Replica]:
        url = self.database(name)
        return [Replica(self.side, self.scratch, "--ledger", url, "--token-file", self.token,
                        *args) for _ in range(2)]  # fmt: skip

    def single(self, *args: str, env: dict[str, str] | None = None) -> Replica:
        return Replica(self.side, self.scratch, "--token-file", self.token, *args, env=env)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _stopped(replicas: list[Replica]) -> dict[str, Any]:
    health = [r.health() for r in replicas]
    internal = sum((h or {}).get("errors", {}).get("internal-error", 0) for h in health)
    stops = [r.stop() for r in replicas]
    return {
        "internal_errors": internal,
        "healthz_reachable": sum(h is not None for h in health),
        "tracebacks": sum(s["tracebacks"] for s in stops),
        "exits": [s["exit"] for s in stops],
    }


def honest_part(bench: Bench, attack: str, seconds: float) -> dict[str, Any]:
    """The honest clients on fresh replicas, alone then beside ``attack``, in
    ``plan.rounds`` alternating rounds of ``seconds / rounds`` each (so that a drift of
    the machine's load falls on both alike)."""
    load = _load()
    replicas = bench.fleet(attack)
    ports = [r.port for r in replicas]
    for port in ports:  # warm: each replica has answered once
        call(port, "POST", "/assemble", fleet_request(0, bench.plan.forms))
    alone: list[Outcome] = []
    beside: list[Outcome] = []
    seen: Counter[str] = Counter()
    share = seconds / bench.plan.rounds
    for _ in range(bench.plan.rounds):
        with honest_clients(ports, bench.plan) as clients:
            time.sleep(share)
        alone += [o for c in clients for o in c.outcomes]
        attacker = Attack(attack, ports, bench.plan)
        attacker.start()
        time.sleep(3.0)  # its sockets are open
        with honest_clients(ports, bench.plan) as clients:
            time.sleep(share)
        seen.update(attacker.stop())
        beside += [o for c in clients for o in c.outcomes]
    return {"pattern": attack, "load_before": load, "load_after": _load(),
            "unloaded": honest_figures(alone), **honest_figures(beside),
            "attacker_saw": dict(sorted(seen.items())), **_stopped(replicas)}  # fmt: skip


def time_limited_part(bench: Bench) -> dict[str, Any]:
    """Deltas told time-limit, then sent again without a version: how many were applied
    twice (the first in the background), by store."""
    out: dict[str, Any] = {"load_before": _load()}
    for store in ("none", "sqlite", "postgresql"):
        args: tuple[str, ...] = ()
        if store == "sqlite":
            args = ("--ledger", str(bench.scratch / f"tl-{bench.made}.db"))
            bench.made += 1
        elif store == "postgresql":
            args = ("--ledger", bench.database("time_limited"))
        server = bench.single(*args, env={"ASSEMBLER_TEST_SLEEP": "2"})
        applied = told = 0
        try:
            for n in range(bench.plan.time_limited):
                key = f"tl-{n}"
                opened = call(server.port, "PUT", f"/sessions/{key}?strategy=sleepy&time_limit=8",
                              fleet_request(n, 5))  # fmt: skip
                assert opened[0] == 200, opened
                change = {"add": [{"id": "late", "cost": 1, "relevance": 0.9, "content": "x"}]}
                status, reply = call(server.port, "POST", f"/sessions/{key}/delta?time_limit=0.5",
                                     change)  # fmt: skip
                if reply.get("error", {}).get("code") != "time-limit":
                    continue
                told += 1
                _until_idle(server)
                status, again = call(server.port, "POST", f"/sessions/{key}/delta?time_limit=8",
                                     change)  # fmt: skip
                if status != 200 or again["session"]["version"] != 1:
                    applied += 1
        finally:
            server.stop()
        out[store] = {"told_time_limit": told, "applied": applied}
    return out


def _until_idle(server: Replica) -> None:
    deadline = time.monotonic() + _CALL_WAIT
    time.sleep(0.5)
    while time.monotonic() < deadline:
        health = server.health()
        if health is not None and health["solving"] == 0:
            return
        time.sleep(0.1)


def outage_part(bench: Bench, pg: pgserver.Server) -> dict[str, Any]:
    """The honest clients while PostgreSQL is down for ``plan.outage`` seconds."""
    load = _load()
    replicas = bench.fleet("outage")
    ports = [r.port for r in replicas]
    with honest_clients(ports, bench.plan) as clients:
        time.sleep(3.0)
        down = time.monotonic()
        pg.pause()
        time.sleep(bench.plan.outage)
        pg.resume()
        up = time.monotonic()
        time.sleep(15.0)
    outcomes = [o for c in clients for o in c.outcomes]
    during = [o for o in outcomes if down <= o.at + o.seconds and o.at <= up]
    back = [o.at + o.seconds - up for o in outcomes if o.at >= up and o.what == "ok"]
    return {
        "load_before": load,
        "seconds_down": bench.plan.outage,
        "during": honest_figures(during),
        "undecided": sum(o.undecided for o in during),
        "longest_call_s": round(max((o.seconds for o in during), default=0.0), 2),
        "first_answer_after_s": round(min(back), 2) if back else None,
        "after": honest_figures([o for o in outcomes if o.at >= up]),
        **_stopped(replicas),
    }


def lookalike_part(bench: Bench) -> dict[str, Any]:
    server = bench.single()
    try:
        accepted = [
            kind
            for kind, key in LOOKALIKES.items()
            if call(server.port, "PUT", "/sessions/" + quote(key, safe=""), fleet_request(3, 3))[0]
            == 200
        ]
    finally:
        server.stop()
    return {"kinds_tried": len(LOOKALIKES), "accepted": accepted}


def soak_part(bench: Bench, pg: pgserver.Server) -> dict[str, Any]:
    """Every pattern at once, the hostile payloads and an outage, for the soak's time."""
    load = _load()
    replicas = bench.fleet("soak")
    ports = [r.port for r in replicas]
    attackers = [Attack(pattern, ports, bench.plan) for pattern in PATTERNS]
    payloads = Payloads(ports)
    for attacker in attackers:
        attacker.start()
    payloads.start()
    seconds = bench.plan.soak_seconds
    with honest_clients(ports, bench.plan) as clients:
        time.sleep(seconds / 3)
        pg.pause()
        time.sleep(bench.plan.outage)
        pg.resume()
        time.sleep(max(0.0, seconds * 2 / 3 - bench.plan.outage))
    seen = {a.pattern: a.stop() for a in attackers}
    hostile = payloads.stop()
    outcomes = [o for c in clients for o in c.outcomes]
    stopped = _stopped(replicas)
    return {
        "load_before": load,
        "seconds": seconds,
        "honest": honest_figures(outcomes),
        "payload_replies": hostile,
        "attackers_saw": seen,
        **stopped,
        "internal_errors": stopped["internal_errors"]
        + hostile.get("internal-error", 0)
        + sum(o.what == "internal-error" for o in outcomes),
    }


def run_side(side: Path, plan: Plan, pg: pgserver.Server, scratch: Path,
             only: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    token = scratch / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    bench = Bench(side, scratch, pg.url, str(token), plan)
    data: dict[str, Any] = {}
    parts: dict[str, Callable[[], Any]] = {
        "honest": lambda: [honest_part(bench, p, plan.seconds) for p in PATTERNS],
        "time_limited": lambda: time_limited_part(bench),
        "outage": lambda: outage_part(bench, pg),
        "lookalikes": lambda: lookalike_part(bench),
        "soak": lambda: soak_part(bench, pg),
    }
    for name, part in parts.items():
        if not only or name in only:
            print(f"  {side.name}: {name}", file=sys.stderr, flush=True)
            data[name] = part()
    return data


# -- the report ---------------------------------------------------------------------


def goals(side: dict[str, Any]) -> dict[str, bool]:
    met: dict[str, bool] = {}
    if "honest" in side:
        met["honest"] = all(
            part["refused"] == 0 and part["p99_ms"] is not None
            and part["p99_ms"] <= GOAL_P99 * (part["unloaded"]["p99_ms"] or 0.0)
            for part in side["honest"]
        )  # fmt: skip
    if "time_limited" in side:
        met["time_limited"] = all(
            side["time_limited"][s]["applied"] == 0 for s in ("none", "sqlite", "postgresql")
        )
    if "outage" in side:
        met["outage"] = side["outage"]["undecided"] == 0
    if "lookalikes" in side:
        met["lookalikes"] = not side["lookalikes"]["accepted"]
    if "soak" in side:
        met["soak"] = side["soak"]["internal_errors"] == 0
    return met


def _markdown(data: dict[str, Any]) -> str:
    before, after = data["sides"]["before"], data["sides"]["after"]
    names = f"{data['before']} (before)", f"{data['after']} (this change)"
    m = data["machine"]
    lines = [
        "# The hostile soak: one client against the others (issue 46)",
        "",
        f"`python -m benchmarks.hostile` on {m['cpu']} ({m['cores']} cores), {m['date']}."
        f" Each side is its own checkout; its replicas (two, on one PostgreSQL database),"
        f" the database, the honest clients ({data['plan']['honest']} threads, sessions of"
        f" {data['plan']['forms']} forms) and the attacker share the machine's cores; the"
        " load average at each part's start is given.",
        "",
        f"| case | goal | {names[0]} | {names[1]} |",
        "|---|---|---|---|",
    ]

    def honest_row(i: int) -> str:
        cells = []
        for side in (before, after):
            part = side.get("honest", [None] * (i + 1))[i]
            if part is None:
                cells.append("-")
                continue
            alone = part["unloaded"]
            cells.append(
                f"p99 {part['p99_ms']} ms against {alone['p99_ms']} ms alone"
                f" ({_ratio(part['p99_ms'], alone['p99_ms'])}), {part['answered']}/"
                f"{part['calls']} answered, {part['refused']} refused"
                f" (load {part['load_before']}-{part['load_after']})"
            )
        pattern = after["honest"][i]["pattern"]
        goal = f"p99 <= {GOAL_P99:g}x alone, 0 refused"
        return f"| honest clients beside {pattern} | {goal} | {cells[0]} | {cells[1]} |"

    if "honest" in after:
        lines += [honest_row(i) for i in range(len(after["honest"]))]
    def row(part: str, case: str, goal: str, cell: Callable[[Any], str]) -> None:
        if part in after:
            cells = ["-" if part not in side else cell(side[part]) for side in (before, after)]
            lines.append(f"| {case} | {goal} | {cells[0]} | {cells[1]} |")

    def time_limited(t: Any) -> str:
        applied = " / ".join(str(t[k]["applied"]) for k in ("none", "sqlite", "postgresql"))
        return f"{applied} (of {t['postgresql']['told_time_limit']} each)"

    def outage(o: Any) -> str:
        return (
            f"{o['undecided']} undecided; replies {o['during']['codes']}; longest call"
            f" {o['longest_call_s']} s; first answer {o['first_answer_after_s']} s after"
            " it came back"
        )

    def lookalikes(k: Any) -> str:
        named = f" ({', '.join(k['accepted'])})" if k["accepted"] else ""
        return f"{len(k['accepted'])} of {k['kinds_tried']}{named}"

    def soak(k: Any) -> str:
        h = k["honest"]
        return (
            f"{k['internal_errors']} internal errors; honest {h['answered']}/{h['calls']}"
            f" answered, {h['refused']} refused, p99 {h['p99_ms']} ms; /healthz reachable"
            f" at the end on {k['healthz_reachable']}/2; {k['tracebacks']} tracebacks"
            f" (load {k['load_before']})"
        )

    row("time_limited", "time-limited deltas applied (no ledger / SQLite / PostgreSQL)",
        "0 / 0 / 0", time_limited)  # fmt: skip
    row("outage", f"`undecided` answers during a {data['plan']['outage']:g} s PostgreSQL"
        " outage", "0, each a retryable error", outage)  # fmt: skip
    row("lookalikes", "keys accepted that display like another key", "0 kinds", lookalikes)
    minutes = data["plan"]["soak_seconds"] / 60
    row("soak", f"internal errors in the {minutes:g}-minute hostile soak (every pattern,"
        " hostile payloads, an outage)", "0", soak)  # fmt: skip
    met = goals(after)
    lines += ["", "Goals met by this change: " + (", ".join(
        f"{k} {'yes' if v else 'no'}" for k, v in met.items()) or "-") + ".", ""]  # fmt: skip
    lines += ["What the attackers saw (this change):", ""]
    for part in after.get("honest", []):
        lines.append(f"- {part['pattern']}: {part['attacker_saw']}")
    if "soak" in after:
        lines.append(f"- the soak's payloads: {after['soak']['payload_replies']}")
    lines.append("")
    return "\n".join(lines)


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.2f}x"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--soak-minutes", type=float, default=10.0)
    parser.add_argument("--honest", type=int, default=4)
    parser.add_argument("--only", nargs="*", default=[],
                        choices=["honest", "time_limited", "outage", "lookalikes", "soak"])
    parser.add_argument("--quick", action="store_true",
                        help="a short run while developing (10 s parts, a 1-minute soak)")
    parser.add_argument("--this-only", action="store_true",
                        help="measure this revision only (while developing)")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    plan = Plan(seconds=args.seconds, soak_seconds=args.soak_minutes * 60, honest=args.honest)
    if args.quick:
        plan = Plan(seconds=10.0, soak_seconds=60.0, honest=args.honest, time_limited=1,
                    rounds=1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"machine": machine.describe(), "plan": asdict(plan)}
    pg = pgserver.start()
    try:
        with checked_out(args.before, None) as (old, new), tempfile.TemporaryDirectory() as tmp:
            data["before"], data["after"] = args.before, data["machine"]["commit"]
            data["sides"] = {}
            for name, side in (("before", old), ("after", new)):
                if name == "before" and args.this_only:
                    data["sides"][name] = {}
                    continue
                scratch = Path(tmp) / name
                scratch.mkdir()
                data["sides"][name] = run_side(side, plan, pg, scratch, tuple(args.only))
    finally:
        pg.stop()
    data["goals_met"] = goals(data["sides"]["after"])
    (out / "hostile.json").write_text(json.dumps(data, indent=2) + "\n")
    (out / "HOSTILE.md").write_text(_markdown(data))
    print(_markdown(data), file=sys.stderr)
    return 0 if all(data["goals_met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
