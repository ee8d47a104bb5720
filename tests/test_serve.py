"""The warm server, started as a real process and spoken to over both transports.

Every test starts ``assembler serve`` (``python -m assembler serve``) as a subprocess
and talks to it over its stdin/stdout (JSON lines) or over HTTP on a loopback port:
answers equal in-process ``assemble()`` and pass the verifiers, bad input gets
structured errors and never ends the server, replies come in order, concurrent calls
on one session serialise, sizes and idle sessions are bounded, the time limit holds
and SIGTERM lets the calls in flight finish. Where a long solve is needed, the server
process also registers the test strategies ``sleepy`` (sleeps, then exact) and
``crashes`` (a bug) from ``tests_support``: the server itself is the real one.
"""

from __future__ import annotations

import copy
import http.client
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import WAIT, Http, Lines, Starter, started
from serving import example as _example
from serving import same as _same

import assembler
from benchmarks.scenarios.agentloop import agent_loop


@pytest.fixture
def servers() -> Iterator[Starter]:
    yield from started()


# ---------------------------------------------------------------------------
# JSON lines


def test_every_line_gets_its_reply_in_order_bad_lines_an_error(servers: Any) -> None:
    lines: Lines = servers(Lines, "--max-request-bytes", "20000", "--max-depth", "8")
    review = _example("review-migration.json")
    sent: list[Any] = [
        {"id": 1, "request": review},
        b"not json",
        b"[1, 2]",
        {"id": "neg", "request": {"task": {"id": "t", "budget": -1}, "candidates": []}},
        {"id": 5, "reqest": {}},
        # over the limit and over several reads of the pipe
        b'{"request": "' + b"x" * 150_000 + b'"}',
        b"\xff\xfe\xfa not UTF-8",
        b'{"id": 8, "request": ' + b"[" * 20 + b"]" * 20 + b"}",
        b'{"id": 9, "request": {"task": {"id": "\\ud800", "budget": 1}, "candidates": []}}',
        {"id": 10, "session": "nope", "delta": {}},
        {"id": 11, "session": "k", "delta": {}, "render": "text"},
        {"id": 12, "request": review, "time_limit": 1e9},
        {"id": 13, "request": review, "strategy": "magic"},
        b"",
        {"id": 14, "request": review, "render": "text"},
    ]
    for message in sent:
        lines.send(message)
    expected = [
        (1, 0, None, None),
        (None, 2, "invalid-request", "$"),
        (None, 2, "invalid-request", "$"),
        ("neg", 2, "invalid-request", "task.budget"),
        (5, 2, "invalid-request", "reqest"),
        (None, 2, "request-too-large", "$"),
        (None, 2, "invalid-request", "$"),
        (None, 2, "request-too-large", "$"),
        (9, 2, "invalid-request", "task.id"),
        (10, 2, "session-unknown", None),
        (11, 2, "invalid-request", "render"),
        (12, 2, "invalid-request", "time_limit"),
        (13, 2, "invalid-request", None),
        (None, 2, "invalid-request", "$"),  # a blank line gets its reply too
        (14, 0, None, None),
    ]
    replies = [lines.reply() for _ in expected]
    for reply, (id_, code, error, field) in zip(replies, expected, strict=True):
        assert (reply["id"], reply["exit"]) == (id_, code), reply
        if error is not None:
            assert reply["error"]["code"] == error, reply
            assert reply["error"].get("field") == field, reply
    too_long = replies[5]["error"]
    assert (too_long["limit"], too_long["maximum"]) == ("max_request_bytes", 20000)
    _same(review, replies[0]["result"])
    _same(review, replies[-1]["result"], render="text")
    # the last line needs no newline: the end of input ends it
    assert lines.proc.stdin is not None
    lines.proc.stdin.write(json.dumps({"id": "last", "request": review}).encode())
    assert lines.close() == 0
    assert lines.reply()["id"] == "last"


