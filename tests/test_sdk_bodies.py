"""Provider bodies through the official SDK clients: the renderer's bodies and fit's.

The SDK builds and sends each request over an in-process transport (``sdk_clients``);
the bytes it would put on the wire must carry exactly the body the manifest hashes
(renderer) or that ``fit`` returned (adapters), and be a request the provider takes:
no orphaned tool message, thinking blocks untouched, within the budget as billed.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from sdk_clients import Wire, gemini_wire, send_anthropic, send_gemini, send_openai, send_responses

import assembler
from assembler.providers import anthropic, gemini, openai_chat, openai_responses
from assembler.render.meters import meter_for
from assembler.stages.identities import canonical_json
from benchmarks.transcripts import anthropic_body, gemini_body, openai_transcript, responses_body

EXAMPLES = Path(__file__).resolve().parents[1] / "models" / "examples"
RENDERED = ("agent-tool-call", "review-migration", "tool-results", "shared-resolver")


def _sha(value: Any) -> str:
    import hashlib

    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name", RENDERED)
@pytest.mark.parametrize("fmt", ["openai-chat", "anthropic-messages"])
def test_rendered_body_goes_on_the_wire_as_the_manifest_hashes_it(name: str, fmt: str) -> None:
    request = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    for c in request["candidates"]:
        c.setdefault("content", f"payload of {c['id']}")
    result = assembler.assemble(request, render=fmt)
    assert result.rendering is not None
    body = result.rendering.body
    wire = Wire()
    (send_openai if fmt == "openai-chat" else send_anthropic)(body, wire)
    (sent,) = wire.sent
    on_wire = {key: sent[key] for key in body}
    assert on_wire == body
    assert _sha(on_wire) == result.rendering.manifest.request_body_sha256
    assert assembler.verify_rendering(request, result, result.rendering) == []
    if any(c.get("kind") == "tool_definition" for c in request["candidates"]):
        assert "tools" in sent and all(
            "tool_definition" not in json.dumps(m) for m in sent["messages"]
        )


@pytest.mark.parametrize("name", RENDERED)
@pytest.mark.parametrize("headers", ["provenance", "minimal", "none"])
def test_responses_and_gemini_bodies_go_on_the_wire_as_hashed(name: str, headers: str) -> None:
    request = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    for c in request["candidates"]:
        c.setdefault("content", f"payload of {c['id']}")
    for fmt in ("openai-responses", "gemini"):
        result = assembler.assemble(request, render=fmt, headers=headers)
        assert result.rendering is not None
        body = result.rendering.body
        wire = Wire()
        if fmt == "gemini":
            send_gemini(body, wire)
            on_wire = gemini_wire(wire.sent[0])
        else:
            send_responses(body, wire)
            on_wire = {key: wire.sent[0][key] for key in body}
        assert on_wire == body
        assert _sha(on_wire) == result.rendering.manifest.request_body_sha256
        assert assembler.verify_rendering(request, result, result.rendering) == []


def _tool_messages_answered(messages: list[dict[str, Any]]) -> bool:
    """Every tool message directly after the assistant call (or its siblings) it answers."""
    open_calls: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            if m["tool_call_id"] not in open_calls:
                return False
            open_calls.discard(m["tool_call_id"])
            continue
        if open_calls:
            return False
        open_calls = {c["id"] for c in m.get("tool_calls") or []}
    return not open_calls


@pytest.mark.parametrize("seed", range(10))
def test_fit_openai_transcripts_are_sent_as_returned(seed: int) -> None:
    messages, tools = openai_transcript(seed)
    meter = meter_for("gpt-4o")
    budget = openai_chat.tokens(meter, {"messages": messages, "tools": tools}) * 2 // 5
    given = copy.deepcopy(messages)
    fitted = assembler.fit(messages, tools=tools, model="gpt-4o", budget=budget)
    assert messages == given  # the caller's list is not touched
    wire = Wire()
    send_openai(fitted.body(), wire)
    (sent,) = wire.sent
    assert sent["messages"] == fitted.messages and sent["tools"] == tools
    assert _tool_messages_answered(sent["messages"])
    assert fitted.tokens == openai_chat.tokens(meter, sent) <= budget
    assert assembler.verify(fitted.request, fitted.result) == []
    # every message sent is one given, a tool result perhaps shortened
    for m in sent["messages"]:
        assert m in given or (
            (m["role"] == "tool" and "elided" in m["content"]) or "cleared" in m["content"]
        )


def _thinking_untouched(given: list[dict[str, Any]], sent: list[dict[str, Any]]) -> bool:
    turns = [m for m in given if m["role"] == "assistant"]
    for m in sent:
        thinks = m["role"] == "assistant" and any(b.get("type") == "thinking" for b in m["content"])
        if thinks and m not in turns:
            return False
    return True


@pytest.mark.parametrize("seed", range(10))
def test_fit_anthropic_bodies_keep_thinking_whole_and_alternate(seed: int) -> None:
    body = anthropic_body(seed)
    meter = meter_for("claude-sonnet-4-5")
    budget = anthropic.tokens(meter, body) * 2 // 5
    fitted = assembler.fit(body, model="claude-sonnet-4-5", budget=budget)
    wire = Wire()
    send_anthropic(fitted.body(), wire)
    (sent,) = wire.sent
    assert sent["messages"] == fitted.messages and sent["system"] == body["system"]
    assert sent["tools"] == body["tools"]
    assert _thinking_untouched(body["messages"], sent["messages"])
    roles = [m["role"] for m in sent["messages"]]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    assert fitted.tokens == anthropic.tokens(meter, sent) <= budget
    assert assembler.verify(fitted.request, fitted.result) == []


@pytest.mark.parametrize("seed", range(10))
def test_fit_responses_bodies_keep_reasoning_and_are_sent_as_returned(seed: int) -> None:
    body = responses_body(seed)
    meter = meter_for("gpt-4o")
    budget = openai_responses.tokens(meter, body) * 2 // 5
    fitted = assembler.fit(body, model="gpt-4o", budget=budget)
    wire = Wire()
    send_responses({k: v for k, v in fitted.body().items() if k != "model"}, wire)
    (sent,) = wire.sent
    assert sent["input"] == fitted.messages and sent["tools"] == body["tools"]
    reasoning = [i for i in body["input"] if i.get("type") == "reasoning"]
    for item in sent["input"]:
        if item.get("type") == "reasoning":
            assert item in reasoning  # encrypted content and summary as given
    calls = {i["call_id"] for i in sent["input"] if i.get("type") == "function_call"}
    assert calls == {i["call_id"] for i in sent["input"] if i.get("type") == "function_call_output"}
    assert fitted.tokens == openai_responses.tokens(meter, sent) <= budget
    assert assembler.verify(fitted.request, fitted.result) == []


@pytest.mark.parametrize("seed", range(10))
def test_fit_gemini_bodies_keep_thoughts_and_go_through_google_genai(seed: int) -> None:
    body = gemini_body(seed)
    meter = meter_for("gemini-2.5-flash")
    budget = gemini.tokens(meter, body) * 2 // 5
    fitted = assembler.fit(body, model="gemini-2.5-flash", budget=budget)
    wire = Wire()
    reply = send_gemini(fitted.body(), wire)
    sent = gemini_wire(wire.sent[0])
    assert sent["contents"] == fitted.messages
    assert sent["systemInstruction"] == body["systemInstruction"]
    model_turns = [c for c in body["contents"] if c["role"] == "model"]
    assert all(c in model_turns for c in sent["contents"] if c["role"] == "model")
    assert fitted.tokens == gemini.tokens(meter, sent) <= budget
    assert fitted.record_usage is not None and reply.usage_metadata.prompt_token_count == 10
    assert assembler.verify(fitted.request, fitted.result) == []


def test_usage_calibrates_the_next_budget(tmp_path: Path) -> None:
    messages, tools = openai_transcript(3)
    with assembler.Ledger(tmp_path / "run.db") as ledger:
        first = assembler.fit(messages, tools=tools, model="gpt-4o", budget=4000, ledger=ledger)
        wire = Wire(input_tokens=int(first.counted * 1.3))
        reply = send_openai(first.body(), wire)
        assert first.record_usage(ledger, reply.usage) == pytest.approx(1.3, rel=0.01)
        second = assembler.fit(messages, tools=tools, model="gpt-4o", budget=4000, ledger=ledger)
        # counted x 1.3 is what the provider would bill: that stays within the budget
        assert second.counted * 1.3 <= 4000 + 1 and second.tokens <= 4000
        assert second.counted < first.counted
        from assembler.ledger.verify import verify

        assert verify(ledger).problems == ()
