"""The server under pressure (issue 37), started as the real process.

Each test is one attack of the issue against ``assembler serve`` on its pipes or on a
loopback port: a signal while hundreds of lines wait and nobody reads stdout, replies
nobody reads, many clients at once and one holding a thousand idle sockets, keys
that look like other keys, bodies that are not UTF-8, the transport's own errors,
and routes asked for without the token.
"""

from __future__ import annotations

import codecs
import json
import signal
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


# ---------------------------------------------------------------------------
# Keys, encodings, the transport's own replies, the token


# each would make a key look like another one, or like nothing
_LOOKALIKES = ["ab\u202ecd", "a\u200bb", "\ufeffa", "a\u00a0b", "a\u2066b\u2069", "cafe\u0301",
               "a\u3000b", "a\ue000b"]  # fmt: skip


def test_keys_holding_invisible_bidirectional_or_decomposed_characters_are_refused(
    servers: Starter,
) -> None:
    from urllib.parse import quote

    server: Http = servers(Http)
    empty = {"task": {"id": "t", "budget": 10}, "candidates": []}
    for key in _LOOKALIKES:
        status, headers, reply = server.call("PUT", "/sessions/" + quote(key, safe=""), empty)
        assert (status, reply["error"]["code"], reply["error"]["field"]) == (
            400,
            "invalid-request",
            "session",
        ), (key, reply)
        assert headers["x-assembler-exit"] == "2"
        assert reply["error"]["message"].isprintable()
    assert server.health()["sessions"] == 0
    # a composed accent, other scripts and the ASCII space are keys
    for key in ("café", "ключ 7", "キー"):
        status, _, reply = server.call("PUT", "/sessions/" + quote(key, safe=""), empty)
        assert (status, reply["session"]["key"]) == (200, key)
    lines: Lines = servers(Lines)
    for key in _LOOKALIKES:
        lines.send({"id": 1, "session": key, "request": empty})
        reply = lines.reply()
        assert (reply["exit"], reply["error"]["field"]) == (2, "session"), reply
    assert lines.close() == 0


def test_bodies_and_lines_are_utf8_only(servers: Starter) -> None:
    review = example("review-migration.json")
    text = json.dumps(review, ensure_ascii=False)
    server: Http = servers(Http)
    for body, says in (
        (codecs.BOM_UTF16_LE + text.encode("utf-16-le"), "UTF-16-LE byte order mark"),
        (text.encode("utf-16-be"), "UTF-16-BE"),
        (codecs.BOM_UTF8 + text.encode(), "UTF-8 byte order mark"),
    ):
        status, headers, reply = server.call("POST", "/assemble", body)
        assert (status, headers["x-assembler-exit"], reply["error"]["code"]) == (
            400,
            "2",
            "invalid-request",
        ), reply
        assert says in reply["error"]["message"] and "UTF-8 only" in reply["error"]["message"]
    status, _, reply = server.call("POST", "/assemble", text.encode())
    assert status == 200
    same(review, reply["result"])
    lines: Lines = servers(Lines)
    lines.send(codecs.BOM_UTF8 + json.dumps({"id": 1, "request": review}).encode())
    reply = lines.reply()
    assert (reply["exit"], reply["error"]["code"]) == (2, "invalid-request")
    assert lines.close() == 0


def test_the_transports_own_errors_carry_the_exit_header(servers: Starter) -> None:
    server: Http = servers(Http)
    for raw in (
        b"NOT HTTP AT ALL\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n",
        # a header flood: past h11's limit on a request whose headers have not ended
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-A: " + b"a" * 70_000,
    ):
        sock = server.socket()
        try:
            sock.sendall(raw)
            status, headers, body = read_response(sock)
        finally:
            sock.close()
        assert (status, headers["x-assembler-exit"], headers["connection"]) == (400, "2", "close")
        assert json.loads(body)["error"]["code"] == "invalid-request"
    assert server.health()["errors"]["invalid-request"] == 3
    # the health figures too: 0 when ok (3 when saturated or draining)
    assert server.call("GET", "/healthz")[1]["x-assembler-exit"] == "0"


def test_the_token_is_checked_before_the_route(servers: Starter, tmp_path: Path) -> None:
    token = tmp_path / "token"
    secret = "s3cret-" + "x" * 20
    token.write_text(secret + "\n")
    server: Http = servers(Http, "--token-file", str(token))
    for method, path in (("GET", "/nowhere"), ("GET", "/assemble"), ("POST", "/sessions/k")):
        status, headers, reply = server.call(method, path)
        assert (status, reply["error"]["code"], headers["x-assembler-exit"]) == (
            401,
            "unauthorized",
            "2",
        ), (method, path)
        assert "allow" not in headers
    right = {"Authorization": f"Bearer {secret}"}
    assert server.call("GET", "/nowhere", headers=right)[0] == 404
    assert server.call("GET", "/assemble", headers=right)[0] == 405
    assert server.call("GET", "/healthz")[0] == 200
