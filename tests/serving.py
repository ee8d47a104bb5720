"""The real ``assembler serve`` process, for the server's tests and the soak suite.

``Lines`` starts it on pipes (JSON lines), ``Http`` on a loopback port (``--port 0``,
the address read from its first line); both are the real server, started as
``python -m assembler serve`` (with ``test_strategies``, the process also registers
the test strategies ``sleepy`` and ``crashes`` from ``tests_support`` first).
``started()`` backs each module's ``servers`` fixture: every server it starts is
killed at the end of the test. ``same`` checks a reply's result against an
in-process ``assemble()`` and the verifiers.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import assembler

TESTS = Path(__file__).resolve().parent
EXAMPLES = TESTS.parent / "models" / "examples"
# a process start and an answer, on a shared 2-core machine
WAIT = 60.0
_WITH_TEST_STRATEGIES = (
    f"import sys; sys.path.insert(0, {str(TESTS)!r}); import assembler.strategies as s;"
    " s.STRATEGIES['sleepy'] = 'tests_support:sleepy';"
    " s.STRATEGIES['crashes'] = 'tests_support:crashes';"
    " from assembler.cli import main; sys.exit(main(sys.argv[1:]))"
)

Starter = Callable[..., Any]


def argv(args: tuple[str, ...], test_strategies: bool) -> list[str]:
    if test_strategies:
        return [sys.executable, "-c", _WITH_TEST_STRATEGIES, "serve", *args]
    return [sys.executable, "-m", "assembler", "serve", *args]


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return loaded


def same(request: dict[str, Any], got: dict[str, Any], **options: Any) -> None:
    """``got`` (a reply's result) is what assemble() gives in process, and verified."""
    fresh = assembler.assemble(request, time_limit=WAIT, **options).to_dict()
    got = dict(got)
    for data in (fresh, got):
        data.pop("timings", None)
    assert got == fresh
    result = result_of(request, got, **options)
    assert assembler.verify(request, result) == []
    if result.rendering is not None:
        assert assembler.verify_rendering(request, result, result.rendering) == []


def result_of(request: dict[str, Any], data: dict[str, Any], **options: Any) -> assembler.Result:
    # the verifiers take a Result: rebuild it in process and check it is the reply's
    result = assembler.assemble(request, time_limit=WAIT, **options)
    assert result.package_id == data["package_id"] and result.trace_id == data["trace_id"]
    return result


class _Served:
    proc: subprocess.Popen[bytes]

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Lines(_Served):
    """``assembler serve`` on a pipe: one JSON message per line each way."""

    def __init__(
        self,
        *args: str,
        test_strategies: bool = False,
        env: dict[str, str] | None = None,
        read: bool = True,
    ):
        self.proc = subprocess.Popen(
            argv(args, test_strategies),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self._replies: queue.Queue[bytes] = queue.Queue()
        if read:
            self.start_reading()

    def start_reading(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._replies.put(line)

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        line = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def raw_reply(self, timeout: float = WAIT) -> bytes:
        return self._replies.get(timeout=timeout)

    def reply(self, timeout: float = WAIT) -> dict[str, Any]:
        line = self.raw_reply(timeout)
        assert line.endswith(b"\n"), line[-200:]
        data: dict[str, Any] = json.loads(line)
        return data

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=WAIT)


class Http(_Served):
    """``assembler serve --port 0``; the address is read from its first line."""

    def __init__(
        self,
        *args: str,
        test_strategies: bool = False,
        env: dict[str, str] | None = None,
        port: str = "0",
    ):
        self.proc = subprocess.Popen(
            argv(("--port", port, *args), test_strategies),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else ""
        self.announced: dict[str, Any] = json.loads(line)
        self.port = int(self.announced["port"])

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float = WAIT,
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
            connection.request(method, path, body=data, headers=headers or {})
            response = connection.getresponse()
            headers_ = {k.lower(): v for k, v in response.getheaders()}
            return response.status, headers_, json.loads(response.read())
        finally:
            connection.close()

    def socket(self, timeout: float = WAIT) -> socket.socket:
        """A raw connection, for clients that misbehave."""
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def health(self) -> dict[str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            connection.request("GET", "/healthz")
            data: dict[str, Any] = json.loads(connection.getresponse().read())
            return data
        finally:
            connection.close()


def wait_until(check: Callable[[], Any], what: str, timeout: float = WAIT) -> None:
    """Poll ``check`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def started() -> Iterator[Starter]:
    """A function starting servers (``start(Lines | Http, *args, **options)``), each
    killed when the test ends."""
    servers: list[Lines | Http] = []

    def start(kind: type[Lines] | type[Http], *args: str, **options: Any) -> Any:
        server = kind(*args, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP response read from a raw socket: status, headers (lower-case), body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def time_limited_delta_is_not_applied(server: Http, headers: dict[str, str] | None = None) -> None:
    """Open a sleepy session, send a delta that outlives its limit, then the same delta
    again without a version: it must land on the session the client knows."""
    status, _, opened = server.call(
        "PUT", "/sessions/agent-1?strategy=sleepy&time_limit=8", _agent_turns(4), headers=headers
    )
    assert (status, opened["session"]["version"]) == (200, 0), opened
    delta = {"add": [{"id": "late", "cost": 1, "relevance": 0.9, "content": "late"}]}
    status, _, late = server.call(
        "POST", "/sessions/agent-1/delta?time_limit=0.5", delta, headers=headers
    )
    assert (status, late["error"]["code"]) == (503, "time-limit"), late
    time.sleep(2.5)  # the abandoned solve has finished (and, before, been committed)
    status, _, again = server.call(
        "POST", "/sessions/agent-1/delta?time_limit=8", delta, headers=headers
    )
    assert status == 200, again
    # applied once, on the session at version 0: five candidates, version 1
    assert (again["session"]["version"], again["session"]["candidates"]) == (1, 5), again


def _agent_turns(forms: int) -> dict[str, Any]:
    candidates = [
        {"id": f"c{i}", "cost": 1 + i % 7, "relevance": round(0.1 + (i % 9) / 10, 2),
         "content": f"turn {i}"}
        for i in range(forms)
    ]  # fmt: skip
    return {"task": {"id": "agent", "budget": 20}, "candidates": candidates}
