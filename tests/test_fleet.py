"""Servers any replica can answer for: ``assembler serve`` processes sharing one ledger.

Every server here is the real process over loopback HTTP, every ledger a real
PostgreSQL database (the ``postgres`` fixture): a session opened at one replica
continues at any other, which rebuilds it from the ledger and gives the answer the
first would give; a delta sent again with its version is applied once; an evicted or
idle session is rebuilt without loss; a close holds for every replica; a key never
reaches a log. The fleet test runs three replicas and 100 clients, SIGKILLs one
replica mid-flight and restarts it: every session continues, every proven answer is
``assemble()``'s of the same request, no compilation is lost or recorded twice, and the
chain verifies. (``python -m benchmarks.fleet`` runs a larger one, and the goals.)
"""

from __future__ import annotations

import http.client
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import WAIT, Http, Starter, started, time_limited_delta_is_not_applied
from serving import same as _same

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import assembler
from assembler.ledger import CompilationOutcome
from assembler.ledger.verify import verify
from benchmarks import fleet as fleet_bench

TOKEN = "fleet-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def servers() -> Iterator[Starter]:
    yield from started()


@pytest.fixture
def token_file(tmp_path: Path) -> str:
    path = tmp_path / "token"
    path.write_text(TOKEN)
    path.chmod(0o600)
    return str(path)


def replica(servers: Starter, url: str, token_file: str, *args: str, port: str = "0") -> Http:
    return servers(
        Http, "--ledger", url, "--token-file", token_file, "--concurrency", "1", *args, port=port
    )


