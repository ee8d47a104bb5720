"""The server under pressure (issue 37), started as the real process.

Each test is one attack of the issue against ``assembler serve`` on its pipes or on a
loopback port: a signal while hundreds of lines wait and nobody reads stdout, replies
nobody reads, many clients at once and one holding a thousand idle sockets, keys
that look like other keys, bodies that are not UTF-8, the transport's own errors,
and routes asked for without the token.
"""

from __future__ import annotations

import codecs
import http.client
import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import (
    WAIT,
    Http,
    Lines,
    Starter,
    example,
    read_response,
    same,
    started,
    wait_until,
)

from benchmarks.scenarios.agentloop import agent_loop


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


def _signalled_with_400_lines(servers: Starter, time_limit: str) -> Lines:
    """A JSON-lines server sent 400 lines, its stdout unread, then SIGTERM."""
    lines: Lines = servers(Lines, "--time-limit", time_limit, read=False)
    review = example("review-migration.json")
    _feed(lines, [{"id": number, "request": review} for number in range(400)])
    time.sleep(3.0)
    lines.proc.send_signal(signal.SIGTERM)
    return lines


def test_sigterm_with_hundreds_of_lines_pending_and_stdout_unread_exits_in_grace(
    servers: Starter,
) -> None:
    # 64 answered lines fill the pipe; every slot is then held by a reply nobody reads,
    # and the read loop waits for one: the signal must still end the server
    lines = _signalled_with_400_lines(servers, "1")
    code = lines.proc.wait(timeout=WAIT)
    assert code == 0
    # it ended by its own grace (the time limit, the overrun grace of 1 s and the
    # shutdown margin of 5 s), and said so
    assert "replies not written: stdout was not read within 7 s" in lines.stderr()


def test_lines_read_but_not_started_at_a_signal_are_each_answered_busy(
    servers: Starter,
) -> None:
    lines = _signalled_with_400_lines(servers, "2")
    review = example("review-migration.json")
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
    token.chmod(0o600)
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


# ---------------------------------------------------------------------------
# HTTP: replies nobody reads


