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
    lines.proc.send_signal(second)
    code = lines.proc.wait(timeout=WAIT)
    assert code == (130 if second == signal.SIGINT else 0)
    # it left at once: the first signal's drain would have said, after its grace, what
    # it could not write
    assert "not written" not in lines.stderr()


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
    code = lines.proc.wait(timeout=WAIT)
    assert code == 0
    # it gave up by its own grace (--time-limit 1, the overrun grace of 1 s and the
    # shutdown margin of 5 s), and said so
    assert "replies not written: stdout was not read within 7 s" in lines.stderr()


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
    request = _big_request(forms=1000)
    for number in range(3):
        lines.send({"id": number, "request": request, "render": "text"})
    assert lines.proc.stdout is not None
    received = bytearray()
    fd = lines.proc.stdout.fileno()
    signalled = False
    deadline = time.monotonic() + WAIT
    while received.count(b"\n") < 3:
        assert time.monotonic() < deadline
        chunk = os.read(fd, 4096)
        assert chunk, "the server ended before its replies"
        received += chunk
        if not signalled and len(received) > 100_000:
            lines.proc.send_signal(signal.SIGTERM)
            signalled = True
        time.sleep(0.0005)
    replies = [json.loads(line) for line in bytes(received).split(b"\n")[:3]]
    assert [reply["id"] for reply in replies] == [0, 1, 2]
    assert lines.proc.wait(timeout=WAIT) == 0


# ---------------------------------------------------------------------------
# HTTP: slow, stalled and vanishing clients