def test_every_render_format_is_served_as_assemble_renders_it(servers: Any) -> None:
    lines: Lines = servers(Lines)
    request = _example("agent-tool-call.json")
    formats = ("openai-responses", "gemini", "anthropic-messages")
    for number, fmt in enumerate(formats):
        lines.send({"id": number, "request": request, "render": fmt})
    for number, fmt in enumerate(formats):
        reply = lines.reply()
        assert (reply["id"], reply["exit"]) == (number, 0), reply
        assert reply["result"]["rendering"]["format"] == fmt
        _same(request, reply["result"], render=fmt)


def test_sessions_answer_as_assemble_answers_the_whole_request(servers: Any) -> None:
    lines: Lines = servers(Lines)
    loop = agent_loop(seed=3, forms=80, calls=6, content=True)
    lines.send({"id": "open", "session": "agent", "request": loop.first, "render": "openai-chat"})
    opened = lines.reply()
    assert opened["session"] == {"key": "agent", "version": 0, "candidates": 80}
    _same(loop.first, opened["result"], render="openai-chat")
    for number, (delta, request) in enumerate(zip(loop.deltas, loop.requests(), strict=True)):
        lines.send({"id": number, "session": "agent", "delta": delta})
        reply = lines.reply()
        assert (reply["id"], reply["exit"], reply["session"]["version"]) == (number, 0, number + 1)
        _same(request, reply["result"], render="openai-chat")
    # a delta the session's rules refuse changes nothing
    lines.send({"session": "agent", "delta": {"remove": ["call-1.use"]}})
    refused = lines.reply()
    assert refused["error"]["code"] == "invalid-request"
    assert refused["error"]["candidate"] == "call-1.result"
    lines.send({"session": "agent", "delta": {}})
    assert lines.reply()["session"]["version"] == len(loop.deltas) + 1
    lines.send({"session": "agent", "close": True})
    assert lines.reply()["closed"] is True
    lines.send({"session": "agent", "delta": {}})
    assert lines.reply()["error"]["code"] == "session-unknown"
    assert lines.close() == 0


def _cached_chain(
    loop: Any, calls: int, render: str, headers: str
) -> Iterator[tuple[dict[str, Any], assembler.Result]]:
    """What a served cache session solves, call by call: each request of the loop with
    the provider's cache section and, as previous blocks, what the answer before sent."""
    blocks: list[Any] | None = None
    for request in [loop.first, *loop.requests()][:calls]:
        section: dict[str, Any] = {"provider": "anthropic"}
        if blocks is not None:
            section["previous"] = {"blocks": blocks}
        solved = {**request, "cache": section}
        answer = assembler.assemble(solved, render=render, headers=headers, time_limit=WAIT)
        assert answer.rendering is not None
        blocks = answer.rendering.manifest.cache_blocks(answer.rendering.text)
        yield solved, answer


