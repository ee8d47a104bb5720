"""The ledger's command line, run as a user would: separate processes, exit codes, output.

The README's flow (compile the shipped example with ``--ledger``, then ``ledger show``,
``replay``, ``diff``, ``verify``), the export against its JSON Schema (and the chain
re-checked from the export alone), and bad input: one line, exit 2, no traceback.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from assembler import verify
from assembler.ledger.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "models" / "examples"
EXAMPLE = EXAMPLES / "review-migration.json"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", *args],
        capture_output=True,
        text=True,
        check=False,
        input=stdin,
    )


def test_the_readme_flow(tmp_path: Path) -> None:
    ledger = str(tmp_path / "run.db")
    compiled = cli("compile", str(EXAMPLE), "--ledger", ledger, "--format", "text")
    assert compiled.returncode == 0, compiled.stderr
    as_json = cli("compile", str(EXAMPLE), "--ledger", ledger)
    assert as_json.returncode == 0
    assert verify(json.loads(EXAMPLE.read_text()), json.loads(as_json.stdout)) == []

    shown = cli("ledger", "show", ledger, "1")
    assert shown.returncode == 0
    head, _, table = shown.stdout.partition("\n\n")
    assert head.startswith("compilation 1, session 'review-migration-0042': compiled")
    assert "offered 24 candidates" in head
    # the stored compilation prints exactly as compile --format text printed it
    assert table == compiled.stdout

    replayed = cli("ledger", "replay", ledger, "1")
    assert replayed.returncode == 0
    assert replayed.stdout.startswith("replay 1: recorded compiled, now bundle: identical")

    diffed = cli("ledger", "diff", ledger, "2")  # the previous one of its session: 1
    assert diffed.returncode == 0
    assert diffed.stdout.startswith("diff 1 -> 2")
    assert "entered (0)" in diffed.stdout and "tokens 3870 -> 3870 (+0)" in diffed.stdout
    assert "the first 10 selected forms in render order are unchanged" in diffed.stdout

    checked = cli("ledger", "verify", ledger)
    assert checked.returncode == 0 and checked.stdout.startswith("ledger OK: 4 events")

    listed = cli("ledger", "list", ledger, "--json")
    rows = json.loads(listed.stdout)
    assert [(r["number"], r["outcome"], r["status"]) for r in rows] == [
        (1, "compiled", "bundle"),
        (2, "compiled", "bundle"),
    ]


def test_refusals_invalid_input_and_sessions_are_recorded(tmp_path: Path) -> None:
    ledger = str(tmp_path / "run.db")
    refused = cli("compile", str(EXAMPLES / "mandatory-over-budget.json"), "--ledger", ledger,
                  "--session", "s1")  # fmt: skip
    assert refused.returncode == 1
    bad = cli("compile", "-", "--ledger", ledger, "--session", "s1", stdin="{broken")
    assert bad.returncode == 2 and "malformed JSON" in bad.stderr
    shown = cli("ledger", "show", ledger, "last")
    assert shown.returncode == 0
    assert "compilation 2, session 's1': failed" in shown.stdout
    assert "failed: InvalidRequest: $: malformed JSON" in shown.stdout
    # replaying the same text gives the same error: identical
    assert cli("ledger", "replay", ledger, "2").returncode == 0
    shown = cli("ledger", "show", ledger, "1", "--json")
    record = json.loads(shown.stdout)
    assert record["outcome"] == "refused"
    assert record["result"]["refusal"]["code"] == "MANDATORY_OVER_BUDGET"
    assert [e["kind"] for e in record["events"]] == ["compilation_requested", "refused"]
    listed = cli("ledger", "list", ledger, "--session", "s1")
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 4  # header, 2, error


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ROOT / "models/ledger-export.schema.json").read_text())
    return schema


def test_export_follows_its_schema_and_carries_a_checkable_chain(tmp_path: Path) -> None:
    ledger = str(tmp_path / "run.db")
    for name in ("review-migration.json", "mandatory-over-budget.json", "tool-results.json"):
        cli("compile", str(EXAMPLES / name), "--ledger", ledger)
    cli("compile", "-", "--ledger", ledger, stdin='{"task": {"id": "x"}}')
    out = tmp_path / "export.jsonl"
    done = cli("ledger", "export", ledger, "--out", str(out))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    validator = jsonschema.Draft202012Validator(_schema())
    for line in lines:
        validator.validate(line)
    assert lines[0]["type"] == "header" and lines[0]["schema"] == SCHEMA_VERSION
    events = [line for line in lines if line["type"] == "event"]
    artifacts = {line["sha256"]: line for line in lines if line["type"] == "artifact"}
    assert len(events) == 8
    # the chain and every artifact, re-checked from the export alone
    prev = "0" * 64
    for event in events:
        payload = json.dumps(event["payload"], sort_keys=True, separators=(",", ":"),
                             ensure_ascii=False)  # fmt: skip
        envelope = {
            "seq": event["seq"], "prev": prev, "kind": event["kind"],
            "compilation": event["compilation"], "session": event["session"],
            "recorded_at": event["recorded_at"],
            "payload_sha256": hashlib.sha256(payload.encode()).hexdigest(),
        }  # fmt: skip
        text = json.dumps(envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert event["prev_hash"] == prev
        prev = hashlib.sha256(text.encode()).hexdigest()
        assert event["hash"] == prev
    for sha, artifact in artifacts.items():
        data = artifact["data"].encode() if artifact["encoding"] == "utf-8" else (
            base64.b64decode(artifact["data"])
        )  # fmt: skip
        assert hashlib.sha256(data).hexdigest() == sha and len(data) == artifact["size"]
    requested = events[0]["payload"]
    assert requested["request"] in artifacts and requested["run"]["strategy"] == "exact"
    bare = cli("ledger", "export", ledger, "--no-artifacts")
    assert [json.loads(x)["type"] for x in bare.stdout.splitlines()][1:] == ["event"] * 8


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    ledger = str(tmp_path / "run.db")
    assert cli("compile", str(EXAMPLE), "--ledger", ledger).returncode == 0
    not_a_ledger = tmp_path / "notes.txt"
    not_a_ledger.write_text("hello")
    cases = [
        (("ledger", "show", ledger, "99"), "holds no compilation 99"),
        (("ledger", "show", ledger, "2"), "holds no compilation 2 (compilations 1 to 1)"),
        (("ledger", "replay", ledger, "abc"), "not a compilation number"),
        (("ledger", "diff", ledger, "1"), "first of its session"),
        (("ledger", "show", ledger, "1", "--rendered"), "was not rendered"),
        (("ledger", "verify", str(tmp_path / "missing.db")), "no such ledger file"),
        (("ledger", "list", str(not_a_ledger)), "not an SQLite database"),
        (("compile", str(EXAMPLE), "--ledger", str(not_a_ledger)), "not an SQLite database"),
        (("compile", str(EXAMPLE), "--ledger", str(tmp_path / "no/dir/x.db")), "cannot be opened"),
    ]
    for args, needle in cases:
        done = cli(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert needle in done.stderr, (args, done.stderr)
        assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
    for args in (("ledger",), ("ledger", "show"), ("ledger", "frobnicate", ledger)):
        done = cli(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
    # nothing was written by any of it
    assert cli("ledger", "verify", ledger).stdout.startswith("ledger OK: 2 events")


def _later_turn(tmp_path: Path) -> tuple[Path, str]:
    """The agent example a turn later: one evidence item's content was rewritten."""
    request = json.loads((EXAMPLES / "agent-tool-call.json").read_text())
    for candidate in request["candidates"]:
        if candidate.get("kind", "evidence") == "evidence" and "content" in candidate:
            candidate["content"] += " (revised)"
            changed = candidate["id"]
            break
    path = tmp_path / "turn2.json"
    path.write_text(json.dumps(request))
    return path, changed