def _vm(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(field)


def _big(forms: int, size: int) -> dict[str, Any]:
    candidates = [
        {"id": f"c{i:05}", "cost": 1, "relevance": 0.5, "content": f"{i} " + "x" * size}
        for i in range(forms)
    ]
    return {"task": {"id": "big", "budget": forms}, "candidates": candidates}


def _never_reading(server: Http, body: bytes, path: str) -> socket.socket:
    """A client that sends its call and never reads a byte of the reply (its receive
    buffer as small as the kernel allows, so that the reply stays with the server)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    sock.sendall(head.encode() + body)
    return sock


def _was_cut(sock: socket.socket) -> bool:
    sock.settimeout(0.5)
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False  # still open: told to retry, and kept alive
    return True


def _saturated(health: dict[str, Any]) -> bool:
    return bool(health["status"] == "saturated" and health["replies_unread"] >= 2)


def _settled(health: dict[str, Any]) -> bool:
    return bool(health["replies_unread"] == health["admitted"] == health["queued"] == 0)


def _answered_retrying(server: Http, body: Any) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while True:
        status, _, reply = server.call("POST", "/assemble", body)
        if status == 200:
            return reply
        assert reply["error"]["code"] == "server-busy" and time.monotonic() < deadline, reply
        time.sleep(reply["error"]["retry_after"])


def test_replies_nobody_reads_are_bounded_shown_and_cut_at_the_write_timeout(
    servers: Starter,
) -> None:
    # two unread 8 MB replies are more than the cap, whichever calls got their bodies in
    cap = 12 * 2**20
    server: Http = servers(Http, "--max-body-memory", str(cap), "--max-request-bytes",
                           str(cap // 2), "--write-timeout", "3")  # fmt: skip
    request = _big(100, 40_000)  # a 4 MB body, an 8 MB reply rendered as text
    body = json.dumps(request).encode()
    status, _, reply = server.call("POST", "/assemble?render=text", body)
    size = len(json.dumps(reply, ensure_ascii=False, separators=(",", ":")).encode())
    assert status == 200 and size > 2 * len(body) - 2**16
    before = _vm(server.proc.pid, "VmHWM")
    sockets = [_never_reading(server, body, "/assemble?render=text") for _ in range(16)]
    try:
        # the memory fills with unread replies: two of them, or three when a solve was
        # running as it filled (which one depends on the machine's pace)
        wait_until(lambda: _saturated(server.health()), "the replies are held")
        health = server.health()
        # bodies and unread replies together: the cap, and at most the replies of the
        # two solves that were running when it filled
        assert health["reply_memory"] > 0 and health["body_memory"] <= cap + 2 * size, health
        assert health["status"] == "saturated"
        # a client that reads is told when to retry: when the first unread reply meets
        # its write deadline; then it is answered
        small = example("review-migration.json")
        status, headers, busy = server.call("POST", "/assemble", small)
        assert (status, busy["error"]["code"]) == (503, "server-busy"), busy
        assert 0 < busy["error"]["retry_after"] <= 3 and headers["retry-after"] in "123"
        time.sleep(busy["error"]["retry_after"])
        wait_until(lambda: server.health()["errors"].get("write-timeout", 0) > 0,
                    "the first reader is cut")  # fmt: skip
        # the calls that waited for room may fill it again first: a client that keeps
        # to each retry-after is answered once the readers ahead of it are cut
        answered = _answered_retrying(server, small)
        same(small, answered["result"])
        # the others were told to retry, not held: 16 unread replies would be 16 x size
        # (128 MB) on top of the two solves' own peaks (~12.7x a body each, documented)
        grown = _vm(server.proc.pid, "VmHWM") - before
        assert grown < 16 * size, grown
        # a call admitted as room freed may still be solving, its reply not yet unread
        wait_until(lambda: _settled(server.health()), "the readers are cut")
        health = server.health()
        assert health["body_memory"] == 0 and health["errors"]["write-timeout"] >= 2, health
        assert health["errors"]["server-busy"] + health["errors"]["write-timeout"] >= 16
        # the clients cut see their connection reset, after what their buffer took
        assert sum(_was_cut(sock) for sock in sockets) == health["errors"]["write-timeout"]
    finally:
        for sock in sockets:
            sock.close()


# ---------------------------------------------------------------------------
# HTTP: fair to every client


def test_a_hundred_clients_at_once_at_the_defaults_are_all_served(servers: Starter) -> None:
    # 100 clients, each a session of 3 calls, every call at once with the others: none
    # is refused (they wait in the queue, client by client), every answer is assemble()'s
    server: Http = servers(Http)
    loop = agent_loop(seed=5, forms=30, calls=2)
    requests = [loop.first, *loop.requests()]
    outcomes: list[tuple[int, int, dict[str, Any]]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(100)

    def client(number: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
        barrier.wait()
        calls = [("PUT", f"/sessions/c{number}", loop.first)]
        calls += [("POST", f"/sessions/c{number}/delta", delta) for delta in loop.deltas]
        for step, (method, path, body) in enumerate(calls):
            connection.request(method, path, body=json.dumps(body).encode())
            response = connection.getresponse()
            with lock:
                outcomes.append((step, response.status, json.loads(response.read())))
        connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(100)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(outcomes) == 300
    refused = [reply for _, status, reply in outcomes if status != 200]
    assert not refused, refused[:3]
    expected: dict[int, set[str]] = {}
    for step, _, reply in outcomes:
        digest = json.dumps({k: v for k, v in reply["result"].items() if k != "timings"},
                            sort_keys=True)  # fmt: skip
        expected.setdefault(step, set()).add(digest)
    assert all(len(digests) == 1 for digests in expected.values())
    for step, request in enumerate(requests):
        got = next(reply for s, _, reply in outcomes if s == step)
        same(request, got["result"])
    assert "server-busy" not in server.health()["errors"]


def test_a_client_holding_a_thousand_idle_sockets_locks_nobody_out(servers: Starter) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    server: Http = servers(Http)
    review = example("review-migration.json")
    idle = []
    try:
        # from an address of its own, then from the others' address
        for number in range(1100):
            sock = socket.socket()
            sock.bind(("127.0.0.2" if number < 700 else "127.0.0.1", 0))
            sock.connect(("127.0.0.1", server.port))
            idle.append(sock)
        wait_until(lambda: server.health()["connections_parked"] >= 200, "its excess parked")
        health = server.health()
        assert health["connections"] <= health["max_connections"], health
        # the other clients are answered at once, each on its first try
        for _ in range(5):
            status, _, reply = server.call("POST", "/assemble", review)
            assert status == 200, reply
        same(review, reply["result"])
        health = server.health()
        # one address holds at most its share (its excess held unread, uncounted, until
        # the header deadline), and no one is refused
        assert health["connections_refused"] == 0 and health["connections"] <= 900 + 1
    finally:
        for sock in idle:
            sock.close()


def test_sigterm_with_calls_queued_and_many_connections_exits_in_grace(servers: Starter) -> None:
    server: Http = servers(
        Http,
        *("--max-pending", "1", "--concurrency", "1", "--time-limit", "4"),
        test_strategies=True,
        env={"ASSEMBLER_TEST_SLEEP": "2"},
    )
    review = example("review-migration.json")
    answers: list[tuple[int, dict[str, Any]]] = []
    lock = threading.Lock()

    def ask(path: str) -> None:
        status, _, reply = server.call("POST", path, review)
        with lock:
            answers.append((status, reply))

    slow = threading.Thread(target=ask, args=("/assemble?strategy=sleepy",))
    slow.start()
    wait_until(lambda: server.health()["in_flight"] == 1, "the slow call is in flight")
    waiting = [threading.Thread(target=ask, args=("/assemble",)) for _ in range(20)]
    for thread in waiting:
        thread.start()
    idle = [server.socket() for _ in range(300)]
    wait_until(lambda: server.health()["queued"] == 20, "the others wait their turn")
    server.proc.send_signal(signal.SIGTERM)
    try:
        # it exits while the idle connections are still open: they do not hold it
        assert server.proc.wait(timeout=WAIT) == 0
    finally:
        for sock in idle:
            sock.close()
    slow.join()
    for thread in waiting:
        thread.join()
    # the call in flight is answered; those waiting for their turn are told the server
    # is stopping, each at once, none left without a reply
    assert len(answers) == 21
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200] + [503] * 20, statuses
    refused = [reply for status, reply in answers if status == 503]
    assert all("shutting down" in reply["error"]["message"] for reply in refused), refused[0]
