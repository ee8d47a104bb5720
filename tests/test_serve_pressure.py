"""The server under pressure (issue 37), started as the real process.

Each test is one attack of the issue against ``assembler serve`` on its pipes or on a
loopback port: a signal while hundreds of lines wait and nobody reads stdout, replies
nobody reads, many clients at once and one holding a thousand idle sockets, keys
that look like other keys, bodies that are not UTF-8, the transport's own errors,
and routes asked for without the token.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from serving import WAIT, Lines, Starter, example, same, started


@pytest.fixture
def servers() -> Iterator[Starter]:
    yield from started()


def _feed(lines: Lines, messages: list[Any]) -> threading.Thread:
    """Send ``messages`` from a thread of their own (the pipe fills once the server
    stops reading), until the server closes its stdin."""

    def feed() -> None:
        try:
            for message in messages:
                lines.send(message)
        except OSError:
            pass  # the server stopped reading: the rest stays unsent

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


# ---------------------------------------------------------------------------
# JSON lines: a signal whatever the pending lines and the unread stdout


def test_sigterm_with_hundreds_of_lines_pending_and_stdout_unread_exits_in_grace(
    servers: Starter,
) -> None:
    # 64 answered lines fill the pipe; every slot is then held by a reply nobody reads,
    # and the read loop waits for one: the signal must still end the server
    lines: Lines = servers(Lines, "--time-limit", "1", read=False)
    review = example("review-migration.json")
    _feed(lines, [{"id": number, "request": review} for number in range(400)])
    time.sleep(3.0)
    lines.proc.send_signal(signal.SIGTERM)
    started_at = time.monotonic()
    code = lines.proc.wait(timeout=WAIT)
    # the time limit, the overrun grace of 1 s and the shutdown margin of 5 s
    assert time.monotonic() - started_at < 1 + 6 + 3.0
    assert code == 0
    assert "replies not written" in lines.stderr()


def test_lines_read_but_not_started_at_a_signal_are_each_answered_busy(
    servers: Starter,
) -> None:
    lines: Lines = servers(Lines, "--time-limit", "2", read=False)
    review = example("review-migration.json")
    _feed(lines, [{"id": number, "request": review} for number in range(400)])
    time.sleep(3.0)
    lines.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    lines.start_reading()
    assert lines.proc.wait(timeout=WAIT) == 0
    replies = []
    while True:
        try:
            replies.append(lines.reply(timeout=1.0))
        except Exception:
            break
    # every line the server took has its reply, whole and in order; none after a gap
    assert [reply["id"] for reply in replies] == list(range(len(replies)))
    assert len(replies) >= 64
    answered = [reply for reply in replies if reply["exit"] == 0]
    refused = [reply for reply in replies if reply["exit"] != 0]
    assert len(answered) >= 64 and refused
    assert all(reply["error"]["code"] == "server-busy" for reply in refused), refused[0]
    assert "shutting down" in refused[0]["error"]["message"]
    assert replies.index(refused[0]) == len(answered)  # the answered ones first
    same(review, answered[-1]["result"])