def test_rendered_compilations_keep_their_bytes_and_manifest(tmp_path: Path) -> None:
    from assembler import verify_rendering
    from assembler.ledger import Ledger

    ledger = str(tmp_path / "run.db")
    example = EXAMPLES / "agent-tool-call.json"
    first = cli("compile", str(example), "--render", "text", "--ledger", ledger)
    assert first.returncode == 0, first.stderr
    turn2, changed = _later_turn(tmp_path)
    second = cli("compile", str(turn2), "--render", "text", "--ledger", ledger)
    assert second.returncode == 0, second.stderr
    manifest = json.loads(cli("compile", str(example), "--render", "text", "--manifest").stdout)
    body = cli("compile", str(example), "--render", "openai-chat", "--ledger", ledger)

    # the bytes prepared, exactly as compile printed them, read by another process
    shown = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "show", ledger, "1", "--rendered"],
        capture_output=True, check=False,
    )  # fmt: skip
    assert shown.returncode == 0 and shown.stdout == first.stdout.encode("utf-8")
    record = json.loads(cli("ledger", "show", ledger, "1", "--json").stdout)
    assert record["rendering"]["manifest"] == manifest
    assert record["result"]["rendering"]["manifest"] == manifest
    as_body = cli("ledger", "show", ledger, "3", "--body")
    assert json.loads(as_body.stdout) == json.loads(body.stdout)
    with Ledger(ledger, readonly=True) as opened:
        for number in (1, 2, 3):
            c = opened.compilation(number)
            assert c.request is not None and c.result is not None and c.rendering is not None
            assert verify(c.request, c.result) == []
            assert verify_rendering(c.request, c.result, c.rendering.to_dict()) == []

    replayed = cli("ledger", "replay", ledger, "2")
    assert replayed.returncode == 0 and "identical" in replayed.stdout

    a, b = first.stdout.encode("utf-8"), second.stdout.encode("utf-8")
    expected = next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)
    diffed = cli("ledger", "diff", ledger, "1", "2", "--json")
    found = json.loads(diffed.stdout)
    assert found["rendered"]["first_divergent_byte"] == expected
    assert found["rendered"]["sizes"] == [len(a), len(b)]
    assert [c["after"]["form"] for c in found["changed"]] == [changed]
    assert found["changed"][0]["what"] == ["content"]
    text = cli("ledger", "diff", ledger, "1", "2").stdout
    assert f"first divergent byte at offset {expected}" in text
    assert cli("ledger", "verify", ledger).returncode == 0


