"""The ledger in PostgreSQL: the same record as SQLite's, byte for byte, under many writers.

Every test talks to a real server over loopback (the ``postgres`` fixture: the one
``.ci/run`` started, or one started with initdb + pg_ctl for the test run), each in a
fresh database. The same compilations recorded into an SQLite file and a PostgreSQL
database export the same bytes; ``ledger copy`` moves a ledger either way exactly;
writers in separate processes keep one gapless chain, and a writer killed inside its
transaction leaves nothing of it.
"""

from __future__ import annotations

import importlib
import io
import itertools
import json
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import form, request
from ledger_worker import request as generated

import assembler
from assembler.ledger import CompilationOutcome, artifacts
from assembler.ledger.copy import copy
from assembler.ledger.diff import diff
from assembler.ledger.events import Entry
from assembler.ledger.export import export
from assembler.ledger.postgres import PostgresStore, redacted
from assembler.ledger.replay import replay
from assembler.ledger.sessions import SessionCommit, SessionEntry, SessionMoved
from assembler.ledger.verify import references, verify
from assembler.model.parse import parse_request

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "models" / "examples"
WORKER = str(Path(__file__).resolve().parent / "ledger_worker.py")


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / name).read_text())
    return data


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args], capture_output=True, text=True, check=False
    )


def exported(ledger: assembler.Ledger) -> list[str]:
    out = io.StringIO()
    export(ledger, out)
    return out.getvalue().splitlines(keepends=True)


def same_export(a: assembler.Ledger, b: assembler.Ledger) -> None:
    """Byte for byte the same lines, but for the header's ``path`` (each its own)."""
    mine, theirs = exported(a), exported(b)
    assert mine[1:] == theirs[1:]
    head_a, head_b = json.loads(mine[0]), json.loads(theirs[0])
    assert (head_a.pop("path"), head_b.pop("path")) == (a.path, b.path)
    assert head_a == head_b


class Clock:
    """The time both stores stamp events with (``artifacts.now``), moved on by
    ``tick()`` only."""

    def __init__(self) -> None:
        self.ticks = 0

    def tick(self) -> None:
        self.ticks += 1

    def now(self) -> str:
        minutes, micros = divmod(self.ticks, 60_000_000)
        return f"2026-01-01T00:{minutes:02d}:{micros // 1_000_000:02d}.{micros % 1_000_000:06d}Z"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fixed = Clock()
    monkeypatch.setattr(artifacts, "now", fixed.now)
    return fixed


class _Both:
    """A recorder that records each compilation in two ledgers: the same request, the
    same result (its timings included) and the same time reach both."""

    def __init__(self, clock: Clock, *ledgers: assembler.Ledger) -> None:
        self.clock = clock
        self.ledgers = ledgers

    def requested(self, request: Any, settings: Any) -> Any:
        self.clock.tick()
        recordings = [ledger.requested(request, settings) for ledger in self.ledgers]
        return _BothRecording(self.clock, recordings)

    def invalid(self, request: object, given: Mapping[str, Any], error: Exception) -> None:
        for ledger in self.ledgers:
            ledger.invalid(request, given, error)


class _BothRecording:
    def __init__(self, clock: Clock, recordings: list[Any]) -> None:
        self.clock = clock
        self.recordings = recordings

    def answered(self, result: assembler.Result) -> None:
        self.clock.tick()
        for recording in self.recordings:
            recording.answered(result)

    def failed(self, error: Exception) -> None:
        self.clock.tick()
        for recording in self.recordings:
            recording.failed(error)


def _workload(ledger: Any) -> None:
    """Every kind of event: a rendered bundle, a refusal, input that never parsed, a
    failure after parsing, an interrupted compilation, a usage report, a cached
    session's turns, a content shared between compilations."""
    assembler.assemble(load("review-migration.json"), ledger=ledger, render="openai-chat")
    assembler.assemble(load("mandatory-over-budget.json"), ledger=ledger)
    with pytest.raises(assembler.InvalidRequest):
        assembler.assemble({"task": {"id": "broken", "budget": 1}}, ledger=ledger)
    too_big = request(budget=10)
    too_big["candidates"] = [form(f"f{i}", 1) for i in range(20)]
    with pytest.raises(assembler.EnumerationTooLarge):
        assembler.assemble(too_big, strategy="enumerate", ledger=ledger)
    ledger.requested(parse_request(load("shared-resolver.json")), assembler.Settings())
    for seed in range(3):
        assembler.assemble(generated(seed), ledger=ledger, render="anthropic-messages")
    turn = request(budget=400)
    turn["candidates"] = [
        form("system", 100, 1.0, content="be brief", role="instruction", channel="system"),
        form("doc", 250, 0.9, content="the whole document ü"),
    ]
    session = assembler.Session(turn, render="anthropic-messages", cache="anthropic",
                                ledger=ledger)  # fmt: skip
    session.answer()
    session.apply({"add": [form("new", 40, 0.7, content="a new message")]})


