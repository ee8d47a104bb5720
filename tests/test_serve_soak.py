"""The quick soak: ``benchmarks.soak`` at a size CI runs in seconds.

A real ``assembler serve --ledger`` answers a handful of clients, each opening
sessions and applying deltas, while faults come every second or so: clients that
disconnect mid-body, bodies and headers that stall until their deadline, 64 stalled
bodies at once, clients that never read their large replies, keys made to look like
other keys, bodies past the size limit or in UTF-16, one client holding 300 idle
sockets and opening each again as it is closed, a SIGTERM and a SIGKILL, each
followed by a restart with the same ledger. Nothing may be a bug, no reply lost or
merged, every proven answer equal to ``assemble()`` of the same request, and the
ledger must verify after the SIGKILL. The long run (200 clients, 10 minutes) is
``python -m benchmarks.soak``.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.soak import FAULTS, Plan, run


def test_clients_sessions_and_deltas_under_faults_keep_every_guarantee(tmp_path: Path) -> None:
    plan = Plan(
        clients=6,
        deltas=4,
        seconds=12.0,
        forms=40,
        scenarios=4,
        faults=FAULTS,
        fault_every=0.6,
        sigterm_at=0.4,
        sigkill_at=0.7,
        server_args=(
            *("--body-timeout", "1", "--header-timeout", "1"),
            *("--time-limit", "5", "--write-timeout", "2"),
        ),
        idle_after=0.0,
        hog_sockets=300,
    )
    report = run(plan, folder=tmp_path)
    assert report["internal_errors"] == [], report["internal_errors"]
    assert report["broken_replies"] == []
    assert report["check"]["answers_unlike_assemble"] == []
    assert report["check"]["distinct_requests"] > 0
    assert report["ledger_verify"]["exit"] == 0, report["ledger_verify"]
    assert [r["signal"] for r in report["restarts"]] == ["SIGTERM", "SIGKILL"]
    assert report["restarts"][0]["exit"] == 0
    assert report["calls"] > 50
    assert report["goals"]["no lost or merged reply"]
    assert {"unread", "hostile-keys", "huge-body"} <= set(report["faults"])
    assert report["faults"]["hog-sockets-opened"] >= 300