_CHANGED_LAYOUT = """
import sys
from assembler.render import layout
from assembler.cli import main
import dataclasses
# the current code renders differently: every framed item now ends with a blank line
original = layout.item_block
def changed(candidate, *args, **kwargs):
    block = original(candidate, *args, **kwargs)
    return dataclasses.replace(block, footer=block.footer + "\\n") if block.footer else block
layout.item_block = changed
sys.exit(main(["ledger", "replay", sys.argv[1], "1"]))
"""


def test_replay_names_the_first_divergent_rendered_byte(tmp_path: Path) -> None:
    ledger = str(tmp_path / "run.db")
    first = cli("compile", str(EXAMPLES / "agent-tool-call.json"), "--render", "text",
                "--ledger", ledger)  # fmt: skip
    assert first.returncode == 0
    done = subprocess.run(
        [sys.executable, "-c", _CHANGED_LAYOUT, ledger], capture_output=True, text=True
    )
    assert done.returncode == 1, done.stderr
    # the first item (the tool definition, framed with a line break) ends one byte early
    expected = first.stdout.encode("utf-8").index(b"\n") + 1
    assert f"first divergent byte at offset {expected}" in done.stdout
    assert "rendered bytes: recorded" in done.stdout and "manifest items" in done.stdout
    assert "package_id" not in done.stdout  # the selection did not change
    assert cli("ledger", "verify", ledger).returncode == 0


_EARLY_READERS = [
    ("ledger", "show", "{ledger}", "1"),
    ("ledger", "export", "{ledger}"),
    ("compile", "{request}"),
    ("explain", "--ledger", "{ledger}", "1"),
]


