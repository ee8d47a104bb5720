"""Errors a newcomer can act on (``model/lookalikes.py``, ``model/rules.unknown_field``).

Checks that a misspelt field is answered with the field meant, in a request, its task,
a candidate, the cache section and a session's delta; that an empty file and a YAML
file are named as such; and that a result, a message list, a provider body, a delta
or a corpus case given where a request is expected (and a request given as a result,
a delta or a server message) is named for what it is, through the API and the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import form, request

import assembler
from assembler.cli import main
from assembler.explain.load import InvalidResult, result_from_dict
from assembler.model.lookalikes import not_a_request, not_json
from assembler.model.rules import closest
from assembler.serve.messages import call_from_message

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "models" / "examples" / "review-migration.json"


def _error(data: Any) -> str:
    with pytest.raises(assembler.InvalidRequest) as caught:
        assembler.parse_request(data)
    message = str(caught.value)
    assert "\n" not in message and "models/README.md" not in message
    return message


@pytest.mark.parametrize(
    ("where", "typo", "meant"),
    [
        ("candidate", "relevence", "relevance"),
        ("candidate", "Scope", "scope"),
        ("candidate", "dependson", "depends_on"),
        ("task", "bugdet", "budget"),
        ("top", "candidate", "candidates"),
        ("top", "polcy", "policy"),
    ],
)
def test_a_misspelt_field_is_answered_with_the_field_meant(
    where: str, typo: str, meant: str
) -> None:
    data = request(budget=10)
    data["candidates"] = [form("a", 3)]
    {"candidate": data["candidates"][0], "task": data["task"], "top": data}[where][typo] = 1
    message = _error(data)
    assert f"did you mean '{meant}'?" in message and "assembler schema request" in message


def test_a_field_like_no_other_gets_no_guess() -> None:
    data = request(budget=10)
    data["candidates"] = [form("a", 3, colour="blue")]
    message = _error(data)
    assert "unknown field" in message and "did you mean" not in message


def test_the_cache_section_and_a_delta_guess_too() -> None:
    data = request(budget=10)
    data["cache"] = {"provider": "anthropic", "modle": "claude"}
    assert "did you mean 'model'?" in _error(data)
    session = assembler.Session(request(budget=10))
    with pytest.raises(assembler.InvalidRequest) as caught:
        session.apply({"ad": []})
    assert "did you mean 'add'?" in str(caught.value)
    with pytest.raises(assembler.InvalidRequest) as caught:
        session.apply({"task": {"budjet": 5}})
    assert "did you mean 'budget'?" in str(caught.value)
    assert "assembler schema delta" in str(caught.value)


def test_closest_is_none_for_what_is_not_a_name() -> None:
    assert closest(3, ("a",)) is None and closest("x" * 100, ("x" * 99,)) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "empty"),
        ("\n \t\n", "empty"),
        ("\ufeff", "empty"),
        ("task:\n  id: t\n  budget: 10\n", "looks like YAML"),
        ("---\ntask: {}\n", "looks like YAML"),
        ("- id: a\n  cost: 3\n", "looks like YAML"),
        ("{'task': 1}", None),
    ],
)
def test_empty_and_yaml_text_are_named(text: str, said: str | None) -> None:
    assert (not_json(text) or "").find(said or "\0") >= 0 if said else not_json(text) is None
    if said:
        with pytest.raises(assembler.InvalidRequest) as caught:
            assembler.request_from_json(text)
        assert said in str(caught.value)


def test_documents_given_where_a_request_is_expected_are_named() -> None:
    result = assembler.assemble(json.loads(EXAMPLE.read_text())).to_dict()
    assert "this is a result" in _error(result)
    assert "provider's message list" in _error([{"role": "user", "content": "hi"}])
    assert "provider body" in _error({"model": "gpt-4o", "messages": []})
    # every provider's body (issue 44: Gemini and Responses bodies were told of an
    # unknown field), and what fits one: the command, the route, the function
    for body in ({"contents": [], "systemInstruction": {"parts": []}}, {"input": "hi"},
                 {"instructions": "x", "input": []}):  # fmt: skip
        said = _error(body)
        assert "provider body" in said and "assembler fit" in said and "POST /fit" in said
    assert "provider's message list" in _error([{"type": "function_call_output"}])
    assert "session delta" in _error({"add": [], "remove": ["a"]})
    case = json.loads(next((ROOT / "corpus").glob("*.json")).read_text())
    assert "corpus case" in _error(case)
    # anything else keeps its ordinary, located error
    assert not_a_request({"candidates": []}) is None
    assert "must be a JSON object" in _error([1, 2])


def test_a_request_given_as_a_result_a_delta_or_a_message_is_named() -> None:
    data = json.loads(EXAMPLE.read_text())
    with pytest.raises(InvalidResult, match="this is a request, not a result"):
        result_from_dict(data)
    session = assembler.Session(data)
    with pytest.raises(assembler.InvalidRequest, match="whole request, not a delta"):
        session.apply(data)
    with pytest.raises(assembler.InvalidRequest, match="bare request, not a message"):
        call_from_message(data, assembler.Limits(), 10.0)


def test_the_command_line_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty, yaml, result = tmp_path / "e.json", tmp_path / "r.yaml", tmp_path / "result.json"
    empty.write_text("")
    yaml.write_text("task:\n  id: t\n")
    assert main(["compile", str(EXAMPLE)]) == 0
    result.write_text(capsys.readouterr().out)
    for path, said in ((empty, "empty"), (yaml, "YAML"), (result, "this is a result")):
        assert main(["compile", str(path)]) == 2
        assert said in capsys.readouterr().err
    assert main(["explain", str(EXAMPLE), "--request", str(EXAMPLE)]) == 2
    assert "is a request: give it alone (it is compiled first)" in capsys.readouterr().err
