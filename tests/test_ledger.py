"""The ledger: what a compilation leaves behind, and that it can be trusted.

Recording never changes the answer; events come in order with a hash chain that this
test re-derives from the definition in models/ledger.md; content is stored once;
another process reads back the same package, trace and decisions and appends nothing;
verify locates an edited event, a removed one and a flipped artifact byte; replay
names what differs when the code answers differently and never rewrites history.
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import form, request
from ledger_worker import request as generated

import assembler
from assembler.ledger import CompilationOutcome, artifacts
from assembler.ledger import store as store_module
from assembler.ledger.diff import diff
from assembler.ledger.replay import replay
from assembler.ledger.verify import verify
from assembler.model.parse import parse_request

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "models" / "examples"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / name).read_text())
    return data


def solve(req: Any, ledger: assembler.Ledger | None = None, **kw: Any) -> assembler.Result:
    result = assembler.assemble(req, ledger=ledger, **kw)
    assert assembler.verify(req, result) == [], result.to_dict()
    return result


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args], capture_output=True, text=True, check=False
    )


def answer(result: assembler.Result) -> dict[str, Any]:
    data = result.to_dict()
    del data["timings"]
    return data


def test_recording_never_changes_the_answer(tmp_path: Path) -> None:
    with assembler.Ledger(tmp_path / "l.db") as ledger:
        for seed in range(20):
            req = generated(seed, forms=random.Random(seed).choice([5, 20, 60]))
            for strategy in ("exact", "greedy"):
                plain = solve(req, strategy=strategy)
                recorded = solve(req, ledger, strategy=strategy)
                assert answer(recorded) == answer(plain)
        assert verify(ledger).ok


def _chain(rows: list[tuple[Any, ...]]) -> list[str]:
    """The hash chain recomputed from models/ledger.md, independently of the code."""
    hashes, prev = [], "0" * 64
    for seq, kind, compilation, session, at, payload, _, _ in rows:
        envelope = {
            "seq": seq,
            "prev": prev,
            "kind": kind,
            "compilation": compilation,
            "session": session,
            "recorded_at": at,
            "payload_sha256": hashlib.sha256(payload.encode()).hexdigest(),
        }
        text = json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        prev = hashlib.sha256(text.encode()).hexdigest()
        hashes.append(prev)
    return hashes


def test_the_chain_hash_is_the_documented_envelope_for_any_session_and_column_types() -> None:
    # appends write the envelope's text directly; verify may meet columns of odd types
    from assembler.ledger.events import chain_hash

    sessions = [None, "", "plain", 'quote" back\\ slash', "tab\tnew\nline\x00\x1f",
                "é 漢字 \u2028 \U0001f600", "\x7f\u00a0"]  # fmt: skip
    odd: list[tuple[Any, Any]] = [(5, 7), ("5", 7), (5.0, 7), (True, 7), (5, None)]
    for session in sessions:
        for seq, compilation in odd:
            row = (seq, 'com"piled', compilation, session, "2026-12-01T00:00:00.5Z", '{"x":1}')
            expected = _chain([(*row, None, None)])[0]
            assert chain_hash(seq, "0" * 64, *row[1:]) == expected


def test_every_compilation_is_a_request_then_one_outcome_on_a_chain(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with assembler.Ledger(path) as ledger:
        bundle = solve(load("review-migration.json"), ledger)
        refused = solve(load("mandatory-over-budget.json"), ledger)
        with pytest.raises(assembler.InvalidRequest):
            assembler.assemble({"task": {"id": "broken", "budget": 1}}, ledger=ledger)
        too_big = request(budget=10)
        too_big["candidates"] = [form(f"f{i}", 1) for i in range(20)]
        with pytest.raises(assembler.EnumerationTooLarge):
            assembler.assemble(too_big, strategy="enumerate", ledger=ledger)
    with assembler.Ledger(path, session="mine") as ledger:
        solve(load("shared-resolver.json"), ledger)
    rows = sqlite3.connect(path).execute("SELECT * FROM events ORDER BY seq").fetchall()
    kinds = [(r[0], r[1], r[2]) for r in rows]
    assert kinds == [
        (1, "compilation_requested", 1), (2, "compiled", 1),
        (3, "compilation_requested", 3), (4, "refused", 3),
        (5, "compilation_requested", 5), (6, "failed", 5),
        (7, "compilation_requested", 7), (8, "failed", 7),
        (9, "compilation_requested", 9), (10, "compiled", 9),
    ]  # fmt: skip
    assert [r[3] for r in rows[::2]] == [
        "review-migration-0042", "postmortem-draft-inc-23", "broken", "t", "mine",
    ]  # fmt: skip
    assert [r[7] for r in rows] == _chain(rows)
    assert [r[6] for r in rows] == ["0" * 64, *[r[7] for r in rows[:-1]]]
    with assembler.Ledger(path, readonly=True) as ledger:
        first = ledger.compilation(1)
        assert first.result is not None and first.result["package_id"] == bundle.package_id
        assert first.result["trace_id"] == bundle.trace_id
        assert ledger.compilation(2).result == refused.to_dict() | {
            "timings": ledger.compilation(2).result["timings"]  # type: ignore[index]
        }
        invalid = ledger.compilation(3)
        assert invalid.outcome is CompilationOutcome.FAILED and invalid.request is None
        assert invalid.error is not None and invalid.error["fields"]["field"] == "candidates"
        assert json.loads(invalid.raw_request or "") == {"task": {"id": "broken", "budget": 1}}
        after_parse = ledger.compilation(4)
        assert after_parse.error is not None and after_parse.request is not None
        assert after_parse.error["type"] == "EnumerationTooLarge"
        assert after_parse.error["fields"] == {"combinations": 2**20, "limit": 2**18}
        # the request event carries the whole inventory: it parses to the same request
        assert first.request is not None
        assert parse_request(first.request) == parse_request(load("review-migration.json"))


def test_the_request_round_trips_exactly(tmp_path: Path) -> None:
    with assembler.Ledger(tmp_path / "l.db") as ledger:
        for name in sorted(p.name for p in EXAMPLES.glob("*.json")):
            solve(load(name), ledger)
        for seed in range(10):
            solve(generated(seed, forms=30), ledger)
        for summary in ledger.summaries():
            record = ledger.compilation(summary.number)
            assert record.request is not None
            original = parse_request(record.request)
            assert record.result is not None
            rerun = solve(record.request, strategy=record.run["strategy"])
            assert answer(rerun) | {"timings": record.result["timings"]} == record.result
            # arrival order is kept: the dump baseline depends on it
            assert [c.position for c in sorted(original.candidates, key=lambda c: c.position)] == (
                list(range(len(original.candidates)))
            )


_PROMPT = "You are a careful reviewer. " * 200


def _reviewed_turn(turn: int) -> dict[str, Any]:
    """One turn of a review: the same long prompt, one new message."""
    req = request(budget=10_000)
    req["candidates"] = [
        form("system", 300, 1.0, content=_PROMPT, role="instruction", channel="system"),
        form(f"turn-{turn}", 20, 0.9, content=f"message {turn}"),
    ]
    return req


def test_content_offered_in_many_compilations_is_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with assembler.Ledger(path) as ledger:
        for turn in range(50):
            solve(_reviewed_turn(turn), ledger)
    digest = hashlib.sha256(_PROMPT.encode()).hexdigest()
    db = sqlite3.connect(path)
    assert db.execute("SELECT count(*) FROM blobs WHERE sha256 = ?", (digest,)).fetchone() == (1,)
    # 50 messages, 1 prompt, 50 request documents, 50 result documents
    assert db.execute("SELECT count(*) FROM blobs").fetchone() == (151,)
    assert path.stat().st_size < 50 * len(_PROMPT)


def test_the_artifacts_a_store_remembers_are_bounded_and_storage_stays_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(artifacts, "KNOWN_ARTIFACTS", 16)
    path = tmp_path / "l.db"
    with assembler.Ledger(path) as ledger:
        for turn in range(40):
            solve(_reviewed_turn(turn), ledger)
            assert len(ledger._store._known) <= 16  # type: ignore[attr-defined]  # SqliteStore's
        assert verify(ledger).ok
    db = sqlite3.connect(path)
    # forgotten digests are inserted again and ignored: each artifact is stored once
    assert db.execute("SELECT count(*) FROM blobs").fetchone() == (1 + 3 * 40,)


def test_writers_opening_a_fresh_ledger_at_once_all_open_it(tmp_path: Path) -> None:
    # switching a fresh file to WAL answers "busy" at once to the second connection,
    # without SQLite's busy handler: 4-5% of such rounds failed before it was retried
    import threading

    for round_ in range(150):
        path = tmp_path / f"l{round_}.db"
        start = threading.Barrier(6)
        failed: list[Exception] = []

        def open_it(
            path: Path = path, start: threading.Barrier = start, failed: list[Exception] = failed
        ) -> None:
            start.wait()
            try:
                with assembler.Ledger(path, session="w"):
                    pass
            except assembler.LedgerError as error:
                failed.append(error)

        threads = [threading.Thread(target=open_it) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failed, f"round {round_}: {failed[0]}"


def _files(path: Path) -> tuple[str, int]:
    """The database file's bytes and the size of its WAL (a reader may create an empty
    WAL and the shared-memory index beside it; neither holds anything of the ledger)."""
    wal = Path(str(path) + "-wal")
    return hashlib.sha256(path.read_bytes()).hexdigest(), wal.stat().st_size if wal.exists() else 0


_READ_BACK = """
import json, sys
import assembler
with assembler.Ledger(sys.argv[1], readonly=True) as ledger:
    out = []
    for s in ledger.summaries():
        c = ledger.compilation(s.number)
        out.append({"outcome": c.outcome.value, "result": c.result, "error": c.error,
                    "rendering": None if c.rendering is None else c.rendering.data.hex()})
