"""The ledger under real processes: concurrent writers, SIGKILL, a full and a read-only disk.

Every writer here is a separate OS process (``tests/ledger_worker.py``); every check
reads the file from yet another process (the ``assembler ledger`` command line) or
from this one after the writers are gone. Nothing is mocked: the full disk is a 2 MiB
tmpfs and the read-only disk a read-only bind mount, each made inside a private
mount namespace (``unshare --mount``, which needs root, as in CI) so that nothing is
left mounted when the process ends.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler.ledger import CompilationOutcome

WORKER = str(Path(__file__).resolve().parent / "ledger_worker.py")


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _verify(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "verify", str(path), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    assert (done.returncode == 0) == report["ok"], done.stderr
    return report


def _wait_for(predicate: Any, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _summaries(path: Path) -> list[Any]:
    if not path.exists():
        return []
    try:
        with assembler.Ledger(path, readonly=True) as ledger:
            return ledger.summaries()
    except assembler.LedgerError:
        return []  # not created yet


def test_concurrent_writers_lose_nothing_and_interleave_no_partial_compilation(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ledger.db"
    writers, each = 4, 150
    procs = [_start("record", str(path), f"w{i}", str(each), str(i)) for i in range(writers)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outputs.append(json.loads(out))
    report = _verify(path)
    assert report["ok"], report["problems"]
    assert report["events"] == 2 * writers * each
    assert report["compilations"] == writers * each and report["interrupted"] == 0
    with assembler.Ledger(path, readonly=True) as ledger:
        events = list(ledger.events())
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        summaries = ledger.summaries()
    for i, found in enumerate(outputs):
        mine = [s for s in summaries if s.session == f"w{i}"]
        # every compilation of every writer, in its own order, with its own answer
        assert [s.trace_id for s in mine] == found["traces"]
        assert all(
            s.outcome in (CompilationOutcome.COMPILED, CompilationOutcome.REFUSED) for s in mine
        )
    # the writers really interleaved: sessions alternate somewhere in the global order
    order = [s.session for s in summaries]
    assert sum(a != b for a, b in itertools.pairwise(order)) > writers


def test_a_writer_killed_while_solving_leaves_an_interrupted_compilation(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    proc = _start("slow", str(path))
    try:
        _wait_for(lambda: any(s.session == "slow" for s in _summaries(path)))
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    report = _verify(path)
    assert report["ok"] and report["compilations"] == 1 and report["interrupted"] == 1
    shown = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "show", str(path), "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0 and "interrupted" in shown.stdout
    assert "compiled" not in shown.stdout.splitlines()[0]
    with assembler.Ledger(path, readonly=True) as ledger:
        record = ledger.compilation(1)
    assert record.outcome is CompilationOutcome.INTERRUPTED and record.result is None
    assert record.request is not None and len(record.request["candidates"]) == 40_000


def test_writers_killed_at_random_moments_leave_a_ledger_verify_accepts(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    kills = 0
    for round_, delay in enumerate((0.05, 0.31, 0.17, 0.53, 0.08)):
        before = len(_summaries(path))
        proc = _start("loop", str(path), str(round_))
        try:
            _wait_for(lambda before=before: len(_summaries(path)) > before + 3)
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
        kills += 1
        report = _verify(path)
        assert report["ok"], report["problems"]
    summaries = _summaries(path)
    interrupted = [s for s in summaries if s.outcome is CompilationOutcome.INTERRUPTED]
    # at most the compilation each kill cut short; each is the last of its session
    assert len(interrupted) <= kills
    for s in interrupted:
        assert s.number == max(t.number for t in summaries if t.session == s.session)


def _namespace(mode: str, folder: Path) -> dict[str, Any]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) to mount a test file system")
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", sys.executable, WORKER, mode,
         str(folder)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    if done.returncode != 0 and "unshare failed" in done.stderr:
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    if "skip" in found:
        pytest.skip(found["skip"])
    return found


def test_a_full_disk_is_a_clear_error_and_records_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "small"
    folder.mkdir()
    found = _namespace("full-disk", folder)
    assert found["first"] == 0 and found["events_before"] == 2
    assert found["filled"] == "No space left on device"
    # a new process on the full disk: one line, exit 2, nothing written
    assert found["cli"]["code"] == 2
    assert "disk is full" in found["cli"]["stderr"] and "Traceback" not in found["cli"]["stderr"]
    assert found["cli"]["stderr"].count("\n") == 1
    # a ledger already open when the disk fills: LedgerError, and no partial record
    assert found["api"] == {"type": "LedgerError", "reason": found["api"]["reason"]}
    assert "full" in found["api"]["reason"]
    assert found["events_full"] == 2
    assert found["verify_full"]["code"] == 0 and found["verify_full"]["compilations"] == 1
    # with room again the same ledger object records, and the chain goes on
    assert found["events_after"] == 4
    assert found["verify_after"]["ok"] and found["verify_after"]["compilations"] == 2


def test_a_read_only_disk_is_a_clear_error_and_can_still_be_read(tmp_path: Path) -> None:
    found = _namespace("read-only", tmp_path)
    assert found["first"] == 0
    assert found["mount"]["code"] == 2 and "read-only" in found["mount"]["stderr"]
    assert "Traceback" not in found["mount"]["stderr"]
    assert found["mount_events"] == 2
    # reading needs no write: verify and replay work on the read-only mount
    assert found["mount_verify"]["ok"] and found["mount_replay"] == 0
    if "immutable" in found:  # chattr +i: the file itself cannot be written
        assert found["immutable"]["code"] == 2 and "read-only" in found["immutable"]["stderr"]
        assert found["immutable_events"] == 2
