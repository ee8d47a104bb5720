"""Never a silently wrong body: each list's format is recognised from its shape, on
every pair of the four formats.

For each transcript format (a list with tool calls, results, thinking or reasoning) and
each model's API: a list of another provider's shape is one ``InvalidRequest`` naming
the entry and what it looks like; the same list with ``source=`` is converted, fitted,
and comes back as a body the model's API accepts (its room's rules) with every call
answered; tools of another shape and a body's other fields or model are named too.
"""

from __future__ import annotations

from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.providers import registry
from benchmarks.transcripts import (
    anthropic_body,
    gemini_body,
    openai_tools,
    openai_transcript,
    responses_body,
)

pytestmark = pytest.mark.unit

MODELS = {
    "openai-chat": "gpt-4o",
    "openai-responses": "o3",
    "anthropic-messages": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
}
PROVIDER = {"openai-chat": "openai", "openai-responses": "openai",
            "anthropic-messages": "anthropic", "gemini": "gemini"}  # fmt: skip


def _list(fmt: str) -> tuple[list[Any], list[Any], Any]:
    """A transcript of ``fmt``: its list, its tools, its system prompt."""
    if fmt == "openai-chat":
        messages, tools = openai_transcript(3, rounds=3)
        return messages, tools, None
    body = {"openai-responses": responses_body, "anthropic-messages": anthropic_body,
            "gemini": gemini_body}[fmt](3, rounds=3)  # fmt: skip
    key = {"openai-responses": "input", "anthropic-messages": "messages", "gemini": "contents"}
    system = body.get("system", body.get("systemInstruction"))
    return body[key[fmt]], body.get("tools", []), system


PAIRS = [(a, b) for a in MODELS for b in MODELS if a != b]


@pytest.mark.parametrize(("given", "wanted"), PAIRS)
def test_a_list_of_another_providers_shape_is_named_never_fitted(given: str, wanted: str) -> None:
    messages, _tools, _system = _list(given)
    model = MODELS[wanted]
    if PROVIDER[given] == PROVIDER[wanted]:
        # the model's provider takes both of its APIs: the list's own comes back
        fitted = assembler.fit(messages, model=model, budget=6000)
        assert fitted.format == given
        return
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit(messages, model=model, budget=6000)
    error = caught.value
    assert error.field.startswith(("messages[", "input[", "contents["))
    assert "this is " in error.reason and f"source={given!r}" in error.reason


@pytest.mark.parametrize(("given", "wanted"), PAIRS)
def test_source_converts_a_list_into_the_models_format(given: str, wanted: str) -> None:
    messages, tools, system = _list(given)
    fitted = assembler.fit(
        messages, model=MODELS[wanted], tools=tools, system=system, budget=2500,
        source=given, format=wanted,
    )  # fmt: skip
    assert fitted.format == wanted and fitted.converted_from == given
    body = fitted.body()
    registry.named(wanted).check(body, system_first=False)  # the provider's rules
    assert fitted.tokens <= 2500
    text = repr(body)
    for foreign in ("tool_use", "tool_calls", "functionCall", "function_call_output"):
        mine = {"anthropic-messages": "tool_use", "openai-chat": "tool_calls",
                "gemini": "functionCall", "openai-responses": "function_call_output"}  # fmt: skip
        if foreign != mine[wanted] and foreign in text:
            # only a tool result's text may mention another format's word
            assert f"'{foreign}'" not in text


@pytest.mark.parametrize("wanted", list(MODELS))
def test_tools_of_another_shape_are_named(wanted: str) -> None:
    hi = ({"role": "user", "parts": [{"text": "hi"}]} if wanted == "gemini"
          else {"role": "user", "content": "hi"})  # fmt: skip
    shapes = {
        "openai-chat": openai_tools()[0],
        "openai-responses": {"type": "function", "name": "f", "parameters": {}},
        "anthropic-messages": {"name": "f", "input_schema": {"type": "object"}},
        "gemini": {"functionDeclarations": [{"name": "f"}]},
    }
    for shape, tool in shapes.items():
        if PROVIDER[shape] == PROVIDER[wanted] and shape != wanted and wanted != "gemini":
            continue
        if shape == wanted:
            assembler.fit([hi], model=MODELS[wanted], tools=[tool], format=wanted)
            continue
        with pytest.raises(InvalidRequest) as caught:
            assembler.fit([hi], model=MODELS[wanted], tools=[tool], format=wanted)
        assert caught.value.field == "tools[0]" and "tool" in caught.value.reason
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit([hi], model=MODELS[wanted], tools=[{"foo": 1}], format=wanted)
    assert caught.value.field.startswith("tools[0]")


def test_a_bodys_model_and_fields_are_its_own() -> None:
    chat = [{"role": "user", "content": "hi"}]
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit({"model": "claude-sonnet-4-5", "messages": chat}, model="gpt-4o")
    assert caught.value.field == "model"
    # the body's own model is enough, and the same model by another name is the same
    assert assembler.fit({"model": "gpt-4o", "messages": chat}).format == "openai-chat"
    assembler.fit({"model": "gpt-4o-2024-08-06", "messages": chat}, model="gpt-4o")
    for field, value in (("generationConfig", {}), ("instructions", "x"), ("stop_sequences", [])):
        with pytest.raises(InvalidRequest) as caught:
            assembler.fit({"messages": chat, field: value}, model="gpt-4o")
        assert caught.value.field == field
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, model="gpt-4o")
    assert caught.value.field.startswith("contents")


def test_a_responses_list_for_o3_comes_back_as_a_responses_body() -> None:
    items = [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    fitted = assembler.fit(items, model="o3")
    assert fitted.format == "openai-responses" and fitted.body() == {"input": items}
    with pytest.raises(InvalidRequest):
        assembler.fit(items, model="o3", format="openai-chat")