def call(server: Http, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    status, _, reply = server.call(method, path, body, headers=AUTH)
    return status, reply


def turn(seed: int) -> dict[str, Any]:
    return fleet_bench.request(seed, 13)


def step(seed: int, number: int) -> dict[str, Any]:
    """The ``number``-th delta of a client: a new message, the one before gone."""
    return fleet_bench.delta(seed, number)


def fresh(reference: assembler.Session, result: dict[str, Any], **options: Any) -> None:
    """``result`` is assemble()'s of the session's request now, and verified."""
    _same(reference.to_dict(), result, **options)


def test_a_session_continues_at_a_replica_that_never_held_it(
    servers: Starter, postgres_url: str, token_file: str
) -> None:
    a, b = (replica(servers, postgres_url, token_file) for _ in range(2))
    opening = turn(1)
    status, opened = call(a, "PUT", "/sessions/agent-1?render=anthropic-messages", opening)
    assert status == 200 and opened["session"]["version"] == 0, opened
    reference = assembler.Session(opening, render="anthropic-messages")
    fresh(reference, opened["result"], render="anthropic-messages")
    # b never saw it; then a, whose copy is now behind the ledger; then b again
    for number, server in enumerate((b, a, b), start=1):
        delta = step(1, number)
        status, reply = call(server, "POST", f"/sessions/agent-1/delta?version={number - 1}", delta)
        assert status == 200, reply
        assert reply["session"]["version"] == number
        reference.apply(delta)
        assert reply["session"]["candidates"] == len(reference.request.candidates)
        fresh(reference, reply["result"], render="anthropic-messages")
    with assembler.Ledger(postgres_url, readonly=True) as ledger:
        before = len(ledger.summaries())
        # the last delta sent again (its reply lost, say), to either replica: the same
        # answer, recorded once
        for server in (a, b):
            status, again = call(server, "POST", "/sessions/agent-1/delta?version=2", step(1, 3))
            assert status == 200 and again["result"] == reply["result"], again
            assert again["session"]["version"] == 3
        assert len(ledger.summaries()) == before == 4
        # a delta made for another version is refused, and says where the session is
        status, stale = call(b, "POST", "/sessions/agent-1/delta?version=1", step(1, 9))
        assert status == 409 and stale["error"]["code"] == "session-conflict"
        assert stale["error"]["version"] == 3 and len(ledger.summaries()) == before
        assert verify(ledger).ok
        entry = ledger._store.session_entry("agent-1")
        assert entry is not None and entry.version == 3


def test_a_cache_aware_session_carries_what_the_provider_holds_to_another_replica(
    servers: Starter, postgres_url: str, token_file: str
) -> None:
    a, b = (replica(servers, postgres_url, token_file) for _ in range(2))
    opening = turn(2)
    query = "render=anthropic-messages&cache=anthropic"
    status, opened = call(a, "PUT", f"/sessions/cached?{query}", opening)
    assert status == 200, opened
    reference = assembler.Session(opening, render="anthropic-messages", cache="anthropic")
    reference.answer()
    for number, server in enumerate((b, a, b), start=1):
        delta = step(2, number)
        status, reply = call(server, "POST", f"/sessions/cached/delta?version={number - 1}", delta)
        assert status == 200, reply
        expected = reference.apply(delta)
        # the previous call's blocks came from the ledger: the same cache record
        assert reply["result"]["cache"] == expected.to_dict()["cache"]
        assert reply["result"]["rendering"] == expected.to_dict()["rendering"]
        assert reply["result"]["trace_id"] == expected.trace_id


def test_evicted_and_idle_sessions_are_rebuilt_and_a_close_holds_everywhere(
    servers: Starter, postgres_url: str, token_file: str
) -> None:
    small = replica(servers, postgres_url, token_file, "--max-sessions", "1",
                    "--session-idle", "1")  # fmt: skip
    other = replica(servers, postgres_url, token_file)
    references = {}
    for seed in (3, 4):
        references[seed] = assembler.Session(turn(seed))
        status, _ = call(small, "PUT", f"/sessions/s{seed}", turn(seed))
        assert status == 200
    assert small.health()["sessions"] == 1  # s3 was evicted to keep s4
    status, reply = call(small, "POST", "/sessions/s3/delta?version=0", step(3, 1))
    assert status == 200 and reply["session"]["version"] == 1, reply
    references[3].apply(step(3, 1))
    fresh(references[3], reply["result"])
    time.sleep(2.5)  # s3 idle past --session-idle, swept out of memory
    status, reply = call(small, "POST", "/sessions/s3/delta", step(3, 2))
    assert status == 200 and reply["session"]["version"] == 2, reply
    references[3].apply(step(3, 2))
    fresh(references[3], reply["result"])
    # closed at one replica: no replica answers for it any more
    status, closed = call(other, "DELETE", "/sessions/s3")
    assert status == 200 and closed["closed"] is True
    for server in (small, other):
        status, gone = call(server, "POST", "/sessions/s3/delta", step(3, 3))
        assert status in (404, 409, 410), gone
        assert gone["error"]["code"] in ("session-unknown", "session-expired", "session-conflict")


def test_a_key_never_reaches_a_log(
    servers: Starter, postgres: Any, postgres_url: str, token_file: str
) -> None:
    key = "agent-key-7f3a9c-secret"
    a = replica(servers, postgres_url, token_file)
    b = replica(servers, postgres_url, token_file)
    assert call(a, "PUT", f"/sessions/{key}", turn(5))[0] == 200
    assert call(b, "POST", f"/sessions/{key}/delta", step(5, 1))[0] == 200
    assert call(b, "POST", f"/sessions/{key}/delta?version=0", step(5, 7))[0] == 409
    assert call(a, "POST", f"/sessions/{key}/delta", {"remove": ["nothing"]})[0] == 400
    assert call(a, "POST", f"/sessions/{key}-other/delta", step(5, 1))[0] == 404
    a.call("POST", f"/sessions/{key}/delta", step(5, 2))  # without the token: 401
    # the ledger made to fail under a session call: its error goes to stderr
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("ALTER TABLE sessions RENAME TO sessions_away")
    assert call(b, "POST", f"/sessions/{key}/delta", step(5, 2))[0] == 500
    logs = []
    for server in (a, b):
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=WAIT)
        logs.append(server.stderr())
    assert "ledger" in logs[1]  # the operator is told about the ledger
    log = postgres.log
    if log and Path(log).exists():
        logs.append(Path(log).read_text(errors="replace"))
    for text in logs:
        assert key not in text