def _stalled(server: Http, count: int, path: str = "/assemble") -> list[socket.socket]:
    """``count`` connections that sent their headers and 1 byte of a 100-byte body."""
    stalled = []
    for _ in range(count):
        sock = server.socket()
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{{".encode())
        stalled.append(sock)
    return stalled


def test_stalled_bodies_do_not_keep_others_from_being_served(servers: Starter) -> None:
    server: Http = servers(Http, "--body-timeout", "3", "--time-limit", "5")
    review = example("review-migration.json")
    stalled = _stalled(server, 64)
    try:
        wait_until(lambda: server.health()["reading"] == 64, "the stalled bodies are read")
        health = server.health()
        # 64 bodies being read are not 64 calls held: the server is not saturated by them
        assert health["status"] == "ok" and health["in_flight"] == 0, health
        status, headers, reply = server.call("POST", "/assemble", review)
        # answered within its time limit (else it would be told server-busy or
        # time-limit), the stalled bodies cut at their deadline meanwhile
        assert (status, reply["exit"]) == (200, 0), reply
        same(review, reply["result"])
        # the stalled ones are cut at their deadline, each with its own error
        for sock in stalled:
            status, headers, body = read_response(sock)
            data = json.loads(body)
            assert (status, data["exit"], data["error"]["code"]) == (408, 2, "read-timeout")
            assert data["error"]["timeout"] == "body_timeout"
            assert headers["connection"] == "close" and headers["x-assembler-exit"] == "2"
    finally:
        for sock in stalled:
            sock.close()
    assert server.health()["errors"]["read-timeout"] == 64


def test_headers_sent_a_byte_at_a_time_are_cut_at_the_header_deadline(
    servers: Starter,
) -> None:
    server: Http = servers(Http, "--header-timeout", "1.5")
    sock = server.socket()
    head = b"POST /assemble HTTP/1.1\r\nHost: x\r\nX-Long: " + b"a" * 100
    sent = 0
    cut = False
    try:
        # a byte every 0.1 s would take 14 s: the 1.5 s deadline cuts it long before
        for byte in head:
            sock.sendall(bytes([byte]))
            sent += 1
            time.sleep(0.1)
            if server.health()["errors"].get("read-timeout"):
                break
    except (BrokenPipeError, ConnectionResetError):
        cut = True
    status, _, body = read_response(sock) if not cut else (408, {}, b"")
    assert sent < len(head), "the header deadline never cut the connection"
    assert status == 408
    if body:
        assert json.loads(body)["error"]["code"] == "read-timeout"
    sock.close()
    # a connection that sends nothing at all is closed too
    idle = server.socket()
    idle.settimeout(10)
    assert idle.recv(100) == b""
    idle.close()


def test_a_content_length_longer_than_the_body_is_cut_at_the_body_deadline(
    servers: Starter,
) -> None:
    server: Http = servers(Http, "--body-timeout", "1.5")
    body = json.dumps(example("review-migration.json")).encode()
    sock = server.socket()
    sock.sendall(
        b"POST /assemble HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (len(body) + 10)
        + body
    )
    status, _, data = read_response(sock)
    error = json.loads(data)["error"]
    # cut by the body deadline (the server would otherwise wait for the missing bytes)
    assert (status, error["code"], error["timeout"]) == (408, "read-timeout", "body_timeout")
    sock.close()


def test_healthz_says_saturated_when_a_call_would_be_refused(servers: Starter) -> None:
    server: Http = servers(
        Http,
        "--max-pending",
        "1",
        "--max-queue",
        "1",
        "--concurrency",
        "1",
        test_strategies=True,
        env={"ASSEMBLER_TEST_SLEEP": "2"},
    )
    review = example("review-migration.json")
    status, _, health = server.call("GET", "/healthz")
    assert (status, health["status"]) == (200, "ok")
    slow = threading.Thread(target=server.call, args=("POST", "/assemble?strategy=sleepy", review))
    slow.start()
    wait_until(lambda: server.health()["in_flight"] == 1, "the slow call is in flight")
    status, headers, health = server.call("GET", "/healthz")
    assert (status, health["status"], health["in_flight"]) == (503, "saturated", 1), health
    assert headers["x-assembler-exit"] == "3"
    waiting = threading.Thread(target=server.call, args=("POST", "/assemble", review))
    waiting.start()
    wait_until(lambda: server.health()["queued"] == 1, "the next call waits its turn")
    status, _, busy = server.call("POST", "/assemble", review)
    assert (status, busy["error"]["code"]) == (503, "server-busy")
    slow.join()
    waiting.join()
    # nothing is held now, and /healthz still says a client was refused, and why
    health = server.call("GET", "/healthz")[2]
    assert (health["status"], health["in_flight"], health["queued"]) == ("saturated", 0, 0)
    assert "--max-queue" in health["refusing"]["why"], health


def test_a_client_that_disconnects_during_its_body_is_not_a_bug(servers: Starter) -> None:
    server: Http = servers(Http, env={"ASSEMBLER_TRACEBACK": "1"})
    for _ in range(3):
        sock = server.socket()
        sock.sendall(b'POST /assemble HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{"t')
        time.sleep(0.2)
        sock.close()
    wait_until(
        lambda: server.health()["errors"].get("client-disconnected") == 3, "disconnects counted"
    )
    health = server.health()
    assert "internal-error" not in health["errors"], health
    review = example("review-migration.json")
    assert server.call("POST", "/assemble", review)[0] == 200
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=WAIT) == 0
    assert "Traceback" not in server.stderr()


# ---------------------------------------------------------------------------
# HTTP: replies of unknown routes and methods, honest messages


def test_unknown_routes_and_methods_say_so_with_their_headers(servers: Starter) -> None:
    server: Http = servers(Http)
    status, headers, reply = server.call("GET", "/assemble")
    assert status == 405 and headers["allow"] == "POST"
    assert headers["x-assembler-exit"] == "2" and reply["exit"] == 2
    status, headers, reply = server.call("POST", "/sessions/k")
    assert status == 405 and headers["allow"] == "PUT, DELETE"
    status, headers, reply = server.call("GET", "/nowhere")
    assert (status, headers["x-assembler-exit"], reply["error"]["code"]) == (
        404,
        "2",
        "invalid-request",
    )


def test_a_time_limit_too_short_to_solve_is_not_called_busy(servers: Starter) -> None:
    server: Http = servers(Http)
    review = example("review-migration.json")
    status, _, reply = server.call("POST", "/assemble?time_limit=0.000001", review)
    assert (status, reply["error"]["code"]) == (503, "time-limit")
    assert "busy" not in reply["error"]["message"], reply


def test_a_ledger_error_does_not_show_the_servers_path(servers: Starter, tmp_path: Path) -> None:
    import resource

    path = tmp_path / "secret-place" / "run.db"
    path.parent.mkdir()
    lines: Lines = servers(Lines, "--ledger", str(path))
    review = example("review-migration.json")
    lines.send({"id": 1, "request": review})
    assert lines.reply()["exit"] == 0
    lines.stop()
    # a file-size limit the ledger's next writes exceed (Python ignores SIGXFSZ)
    size = path.stat().st_size + (path.parent / "run.db-wal").stat().st_size

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 4096, size + 4096))

    import subprocess

    from serving import argv

    proc = subprocess.Popen(
        argv(("--ledger", str(path)), False),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=small_files,
    )
    big = _big_request(forms=400, size=2000)
    out, err = proc.communicate(json.dumps({"id": 2, "request": big}).encode() + b"\n", WAIT)
    reply = json.loads(out)
    assert (reply["exit"], reply["error"]["code"]) == (2, "ledger-error"), reply
    assert "secret-place" not in out.decode()
    assert "secret-place" in err.decode()  # the operator sees it on stderr