print(json.dumps(out))
"""


def test_another_process_reads_back_the_same_and_reading_appends_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    results = []
    with assembler.Ledger(path) as ledger:
        for name in ("review-migration.json", "mandatory-over-budget.json", "tool-results.json"):
            results.append(solve(load(name), ledger))
    before = _files(path)
    done = subprocess.run(
        [sys.executable, "-c", _READ_BACK, str(path)], capture_output=True, text=True, check=True
    )
    read = json.loads(done.stdout)
    assert [r["outcome"] for r in read] == ["compiled", "refused", "compiled"]
    for mine, theirs in zip(results, read, strict=True):
        assert theirs["result"]["package_id"] == mine.package_id
        assert theirs["result"]["trace_id"] == mine.trace_id
        assert theirs["result"]["decisions"] == [d.to_dict() for d in mine.decisions]
        assert theirs["result"]["selected"] == list(mine.selected)
    for args in (["list"], ["show", "1"], ["show", "last", "--json"], ["replay", "2"],
                 ["diff", "1", "3"], ["verify"], ["export"]):  # fmt: skip
        done = cli("ledger", args[0], str(path), *args[1:])
        assert done.returncode == 0, (args, done.stderr)
    assert _files(path) == before
    with assembler.Ledger(path, readonly=True) as ledger:
        assert sum(1 for _ in ledger.events()) == 6


def test_verify_locates_an_edited_event_a_removed_one_and_a_flipped_artifact_byte(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l.db"
    secret = "the quarterly numbers are 41, 17 and 99; do not round them"
    with assembler.Ledger(path) as ledger:
        for turn in range(3):
            req = request(budget=100)
            req["candidates"] = [form("note", 10, 0.8, content=secret), form(f"t{turn}", 5, 0.5)]
            solve(req, ledger)
    assert cli("ledger", "verify", str(path)).returncode == 0
    pristine = path.read_bytes()

    db = sqlite3.connect(path)
    db.execute("UPDATE events SET payload = replace(payload, '\"cost\":15', '\"cost\":5')"
               " WHERE seq = 4")  # fmt: skip
    db.commit()
    db.close()
    done = cli("ledger", "verify", str(path))
    assert done.returncode == 1
    assert "event 4 (compiled, compilation 3): hash:" in done.stdout
    assert done.stdout.count("\n  ") == 1  # only that event: the chain stores its old hash

    path.write_bytes(pristine)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM events WHERE seq = 3")
    db.commit()
    db.close()
    done = cli("ledger", "verify", str(path), "--json")
    problems = json.loads(done.stdout)["problems"]
    assert done.returncode == 1
    assert {(p["kind"], p["where"].split(" (")[0]) for p in problems} >= {
        ("sequence", "event 4"),
        ("chain", "event 4"),
        ("order", "event 4"),
    }

    path.write_bytes(pristine)
    raw = bytearray(pristine)
    at = raw.find(secret.encode())
    assert at > 0 and raw.find(secret.encode(), at + 1) == -1  # stored once, uncompressed
    raw[at + 30] ^= 0x01
    path.write_bytes(bytes(raw))
    done = cli("ledger", "verify", str(path))
    digest = hashlib.sha256(secret.encode()).hexdigest()
    assert done.returncode == 1
    assert f"artifact {digest} (content of 'note' in event 1" in done.stdout
    assert "damaged-artifact" in done.stdout and "Traceback" not in done.stderr


_CHANGED_CODE = """
import sys
from assembler import strategies
from assembler.cli import main
# the current code answers differently: 'exact' now runs the greedy baseline
strategies.STRATEGIES["exact"] = strategies.STRATEGIES["greedy"]
sys.exit(main(["ledger", "replay", sys.argv[1], "1"]))
"""


def test_replay_names_what_differs_and_never_rewrites_history(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    case = json.loads((ROOT / "corpus/register/greedy-false-refusal-dd47ceba13.json").read_text())
    with assembler.Ledger(path) as ledger:
        recorded = solve(case["request"], ledger)
    assert recorded.status is assembler.Status.BUNDLE
    before = _files(path)
    assert cli("ledger", "replay", str(path), "1").returncode == 0
    done = subprocess.run(
        [sys.executable, "-c", _CHANGED_CODE, str(path)], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert "replay 1: recorded compiled, now refused: DIFFERS" in out
    assert f"package_id: recorded {recorded.package_id}; now null" in out
    assert "trace_id: recorded" in out and "status: recorded bundle; now refused" in out
    assert "selected: recorded" in out and "decision 'item-0.ref'" in out
    assert _files(path) == before
    assert cli("ledger", "verify", str(path)).returncode == 0


def test_schema_migrates_forward_and_a_newer_ledger_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "l.db"
    with assembler.Ledger(path) as ledger:
        solve(load("shared-resolver.json"), ledger)
    step = ("CREATE INDEX events_by_time ON events (recorded_at)",)
    newer = store_module.SCHEMA_VERSION + 1
    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, step))
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", newer)
    # a step whose result older files cannot be read as (readers of older files are
    # the next test's)
    monkeypatch.setattr(store_module, "READABLE_FROM", newer)
    with pytest.raises(assembler.LedgerError, match="open it for writing once"):
        assembler.Ledger(path, readonly=True)  # a reader does not migrate
    with assembler.Ledger(path) as ledger:
        solve(load("tool-results.json"), ledger)
        assert verify(ledger).ok and len(ledger.summaries()) == 2
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (newer,)
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events_by_time'").fetchone()
    db.close()
    monkeypatch.undo()
    with pytest.raises(assembler.LedgerError) as caught:
        assembler.Ledger(path)
    assert f"schema version {newer}" in caught.value.reason and "upgrade" in caught.value.reason


def test_a_version_1_ledger_is_read_as_it_is_and_a_writer_migrates_it_keeping_its_zlib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assembler.ledger import schema

    path = tmp_path / "l.db"
    with monkeypatch.context() as version_1:
        # what version 1 wrote: zlib artifacts in a table whose CHECK knows no lz4
        version_1.setattr(store_module, "MIGRATIONS", schema.MIGRATIONS[:1])
        version_1.setattr(store_module, "SCHEMA_VERSION", 1)
        version_1.setattr(
            artifacts, "encode", lambda data: ("zlib", __import__("zlib").compress(data))
        )
        with assembler.Ledger(path) as ledger:
            first = solve(load("shared-resolver.json"), ledger)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (1,)
    old_rows = db.execute("SELECT rowid, sha256, size, codec, data FROM blobs").fetchall()
    assert {row[3] for row in old_rows} == {"raw", "zlib"}
    db.close()
    with assembler.Ledger(path, readonly=True) as reader:  # read as it is, not migrated
        assert reader.compilation(1).result["package_id"] == first.package_id  # type: ignore[index]
        assert verify(reader).ok
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (1,)
    with assembler.Ledger(path) as ledger:  # a writer migrates
        second = solve(load("tool-results.json"), ledger)
        assert verify(ledger).ok
        assert [ledger.compilation(n).result["package_id"] for n in (1, 2)] == [  # type: ignore[index]
            first.package_id,
            second.package_id,
        ]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (schema.SCHEMA_VERSION,)
    rows = db.execute("SELECT rowid, sha256, size, codec, data FROM blobs").fetchall()
    assert rows[: len(old_rows)] == old_rows  # same rows, same rowids, bytes untouched
    assert "lz4" in {row[3] for row in rows[len(old_rows) :]}
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO blobs VALUES ('x', 1, 'gzip', x'00')")
    db.close()


def test_files_that_are_not_ledgers_are_clear_errors(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database at all" * 100)
    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    cases = {
        tmp_path / "missing.db": "no such ledger file",
        tmp_path: "is a directory",
        garbage: "not an SQLite database",
        foreign: "not a ledger",
        empty: "not a ledger",
    }
    for path, needle in cases.items():
        with pytest.raises(assembler.LedgerError) as caught:
            assembler.Ledger(path, readonly=True)
        assert needle in caught.value.reason and caught.value.path == str(path)
        done = cli("ledger", "list", str(path))
        assert done.returncode == 2 and needle in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    with pytest.raises(assembler.LedgerError):
        assembler.Ledger(foreign)  # a writer does not take over another database either


def test_a_compilation_has_at_most_one_outcome(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    req = load("shared-resolver.json")
    with assembler.Ledger(path) as ledger:
        recording = ledger.requested(parse_request(req), assembler.Settings())
        result = solve(req)
        recording.answered(result)
        with pytest.raises(assembler.LedgerError, match="already has an outcome"):
            recording.failed(RuntimeError("late"))
    db = sqlite3.connect(path)
    row = db.execute("SELECT * FROM events WHERE seq = 2").fetchone()
    with pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "INSERT INTO events VALUES (3, 'failed', 1, ?, ?, '{}', ?, ?)",
            (row[3], row[4], row[6], "x"),
        )


def test_diff_of_consecutive_turns(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    turn = request(budget=400)
    turn["candidates"] = [
        form("system", 100, 1.0, content="be brief", role="instruction", channel="system"),
        form("doc-full", 250, 0.9, identity="doc", content="the whole document"),
        form("doc-note", 60, 0.6, identity="doc", content="a note on the document"),
        form("old", 30, 0.5, content="an old message"),
    ]
    later = json.loads(json.dumps(turn))
    later["candidates"][1]["cost"] = 400  # the document grew: its compact form wins
    later["candidates"][3] = form("new", 40, 0.7, content="a new message")
    with assembler.Ledger(path, session="agent") as ledger:
        solve(turn, ledger)
        solve(later, ledger)
        assert ledger.previous(2) == 1 and ledger.previous(1) is None
        found = diff(ledger.compilation(1), ledger.compilation(2))
    assert [i.identity for i in found.entered] == ["new"]
    assert [i.identity for i in found.left] == ["old"]
    assert [(c.identity, c.before.form, c.after.form, c.what) for c in found.changed] == [
        ("doc", "doc-full", "doc-note", ("form", "content", "cost"))
    ]
    assert found.costs == (380, 200) and found.token_delta == -180
    assert found.common_prefix == 1  # the system instruction renders first in both
    assert found.offered_added == ("new",) and found.offered_removed == ("old",)
    assert found.offered_changed == ("doc-full",)
    assert not found.both_rendered and found.first_divergent_byte is None


def test_the_request_document_is_canonical_json() -> None:
    from assembler.ledger.documents import request_document
    from assembler.ledger.events import canonical

    memo: dict[Any, Any] = {}
    for seed in range(15):
        parsed = parse_request(generated(seed, forms=25))
        for fragments in (None, memo, memo):  # fresh, then memoised
            text, contents = request_document(parsed, fragments)
            assert canonical(json.loads(text)) == text
            assert contents == {
                hashlib.sha256(c.content.encode()).hexdigest(): c.content
                for c in parsed.candidates
                if c.content is not None
            }


def test_a_memoised_fragment_is_never_handed_to_a_candidate_that_differs() -> None:
    # the memo is keyed by the compared fields, not by the Candidate: a change to any
    # one of them, or a new offered order, must give the document of a fresh encoding
    from assembler.ledger.documents import request_document

    memo: dict[Any, Any] = {}
    base = generated(3, forms=25)
    request_document(parse_request(base), memo)
    changes: list[tuple[str, Any]] = [
        ("cost", 7), ("relevance", 0.125), ("labels", ["x"]), ("depends_on", ["item-1"]),
        ("content", "other text"), ("scope", "shared"), ("turn", 4), ("group", "g"),
    ]  # fmt: skip
    for index, (field_name, value) in enumerate(changes):
        changed = json.loads(json.dumps(base))
        changed["candidates"][index][field_name] = value
        changed["candidates"].reverse()
        parsed = parse_request(changed)
        assert request_document(parsed, memo) == request_document(parsed, None)


def test_the_result_document_round_trips_numbers_past_64_bits() -> None:
    # orjson refuses integers past 64 bits; the standard encoder writes them instead
    from dataclasses import replace

    from assembler.ledger.documents import result_dict, result_document

    result = assembler.assemble(generated(1, forms=10), time_limit=5)
    big = replace(result, value=2**70, bound=2**70)
    for answer in (result, big):
        data = result_dict(result_document(answer))
        expected = replace(answer, rendering=None).to_dict()
        assert data == json.loads(json.dumps(expected))


def test_the_request_document_knows_every_field_of_the_request() -> None:
    # a field added to the model must be written by the ledger too, or replays lose it
    from dataclasses import fields

    from assembler.ledger.documents import CANDIDATE_ATTRIBUTES, TASK_ATTRIBUTES

    assert {f.name for f in fields(assembler.Candidate)} == CANDIDATE_ATTRIBUTES
    assert {f.name for f in fields(assembler.Task)} == TASK_ATTRIBUTES


# ---------------------------------------------------------------------------
# Answers not given (issue 46): recorded as what they are, moving nothing on


def _opened(path: Path) -> tuple[assembler.Ledger, dict[str, Any]]:
    from assembler.ledger.sessions import SessionCommit

    turn = request(budget=400)
    turn["candidates"] = [form("a", 100, 0.9, content="one"), form("b", 50, 0.5, content="two")]
    ledger = assembler.Ledger(path)
    opening = assembler.Ledger(path, session="k", store=ledger._store, commit=SessionCommit("k"))
    assembler.assemble(turn, ledger=opening)
    return ledger, turn


def test_a_replica_that_loses_the_race_for_a_session_records_its_answer_abandoned(
    tmp_path: Path,
) -> None:
    # two replicas answer the same delta from version 0: the second's commit finds the
    # session moved; its answer was left without an outcome, reading "interrupted"
    from assembler.ledger.sessions import SessionCommit, SessionEntry, SessionMoved

    ledger, turn = _opened(tmp_path / "l.db")
    with ledger:
        store = ledger._store
        step = SessionCommit("k", opened=1, base=0, delta="d1")
        first, second = (
            assembler.Ledger(tmp_path / "l.db", store=store, commit=step).requested(
                parse_request(turn), assembler.Settings()
            )
            for _ in range(2)
        )
        result = assembler.assemble(turn)
        first.answered(result)
        with pytest.raises(SessionMoved):
            second.answered(result)
        assert [s.outcome.value for s in ledger.summaries()] == ["compiled", "compiled",
                                                                 "abandoned"]  # fmt: skip
        assert store.session_entry("k") == SessionEntry("k", 1, 1, 3, "d1")
        lost = ledger.compilation(3)
        assert lost.events[1].data()["reason"] == "session-moved"
        assert lost.result is not None and lost.result["package_id"] == result.package_id
        assert verify(ledger).ok
    shown = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "show", str(tmp_path / "l.db"), "3"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "abandoned (session-moved)" in shown and "interrupted" not in shown


def test_an_answer_its_caller_was_not_given_moves_no_session_on(tmp_path: Path) -> None:
    # a server call told time-limit before its answer came: the answer is recorded,
    # abandoned, and the session stays where its client knows it
    from assembler.ledger.sessions import SessionCommit, SessionEntry

    ledger, turn = _opened(tmp_path / "l.db")
    with ledger:
        recorder = ledger.but(commit=SessionCommit("k", 1, 0, "d1"), claim=lambda: False)
        assembler.assemble(turn, ledger=recorder)
        assert ledger._store.session_entry("k") == SessionEntry("k", 1, 0, 1, None)
        assert [s.outcome.value for s in ledger.summaries()] == ["compiled", "abandoned"]
        assert ledger.compilation(2).events[1].data()["reason"] == "answered-otherwise"
        # the same call whose answer is claimed moves it on
        claimed = ledger.but(commit=SessionCommit("k", 1, 0, "d1"), claim=lambda: True)
        assembler.assemble(turn, ledger=claimed)
        assert ledger._store.session_entry("k") == SessionEntry("k", 1, 1, 5, "d1")
        assert verify(ledger).ok


def test_a_refused_request_holding_a_lone_surrogate_is_recorded_escaped(tmp_path: Path) -> None:
    # JSON's decoder makes "\ud800" of "\\ud800"; UTF-8 cannot hold it: recording the
    # refused request raised UnicodeEncodeError, an internal error
    path = tmp_path / "l.db"
    sent = [
        {"task": {"id": "\ud800", "budget": 10}, "candidates": []},
        {"task": {"id": "t\x00", "budget": 10},
         "candidates": [{"id": "a\udfff", "cost": 1, "relevance": 0.5}]},
    ]  # fmt: skip
    with assembler.Ledger(path) as ledger:
        for data in sent:
            with pytest.raises(assembler.InvalidRequest):
                assembler.assemble(data, ledger=ledger)
        raws = [ledger.compilation(n).raw_request for n in ledger.numbers()]
        assert [json.loads(raw) for raw in raws if raw is not None] == sent
        sessions = [s.session for s in ledger.summaries()]
        assert sessions == ["\\ud800", "t\\u0000"]
        assert verify(ledger).ok
        replayed = replay(ledger.compilation(1))
        assert replayed.recorded.value == "failed" and not replayed.differences