class _Client:
    """One agent: opens its session, then sends its deltas, each to the next replica
    round-robin; a call whose replica is gone is sent again, with its version, to the
    next one."""

    def __init__(self, index: int, ports: list[int], deltas: int) -> None:
        self.index, self.ports, self.deltas = index, ports, deltas
        self.key = f"client-{index}"
        self.reference = assembler.Session(turn(100 + index))
        self.answers: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self.retries = 0
        self.busy = 0
        self.error: str | None = None

    def _send(self, attempt: int, method: str, path: str, body: Any) -> dict[str, Any]:
        for tries in range(200):
            port = self.ports[(self.index + attempt + tries) % len(self.ports)]
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
            try:
                connection.request(method, path, json.dumps(body).encode(), AUTH)
                response = connection.getresponse()
                reply: dict[str, Any] = json.loads(response.read())
                if response.status == 503:
                    # server-busy or time-limit: not applied (or applied late, which
                    # the version tells); sent again after a pause, as a client would
                    self.busy += 1
                    time.sleep(0.05 * (1 + tries % 5))
                    continue
                if response.status != 200:
                    raise AssertionError(f"{method} {path}: {response.status} {reply}")
                return reply
            except (ConnectionError, http.client.HTTPException, OSError):
                self.retries += 1  # the replica was killed, or is not back yet
                time.sleep(0.05)
            finally:
                connection.close()
        raise AssertionError(f"{method} {path}: no replica answered")

    def open(self) -> None:
        reply = self._send(0, "PUT", f"/sessions/{self.key}", self.reference.to_dict())
        self.answers.append((self.reference.to_dict(), reply["result"]))

    def run(self, pause: threading.Event) -> None:
        try:
            for number in range(1, self.deltas + 1):
                pause.wait()
                delta = step(100 + self.index, number)
                path = f"/sessions/{self.key}/delta?version={number - 1}"
                reply = self._send(number, "POST", path, delta)
                assert reply["session"]["version"] == number, reply
                self.reference.apply(delta)
                self.answers.append((self.reference.to_dict(), reply["result"]))
        except AssertionError as exc:
            self.error = str(exc)


def test_three_replicas_a_hundred_clients_and_one_replica_killed_mid_flight(
    servers: Starter, postgres_url: str, token_file: str
) -> None:
    replicas = [replica(servers, postgres_url, token_file) for _ in range(3)]
    ports = [server.port for server in replicas]
    clients = [_Client(i, ports, deltas=3) for i in range(100)]
    for client in clients:
        client.open()
    go = threading.Event()
    go.set()
    threads = [threading.Thread(target=c.run, args=(go,), daemon=True) for c in clients]
    for thread in threads:
        thread.start()
    # mid-flight: once a third of the deltas are answered, replica 1 is killed
    total = 3 * len(clients)
    deadline = time.monotonic() + 300
    while sum(len(c.answers) - 1 for c in clients) < total // 3:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    victim = replicas[1]
    while victim.health()["solving"] < 1:  # kill it with a solve in flight
        assert time.monotonic() < deadline
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait(timeout=WAIT)
    time.sleep(0.5)
    restarted = replica(servers, postgres_url, token_file, port=str(victim.port))
    assert restarted.port == victim.port
    for thread in threads:
        thread.join(timeout=600)
    assert [c.error for c in clients if c.error] == []
    assert sum(c.retries for c in clients) > 0  # some calls met the dead replica
    # every proven answer is assemble()'s of the same request
    for client in clients:
        assert len(client.answers) == 4
        for request, result in client.answers:
            if result["optimal"]:
                _same(request, result)
    with assembler.Ledger(postgres_url, readonly=True) as ledger:
        report = verify(ledger)
        assert report.ok, report.problems
        summaries = ledger.summaries()
        for client in clients:
            mine = [s for s in summaries if s.session == client.key]
            answered = [s.trace_id for s in mine if s.outcome is not CompilationOutcome.INTERRUPTED]
            # none lost, none twice: the ledger's answers are the ones the client got
            assert answered == [result["trace_id"] for _, result in client.answers]
            entry = ledger._store.session_entry(client.key)
            assert entry is not None and entry.version == 3
        # what the kill cut short (at most its one solver thread's call) reads as
        # interrupted, never as an answer
        interrupted = [s for s in summaries if s.outcome is CompilationOutcome.INTERRUPTED]
        assert len(interrupted) <= 1


