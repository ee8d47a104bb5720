"""Structural fuzzing: every input gets one answer, from the API and the CLI alike.

The contract, asserted on every input drawn:
* the API (``parse_request``, ``request_from_json``, ``assemble``) returns a result
  or raises ``InvalidRequest`` (a ``ValueError``) whose message is one printable line
  starting with the field's path, naming the candidate when it knows it; anything
  else, ``InternalError`` included, is a contract break;
* every result passes the verifier (exact strategies), writes as strict UTF-8 JSON,
  and renders as a text table without a control character;
* the CLI exits 0, 1 or 3 with the result JSON whose status matches the code, or 2
  with exactly one line on stderr; never 4 (a bug), never a traceback.

Profiles (``tests/profiles.py``): 1000 inputs in all under the ``ci`` profile, shared
among the tests; ``--hypothesis-profile long`` draws 100 times as many, ``dev`` a fifth.
A subprocess costs ~1 s (it loads the solvers), so the CLI is fuzzed in process,
through ``assembler.cli.main`` with real byte streams, for the bulk, and real
subprocesses run a sample of a thousandth of the inputs (at least 3).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from drawn import mutated_json, mutated_requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import InvalidRequest, Limits, Status, parse_request, request_from_json, verify
from assembler.cli import main
from assembler.cli.table import render_text
from assembler.strategies import EXACT_STRATEGIES

# the inputs of the whole fuzz run, shared among its tests: 1000 under the ci profile
EXAMPLES = examples(1000)
SUBPROCESS_EXAMPLES = max(3, EXAMPLES // 1000)


def fuzz(share: float) -> settings:
    """Settings for a test that runs ``share`` of the profile's inputs."""
    return settings(
        max_examples=max(1, round(EXAMPLES * share)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# tight limits now and then, so that every limit is reached by some input
limits = st.sampled_from(
    [
        assembler.DEFAULT_LIMITS,
        Limits(max_candidates=2),
        Limits(max_name_length=6),
        Limits(max_depth=3),
        Limits(max_request_bytes=300),
    ]
)


def check_error(error: assembler.AssemblerError) -> None:
    message = str(error)
    # an input error (InvalidRequest, RenderError, ...): never a bug, always one line
    assert isinstance(error, ValueError) and isinstance(error, assembler.AssemblerError)
    assert message.isprintable() and len(message) < 1200, message
    if not isinstance(error, InvalidRequest):
        return
    assert error.field and message.startswith(error.field), message
    assert error.candidate is None or (
        isinstance(error.candidate, str) and f"(candidate {error.candidate[:80]!r}" in message
    ), message
    message.encode("utf-8")


def check_result(request: Any, result: assembler.Result, strategy: str) -> None:
    written = json.dumps(result.to_dict(), ensure_ascii=False).encode("utf-8")
    assert json.loads(written)["status"] == result.status.value
    if strategy in EXACT_STRATEGIES:
        assert verify(request, result) == [], result.to_dict()
    table = render_text(result)
    assert all(line.isprintable() for line in table.split("\n")), table


@fuzz(0.20)
@given(mutated_requests(python=True), limits)
def test_parse_request_answers_every_mapping(request: Any, limits: Limits) -> None:
    try:
        parsed = parse_request(request, limits=limits)
    except InvalidRequest as error:
        check_error(error)
        return
    assert len(parsed.candidates) <= limits.max_candidates
    assert parse_request(parsed) == parsed  # a typed request passes the same rules


@fuzz(0.25)
@given(
    mutated_requests(python=True),
    st.sampled_from(sorted(assembler.STRATEGIES)),
    st.sampled_from([None, None, *(f.value for f in assembler.RenderFormat)]),
    limits,
)
def test_assemble_answers_every_mapping(
    request: Any, strategy: str, render: str | None, limits: Limits
) -> None:
    try:
        result = assembler.assemble(request, strategy=strategy, render=render, limits=limits)
    except assembler.AssemblerError as error:
        check_error(error)
        return
    check_result(request, result, strategy)


@fuzz(0.20)
@given(mutated_json(), limits)
def test_request_from_json_answers_every_text(text: bytes, limits: Limits) -> None:
    # as bytes, and as the str a careless reader would make of them (bad bytes become
    # lone surrogates)
    for form in (text, text.decode("utf-8", "surrogateescape")):
        try:
            request_from_json(form, limits=limits)
        except InvalidRequest as error:
            check_error(error)


def run_in_process(args: list[str], stdin: bytes) -> tuple[int, bytes, bytes]:
    """``assembler.cli.main`` over real byte streams (strict UTF-8 for stdout)."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin)),
        io.TextIOWrapper(out, encoding="utf-8", errors="strict"),
        io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace"),
    )
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        code = main(args)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    for stream in streams[1:]:
        stream.flush()
    return code, out.getvalue(), err.getvalue()


def check_cli(text: bytes, code: int, out: bytes, err: bytes, form: str) -> None:
    error = err.decode("utf-8", "replace")
    assert code in (0, 1, 2, 3), (code, error)
    assert "Traceback" not in error, error
    if code == 2:
        lines = error.splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), error
        return
    assert error == "", error
    if form == "text":
        table = out.decode("utf-8")
        assert all(line.isprintable() for line in table.split("\n")), table
        return
    result = json.loads(out)
    assert {"bundle": 0, "refused": 1, "undecided": 3}[result["status"]] == code
    assert verify(json.loads(text), result) == [], result


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8", "surrogatepass")


cli_inputs = st.one_of(mutated_json(), mutated_requests().map(_json_bytes))


# the rest of the profile, less the subprocess sample
@fuzz(0.35 - SUBPROCESS_EXAMPLES / max(EXAMPLES, 1))
@given(cli_inputs, st.sampled_from(["json", "text"]))
def test_cli_answers_every_input_in_process(text: bytes, form: str) -> None:
    code, out, err = run_in_process(["compile", "-", "--format", form], text)
    check_cli(text, code, out, err, form)


@pytest.mark.integration
@settings(fuzz(0), max_examples=SUBPROCESS_EXAMPLES)
@given(cli_inputs)
def test_cli_answers_every_input_in_a_subprocess(text: bytes) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-"],
        input=text,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    check_cli(text, done.returncode, done.stdout, done.stderr, "json")


def test_the_mutations_reach_every_outcome() -> None:
    # the fuzzer is worth something only if its inputs reach valid and invalid answers
    seen: set[str] = set()

    @settings(max_examples=examples(300), deadline=None, database=None)
    @given(mutated_requests(python=True))
    def classify(request: Any) -> None:
        try:
            result = assembler.assemble(request)
        except InvalidRequest:
            seen.add("invalid")
            return
        seen.add(result.status.value)

    classify()
    assert {"invalid", Status.BUNDLE.value} <= seen