def test_the_same_compilations_export_the_same_bytes_from_both_stores(
    tmp_path: Path, postgres_url: str, clock: Clock
) -> None:
    with (
        assembler.Ledger(tmp_path / "l.db") as lite,
        assembler.Ledger.open(postgres_url) as pg,
    ):
        _workload(_Both(clock, lite, pg))
        clock.tick()
        for ledger in (lite, pg):
            ledger.record_usage(model="gpt-4o", counter="o200k", counted=100, billed=104, of=1)
        same_export(lite, pg)
        assert verify(lite).to_dict() == verify(pg).to_dict()
        assert verify(pg).ok and verify(pg).interrupted == 1
        assert lite.summaries() == pg.summaries()
        numbers = pg.numbers()
        assert numbers == lite.numbers() == list(range(1, 11))
        for number in numbers:
            assert lite.compilation(number) == pg.compilation(number)
            found = replay(pg.compilation(number))
            assert found.to_dict() == replay(lite.compilation(number)).to_dict()
            outcome = pg.compilation(number).outcome
            assert found.identical == (outcome is not CompilationOutcome.INTERRUPTED)
        assert diff(pg.compilation(10), pg.compilation(9)).to_dict() == (
            diff(lite.compilation(10), lite.compilation(9)).to_dict()
        )
        assert pg.calibration("gpt-4o", "o200k") == lite.calibration("gpt-4o", "o200k") == 1.04


def test_copy_moves_a_ledger_either_way_exactly_and_resumes(tmp_path: Path, postgres: Any) -> None:
    source = tmp_path / "source.db"
    with assembler.Ledger(source, session="agent") as ledger:
        _workload(ledger)
    target = postgres.new()
    with assembler.Ledger(source, readonly=True) as lite, assembler.Ledger(target) as pg:
        events = list(lite.events())
        # a copy that stopped after its first batch: the target holds the first events
        pg._store.restore(
            [(e, {sha: lite.artifact(sha) for sha, _ in references(e, e.data(), lite)})
             for e in events[:5]]
        )  # fmt: skip
        report = copy(lite, pg, batch=4)
        assert (report.copied, report.already) == (len(events) - 5, 5)
        assert (report.head_seq, report.head_hash) == (events[-1].seq, events[-1].hash)
        same_export(lite, pg)
        assert verify(pg).ok
        again = copy(lite, pg)
        assert (again.copied, again.already) == (0, len(events))
    # and back into SQLite, by the command line, with its addresses
    back = tmp_path / "back.db"
    done = cli("ledger", "copy", target, f"sqlite:///{back}")
    assert done.returncode == 0, done.stderr
    assert f"copied {len(events)} events" in done.stderr
    with assembler.Ledger(source, readonly=True) as lite, assembler.Ledger(back) as copied:
        same_export(lite, copied)
    verified = cli("ledger", "verify", target, "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"]


def test_copy_refuses_a_target_that_holds_other_events(tmp_path: Path, postgres_url: str) -> None:
    source = tmp_path / "source.db"
    with assembler.Ledger(source) as ledger:
        assembler.assemble(load("review-migration.json"), ledger=ledger)
    with assembler.Ledger(postgres_url) as pg:
        assembler.assemble(load("shared-resolver.json"), ledger=pg)
    done = cli("ledger", "copy", str(source), postgres_url)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "holds event 1, which is not" in done.stderr and "Traceback" not in done.stderr
    with assembler.Ledger(postgres_url, readonly=True) as pg:
        assert len(list(pg.events())) == 2


