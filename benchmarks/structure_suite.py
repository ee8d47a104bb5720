"""Writes the structural conformance suite, ``models/structure/<format>.json``.

Run ``python -m benchmarks.structure_suite`` after changing a scenario; the files are
the normative suite (the wheel ships them, ``assembler conformance`` runs them), this
script only keeps them consistent. Output: one file per format, each with its rules
(statement, the provider's documentation it comes from, the error the provider
answers) and its cases: a transcript, the provider rule it exercises, the topic
(parallel calls, several results, tool errors, thinking, reasoning, images,
approvals, empty content, system placement, role alternation) and the provider's
verdict, ``accepted`` or ``rejected``. Every accepted transcript opens with a few
rounds of history (calls with long results) so that a packer has something to cut.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "models" / "structure"

_OPENAI = "https://platform.openai.com/docs/api-reference/chat/create"
_FUNCTIONS = "https://platform.openai.com/docs/guides/function-calling"
_RESPONSES = "https://platform.openai.com/docs/api-reference/responses/create"
_REASONING = "https://platform.openai.com/docs/guides/reasoning"
_MCP = "https://platform.openai.com/docs/guides/tools-remote-mcp"
_TOOL_USE = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
_THINKING = "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
_MESSAGES = "https://docs.anthropic.com/en/api/messages"
_GEMINI_FC = "https://ai.google.dev/gemini-api/docs/function-calling"
_GEMINI_SIG = "https://ai.google.dev/gemini-api/docs/thought-signatures"
_GEMINI_API = "https://ai.google.dev/api/caching#Content"

RULES: dict[str, dict[str, dict[str, str]]] = {
    "openai-chat": {
        "shape": {"statement": "messages and their parts have the documented fields and types",
                  "source": _OPENAI, "error": "Invalid type for 'messages[i].content'"},
        "tool-result-after-call": {
            "statement": "a tool message responds to a call of the assistant message with"
                         " tool_calls that precedes it", "source": _FUNCTIONS,
            "error": "messages with role 'tool' must be a response to a preceeding message with"
                     " 'tool_calls'"},
        "tool-call-answered": {
            "statement": "an assistant message with tool_calls is followed by tool messages"
                         " responding to each tool_call_id", "source": _FUNCTIONS,
            "error": "An assistant message with 'tool_calls' must be followed by tool messages"
                     " responding to each 'tool_call_id'"},
        "assistant-content": {
            "statement": "an assistant message without tool_calls has content",
            "source": _OPENAI, "error": "Invalid value for 'content': expected a string, got null"},
    },
    "openai-responses": {
        "shape": {"statement": "input items have the documented fields and types",
                  "source": _RESPONSES, "error": "Invalid type for 'input[i]'"},
        "tool-result-after-call": {
            "statement": "a function_call_output follows the function_call with its call_id",
            "source": _FUNCTIONS,
            "error": "No tool call found for function call output with call_id"},
        "tool-call-answered": {
            "statement": "a function_call is answered by its output before the next input message",
            "source": _FUNCTIONS, "error": "No tool output found for function call"},
        "reasoning-followed": {
            "statement": "a reasoning item is followed by the item it produced",
            "source": _REASONING,
            "error": "Item of type 'reasoning' was provided without its required following item"},
        "reasoning-with-call": {
            "statement": "a function_call of a reasoning model's turn is sent with the reasoning"
                         " item before it, unedited", "source": _REASONING,
            "error": "Item of type 'function_call' was provided without its required"
                     " 'reasoning' item"},
        "approval-after-request": {
            "statement": "an mcp_approval_response answers an earlier mcp_approval_request",
            "source": _MCP, "error": "No approval request found for approval_request_id"},
    },
    "anthropic-messages": {
        "shape": {"statement": "messages and content blocks have the documented fields (roles"
                               " user and assistant; a thinking block's signature)",
                  "source": _MESSAGES, "error": "messages.i.content.j: Field required"},
        "first-message-user": {"statement": "the first message is a user turn",
                               "source": _MESSAGES,
                               "error": "messages: first message must use the \"user\" role"},
        "tool-result-after-call": {
            "statement": "each tool_result block answers a tool_use of the assistant turn right"
                         " before it", "source": _TOOL_USE,
            "error": "unexpected `tool_use_id` found in `tool_result` blocks"},
        "tool-result-first": {
            "statement": "in the user turn holding results, the tool_result blocks come first",
            "source": _TOOL_USE,
            "error": "tool_result blocks must come first in the user message content"},
        "tool-call-answered": {
            "statement": "every tool_use has a tool_result in the next user turn",
            "source": _TOOL_USE,
            "error": "tool_use ids were found without tool_result blocks immediately after"},
        "single-result": {"statement": "each tool_use has a single tool_result",
                          "source": _TOOL_USE,
                          "error": "each tool_use must have a single result"},
        "non-empty-text": {"statement": "text content blocks are not empty",
                           "source": _MESSAGES, "error": "text content blocks must be non-empty"},
        "thinking-unedited": {
            "statement": "thinking and redacted_thinking blocks are passed back unmodified, with"
                         " the assistant turn that carries them", "source": _THINKING,
            "error": "Invalid signature in thinking block"},
    },
    "gemini": {
        "shape": {"statement": "contents and parts have the documented fields and types",
                  "source": _GEMINI_API, "error": "Invalid JSON payload received"},
        "content-role": {"statement": "a content's role is user or model", "source": _GEMINI_API,
                         "error": "Please use a valid role: user, model."},
        "parts-non-empty": {"statement": "a content has at least one part",
                            "source": _GEMINI_API, "error": "contents.parts must not be empty"},
        "function-call-turn": {
            "statement": "a function call turn comes right after a user turn or function"
                         " responses", "source": _GEMINI_FC,
            "error": "Please ensure that function call turn comes immediately after a user turn"
                     " or after a function response turn"},
        "tool-result-after-call": {
            "statement": "function responses answer the calls of the model turn right before",
            "source": _GEMINI_FC,
            "error": "Please ensure that function response turn comes immediately after a"
                     " function call turn"},
        "tool-call-answered": {
            "statement": "the number of function response parts equals the number of function"
                         " call parts of the call turn", "source": _GEMINI_FC,
            "error": "Please ensure that the number of function response parts is equal to the"
                     " number of function call parts of the function call turn"},
        "signature-kept": {
            "statement": "a function call part's thought signature is sent back with it",
            "source": _GEMINI_SIG, "error": "Function call is missing a thought_signature"},
    },
}  # fmt: skip

MODELS = {"openai-chat": "gpt-4o", "openai-responses": "o3",
          "anthropic-messages": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}  # fmt: skip


def _opaque(seed: str, size: int = 48, urlsafe: bool = False) -> str:
    data = hashlib.sha256(seed.encode()).digest() * (size // 32 + 1)
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(data[:size]).decode()


def _words(seed: str, count: int) -> str:
    vocabulary = ["order", "refund", "shipment", "carrier", "ticket", "invoice", "status",
                  "pending", "error", "retry", "window", "policy", "tier", "queue", "latency"]
    digest = hashlib.sha256(seed.encode()).digest()
    return " ".join(vocabulary[digest[i % 32] % len(vocabulary)] for i in range(count))


_PNG = base64.b64encode(
    bytes.fromhex("89504e470d0a1a0a0000000d4948445200000040000000300806000000")
).decode()

# -- events to each format ----------------------------------------------------------------
# events: ("system", text), ("user", text), ("image", text), ("assistant", text),
# ("calls", [(id, name, args)], {"think", "redact", "text"}), ("results", [(id, text,
# error)], trailing text or None), ("approval", id), ("approved", id)


def _history(tag: str) -> list[Any]:
    events: list[Any] = [("system", "You are a support agent. " + _words(tag, 20)),
                         ("user", "Task: " + _words(tag + "t", 20))]  # fmt: skip
    for round_ in range(2):
        call = f"h{round_}_{tag}"
        events.append(("calls", [(call, "read_log", {"q": _words(call, 3)})], {"think": True}))
        events.append(("results", [(call, _words(call + "r", 400), False)], None))
    events.append(("user", "Next: " + _words(tag + "n", 12)))
    return events


def chat(events: list[Any]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for event in events:
        kind = event[0]
        if kind in ("system", "user", "assistant"):
            messages.append({"role": kind, "content": event[1]})
        elif kind == "image":
            messages.append({"role": "user", "content": [
                {"type": "text", "text": event[1]},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{_PNG}"}}]})
        elif kind == "calls":
            calls = [{"id": i, "type": "function",
                      "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in event[1]]
            messages.append({"role": "assistant", "content": event[2].get("text"),
                             "tool_calls": calls})
        elif kind == "results":
            for call, text, error in event[1]:
                messages.append({"role": "tool", "tool_call_id": call,
                                 "content": ("Error: " if error else "") + text})
            if event[2]:
                messages.append({"role": "user", "content": event[2]})
    return {"messages": messages}  # fmt: skip


def responses(events: list[Any]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for event in events:
        kind = event[0]
        if kind == "system":
            items.append({"role": "developer", "content": event[1]})
        elif kind in ("user", "assistant"):
            items.append({"role": kind, "content": event[1]})
        elif kind == "image":
            items.append({"role": "user", "content": [
                {"type": "input_text", "text": event[1]},
                {"type": "input_image", "image_url": f"data:image/png;base64,{_PNG}"}]})
        elif kind == "calls":
            first = event[1][0][0]
            if event[2].get("think"):
                items.append({"type": "reasoning", "id": f"rs_{first}", "summary": [],
                              "encrypted_content": _opaque(first, 96)})
            if event[2].get("text"):
                items.append({"type": "message", "role": "assistant", "content": event[2]["text"]})
            items += [{"type": "function_call", "call_id": i, "name": n,
                       "arguments": json.dumps(a)} for i, n, a in event[1]]
        elif kind == "results":
            items += [{"type": "function_call_output", "call_id": c,
                       "output": json.dumps({"error": t}) if e else t} for c, t, e in event[1]]
            if event[2]:
                items.append({"role": "user", "content": event[2]})
        elif kind == "approval":
            items.append({"type": "mcp_approval_request", "id": event[1], "server_label": "ops",
                          "name": "deploy", "arguments": "{}"})
        elif kind == "approved":
            items.append({"type": "mcp_approval_response", "approval_request_id": event[1],
                          "approve": True})
    return {"input": items}  # fmt: skip


def anthropic(events: list[Any]) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for event in events:
        kind = event[0]
        if kind == "system":
            system.append({"type": "text", "text": event[1]})
        elif kind in ("user", "assistant"):
            messages.append({"role": kind, "content": event[1]})
        elif kind == "image":
            messages.append({"role": "user", "content": [
                {"type": "text", "text": event[1]},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": _PNG}}]})
        elif kind == "calls":
            first = event[1][0][0]
            blocks: list[dict[str, Any]] = []
            if event[2].get("think"):
                blocks.append({"type": "thinking", "thinking": _words(first, 12),
                               "signature": _opaque(first)})
            if event[2].get("redact"):
                blocks.append({"type": "redacted_thinking", "data": _opaque(first + "r", 64)})
            if event[2].get("text"):
                blocks.append({"type": "text", "text": event[2]["text"]})
            blocks += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in event[1]]
            messages.append({"role": "assistant", "content": blocks})
        elif kind == "results":
            content = [{"type": "tool_result", "tool_use_id": c, "content": t,
                        **({"is_error": True} if e else {})} for c, t, e in event[1]]
            if event[2]:
                content.append({"type": "text", "text": event[2]})
            messages.append({"role": "user", "content": content})
    return {"system": system, "messages": messages}  # fmt: skip


def gemini(events: list[Any]) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        contents.append({"role": role, "parts": parts})

    names: dict[str, str] = {}
    for event in events:
        kind = event[0]
        if kind == "system":
            system.append({"text": event[1]})
        elif kind in ("user", "assistant"):
            add("user" if kind == "user" else "model", [{"text": event[1]}])
        elif kind == "image":
            add("user", [{"text": event[1]}, {"inlineData": {"mimeType": "image/png",
                                                             "data": _PNG}}])
        elif kind == "calls":
            parts: list[dict[str, Any]] = []
            if event[2].get("think"):
                parts.append({"text": _words(event[1][0][0], 12), "thought": True})
            if event[2].get("text"):
                parts.append({"text": event[2]["text"]})
            for number, (i, n, a) in enumerate(event[1]):
                names[i] = n
                part: dict[str, Any] = {"functionCall": {"id": i, "name": n, "args": a}}
                if number == 0:
                    part["thoughtSignature"] = _opaque(i, urlsafe=True)
                parts.append(part)
            add("model", parts)
        elif kind == "results":
            parts = [{"functionResponse": {"id": c, "name": names.get(c, "read_log"),
                      "response": {"error": t} if e else {"output": t}}} for c, t, e in event[1]]
            if event[2]:
                parts.append({"text": event[2]})
            add("user", parts)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": system}
    return body  # fmt: skip


EMIT = {"openai-chat": chat, "openai-responses": responses,
        "anthropic-messages": anthropic, "gemini": gemini}  # fmt: skip


# -- the cases ------------------------------------------------------------------------------


def _calls(tag: str, count: int, **how: Any) -> list[Any]:
    ids = [f"{tag}_{k}" for k in range(count)]
    names = ("search_orders", "read_log", "fetch_doc")
    calls = [(i, names[k % 3], {"q": _words(i, 3)}) for k, i in enumerate(ids)]
    return [("calls", calls, how)]


def _answers(tag: str, count: int, error: bool = False, order: list[int] | None = None,
             trailing: str | None = None) -> list[Any]:  # fmt: skip
    ids = [f"{tag}_{k}" for k in range(count)]
    picked = [ids[k] for k in (order or range(count))]
    return [("results", [(i, _words(i + "r", 30), error) for i in picked], trailing)]


def _accepted() -> list[tuple[str, str, str, tuple[str, ...], list[Any]]]:
    """(id, topic, rule, formats, events after the history)."""
    every = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
    out: list[tuple[str, str, str, tuple[str, ...], list[Any]]] = []
    for count in (1, 2, 3):
        tag = f"par{count}"
        out.append((f"parallel-{count}", "parallel calls", "tool-call-answered", every,
                    [*_calls(tag, count, think=True), *_answers(tag, count)]))
    out.append(("parallel-answered-out-of-order", "parallel calls", "tool-call-answered", every,
                [*_calls("ooo", 3, think=True), *_answers("ooo", 3, order=[2, 0, 1])]))
    out.append(("results-then-text", "a call answered by several results", "tool-result-first",
                every, [*_calls("rtt", 2, think=True),
                        *_answers("rtt", 2, trailing="Also: " + _words("rtt", 6))]))
    for count in (1, 2):
        out.append((f"tool-error-{count}", "tool errors", "tool-result-after-call", every,
                    [*_calls(f"err{count}", count, think=True),
                     *_answers(f"err{count}", count, error=True)]))
    out.append(("call-with-text", "empty content", "assistant-content", every,
                [*_calls("cwt", 1, think=True, text="Let me look that up."),
                 *_answers("cwt", 1)]))
    out.append(("thinking-and-redacted", "thinking and redacted thinking", "thinking-unedited",
                ("anthropic-messages",), [*_calls("red", 2, think=True, redact=True),
                                          *_answers("red", 2)]))
    out.append(("thinking-calls-no-text", "thinking and redacted thinking",
                "thinking-unedited", ("anthropic-messages", "gemini"),
                [*_calls("tnt", 1, think=True), *_answers("tnt", 1)]))
    out.append(("reasoning-then-calls", "reasoning items", "reasoning-with-call",
                ("openai-responses",), [*_calls("rea", 2, think=True), *_answers("rea", 2)]))
    out.append(("signatures-on-calls", "thinking and redacted thinking", "signature-kept",
                ("gemini",), [*_calls("sig", 3, think=True), *_answers("sig", 3)]))
    out.append(("image-in-user-turn", "images", "shape", every,
                [("image", "Here is the screenshot: " + _words("img", 6))]))
    out.append(("image-after-results", "images", "shape", every,
                [*_calls("iar", 1), *_answers("iar", 1), ("assistant", _words("iar", 10)),
                 ("image", "And this one: " + _words("iar2", 6))]))
    out.append(("approval-granted", "approval requests and responses", "approval-after-request",
                ("openai-responses",), [("approval", "apr_1"), ("approved", "apr_1")]))
    out.append(("approval-pending", "approval requests and responses", "approval-after-request",
                ("openai-responses",), [("approval", "apr_2")]))
    out.append(("system-mid-conversation", "system placement", "shape",
                ("openai-chat", "openai-responses"), [("system", "Be brief from now on.")]))
    out.append(("consecutive-user-turns", "role alternation", "first-message-user",
                ("openai-chat", "openai-responses", "anthropic-messages"),
                [("user", "One more thing: " + _words("cu1", 5))]))
    out.append(("assistant-reply-between", "role alternation", "tool-call-answered", every,
                [*_calls("arb", 1), *_answers("arb", 1), ("assistant", _words("arb", 12)),
                 ("user", "ok, " + _words("arb2", 5)), *_calls("arb3", 2), *_answers("arb3", 2)]))
    return out


def _case(fmt: str, name: str, topic: str, rule: str, verdict: str,
          body: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    return {"id": name, "topic": topic, "rule": rule, "verdict": verdict, "body": body}


def _base(fmt: str, tag: str, count: int = 2) -> dict[str, Any]:
    events = [("system", "You are a support agent."), ("user", "Task: " + _words(tag, 8)),
              *_calls(tag, count, think=True), *_answers(tag, count),
              ("user", "So? " + _words(tag + "q", 4))]  # fmt: skip
    return EMIT[fmt](events)


def _rejected(fmt: str) -> list[dict[str, Any]]:
    """Each rule broken once or twice: a short transcript with one fault."""
    out: list[dict[str, Any]] = []

    def add(name: str, topic: str, rule: str, body: dict[str, Any]) -> None:
        out.append(_case(fmt, name, topic, rule, "rejected", body))

    key = {"openai-chat": "messages", "openai-responses": "input",
           "anthropic-messages": "messages", "gemini": "contents"}[fmt]  # fmt: skip
    b = _base(fmt, "x")
    items = b[key]
    if fmt == "openai-chat":
        cut = copy.deepcopy(b)
        del cut[key][4]
        add("parallel-result-missing", "parallel calls", "tool-call-answered", cut)
        lead = copy.deepcopy(b)
        lead[key] = [items[0], items[3], *items[1:3], *items[4:]]
        add("leading-tool-message", "role alternation", "tool-result-after-call", lead)
        late = copy.deepcopy(b)
        late[key] = [*items[:3], items[5], *items[3:5]]
        add("result-after-user-turn", "role alternation", "tool-call-answered", late)
        empty = copy.deepcopy(b)
        empty[key].insert(2, {"role": "assistant", "content": None})
        add("assistant-null-content", "empty content", "assistant-content", empty)
        image = copy.deepcopy(b)
        image[key].append({"role": "user", "content": [{"type": "image_url", "image_url": {}}]})
        add("image-without-url", "images", "shape", image)
        role = copy.deepcopy(b)
        role[key].insert(1, {"role": "model", "content": "hi"})
        add("unknown-role", "role alternation", "shape", role)
    elif fmt == "openai-responses":
        orphan = copy.deepcopy(b)
        orphan[key].insert(2, {"type": "function_call_output", "call_id": "ghost", "output": "x"})
        add("output-without-call", "tool errors", "tool-result-after-call", orphan)
        cut = copy.deepcopy(b)
        cut[key] = [i for i in items
                    if i.get("call_id") != "x_1" or i["type"] != "function_call_output"]
        add("parallel-output-missing", "parallel calls", "tool-call-answered", cut)
        early = copy.deepcopy(b)
        early[key] = [*items[:2], items[5], *items[2:5], *items[6:]]
        add("output-before-call", "parallel calls", "tool-result-after-call", early)
        alone = copy.deepcopy(b)
        alone[key].insert(2, {"type": "reasoning", "id": "rs_lone", "summary": [],
                              "encrypted_content": _opaque("lone")})
        alone[key][3:3] = [{"role": "user", "content": "wait"}]
        add("reasoning-before-user", "reasoning items", "reasoning-followed", alone)
        last = copy.deepcopy(b)
        last[key].append({"type": "reasoning", "id": "rs_end", "summary": [],
                          "encrypted_content": _opaque("end")})
        add("reasoning-last", "reasoning items", "reasoning-followed", last)
        approval = copy.deepcopy(b)
        approval[key].insert(2, {"type": "mcp_approval_response", "approval_request_id": "none",
                                 "approve": True})
        add("approval-without-request", "approval requests and responses",
            "approval-after-request", approval)
        shape = copy.deepcopy(b)
        shape[key][1] = {"role": "user", "content": 5}
        add("content-not-text", "empty content", "shape", shape)
    elif fmt == "anthropic-messages":
        first = copy.deepcopy(b)
        first[key].insert(0, {"role": "assistant", "content": "Hello."})
        add("assistant-first", "role alternation", "first-message-user", first)
        order = copy.deepcopy(b)
        order[key][2]["content"].insert(0, {"type": "text", "text": "Results:"})
        add("text-before-results", "a call answered by several results", "tool-result-first",
            order)
        missing = copy.deepcopy(b)
        missing[key][2]["content"].pop()
        add("parallel-result-missing", "parallel calls", "tool-call-answered", missing)
        twice = copy.deepcopy(b)
        twice[key][2]["content"].insert(1, copy.deepcopy(twice[key][2]["content"][0]))
        add("result-given-twice", "a call answered by several results", "single-result", twice)
        blank = copy.deepcopy(b)
        blank[key][0] = {"role": "user", "content": [{"type": "text", "text": ""}]}
        add("empty-text-block", "empty content", "non-empty-text", blank)
        system = copy.deepcopy(b)
        system[key].insert(0, {"role": "system", "content": "rules"})
        add("system-as-message", "system placement", "shape", system)
        unsigned = copy.deepcopy(b)
        del unsigned[key][1]["content"][0]["signature"]
        add("thinking-without-signature", "thinking and redacted thinking", "shape", unsigned)
        between = copy.deepcopy(b)
        between[key].insert(2, {"role": "user", "content": "hurry"})
        add("result-after-user-turn", "role alternation", "tool-call-answered", between)
    else:
        first = copy.deepcopy(b)
        first[key] = first[key][1:]
        add("call-turn-first", "role alternation", "function-call-turn", first)
        missing = copy.deepcopy(b)
        missing[key][2]["parts"].pop()
        add("parallel-response-missing", "parallel calls", "tool-call-answered", missing)
        twice = copy.deepcopy(b)
        twice[key][2]["parts"].append(copy.deepcopy(twice[key][2]["parts"][0]))
        add("response-given-twice", "a call answered by several results",
            "tool-call-answered", twice)
        system = copy.deepcopy(b)
        system[key].insert(0, {"role": "system", "parts": [{"text": "rules"}]})
        add("system-role-content", "system placement", "content-role", system)
        assistant = copy.deepcopy(b)
        assistant[key][1]["role"] = "assistant"
        add("assistant-role", "role alternation", "content-role", assistant)
        empty = copy.deepcopy(b)
        empty[key].insert(1, {"role": "user", "parts": []})
        add("empty-parts", "empty content", "parts-non-empty", empty)
        between = copy.deepcopy(b)
        between[key].insert(2, {"role": "user", "parts": [{"text": "hurry"}]})
        add("response-after-user-turn", "role alternation", "tool-call-answered", between)
    return out


def suite(fmt: str) -> dict[str, Any]:
    cases = []
    for name, topic, rule, formats, events in _accepted():
        if fmt not in formats:
            continue
        if rule not in RULES[fmt]:
            rule = "shape" if rule != "tool-result-first" else "tool-result-after-call"
        body = EMIT[fmt]([*_history(name), *events, ("user", "What now? " + _words(name, 5))])
        cases.append(_case(fmt, name, topic, rule, "accepted", body))
    cases += _rejected(fmt)
    return {
        "format": fmt,
        "model": MODELS[fmt],
        "about": "Transcripts and the verdict the provider gives them, by the rule each"
                 " exercises (models/README.md, section 15). Verdicts are the providers'"
                 " documented rules and error messages (each rule names its source).",
        "rules": RULES[fmt],
        "cases": cases,
    }  # fmt: skip


def main() -> int:
    FOLDER.mkdir(parents=True, exist_ok=True)
    total = 0
    for fmt in EMIT:
        data = suite(fmt)
        total += len(data["cases"])
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        (FOLDER / f"{fmt}.json").write_text(text, encoding="utf-8")
        print(f"{fmt}: {len(data['cases'])} cases")
    print(f"{total} cases in {FOLDER}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