def test_without_a_ledger_a_version_is_checked_against_the_session_held(
    servers: Starter,
) -> None:
    alone = servers(Http)
    assert alone.call("PUT", "/sessions/solo", turn(6))[0] == 200
    status, _, reply = alone.call("POST", "/sessions/solo/delta?version=0", step(6, 1))
    assert status == 200 and reply["session"]["version"] == 1
    # sent again: without a ledger the server cannot tell it from another delta
    status, _, again = alone.call("POST", "/sessions/solo/delta?version=0", step(6, 1))
    assert status == 409 and again["error"]["version"] == 1, again
    status, _, bad = alone.call("POST", "/sessions/solo/delta?version=x", step(6, 2))
    assert status == 400 and bad["error"]["field"] == "version"
    status, _, misplaced = alone.call("PUT", "/sessions/other?version=0", turn(6))
    assert status == 400 and misplaced["error"]["field"] == "version"


# ---------------------------------------------------------------------------
# Issue 46: an answer not given is never applied; a store outage is a fast, retryable
# answer that changes nothing


def test_a_delta_answered_time_limit_is_not_applied_on_postgresql(
    servers: Starter, postgres_url: str, token_file: str
) -> None:
    # its solve finished in the background, was recorded and committed the session
    # in the shared ledger, where every replica then found it
    server: Http = servers(
        Http, "--ledger", postgres_url, "--token-file", token_file,
        test_strategies=True, env={"ASSEMBLER_TEST_SLEEP": "2"},
    )  # fmt: skip
    time_limited_delta_is_not_applied(server, AUTH)
    with assembler.Ledger(postgres_url, readonly=True) as ledger:
        outcomes = [s.outcome.value for s in ledger.summaries()]
    assert outcomes == ["compiled", "abandoned", "compiled"], outcomes


@pytest.fixture
def own_postgres() -> Iterator[Any]:
    """A PostgreSQL server of this test's own, which it may stop and start."""
    pytest.importorskip("psycopg_pool")
    from benchmarks import pgserver

    if pgserver.binaries() is None:
        pytest.skip(pgserver.ABSENT)
    server = pgserver.start()
    try:
        yield server
    finally:
        server.stop()


def test_a_postgresql_outage_is_a_fast_retryable_error_that_changes_nothing(
    servers: Starter, own_postgres: Any, token_file: str
) -> None:
    # PostgreSQL down: calls waited on the pool for their whole time limit, some came
    # back undecided (a solve starved of its time), were recorded once the database was
    # back and moved the session on; sending one again replayed the undecided
    from benchmarks import pgserver

    url = pgserver.create_database(own_postgres.url, "outage")
    a = replica(servers, url, token_file, "--time-limit", "30")
    assert call(a, "PUT", "/sessions/k", turn(1))[0] == 200
    own_postgres.pause()
    try:
        for _ in range(3):
            # the same delta, sent again as told: never applied, never undecided
            status, reply = call(a, "POST", "/sessions/k/delta?version=0", step(1, 1))
            assert (status, reply["error"]["code"]) == (503, "ledger-error"), reply
            assert reply["error"]["retryable"] is True and reply["error"]["retry_after"] > 0
            status, reply = call(a, "POST", "/assemble", turn(2))
            assert (status, reply["error"]["code"]) == (503, "ledger-error"), reply
    finally:
        own_postgres.resume()
    # service resumes by itself: the client retries as told
    deadline = time.monotonic() + WAIT
    while True:
        status, reply = call(a, "POST", "/sessions/k/delta?version=0", step(1, 1))
        if status == 200 or time.monotonic() > deadline:
            break
        assert reply["error"]["code"] == "ledger-error" and reply["error"]["retryable"]
        time.sleep(reply["error"]["retry_after"])
    assert (status, reply["session"]["version"]) == (200, 1), reply
    with assembler.Ledger(url, readonly=True) as ledger:
        statuses = [s.status for s in ledger.summaries()]
        assert "undecided" not in statuses
        assert verify(ledger).ok