@pytest.mark.parametrize(
    "command", _EARLY_READERS, ids=["ledger-show", "ledger-export", "compile", "explain"]
)
def test_a_reader_that_leaves_early_ends_the_command_quietly(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # `assembler ... | head`: the pipe closes while the command still writes; that is
    # the reader's choice, not an error of the ledger or the input
    from ledger_worker import request as generated

    big = generated(5, forms=600)
    for candidate in big["candidates"]:
        candidate["content"] = candidate["id"] * 40  # output well past a pipe's buffer
    request_path = tmp_path / "big.json"
    request_path.write_text(json.dumps(big))
    ledger = tmp_path / "big.db"
    assert cli("compile", str(request_path), "--ledger", str(ledger)).returncode == 0
    argv = [part.format(ledger=ledger, request=request_path) for part in command]
    proc = subprocess.Popen(
        [sys.executable, "-m", "assembler", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)
    proc.stdout.close()  # the reader leaves with most of the output unread
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, stderr
    assert stderr == ""


def test_compilations_are_numbered_1_2_3_and_reading_leaves_no_file_behind(
    tmp_path: Path,
) -> None:
    ledger = tmp_path / "run.db"
    for _ in range(2):
        assert cli("compile", str(EXAMPLE), "--ledger", str(ledger)).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.db"]
    listed = cli("ledger", "list", str(ledger), "--json")
    assert [row["number"] for row in json.loads(listed.stdout)] == [1, 2]
    shown = cli("ledger", "show", str(ledger), "2")
    assert shown.returncode == 0 and shown.stdout.startswith("compilation 2, ")
    for args in (("show", "1"), ("diff", "2"), ("replay", "2"), ("verify",), ("export",)):
        assert cli("ledger", args[0], str(ledger), *args[1:]).returncode == 0, args
    # read-only commands leave no -wal or -shm file behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.db"]


def test_diff_show_and_replay_of_a_cache_aware_session(tmp_path: Path) -> None:
    # the corpus's append case: its previous call, then the call caching on it
    case = json.loads((ROOT / "corpus" / "cache-append-medium.json").read_text())
    first, following = tmp_path / "first.json", tmp_path / "next.json"
    first.write_text(json.dumps(case["previous"]["request"]))
    following.write_text(json.dumps(case["request"]))
    db = str(tmp_path / "run.db")
    for path, strategy in ((first, "exact"), (following, "exact"), (following, "greedy")):
        done = cli("compile", str(path), "--ledger", db, "--strategy", strategy)
        assert done.returncode == 0, done.stderr
    listed = json.loads(cli("ledger", "list", db, "--json").stdout)
    a, b, c = (str(row["number"]) for row in listed)
    # the request is recorded with its cache section, and replays to the same answer
    shown = json.loads(cli("ledger", "show", db, b, "--json").stdout)
    assert (
        shown["request"]["cache"]["previous"]["blocks"]
        == (case["request"]["cache"]["previous"]["blocks"])
    )
    assert cli("ledger", "replay", db, b).returncode == 0
    view = shown["cache"]
    assert (view["kept"], view["read_tokens"], view["written_tokens"]) == (12, 3890, 240)
    assert (view["price"], view["blind_price"], view["value_given_up"]) == (689.0, 3480.0, 120)
    assert view["first_divergence"] is None
    out = cli("ledger", "diff", db, a, b).stdout
    assert "kept 12 of 12 previous blocks (appends); 3890 tokens read, 240 written" in out
    assert "price 689 against the cache-blind optimum's 3480 (value 10660)" in out
    # greedy takes turn 1's compact output with its call: the prefix breaks there
    greedy = cli("ledger", "show", db, c).stdout
    assert "kept 8 of 12 previous blocks; 1550 tokens read, 1140 written" in greedy
    assert (
        "first divergence: block 8, not-selected: 'result-1' is not selected: another form of"
        " its identity, 'result-1-head', is admitted"
    ) in greedy
    diffed = json.loads(cli("ledger", "diff", db, b, c, "--json").stdout)
    assert diffed["cache"]["first_divergence"]["reason"] == "not-selected"
    assert diffed["cache"]["blind_price"] is None  # greedy prices nothing against an optimum
