"""The server under hostile or broken clients (issue 25), started as the real process.

Each test reproduces one measured defect against ``assembler serve`` on its pipes or on
a loopback port: a signal while a large reply is written, a client that stops reading
its replies, blank lines, slow and stalled clients (headers a byte at a time, bodies
that never end, a Content-Length longer than the body), clients that disconnect
mid-body, binding beyond loopback, the ledger's file modes, session keys that are not
names, the replies of unknown routes and methods, and memory held by bodies in flight.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import WAIT, Http, Lines, Starter, example, read_response, same, started


@pytest.fixture
def servers() -> Iterator[Starter]:
    yield from started()


def _big_request(forms: int = 3000, size: int = 400) -> dict[str, Any]:
    """A request whose rendered reply is a few megabytes (many times a pipe's buffer)."""
    candidates = [
        {"id": f"c{i:05}", "cost": 1, "relevance": 0.5, "content": f"{i} " + "x" * size}
        for i in range(forms)
    ]
    return {"task": {"id": "big", "budget": forms}, "candidates": candidates}


def _wait_until(check: Any, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


# ---------------------------------------------------------------------------
# JSON lines: writing replies


def test_a_signal_while_a_large_reply_is_written_loses_and_merges_nothing(
    servers: Starter,
) -> None:
    # the replies are written while stdout is full (nobody reads yet); SIGTERM arrives
    # during those writes: every reply must still come whole, each on its own line
    lines: Lines = servers(Lines, read=False)
    request = _big_request()
    for number in range(3):
        lines.send({"id": number, "request": request, "render": "text"})
    time.sleep(4.0)  # the answers are ready; the first write blocks on the full pipe
    lines.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    lines.start_reading()
    replies = [lines.reply() for _ in range(3)]
    assert [reply["id"] for reply in replies] == [0, 1, 2]
    assert all(reply["exit"] == 0 for reply in replies)
    same(request, replies[2]["result"], render="text")
    assert lines.proc.wait(timeout=WAIT) == 0


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT])
def test_a_client_that_stops_reading_does_not_make_the_server_deaf_to_signals(
    servers: Starter, second: signal.Signals
) -> None:
    lines: Lines = servers(Lines, read=False)
    request = _big_request()
    for number in range(4):
        lines.send({"id": number, "request": request, "render": "text"})
    time.sleep(4.0)  # the writer is blocked on the full pipe
    lines.proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    started_at = time.monotonic()
    lines.proc.send_signal(second)
    code = lines.proc.wait(timeout=WAIT)
    assert time.monotonic() - started_at < 3.0
    assert code == (130 if second == signal.SIGINT else 0)


def test_a_client_that_stops_reading_is_given_up_after_the_shutdown_grace(
    servers: Starter,
) -> None:
    # one SIGTERM and nobody reading: the replies cannot be written; the server says so
    # and exits once the time limit and its grace have passed, instead of hanging
    lines: Lines = servers(Lines, "--time-limit", "1", read=False)
    request = _big_request()
    for number in range(3):
        lines.send({"id": number, "request": request, "render": "text"})
    time.sleep(4.0)
    lines.proc.send_signal(signal.SIGTERM)
    started_at = time.monotonic()
    code = lines.proc.wait(timeout=WAIT)
    # --time-limit 1, the overrun grace of 1 s and the shutdown margin of 5 s
    assert time.monotonic() - started_at < 7.0 + 3.0
    assert code == 0
    assert "not written" in lines.stderr()


def test_every_line_gets_a_reply_blank_ones_too(servers: Starter) -> None:
    lines: Lines = servers(Lines)
    review = example("review-migration.json")
    lines.send(b"")
    lines.send(b"   \r")
    lines.send({"id": "after", "request": review})
    blank, spaces, after = lines.reply(), lines.reply(), lines.reply()
    for reply in (blank, spaces):
        assert (reply["exit"], reply["error"]["code"]) == (2, "invalid-request")
        assert "empty line" in reply["error"]["message"]
    assert after["id"] == "after" and after["exit"] == 0
    assert lines.close() == 0


def test_sigterm_while_replies_are_read_slowly_keeps_every_reply_whole(
    servers: Starter,
) -> None:
    # a reader that reads little at a time: writes return short, again and again
    lines: Lines = servers(Lines, read=False)
    request = _big_request(forms=1500)
    for number in range(5):
        lines.send({"id": number, "request": request, "render": "text"})
    assert lines.proc.stdout is not None
    received = bytearray()
    fd = lines.proc.stdout.fileno()
    signalled = False
    deadline = time.monotonic() + WAIT
    while received.count(b"\n") < 5:
        assert time.monotonic() < deadline
        chunk = os.read(fd, 4096)
        assert chunk, "the server ended before its replies"
        received += chunk
        if not signalled and len(received) > 100_000:
            lines.proc.send_signal(signal.SIGTERM)
            signalled = True
        time.sleep(0.0005)
    replies = [json.loads(line) for line in bytes(received).split(b"\n")[:5]]
    assert [reply["id"] for reply in replies] == [0, 1, 2, 3, 4]
    assert lines.proc.wait(timeout=WAIT) == 0