def test_the_command_line_records_and_reads_a_postgresql_ledger(postgres_url: str) -> None:
    example = str(EXAMPLES / "review-migration.json")
    recorded = cli("compile", example, "--ledger", postgres_url, "--session", "cli")
    assert recorded.returncode == 0, recorded.stderr
    listed = cli("ledger", "list", postgres_url, "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["number"], r["session"], r["outcome"]) for r in rows] == [(1, "cli", "compiled")]
    shown = cli("ledger", "show", postgres_url, "last")
    assert shown.returncode == 0 and "BUNDLE (exact)" in shown.stdout
    assert cli("ledger", "replay", postgres_url, "1").returncode == 0
    verified = cli("ledger", "verify", postgres_url)
    assert verified.returncode == 0 and verified.stdout.startswith("ledger OK: 2 events")


def test_addresses_and_errors_are_one_line_without_the_password(
    tmp_path: Path, postgres: Any, postgres_url: str
) -> None:
    secret = "s3cret-word"
    port = postgres.url.rsplit(":", 1)[1].split("/")[0]
    assert redacted(f"postgresql://me:{secret}@127.0.0.1:{port}/db?password={secret}&x=1") == (
        f"postgresql://me@127.0.0.1:{port}/db?x=1"
    )
    unreachable = f"postgresql://me:{secret}@127.0.0.1:1/nothing"
    missing = f"postgresql://postgres:{secret}@127.0.0.1:{port}/no_such_database"
    example = str(EXAMPLES / "review-migration.json")
    for address in (unreachable, missing):
        done = cli("compile", example, "--ledger", address)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert secret not in done.stderr and "Traceback" not in done.stderr
    assert "no_such_database" in done.stderr and "does not exist" in done.stderr
    # an empty database read before anything was written: not a ledger yet
    empty = cli("ledger", "list", postgres_url)
    assert empty.returncode == 2 and "holds no ledger" in empty.stderr
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE events (id INT)")
    foreign = cli("compile", example, "--ledger", postgres_url)
    assert foreign.returncode == 2 and "not a ledger" in foreign.stderr, foreign.stderr
    with pytest.raises(assembler.LedgerError, match="three slashes"):
        assembler.Ledger.open("sqlite://relative.db")
    with assembler.Ledger.open(f"sqlite:///{tmp_path}/a.db") as lite:
        assert lite.path == f"{tmp_path}/a.db"


def test_a_read_only_ledger_never_writes(postgres_url: str) -> None:
    with assembler.Ledger(postgres_url) as pg:
        assembler.assemble(load("review-migration.json"), ledger=pg)
    with assembler.Ledger(postgres_url, readonly=True) as reader:
        with pytest.raises(assembler.LedgerError, match="read-only"):
            assembler.assemble(load("review-migration.json"), ledger=reader)
        with pytest.raises(assembler.LedgerError, match="read-only"):
            reader._store.restore([(next(reader.events()), {})])
        assert len(list(reader.events())) == 2


def test_a_compilation_has_at_most_one_outcome_in_the_database_too(postgres_url: str) -> None:
    req = load("shared-resolver.json")
    with assembler.Ledger(postgres_url) as pg:
        recording = pg.requested(parse_request(req), assembler.Settings())
        recording.answered(assembler.assemble(req))
        with pytest.raises(assembler.LedgerError, match="already has an outcome"):
            pg._store.append(Entry("failed", recording.number, None, '{"error":{}}', {}))
        assert verify(pg).ok


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("lock", ["advisory", "serializable"])
def test_eight_writer_processes_keep_one_gapless_chain(postgres_url: str, lock: str) -> None:
    writers, each = 8, 12
    procs = [
        _start("record", postgres_url, f"w{i}", str(each), str(i), lock) for i in range(writers)
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out))
    with assembler.Ledger(postgres_url, readonly=True) as pg:
        report = verify(pg)
        assert report.ok, report.problems
        assert report.events == 2 * writers * each
        assert (report.compilations, report.interrupted) == (writers * each, 0)
        summaries = pg.summaries()
    for i, found in enumerate(outputs):
        # every compilation of every writer once, in its own order, with its own answer
        assert [s.trace_id for s in summaries if s.session == f"w{i}"] == found["traces"]
    order = [s.session for s in summaries]
    assert sum(a != b for a, b in itertools.pairwise(order)) > writers


def _events(url: str) -> int:
    """How many events the ledger holds (0 before its tables exist)."""
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('events')").fetchone() == (None,):
            return 0
        row = conn.execute("SELECT count(*) FROM events").fetchone()
    return 0 if row is None else int(row[0])


