"""``assembler fit`` and ``POST /fit``: a provider body fitted from any language, with
the exit codes and errors of every other command and route (``assembler/exits.py``).

The command is run as a real process (the body on stdin and in a file); the route on
a real ``assembler serve --port 0`` over loopback. Both must answer what
``assembler.fit`` answers in process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import Http, Starter, started

import assembler
from benchmarks.transcripts import anthropic_body, gemini_body, responses_body

WAIT = 120


def _fit(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", "fit", *args],
        input=stdin, capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip


@pytest.mark.integration
def test_the_command_prints_the_fitted_body_as_fit_makes_it(tmp_path: Path) -> None:
    body = anthropic_body(3, rounds=4)
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    done = _fit(str(path), "--budget", "1500")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == assembler.fit(body, budget=1500).body()
    assert done.stderr.startswith("fit: anthropic-messages for claude-sonnet-4")
    # stdin, a Gemini body with --model, and the report
    gemini = gemini_body(2, rounds=3)
    done = _fit("-", "--model", "gemini-2.5-flash", "--budget", "2000", "--report",
                stdin=json.dumps(gemini))  # fmt: skip
    report = json.loads(done.stdout)
    fitted = assembler.fit(gemini, model="gemini-2.5-flash", budget=2000)
    assert done.returncode == 0 and report["body"] == fitted.body()
    assert report["fit"]["tokens"] == fitted.tokens and report["exit"] == 0


@pytest.mark.integration
def test_the_commands_errors_are_one_line_with_their_exit_codes() -> None:
    chat = json.dumps({"messages": [{"role": "user", "content": "hi"}]})
    cases: list[tuple[list[str], str, int, str]] = [
        (["-", "--model", "gpt-4o", "--budget", "1"], chat, 1, "refused: "),
        (["-"], chat, 2, "error: model: "),
        (["-", "--model", "gpt-4o"], json.dumps(gemini_body(1, 2)), 2, "error: contents[0]"),
        (["-", "--model", "gpt-4o", "--budget", "x"], chat, 2, "error: budget: "),
        (["-", "--model", "gpt-4o"], "{", 2, "error: $: "),
        (["-", "--model", "gpt-4o"], json.dumps({"input": "hi"}), 0, "fit: openai-responses"),
    ]
    for args, stdin, code, said in cases:
        done = _fit(*args, stdin=stdin)
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.startswith(said) and "Traceback" not in done.stderr, done.stderr


@pytest.fixture
def servers() -> Iterator[Starter]:
    yield from started()


@pytest.mark.server
def test_post_fit_answers_as_the_command_does(servers: Any) -> None:
    server = servers(Http)
    body = responses_body(4, rounds=3)
    status, headers, reply = server.call("POST", "/fit?budget=1200", body)
    assert (status, headers["x-assembler-exit"], reply["exit"]) == (200, "0", 0)
    assert reply["body"] == assembler.fit(body, budget=1200).body()
    status, headers, reply = server.call("POST", "/fit?budget=1", body)
    assert (status, headers["x-assembler-exit"], reply["exit"]) == (200, "1", 1)
    assert reply["refused"] and reply["result"]["status"] == "refused"
    status, headers, reply = server.call("POST", "/fit?model=gpt-4o", gemini_body(1, 2))
    assert (status, headers["x-assembler-exit"]) == (400, "2")
    assert reply["error"]["field"].startswith("contents[")
    status, _, reply = server.call("POST", "/fit?budgett=3", body)
    assert status == 400 and reply["error"]["field"] == "budgett"
    status, headers, _ = server.call("GET", "/fit")
    assert status == 405 and headers["allow"] == "POST"
    # a provider body sent to /assemble is told to use fit
    status, _, reply = server.call("POST", "/assemble", gemini_body(1, 2))
    assert status == 400 and "POST /fit" in reply["error"]["message"]