# ---------------------------------------------------------------------------
# Binding beyond loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_an_address_beyond_loopback_is_refused_without_a_flag_and_a_token(
    host: str, tmp_path: Path
) -> None:
    import subprocess

    from serving import argv

    token = tmp_path / "token"
    token.write_text("s3cret-" + "x" * 20 + "\n")
    token.chmod(0o600)
    for extra in ((), ("--allow-remote",), ("--token-file", str(token))):
        done = subprocess.run(
            argv(("--port", "0", "--host", host, *extra), False),
            capture_output=True,
            text=True,
            timeout=WAIT,
            check=False,
        )
        assert done.returncode == 2, (extra, done.stderr)
        assert "--allow-remote" in done.stderr and "--token-file" in done.stderr
        assert done.stdout == ""


def test_a_remote_server_says_so_and_wants_its_token(servers: Starter, tmp_path: Path) -> None:
    token = tmp_path / "token"
    secret = "s3cret-" + "x" * 20
    token.write_text(secret + "\n")
    token.chmod(0o600)
    server: Http = servers(Http, "--host", "0.0.0.0", "--allow-remote", "--token-file", str(token))
    review = example("review-migration.json")
    status, headers, reply = server.call("POST", "/assemble", review)
    assert (status, reply["exit"], reply["error"]["code"]) == (401, 2, "unauthorized")
    assert headers["www-authenticate"].startswith("Bearer")
    wrong = {"Authorization": "Bearer " + "y" * 27}
    assert server.call("POST", "/assemble", review, headers=wrong)[0] == 401
    assert server.call("PUT", "/sessions/k", review, headers=wrong)[0] == 401
    right = {"Authorization": f"Bearer {secret}"}
    status, _, reply = server.call("POST", "/assemble", review, headers=right)
    assert status == 200
    same(review, reply["result"])
    assert server.call("GET", "/healthz")[0] == 200  # health needs no token
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=WAIT) == 0
    assert "beyond loopback" in server.stderr()


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    import subprocess

    from serving import argv

    token = tmp_path / "token"
    token.write_text("short\n")
    token.chmod(0o600)
    done = subprocess.run(
        argv(("--port", "0", "--token-file", str(token)), False),
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 2 and "at least 16" in done.stderr


# ---------------------------------------------------------------------------
# File modes: the ledger holds every request's content


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_servers_ledger_is_readable_by_its_owner_only(servers: Starter, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "run.db"
        lines: Lines = servers(Lines, "--ledger", str(path))
        lines.send({"request": example("review-migration.json")})
        assert lines.reply()["exit"] == 0
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
        assert lines.close() == 0
    finally:
        os.umask(old)


def test_ledgers_and_exports_written_by_the_library_and_commands_are_private(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    import assembler

    old = os.umask(0o022)
    try:
        path = tmp_path / "api.db"
        with assembler.Ledger(path) as ledger:
            assembler.assemble(example("review-migration.json"), ledger=ledger)
            assert _mode(path) == 0o600 and _mode(Path(f"{path}-wal")) == 0o600
        out = tmp_path / "export.jsonl"
        done = subprocess.run(
            [sys.executable, "-m", "assembler", "ledger", "export", str(path), "--out", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert _mode(out) == 0o600
        request = tmp_path / "request.json"
        request.write_text(json.dumps(example("review-migration.json")))
        page = tmp_path / "page.html"
        done = subprocess.run(
            [sys.executable, "-m", "assembler", "explain", "--request", str(request),
             "--html", str(page), "--counterfactuals", "0"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert _mode(page) == 0o600
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------
# Session keys: one rule, the request's names' and printable


def test_keys_that_are_not_printable_names_are_refused(servers: Starter) -> None:
    server: Http = servers(Http)
    empty = {"task": {"id": "t", "budget": 10}, "candidates": []}
    # two different invalid byte sequences must not both become U+FFFD: both refused
    for path in ("/sessions/%FF", "/sessions/%FE", "/sessions/a%00b", "/sessions/a%0Ab",
                 "/sessions/a%1B%5B31mb", "/sessions/%E2%80%A8"):  # fmt: skip
        status, headers, reply = server.call("PUT", path, empty)
        assert (status, reply["error"]["code"], reply["error"]["field"]) == (
            400,
            "invalid-request",
            "session",
        ), (path, reply)
        assert headers["x-assembler-exit"] == "2"
    assert server.health()["sessions"] == 0
    # percent-decoded once, as UTF-8: a key with a slash or a space is a key
    assert server.call("PUT", "/sessions/caf%C3%A9%2Fa%20b", empty)[2]["session"]["key"] == (
        "café/a b"
    )
    assert server.call("POST", "/sessions/caf%C3%A9%2Fa%20b/delta", {})[0] == 200
    lines: Lines = servers(Lines)
    for key in ("a\x00b", "a\nb", "\x1b[2J", "\x9b"):
        lines.send({"id": key, "session": key, "request": empty})
        reply = lines.reply()
        assert (reply["exit"], reply["error"]["field"]) == (2, "session"), reply
    assert lines.close() == 0


def test_ledger_list_prints_no_terminal_control_characters(tmp_path: Path) -> None:
    import subprocess
    import sys

    import assembler

    path = tmp_path / "run.db"
    request = {"task": {"id": "t\x1b]0;owned\x07\x1b[2J", "budget": 10}, "candidates": []}
    with assembler.Ledger(path, session="s\x1b[31m\nred") as ledger:
        assembler.assemble(request, ledger=ledger)
    with assembler.Ledger(path) as ledger:
        assembler.assemble(request, ledger=ledger)
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "list", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert len(done.stdout.strip().splitlines()) == 3  # the header and two rows


# ---------------------------------------------------------------------------
# Memory held by bodies in flight


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_bodies_in_flight_are_bounded_by_the_body_memory(servers: Starter) -> None:
    cap = 24 * 2**20
    server: Http = servers(Http, "--max-body-memory", str(cap), "--max-request-bytes",
                           str(cap))  # fmt: skip
    before = _peak_rss(server.proc.pid)
    # 16 bodies of 12 MB at once: a JSON string each (cheap to decode, not a request)
    body = b'"' + b"x" * (12 * 2**20) + b'"'
    statuses: list[tuple[int, str | None]] = []

    def send() -> None:
        status, _, reply = server.call("POST", "/assemble", body)
        statuses.append((status, reply.get("error", {}).get("code")))

    threads = [threading.Thread(target=send) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    codes = {code for _, code in statuses}
    assert codes <= {"invalid-request", "server-busy"} and "invalid-request" in codes
    # each body held once as bytes and once decoded: two at most at a time (24 MB),
    # against the 16 x 12 MB = 192 MB in flight without the limit
    grown = _peak_rss(server.proc.pid) - before
    assert grown < 150 * 2**20, grown
    assert server.health()["body_memory"] == 0