def _in_transaction(url: str) -> Iterator[int]:
    """The server processes of other clients inside a transaction that wrote."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_xid IS NOT NULL"
            " AND pid <> pg_backend_pid() AND datname = current_database()"
        ).fetchall()
    yield from (int(row[0]) for row in rows)


def test_a_writer_killed_inside_its_transaction_leaves_nothing_of_it(postgres_url: str) -> None:
    with assembler.Ledger(postgres_url, session="before") as pg:
        assembler.assemble(load("review-migration.json"), ledger=pg)
        stored = len(list(pg._store.blob_index()))
    proc = _start("huge", postgres_url)
    try:
        deadline = time.monotonic() + 120
        while not list(_in_transaction(postgres_url)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the writer never began its transaction"
            time.sleep(0.002)
        proc.kill()
    finally:
        proc.wait(timeout=60)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        # the server notices the connection is gone and rolls the transaction back
        deadline = time.monotonic() + 30
        while list(_in_transaction(postgres_url)):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        events = conn.execute("SELECT count(*) FROM events").fetchone()
        blobs = conn.execute("SELECT count(*) FROM blobs").fetchone()
    # none of the huge request's event, and none of its 400 contents
    assert (events, blobs) == ((2,), (stored,))
    verified = cli("ledger", "verify", postgres_url, "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["compilations"] == 1
    # the chain's lock went with the transaction: the next writer appends at once
    with assembler.Ledger(postgres_url, session="after") as pg:
        assembler.assemble(load("shared-resolver.json"), ledger=pg)
        assert [s.session for s in pg.summaries()] == ["before", "after"]
        assert verify(pg).ok


def test_writers_killed_at_random_moments_leave_a_chain_verify_accepts(postgres_url: str) -> None:
    for round_, delay in enumerate((0.05, 0.31, 0.17, 0.53, 0.08, 0.23)):
        before = _events(postgres_url)
        procs = [_start("loop", postgres_url, str(10 * round_ + i)) for i in range(3)]
        deadline = time.monotonic() + 120
        while _events(postgres_url) < before + 6:
            assert time.monotonic() < deadline, "the writers never wrote"
            time.sleep(0.01)
        time.sleep(delay)
        procs[round_ % 3].kill()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
        verified = cli("ledger", "verify", postgres_url, "--json")
        report = json.loads(verified.stdout)
        assert verified.returncode == 0 and report["ok"], report["problems"]
    with assembler.Ledger(postgres_url, readonly=True) as pg:
        summaries = pg.summaries()
    assert summaries
    for s in summaries:
        if s.outcome is CompilationOutcome.INTERRUPTED:
            # only the compilation a kill cut short: the last of its session
            assert s.number == max(t.number for t in summaries if t.session == s.session)


def test_the_store_is_the_store_protocol_and_the_pool_is_not_shared_by_a_fork(
    postgres_url: str,
) -> None:
    store = PostgresStore(postgres_url)
    try:
        ledger = assembler.Ledger(postgres_url, store=store)
        assembler.assemble(load("review-migration.json"), ledger=ledger)
        assert store.structure_problems() == []
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP INDEX one_outcome")
        assert store.structure_problems() == ["index one_outcome of table events is missing"]
        report = verify(ledger)
        assert [p.kind.value for p in report.problems] == ["file"]
    finally:
        store.close()


def test_the_postgresql_benchmark_runs_end_to_end(tmp_path: Path, postgres: Any) -> None:
    """The benchmark's PostgreSQL parts on a tiny size (no timing is asserted)."""
    bench = importlib.import_module("benchmarks.ledger")
    code = bench.main(
        ["--sizes", "20", "--instances", "1", "--repeats", "2", "--turns", "4", "--replays",
         "2", "--pg-sizes", "20", "--writer-seconds", "1", "--postgres", postgres.url,
         "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    data = json.loads((tmp_path / "ledger.json").read_text())["postgres"]
    assert [(r["durability"], r["scenario"]) for r in data["recording"]] == [
        ("store", "recurring"), ("store", "fresh"), ("server", "recurring"), ("server", "fresh")
    ]  # fmt: skip
    assert [r["store"] for r in data["writers"]] == [
        "postgresql (advisory)", "postgresql (serializable)", "sqlite"
    ]  # fmt: skip
    for row in data["writers"]:
        assert row["compilations"] > 0 and row["events"] == 2 * row["compilations"]
        assert (row["chain_faults"], row["lost"], row["duplicated"]) == (0, 0, 0)
    text = (tmp_path / "LEDGER.md").read_text()
    assert "## PostgreSQL against SQLite" in text and "Why an advisory lock" in text


def test_the_store_keeps_sqlites_durability_unless_the_database_sets_its_own(
    postgres_url: str,
) -> None:
    def setting(url: str) -> str:
        store = PostgresStore(url)
        try:
            with store._connection_pool().connection() as conn:
                row = conn.execute("SHOW synchronous_commit").fetchone()
        finally:
            store.close()
        assert row is not None
        return str(row[0])

    assert setting(postgres_url) == "off"
    assert setting(postgres_url + "?options=-csynchronous_commit%3Don") == "on"
    name = postgres_url.rsplit("/", 1)[1]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = remote_write')
    assert setting(postgres_url) == "remote_write"


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_session_moves_on_by_one_answer_at_a_time_in_either_store(
    tmp_path: Path, postgres_url: str, kind: str
) -> None:
    address = str(tmp_path / "l.db") if kind == "sqlite" else postgres_url
    turn = request(budget=400)
    turn["candidates"] = [form("a", 100, 0.9, content="one"), form("b", 50, 0.5, content="two")]
    with assembler.Ledger(address) as ledger:
        store = ledger._store
        opening = assembler.Ledger(address, session="k", store=store,
                                   commit=SessionCommit("k"))  # fmt: skip
        assembler.assemble(turn, ledger=opening)
        entry = store.session_entry("k")
        assert entry == SessionEntry("k", 1, 0, 1, None)
        step = SessionCommit("k", opened=1, base=0, delta="d1")
        assembler.assemble(turn, ledger=assembler.Ledger(address, store=store, commit=step))
        assert store.session_entry("k") == SessionEntry("k", 1, 1, 3, "d1")
        # a second answer from the same version (another replica's, say) is refused
        # before it solves, and nothing of it is recorded
        events = len(list(ledger.events()))
        with pytest.raises(SessionMoved, match="at version 1 of its opening by compilation 1"):
            assembler.assemble(turn, ledger=assembler.Ledger(address, store=store, commit=step))
        assert len(list(ledger.events())) == events
        # an answer that fails leaves the session where it was
        recording = assembler.Ledger(
            address, store=store, commit=SessionCommit("k", 1, 1, "d2")
        ).requested(parse_request(turn), assembler.Settings())
        recording.failed(RuntimeError("a render failed"))
        assert store.session_entry("k") == SessionEntry("k", 1, 1, 3, "d1")
        # opening again starts it over; closing removes it
        assembler.assemble(turn, ledger=opening)
        reopened = store.session_entry("k")
        assert reopened is not None and (reopened.version, reopened.delta) == (0, None)
        assert reopened.opened == reopened.compilation > 3
        assert store.close_session("k") and not store.close_session("k")
        assert store.session_entry("k") is None
        with pytest.raises(SessionMoved, match="the session is closed"):
            assembler.assemble(turn, ledger=assembler.Ledger(address, store=store, commit=step))
        assert verify(ledger).ok


def test_billed_cache_usage_is_recorded_and_reported_on_postgresql(postgres_url: str) -> None:
    from assembler.cache.usage import record_result_usage
    from assembler.ledger.usage import cache_usage

    data = json.loads((EXAMPLES / "agent-tool-call.json").read_text(encoding="utf-8"))
    result = assembler.assemble(data, render="anthropic-messages")
    billed = [{"input_tokens": 10, "cache_read_input_tokens": 0,
               "cache_creation_input_tokens": 400},
              {"input_tokens": 10, "cache_read_input_tokens": 400,
               "cache_creation_input_tokens": 0}]  # fmt: skip
    with assembler.Ledger.open(postgres_url, session="agent") as ledger:
        for at, usage in enumerate(billed):
            record_result_usage(ledger, result, usage, model="claude-sonnet-4-5",
                                provider="anthropic", at=float(at))  # fmt: skip
    with assembler.Ledger.open(postgres_url, readonly=True) as ledger:
        report = cache_usage(ledger, "agent")
    assert [(r.hit, r.miss, r.billed.read) for r in report.rows] == [
        (False, False, 0), (True, False, 400)
    ]  # fmt: skip
    shown = cli("ledger", "cache", postgres_url)
    assert shown.returncode == 0 and shown.stdout.startswith("2 sent bodies: 1 hits, 0 misses")
