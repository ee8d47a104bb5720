"""The findings of issue 44 on ``fit``, each a test that fails on the code before it.

A newcomer's and an adversarial tester's findings, in the issue's order; where a whole
module tests one (the cross-format pairs, model names, forms, order, counting, the
command and the route, the frameworks), the test here is its smallest repro and the
module is named."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler import InvalidRequest
from assembler.model.errors import InternalError
from assembler.render import Utf8Bytes

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
CHAT = [{"role": "user", "content": "hi"}]
ANTHROPIC = [
    {"role": "user", "content": "Where is order 4471?"},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Look it up.", "signature": "EqQB"},
        {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"order": "4471"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    {"role": "user", "content": "And?"},
]  # fmt: skip
GEMINI_HI = {"role": "user", "parts": [{"text": "hi"}]}


def _field(call: Any) -> str:
    with pytest.raises(InvalidRequest) as caught:
        call()
    assert "\n" not in str(caught.value)
    return caught.value.field


# -- never a silently wrong body (and tests/test_fit_formats.py: every pair) -----------


def test_an_anthropic_list_for_gpt_4o_is_named_not_fitted() -> None:
    assert _field(lambda: assembler.fit(ANTHROPIC, model="gpt-4o", budget=3000)) == (
        "messages[1].content[0]"
    )


def test_an_anthropic_list_for_an_unknown_model_stays_anthropic() -> None:
    fitted = assembler.fit(ANTHROPIC, model="my-model", counter=Utf8Bytes(), window=3000)
    assert fitted.format == "anthropic-messages" and "messages" in fitted.body()


def test_tools_of_another_shape_and_nonsense_tools_are_refused() -> None:
    anthropic_tool = {"name": "f", "input_schema": {"type": "object"}}
    chat_tool = {"type": "function", "function": {"name": "f"}}
    assert _field(lambda: assembler.fit(CHAT, model="gpt-4o", tools=[anthropic_tool])) == "tools[0]"
    assert (
        _field(lambda: assembler.fit([GEMINI_HI], model="gemini-2.5-pro", tools=[chat_tool]))
        == "tools[0]"
    )
    for model in ("gpt-4o", "claude-sonnet-4-5", "o3"):
        assert _field(lambda m=model: assembler.fit(CHAT, model=m, tools=[{"foo": 1}])).startswith(
            "tools[0]"
        )
    assert (
        _field(lambda: assembler.fit([GEMINI_HI], model="gemini-2.5-pro", tools=[{"foo": 1}]))
        == "tools[0]"
    )


def test_a_bodys_model_for_another_model_is_refused() -> None:
    body = {"model": "claude-sonnet-4-5", "messages": CHAT}
    assert _field(lambda: assembler.fit(body, model="gpt-4o")) == "model"


def test_a_responses_list_for_o3_is_a_responses_body() -> None:
    items = [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert assembler.fit(items, model="o3").body() == {"input": items}


# -- every legal list accepted ----------------------------------------------------------


def test_gemini_parallel_calls_of_one_function_without_ids_pair_by_position() -> None:
    calls = [{"functionCall": {"name": "f", "args": {"n": n}}} for n in (1, 2)]
    answers = [{"functionResponse": {"name": "f", "response": {"output": n}}} for n in (1, 2)]
    body = {"contents": [GEMINI_HI, {"role": "model", "parts": calls},
                         {"role": "user", "parts": answers}]}  # fmt: skip
    assert assembler.fit(body, model="gemini-2.5-pro").messages == body["contents"]


def test_a_responses_body_whose_input_is_a_string() -> None:
    fitted = assembler.fit({"input": "hello", "model": "o3"})
    assert fitted.body()["input"] == [{"role": "user", "content": "hello"}]


def test_a_parallel_batch_stays_one_group_across_repeated_fits() -> None:
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
             for n in (1, 2)]  # fmt: skip
    history: list[dict[str, Any]] = [{"role": "user", "content": "Task: check both."}]
    for turn in range(8):
        batch = [{**c, "id": f"{c['id']}-{turn}"} for c in calls]
        history += [{"role": "assistant", "content": None, "tool_calls": batch}]
        history += [
            {"role": "tool", "tool_call_id": c["id"], "content": "row " * 80} for c in batch
        ]
        history += [{"role": "assistant", "content": "noted"}, {"role": "user", "content": "next"}]
        fitted = assembler.fit(history, model="gpt-4o", budget=600)
        kept = {m["tool_call_id"] for m in fitted.messages if m["role"] == "tool"}
        called = {c["id"] for m in fitted.messages for c in m.get("tool_calls") or []}
        assert kept == called  # both calls of a batch and both results, or none


# -- model names, the window (and tests/test_fit_models.py) ----------------------------


def test_the_window_reserves_the_output_the_body_asks_for() -> None:
    body = {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": CHAT}
    assert assembler.fit(body, budget=190_000).budget == 190_000
    with pytest.raises(InvalidRequest) as caught:
        assembler.fit({**body, "max_tokens": 64_000}, budget=190_000)
    assert "max_tokens" in str(caught.value) and "output_tokens" in str(caught.value)
    assert assembler.fit(body, budget=190_000, output_tokens=2000).budget == 190_000


# -- shapes the provider refuses, inputs that escaped raw -------------------------------


@pytest.mark.parametrize(
    ("messages", "model", "field"),
    [
        ([{"role": "user", "content": [{"type": "text", "text": 5}]}], "gpt-4o",
         "messages[0].content[0].text"),
        ([{"role": "user", "content": [{"type": "text", "text": math.nan}]}], "gpt-4o",
         "messages[0].content[0].text"),
        ({"instructions": 5, "input": CHAT}, "o3", "instructions"),
        ({"text": 5, "input": CHAT}, "o3", "text"),
        ({"contents": [GEMINI_HI, {"role": "model", "parts": [{"text": "a",
                                                               "thoughtSignature": 5}]},
                       GEMINI_HI]}, "gemini-2.5-pro", "contents[1].parts[0].thoughtSignature"),
        ([{"role": "user", "content": "x", "extra": {1, 2}}], "gpt-4o", "messages[0].extra"),
        ([{"role": "user", "content": b"x"}], "gpt-4o", "messages[0].content"),
        ([{"role": "user", "content": "x", 1: 2}], "gpt-4o", "messages[0]"),
    ],
)  # fmt: skip
def test_a_wrong_value_is_one_error_naming_its_path(messages: Any, model: str, field: str) -> None:
    assert _field(lambda: assembler.fit(messages, model=model)) == field


def test_nesting_past_a_thousand_levels_is_an_input_error() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(3000):
        inner["a"] = {}
        inner = inner["a"]
    field = _field(
        lambda: assembler.fit([{"role": "user", "content": "x", "x": deep}], model="gpt-4o")
    )
    assert field.startswith("messages[0].x.a") and len(field) < 80


def test_a_gemini_instruction_given_as_a_list_of_parts() -> None:
    body = {"systemInstruction": [{"text": "Be brief."}], "contents": [GEMINI_HI]}
    fitted = assembler.fit(body, model="gemini-2.5-pro")
    assert fitted.body()["systemInstruction"] == [{"text": "Be brief."}] and fitted.tokens > 3


def test_a_tool_result_kept_whole_is_sent_as_given() -> None:
    # a result's own value (a number, image blocks) is never rewritten as its text
    image = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    blocks = [{"type": "text", "text": "see"}, image]
    listed = [ANTHROPIC[0], ANTHROPIC[1], {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": blocks}]}]  # fmt: skip
    fitted = assembler.fit(listed, model="claude-sonnet-4-5")
    assert fitted.messages[2]["content"][0]["content"] == blocks


def test_a_bug_inside_fit_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from assembler.adapters import fitting

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(fitting, "request_of", broken)
    with pytest.raises(InternalError) as caught:
        assembler.fit(CHAT, model="gpt-4o")
    assert caught.value.stage == "fit"


def test_an_exception_in_the_relevance_callback_names_the_callback() -> None:
    chat = [*CHAT, {"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]
    assert (
        _field(lambda: assembler.fit(chat, model="gpt-4o", relevance=lambda i, m: 1 / 0))
        == "relevance"
    )


def test_the_repr_of_a_fit_is_one_short_line() -> None:
    fitted = assembler.fit([{"role": "user", "content": "x" * 100_000}], model="gpt-4o")
    assert len(repr(fitted)) < 300 and "\n" not in repr(fitted)


# -- install as documented ----------------------------------------------------------------


def test_the_readme_installs_from_what_exists() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") :]
    install = install[: install.index("\n## ", 3)]
    assert "pip install assembler\n" not in install and "pip install assembler " not in install
    assert "git+https://" in install and "git clone" in install
