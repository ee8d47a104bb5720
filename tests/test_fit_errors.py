"""Malformed message lists: one ``InvalidRequest`` naming the caller's index, never a
raw exception; refusals in the caller's words.

The cases the issue lists, then a seeded fuzzer of message lists: valid transcripts of
each format with one mutation each (a key removed, a value of the wrong type, an entry
dropped, moved or duplicated, a role changed, another provider's message put in).
Every mutant either fits (and its body keeps the provider's rules, which ``fit``
checks), is refused with ``InvalidRequest`` at a path of the caller's own list, or is
``FitRefused``; any other exception fails the test.
"""

from __future__ import annotations

import copy
import random
import re
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.adapters import FitRefused
from assembler.render import Utf8Bytes
from benchmarks.transcripts import anthropic_body, gemini_body, openai_transcript, responses_body

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
OPENAI_LIST = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "user", "content": "and?"},
]
CASES: list[tuple[str, Any, str, dict[str, Any], str]] = [
    ("openai-list-claude", OPENAI_LIST, "claude-sonnet-4-5", {}, "messages[1].tool_calls"),
    ("openai-list-gemini", OPENAI_LIST, "gemini-2.5-flash", {}, "messages[0].parts"),
    ("block-without-type", [{"role": "user", "content": [{"text": "x"}]}], "claude-sonnet-4-5",
     {}, "messages[0].content[0].type"),
    ("content-dict", [{"role": "user", "content": {"a": 1}}], "gpt-4o", {}, "messages[0].content"),
    ("tool-calls-string", [{"role": "user", "content": "hi"},
                           {"role": "assistant", "content": None, "tool_calls": "x"}],
     "gpt-4o", {}, "messages[1].tool_calls"),
    ("anthropic-assistant-first", [{"role": "assistant", "content": "x"},
                                   {"role": "user", "content": "y"}],
     "claude-sonnet-4-5", {}, "messages[0].role"),
    ("user-content-5", [{"role": "user", "content": 5}], "gpt-4o", {}, "messages[0].content"),
    ("call-without-function", [{"role": "user", "content": "hi"},
                               {"role": "assistant", "content": None,
                                "tool_calls": [{"id": "c1", "type": "function"}]},
                               {"role": "tool", "tool_call_id": "c1", "content": "r"}],
     "gpt-4o", {}, "messages[1].tool_calls[0].function"),
    ("empty-list", [], "gpt-4o", {}, "messages"),
    ("elide-above-negative", [{"role": "user", "content": "hi"}], "gpt-4o",
     {"elide_above": -1}, "elide_above"),
    ("responses-output-orphan", [{"role": "user", "content": "hi"},
                                 {"type": "function_call_output", "call_id": "x", "output": ""}],
     "gpt-4o", {}, "input[1].call_id"),
    ("tool-not-an-object", [{"role": "user", "content": "hi"}], "gpt-4o",
     {"tools": ["search"]}, "tools[0]"),
]  # fmt: skip


@pytest.mark.parametrize(("messages", "model", "options", "field"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])  # fmt: skip
def test_each_malformed_list_is_one_error_naming_the_index(
    messages: Any, model: str, options: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(messages, model=model, **options)
    assert caught.value.field == field
    assert "\n" not in str(caught.value)


def test_an_unknown_model_fits_as_openai_compatible_with_a_counter_and_a_window() -> None:
    fitted = assembler.fit(OPENAI_LIST, model="llama-3.1-8b", counter=Utf8Bytes(), budget=900)
    assert (fitted.format, fitted.provider) == ("openai-chat", "openai")
    assert fitted.counter == "utf8-bytes"
    assert fitted.messages == OPENAI_LIST and fitted.tokens <= 900
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(OPENAI_LIST, model="llama-3.1-8b")
    assert caught.value.field == "model" and "counter=" in str(caught.value)


def test_a_refusal_names_the_callers_indices_and_each_overhead() -> None:
    messages = [{"role": "system", "content": "rules " * 400}, {"role": "user", "content": "q"}]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with pytest.raises(FitRefused) as caught:
        assembler.fit(messages, tools=tools, model="gpt-4o", budget=100)
    text = str(caught.value)
    assert "messages[0]" in text and "tools[0]" in text
    assert not re.search(r"m\d{5}|tool\d{4}|mandatory closure", text)
    assert "budget 100 less 3 for the reply priming less 12 for the tool" in text
    claude = [{"role": "user", "content": "rules " * 400}]
    anthropic_tools = [{"name": "f", "input_schema": {"type": "object"}}]
    with pytest.raises(FitRefused) as caught:
        assembler.fit(claude, tools=anthropic_tools, model="claude-sonnet-4-5", budget=400)
    assert "less 346 for Anthropic's tool-use system prompt" in str(caught.value)


def _valid(fmt: str, rng: random.Random) -> tuple[str, Any]:
    seed = rng.randrange(10**6)
    if fmt == "openai-chat":
        return "gpt-4o", openai_transcript(seed, rounds=3)[0]
    if fmt == "openai-responses":
        return "gpt-4o", responses_body(seed, rounds=3)["input"]
    if fmt == "anthropic-messages":
        return "claude-sonnet-4-5", anthropic_body(seed, rounds=3)["messages"]
    return "gemini-2.5-flash", gemini_body(seed, rounds=3)["contents"]


_WRONG = [None, 5, "x", {"a": 1}, [], [5], True]
_FOREIGN = [
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "c1", "content": "r"},
    {"role": "model", "parts": [{"text": "x"}]},
    {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "x"}]},
]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for key, inner in value.items():
            out += _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            out += _paths(inner, (*path, index))
    return out


def _mutate(messages: list[Any], rng: random.Random) -> list[Any]:
    mutant = copy.deepcopy(messages)
    how = rng.randrange(6)
    if how == 0:  # an entry dropped
        del mutant[rng.randrange(len(mutant))]
    elif how == 1:  # an entry moved
        mutant.insert(rng.randrange(len(mutant)), mutant.pop(rng.randrange(len(mutant))))
    elif how == 2:  # an entry duplicated
        at = rng.randrange(len(mutant))
        mutant.insert(at, copy.deepcopy(mutant[at]))
    elif how == 3:  # another provider's message put in
        mutant.insert(rng.randrange(len(mutant) + 1), copy.deepcopy(rng.choice(_FOREIGN)))
    else:  # a key removed (4) or a value of the wrong type (5), anywhere inside
        path = rng.choice([p for p in _paths(mutant) if len(p) >= 2])
        parent: Any = mutant
        for step in path[:-1]:
            parent = parent[step]
        if how == 4 and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(_WRONG))
    return mutant


_FIELD = re.compile(r"^(messages|input|contents)(\[\d+\].*)?$|^tools\[\d+\]")


@pytest.mark.parametrize("fmt", ["openai-chat", "openai-responses", "anthropic-messages", "gemini"])
def test_fuzzed_lists_raise_nothing_but_named_errors(fmt: str) -> None:
    rng = random.Random(fmt)
    refused = 0
    for _ in range(60):
        model, valid = _valid(fmt, rng)
        mutant = _mutate(valid, rng)
        try:
            fitted = assembler.fit(mutant, model=model, budget=3000)
        except InvalidRequest as error:
            assert _FIELD.match(error.field or ""), error.field
            assert "\n" not in str(error)
            refused += 1
        except FitRefused:
            pass
        else:
            assert fitted.tokens <= 3000
    # most mutants are malformed: at least 50 across the formats, a dozen in each
    assert refused >= 12