def test_a_session_opened_with_a_cache_carries_its_previous_rendering(servers: Any) -> None:
    lines: Lines = servers(Lines)
    loop = agent_loop(seed=3, forms=60, calls=4, content=True)
    options = {"render": "anthropic-messages", "headers": "none"}
    first = loop.first
    lines.send({"id": "open", "session": "agent", "request": first, "cache": "anthropic",
                **options})  # fmt: skip
    replies = [lines.reply()]
    for delta in loop.deltas[:3]:
        lines.send({"session": "agent", "delta": delta})
        replies.append(lines.reply())
    kept = []
    for reply, (solved, _) in zip(replies, _cached_chain(loop, 4, **options), strict=True):
        assert reply["exit"] == 0, reply
        # the served answer is assemble() of the request the session solved
        _same(solved, reply["result"], **options)
        kept.append(reply["result"]["cache"]["kept"])
    assert kept[0] == 0 and all(k > 0 for k in kept[1:])
    # the options a session keeps are named when it opens, and cache needs render
    lines.send({"id": 1, "session": "agent", "delta": {}, "cache": "anthropic"})
    lines.send({"id": 2, "session": "other", "request": loop.first, "cache": "anthropic"})
    lines.send({"id": 3, "request": loop.first, "cache": "openai", "render": "text"})
    lines.send({"id": 4, "session": "other", "request": loop.first, "cache": "azure",
                "render": "text"})  # fmt: skip
    lines.send({"id": 5, "session": "other", "request": loop.first, "render": "text",
                "cache": {"provider": "anthropic", "ttl": 7}})  # fmt: skip
    lines.send({"id": 6, "request": loop.first, "render": "text", "headers": "fancy"})
    for number, field in ((1, "cache"), (2, "cache"), (3, "cache"), (4, "cache"),
                          (5, "cache.ttl"), (6, "headers")):  # fmt: skip
        reply = lines.reply()
        assert (reply["id"], reply["error"]["code"], reply["error"]["field"]) == (
            number, "invalid-request", field
        ), reply  # fmt: skip
    assert lines.close() == 0


def test_replies_keep_the_order_of_lines_while_solves_overlap(servers: Any) -> None:
    lines: Lines = servers(
        Lines, "--concurrency", "2", test_strategies=True, env={"ASSEMBLER_TEST_SLEEP": "1.5"}
    )
    review = _example("review-migration.json")
    lines.send({"id": "slow", "request": review, "strategy": "sleepy"})
    lines.send({"id": "fast", "request": review})
    # one session: its deltas apply one after the other, in the order of their lines
    lines.send({"id": "open", "session": "s", "request": {"task": {"id": "t", "budget": 50},
                                                          "candidates": []}})  # fmt: skip
    for i in range(8):
        lines.send({"id": i, "session": "s", "delta": {"add": [{"id": f"c{i}", "cost": 10}]}})
    assert [lines.reply()["id"] for _ in range(3)] == ["slow", "fast", "open"]
    for i in range(8):
        reply = lines.reply()
        assert (reply["id"], reply["session"]["version"], reply["session"]["candidates"]) == (
            i,
            i + 1,
            i + 1,
        )
    # a bug in a strategy is one reply, and the server goes on
    lines.send({"id": "bug", "request": review, "strategy": "crashes"})
    lines.send({"id": "after", "request": review})
    bug, after = lines.reply(), lines.reply()
    assert (bug["exit"], bug["error"]["code"]) == (4, "internal-error")
    assert after["exit"] == 0
    assert lines.close() == 0


def test_sigterm_on_stdio_answers_what_was_read_then_exits_0(servers: Any) -> None:
    lines: Lines = servers(Lines, test_strategies=True, env={"ASSEMBLER_TEST_SLEEP": "2"})
    review = _example("review-migration.json")
    # a first answer: the server is up and reading (its start is slow on a loaded machine)
    lines.send({"id": "warm", "request": review})
    assert lines.reply()["id"] == "warm"
    lines.send({"id": "long", "request": review, "strategy": "sleepy"})
    time.sleep(0.7)
    lines.proc.send_signal(signal.SIGTERM)
    reply = lines.reply()
    assert (reply["id"], reply["exit"]) == ("long", 0)
    # sleepy is exact after a pause: exact's answer, under its own name
    assert reply["result"]["strategy"] == "sleepy"
    _same(review, {**reply["result"], "strategy": "exact"})
    assert lines.proc.wait(timeout=WAIT) == 0


