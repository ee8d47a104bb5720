"""Rendering: layout, formats, provider rules, manifest, API and CLI.

Every rendering made here goes through the render verifier (``conftest.solve`` or
``_rendered``), and every bundle through the bundle verifier.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import form, request, solve
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import RenderError
from assembler.providers.anthropic import check as check_anthropic
from assembler.providers.openai_chat.body import check_messages as check_openai

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "models" / "examples" / "agent-tool-call.json"
FORMATS = ("text", "openai-chat", "anthropic-messages", "openai-responses", "gemini")
CORPUS = sorted((ROOT / "corpus").glob("*.json"))


def _example() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return data


def _rendered(req: dict[str, Any], fmt: str, **kw: Any) -> assembler.Result:
    result = solve(req, render=fmt, **kw)
    assert result.rendering is not None
    return result


def _conversation() -> dict[str, Any]:
    req = request(1000, instruction="Be brief.", query="What now?")
    req["candidates"] = [
        form("sys", 10, 1.0, kind="system", channel="system"),
        form("ev-b", 10, 0.5),
        form("ev-a", 10, 0.5),
        form("mem", 10, 0.5, kind="memory"),
        form("u1", 10, 0.5, kind="user_turn", turn=1),
        form("call", 10, 0.5, kind="tool_call", tool_call_id="c1", tool_name="f", turn=2),
        form("res", 10, 0.5, kind="tool_result", tool_call_id="c1", turn=9),
        form("a3", 10, 0.5, kind="assistant_turn", turn=3),
    ]
    for c in req["candidates"]:
        c["content"] = '{"x": 1}' if c["id"] == "call" else f"content of {c['id']}"
    return req


# -- layout ---------------------------------------------------------------------------


def test_layout_is_stable_first_then_evidence_then_conversation_then_query() -> None:
    result = _rendered(_conversation(), "text", headers="provenance")
    assert result.rendering is not None
    ids = [item.id for item in result.rendering.manifest.items]
    assert ids == ["sys", "mem", "ev-a", "ev-b", "u1", "call", "res", "a3"]
    text = result.rendering.text
    assert text.startswith('<instruction>\nBe brief.\n</instruction>\n<item id="sys"')
    assert text.endswith("<query>\nWhat now?\n</query>\n")


def test_item_header_carries_id_form_hash_and_length() -> None:
    result = _rendered(_conversation(), "text", headers="provenance")
    assert result.rendering is not None
    item = next(i for i in result.rendering.manifest.items if i.id == "ev-a")
    data = result.rendering.data
    assert data[item.offset : item.offset + item.length] == b"content of ev-a"
    line = data[: item.offset].rsplit(b"\n", 2)[-2].decode()
    assert line == (
        f'<item id="ev-a" kind="evidence" form="full" sha256="{item.content_sha256}" bytes=15>'
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_any_permutation_of_the_candidates_gives_the_same_manifest(fmt: str) -> None:
    req = _example()
    first = _rendered(req, fmt).rendering
    shuffled = copy.deepcopy(req)
    random.Random(7).shuffle(shuffled["candidates"])
    again = _rendered(shuffled, fmt).rendering
    assert first is not None and again is not None
    assert again.manifest == first.manifest
    assert again.text == first.text and again.body == first.body


def test_adding_volatile_material_keeps_the_leading_bytes() -> None:
    req = _conversation()
    before = _rendered(req, "anthropic-messages").rendering
    req["candidates"].append(form("u9", 10, 0.5, kind="user_turn", turn=9, content="later"))
    after = _rendered(req, "anthropic-messages").rendering
    assert before is not None and after is not None
    cut = before.text.index("<query>")
    assert after.text[:cut] == before.text[:cut]


# -- formats and provider rules --------------------------------------------------------


def test_openai_chat_messages() -> None:
    result = _rendered(_conversation(), "openai-chat")
    assert result.rendering is not None
    messages = result.rendering.body["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "user", "assistant", "tool", "assistant", "user"]
    call = messages[3]
    assert call["tool_calls"][0]["function"] == {"name": "f", "arguments": '{"x": 1}'}
    assert messages[4]["tool_call_id"] == "c1" == call["tool_calls"][0]["id"]
    assert "".join(m["content"] or "" for m in messages) != result.rendering.text  # arguments
    # conversation turns are what was said: no header, no closing line, in any framing
    for headers in ("none", "minimal", "provenance"):
        framed = _rendered(_conversation(), "openai-chat", headers=headers).rendering
        assert framed is not None
        turns = [m for m in framed.body["messages"] if m["role"] in ("tool", "assistant")]
        assert [m["content"] for m in turns] == [None, "content of res", "content of a3"]


def test_the_default_framing_is_the_leanest_and_the_manifest_stays_exact() -> None:
    req = _conversation()
    lean = _rendered(req, "anthropic-messages")
    assert lean.rendering is not None and lean.rendering.manifest.headers == "none"
    assert lean.rendering.manifest.render_version == 3
    framed = _rendered(req, "anthropic-messages", headers="provenance")
    assert framed.rendering is not None
    assert len(lean.rendering.data) < len(framed.rendering.data) // 2
    assert assembler.verify_rendering(req, lean, lean.rendering) == []
    assert assembler.verify_rendering(req, framed, framed.rendering) == []


def test_anthropic_messages_alternate_with_results_in_user_turns_and_breakpoints() -> None:
    result = _rendered(_conversation(), "anthropic-messages")
    assert result.rendering is not None
    body = result.rendering.body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    results = body["messages"][2]["content"]
    assert results[0]["type"] == "tool_result" and results[0]["tool_use_id"] == "c1"
    use = body["messages"][1]["content"][-1]
    assert use == {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}}
    marks = [b for b in body["system"] if "cache_control" in b]
    marks += [b for m in body["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marks) == 3 == len(result.rendering.manifest.breakpoints)


def test_every_format_renders_the_same_text() -> None:
    texts = {_rendered(_example(), fmt).rendering.text for fmt in FORMATS}  # type: ignore[union-attr]
    assert len(texts) == 1


@pytest.mark.parametrize(
    ("body", "rule"),
    [
        ([{"role": "tool", "tool_call_id": "x", "content": "r"}], "no-leading-tool"),
        ([{"role": "user", "content": "a"}, {"role": "system", "content": "s"}], "system-first"),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "tool", "tool_call_id": "x", "content": "r"},
            ],
            "tool-result-after-call",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "h", "tool_calls": [{"id": "x"}]},
                {"role": "user", "content": "b"},
            ],
            "tool-call-answered",
        ),
    ],
)
def test_openai_rules_are_structured_errors(body: list[dict[str, Any]], rule: str) -> None:
    with pytest.raises(RenderError) as caught:
        check_openai(body)
    assert caught.value.code == "RENDER_PROVIDER_RULE" and caught.value.rule == rule


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


@pytest.mark.parametrize(
    ("messages", "rule"),
    [
        ([], "messages-non-empty"),
        ([{"role": "assistant", "content": [_text("a")]}], "first-message-user"),
        (
            [{"role": "user", "content": [_text("a")]}, {"role": "user", "content": [_text("b")]}],
            "roles-alternate",
        ),
        (
            [
                {"role": "user", "content": [_text("a")]},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "x", "name": "f", "input": {}}],
                },
                {"role": "user", "content": [_text("b")]},
            ],
            "tool-result-after-call",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{**_text(str(i)), "cache_control": {}} for i in range(5)],
                }
            ],
            "cache-breakpoints",
        ),
    ],
)
def test_anthropic_rules_are_structured_errors(messages: list[dict[str, Any]], rule: str) -> None:
    with pytest.raises(RenderError) as caught:
        check_anthropic({"system": [], "messages": messages})
    assert caught.value.rule == rule


def test_a_conversation_opening_with_an_assistant_turn_is_refused_for_anthropic() -> None:
    req = request(100)
    req["candidates"] = [form("a", 10, 0.5, kind="assistant_turn", content="hello")]
    with pytest.raises(RenderError) as caught:
        assembler.render_bundle(req, assembler.assemble(req), format="anthropic-messages")
    assert caught.value.rule == "first-message-user"
    assert _rendered(req, "openai-chat").rendering is not None
    # assembled for Anthropic, no bundle it can send exists: refused, naming the rules
    refused = solve(req, render="anthropic-messages")
    assert refused.refusal is not None and refused.refusal.code.value == "UNSENDABLE"
    assert refused.refusal.rules == ("messages-non-empty", "first-message-user")


def test_tool_call_arguments_must_be_a_json_object() -> None:
    req = _conversation()
    next(c for c in req["candidates"] if c["id"] == "call")["content"] = "not json"
    with pytest.raises(RenderError) as caught:
        assembler.render_bundle(req, assembler.assemble(req), format="openai-chat")
    assert caught.value.rule == "tool-call-arguments" and caught.value.items == ("call",)
    assert set(_rendered(req, "text").selected) >= {"call", "res"}
    # assembled for Chat, the best bundle without the call (nor its result) is sent
    assert not {"call", "res"} & set(_rendered(req, "openai-chat").selected)


# -- tool call coupling in every strategy ------------------------------------------------


@pytest.mark.parametrize("strategy", ["exact", "enumerate", "greedy"])
def test_a_tool_result_never_travels_without_its_call(strategy: str) -> None:
    req = request(25)
    req["candidates"] = [
        form("call", 20, 0.0, kind="tool_call", tool_call_id="c", tool_name="f", content="{}"),
        form("res", 5, 0.9, kind="tool_result", tool_call_id="c", content="r"),
        form("other", 5, 0.2, content="o"),
    ]
    result = solve(req, strategy=strategy)
    assert {"call", "res"} <= set(result.selected) or not {"call", "res"} & set(result.selected)
    req["task"]["seal"] = ["call"]
    sealed = solve(req, strategy=strategy)
    assert sealed.decision("res").reason.value == "group-ineligible"


# -- nothing unrenderable ---------------------------------------------------------------


def test_a_selected_form_without_content_fails_with_no_output() -> None:
    req = request(100)
    req["candidates"] = [form("a", 10, 0.5, content="x"), form("b", 10, 0.5)]
    result = solve(req)
    with pytest.raises(RenderError) as caught:
        assembler.render_bundle(req, result, format="openai-chat")
    assert caught.value.code == "RENDER_MISSING_CONTENT" and caught.value.items == ("b",)


def test_contentless_forms_are_gated_when_rendering_and_required_ones_refused() -> None:
    req = request(100)
    req["candidates"] = [form("a", 10, 0.5, content="x"), form("b", 10, 0.5)]
    result = _rendered(req, "text")
    assert result.selected == ("a",) and result.decision("b").reason.value == "no-content"
    req["task"]["required"] = ["b"]
    refused = solve(req, render="text")
    assert refused.refusal is not None and refused.refusal.code.value == "REQUIRED_INELIGIBLE"
    assert refused.rendering is None


def test_only_a_bundle_of_this_request_renders() -> None:
    req = _example()
    result = solve(req)
    other = copy.deepcopy(req)
    other["candidates"][0]["content"] += "!"
    with pytest.raises(RenderError) as caught:
        assembler.render_bundle(other, result)
    assert caught.value.code == "RENDER_RESULT_MISMATCH"


# -- identities -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_rewriting_one_payload_changes_every_hash_and_names_that_item(fmt: str) -> None:
    req = _example()
    before = _rendered(req, fmt)
    rewritten = copy.deepcopy(req)
    target = next(c for c in rewritten["candidates"] if c["id"] == "memory-customer-tier")
    target["content"] = "Customer C-88 is on the Basic tier."
    after = _rendered(rewritten, fmt)
    assert before.rendering is not None and after.rendering is not None
    assert after.selected == before.selected
    assert after.package_id != before.package_id
    m0, m1 = before.rendering.manifest, after.rendering.manifest
    assert m1.rendered_sha256 != m0.rendered_sha256
    assert m1.request_body_sha256 != m0.request_body_sha256
    assert m1.changed_items(m0) == ("memory-customer-tier",)


def test_rendering_stays_out_of_the_package_and_trace_ids() -> None:
    req = _example()
    plain = solve(req)
    rendered = _rendered(req, "text")
    # the example has a contentless form, gated only when rendering: trace differs
    assert rendered.decision("ticket-note").reason.value == "no-content"
    req["candidates"] = [c for c in req["candidates"] if "content" in c]
    assert solve(req).package_id == _rendered(req, "anthropic-messages").package_id
    assert solve(req).trace_id == _rendered(req, "openai-chat").trace_id
    assert plain.package_id != rendered.package_id


# -- the corpus and the examples render ---------------------------------------------------


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_case_renders(path: Path) -> None:
    req = json.loads(path.read_text(encoding="utf-8"))["request"]
    for fmt in FORMATS:
        result = solve(req, render=fmt)
        assert (result.rendering is None) == (result.status.value != "bundle")


_NOTHING_BUT_SYSTEM = {"messages-non-empty", "input-non-empty", "contents-non-empty"}


@settings(max_examples=examples(25), deadline=None)
@given(st.data())
def test_generated_requests_render_faithfully(data: st.DataObject) -> None:
    from drawn import requests as generated

    req = data.draw(generated())
    for c in req["candidates"]:
        c.setdefault("content", f"payload {c['id']}")
    if data.draw(st.booleans()):
        req["task"]["query"] = "What matters for this task?"
    fmt = data.draw(st.sampled_from(FORMATS))
    try:
        solve(req, render=fmt)
    except RenderError as error:
        # What an honest bundle can meet: nothing at all to send (every format), or,
        # for a provider body, system material only with no query (no message, input
        # item or content: each format's name for it).
        assert "query" not in req["task"], error
        assert error.code == "RENDER_EMPTY" or error.rule in _NOTHING_BUT_SYSTEM, error
        plain = assembler.assemble(req)
        kinds = {assembler.parse_request(req).candidate(f).kind for f in plain.selected}
        assert kinds <= {"system", "developer", "tool_definition", "memory"}, (error, kinds)


# -- the command line ---------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assembler", "compile", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )


@pytest.mark.integration
@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_renders_the_example(fmt: str) -> None:
    out = _cli(str(EXAMPLE), "--render", fmt)
    assert out.returncode == 0, out.stderr
    rendering = _rendered(_example(), fmt).rendering
    assert rendering is not None
    if fmt == "text":
        assert out.stdout == rendering.text
    else:
        assert json.loads(out.stdout) == rendering.body
    manifest = _cli(str(EXAMPLE), "--render", fmt, "--manifest")
    assert json.loads(manifest.stdout) == rendering.manifest.to_dict()


def test_cli_manifest_needs_render() -> None:
    out = _cli(str(EXAMPLE), "--manifest")
    assert out.returncode == 2 and "--render" in out.stderr