def test_calls_are_recorded_in_the_ledger_under_the_session_key(
    servers: Any, tmp_path: Path
) -> None:
    path = tmp_path / "run.db"
    lines: Lines = servers(Lines, "--ledger", str(path))
    loop = agent_loop(seed=1, forms=40, calls=2)
    lines.send({"session": "agent-9", "request": loop.first})
    for delta in loop.deltas:
        lines.send({"session": "agent-9", "delta": delta})
    lines.send({"request": _example("shared-resolver.json")})
    assert [lines.reply()["exit"] for _ in range(4)] == [0, 0, 0, 0]
    assert lines.close() == 0
    with assembler.Ledger(path, readonly=True) as ledger:
        sessions = [summary.session for summary in ledger.summaries()]
        numbers = [s.number for s in ledger.summaries() if s.session == "agent-9"]
        last = ledger.compilation(numbers[-1])
    # the one-off request ran alongside the session's calls: only their order is kept
    assert sessions.count("agent-9") == 3 and len(sessions) == 4
    assert last.request is not None and len(last.request["candidates"]) == len(
        list(loop.requests())[-1]["candidates"]
    )
    verified = subprocess.run(
        [sys.executable, "-m", "assembler", "ledger", "verify", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


# ---------------------------------------------------------------------------
# HTTP


def test_http_routes_answer_like_assemble(servers: Any) -> None:
    server: Http = servers(Http)
    status, _, health = server.call("GET", "/healthz")
    assert status == 200 and health["status"] == "ok" and health["sessions"] == 0
    review = _example("review-migration.json")
    status, headers, reply = server.call("POST", "/assemble?render=text", review)
    assert (status, headers["x-assembler-exit"], reply["exit"]) == (200, "0", 0)
    _same(review, reply["result"], render="text")
    refused = _example("mandatory-over-budget.json")
    status, headers, reply = server.call("POST", "/assemble", refused)
    assert (status, headers["x-assembler-exit"], reply["result"]["status"]) == (200, "1", "refused")

    loop = agent_loop(seed=5, forms=60, calls=4)
    status, _, reply = server.call("PUT", "/sessions/a%20b", loop.first)
    assert status == 200 and reply["session"]["key"] == "a b"
    for delta, request in zip(loop.deltas, loop.requests(), strict=True):
        status, _, reply = server.call("POST", "/sessions/a%20b/delta?time_limit=9.5", delta)
        assert status == 200, reply
        _same(request, reply["result"])
    assert server.call("GET", "/healthz")[2]["sessions"] == 1
    assert server.call("DELETE", "/sessions/a%20b")[2]["closed"] is True

    # a session opened with a cache: each answer caches on the rendering before it
    loop = agent_loop(seed=4, forms=40, calls=3, content=True)
    options = {"render": "anthropic-messages", "headers": "minimal"}
    query = "?render=anthropic-messages&headers=minimal&cache=anthropic"
    chain = _cached_chain(loop, 3, **options)
    status, _, reply = server.call("PUT", "/sessions/cached" + query, loop.first)
    assert status == 200, reply
    _same(next(chain)[0], reply["result"], **options)
    for delta, (solved, _) in zip(loop.deltas, chain, strict=False):
        status, _, reply = server.call("POST", "/sessions/cached/delta", delta)
        assert status == 200, reply
        _same(solved, reply["result"], **options)
        assert reply["result"]["cache"]["kept"] > 0

    errors = [
        ("POST", "/sessions/a%20b/delta", {}, 404, "session-unknown", None),
        ("POST", "/assemble", b"{", 400, "invalid-request", "$"),
        ("POST", "/assemble", b'{"task": "\xc3\x28"}', 400, "invalid-request", "$"),
        ("POST", "/assemble?time_limit=soon", review, 400, "invalid-request", "time_limit"),
        ("POST", "/assemble?time_limit=1e9", review, 400, "invalid-request", "time_limit"),
        ("POST", "/assemble?colour=red", review, 400, "invalid-request", "query.colour"),
        ("POST", "/sessions/x/delta?render=text", {}, 400, "invalid-request", "render"),
        ("POST", "/sessions/x/delta?cache=openai", {}, 400, "invalid-request", "cache"),
        ("PUT", "/sessions/x?cache=openai", review, 400, "invalid-request", "cache"),
        ("POST", "/assemble?headers=fancy", review, 400, "invalid-request", "headers"),
        ("PUT", "/sessions/x", {"task": {}, "candidates": []}, 400, "invalid-request", "task.id"),
        ("GET", "/nowhere", None, 404, "invalid-request", "$"),
        ("GET", "/assemble", None, 405, "invalid-request", "$"),
    ]
    for method, path, body, status_code, code, field in errors:
        status, _, reply = server.call(method, path, body)
        assert (status, reply["error"]["code"]) == (status_code, code), (path, reply)
        assert reply["error"].get("field") == field, reply
    assert server.call("GET", "/healthz")[0] == 200


def test_http_bodies_over_the_limit_are_refused_unread(servers: Any) -> None:
    server: Http = servers(Http, "--max-request-bytes", "5000")
    big = json.dumps({"task": {"id": "t", "budget": 1}, "candidates": [],
                      "sources": {f"s{i}": "v1" for i in range(600)}}).encode()  # fmt: skip
    assert len(big) > 5000
    status, _, reply = server.call("POST", "/assemble", big)
    assert status == 413
    assert reply["error"]["limit"] == "max_request_bytes" and reply["error"]["actual"] == len(big)
    # without a declared length (chunked), counted as it arrives
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    connection.request("PUT", "/sessions/k", body=iter([big[:3000], big[3000:]]),
                       encode_chunked=True)  # fmt: skip
    response = connection.getresponse()
    assert response.status == 413 and json.loads(response.read())["exit"] == 2
    connection.close()
    assert server.call("GET", "/healthz")[0] == 200


def test_idle_sessions_expire_and_the_least_recent_is_evicted(servers: Any) -> None:
    server: Http = servers(Http, "--session-idle", "1", "--max-sessions", "2")
    empty = {"task": {"id": "t", "budget": 10}, "candidates": []}
    for key in ("a", "b"):
        assert server.call("PUT", f"/sessions/{key}", empty)[0] == 200
    time.sleep(1.6)
    status, _, reply = server.call("POST", "/sessions/a/delta", {})
    assert (status, reply["error"]["code"], reply["exit"]) == (410, "session-expired", 2)
    assert "unused for more than 1 s" in reply["error"]["message"]
    for key in ("c", "d", "e"):
        assert server.call("PUT", f"/sessions/{key}", empty)[0] == 200
    status, _, reply = server.call("POST", "/sessions/c/delta", {})
    assert status == 410 and "evicted" in reply["error"]["message"]
    assert server.call("POST", "/sessions/e/delta", {})[0] == 200
    assert server.call("GET", "/healthz")[2]["sessions"] == 2


def test_concurrent_deltas_to_one_session_serialise(servers: Any) -> None:
    server: Http = servers(Http, "--concurrency", "2")
    assert server.call("PUT", "/sessions/s", {"task": {"id": "t", "budget": 200},
                                              "candidates": []})[0] == 200  # fmt: skip
    added = [{"id": f"c{i:02}", "cost": 10 + i, "relevance": (i % 7) / 7} for i in range(16)]
    versions: list[int] = []
    failures: list[Any] = []

    def send(candidate: dict[str, Any]) -> None:
        status, _, reply = server.call("POST", "/sessions/s/delta", {"add": [candidate]})
        if status != 200:
            failures.append(reply)
        else:
            versions.append(reply["session"]["version"])

    # other sessions at the same time
    def other(key: str) -> None:
        request = _example("shared-resolver.json")
        status, _, reply = server.call("PUT", f"/sessions/{key}", request)
        if status != 200:
            failures.append(reply)

    threads = [threading.Thread(target=send, args=(c,)) for c in added]
    threads += [threading.Thread(target=other, args=(f"o{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(versions) == list(range(1, 17))
    _, _, reply = server.call("POST", "/sessions/s/delta", {})
    assert reply["session"] == {"key": "s", "version": 17, "candidates": 16}
    _same({"task": {"id": "t", "budget": 200}, "candidates": added}, reply["result"])


def test_the_time_limit_holds_and_a_late_delta_is_not_applied(servers: Any) -> None:
    server: Http = servers(
        Http,
        "--concurrency",
        "1",
        "--time-limit",
        "8",
        test_strategies=True,
        env={"ASSEMBLER_TEST_SLEEP": "2"},
    )
    review = _example("review-migration.json")
    assert server.call("PUT", "/sessions/s?strategy=sleepy", review)[0] == 200
    status, headers, reply = server.call("POST", "/sessions/s/delta?time_limit=0.5", {"remove":
                                         ["ci-bot-comment"]})  # fmt: skip
    assert (status, headers["x-assembler-exit"], reply["error"]["code"]) == (503, "3", "time-limit")
    # answered by the deadline's own rule, the grace for an overrunning solve included,
    # not by the solve's end (the sleepy solve would have answered a result)
    assert reply["error"]["time_limit"] == 0.5
    assert "the solve had not returned 1 s after the limit" in reply["error"]["message"]
    # the overrunning solve still holds the only solver thread; when it ends, its
    # result is dropped and the next delta is the session's first
    status, _, reply = server.call("POST", "/sessions/s/delta", {})
    assert status == 200 and reply["session"]["version"] == 1
    assert reply["session"]["candidates"] == len(review["candidates"])

    # waiting for the only solver thread counts against the limit too
    slow = threading.Thread(target=server.call, args=("POST", "/assemble?strategy=sleepy", review))
    slow.start()
    time.sleep(0.5)
    status, _, reply = server.call("POST", "/assemble?time_limit=1", review)
    # the slow call still holds the thread: this one was answered while waiting for it
    still_slow = slow.is_alive()
    slow.join()
    assert (status, reply["error"]["code"]) == (503, "time-limit")
    assert "every solver thread was busy" in reply["error"]["message"] and still_slow


def test_sigterm_lets_a_request_in_flight_finish_then_exits_0(servers: Any) -> None:
    server: Http = servers(
        Http,
        "--max-pending",
        "1",
        "--max-queue",
        "1",
        test_strategies=True,
        env={"ASSEMBLER_TEST_SLEEP": "2.5"},
    )
    review = _example("review-migration.json")
    answers: dict[str, Any] = {}

    def ask(name: str, path: str) -> threading.Thread:
        thread = threading.Thread(
            target=lambda: answers.__setitem__(name, server.call("POST", path, review))
        )
        thread.start()
        return thread

    calls = [ask("slow", "/assemble?strategy=sleepy")]
    deadline = time.monotonic() + WAIT
    while server.call("GET", "/healthz")[2]["in_flight"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    # one call held is the most this server takes: the next waits its turn, and one
    # more than the queue holds is told so at once, with when to retry
    calls.append(ask("waiting", "/assemble"))
    while server.call("GET", "/healthz")[2]["queued"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    status, headers, busy = server.call("POST", "/assemble", review)
    assert (status, busy["error"]["code"], busy["exit"]) == (503, "server-busy", 3)
    assert int(headers["retry-after"]) >= 1 and busy["error"]["retry_after"] > 0
    server.proc.send_signal(signal.SIGTERM)
    for call in calls:
        call.join(timeout=WAIT)
    status, _, reply = answers["slow"]
    assert status == 200 and reply["exit"] == 0
    # sleepy is exact after a pause: exact's answer, under its own name
    _same(review, {**copy.deepcopy(reply["result"]), "strategy": "exact"})
    # the call that was waiting for its turn is told the server is stopping
    status, _, reply = answers["waiting"]
    assert (status, reply["error"]["code"]) == (503, "server-busy")
    assert "shutting down" in reply["error"]["message"]
    assert server.proc.wait(timeout=WAIT) == 0
