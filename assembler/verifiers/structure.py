"""The structural judge: would the provider take this conversation, and is it the given one?

Input: a format (``openai-chat``, ``openai-responses``, ``anthropic-messages``,
``gemini``), a body as JSON values, and optionally the body it was cut from.
Output: the broken rules, each ``(rule, detail)``; empty when the provider would take
the body and, given the original, nothing the provider verifies was edited.

The rules are those ``models/structure/`` states, each with its source and the error
the provider answers with; this module re-states them in its own code, importing
nothing from the adapters, the provider rooms (``assembler.providers``) or the renderer
whose output it judges (a second copy of each rule, on purpose):

* every format: a tool result answers a call made just before it, every call is
  answered before the conversation moves on (parallel calls: each one), no result is
  given twice, content is of the provider's shape and not empty where it must not be;
* ``openai-chat``: tool messages right after the assistant message with the calls;
  an assistant message without calls has content;
* ``openai-responses``: outputs after their ``function_call``; a ``reasoning`` item
  followed by what it produced, and (given the original) a call kept with the
  reasoning item of its turn; an approval response after its request;
* ``anthropic-messages``: the first message a user turn; ``tool_result`` blocks first
  in the user turn right after the ``tool_use`` blocks, one per call; no empty text
  block; (given the original) thinking and redacted thinking blocks byte for byte as
  given, and a kept turn's thinking kept;
* ``gemini``: roles ``user`` and ``model``, parts not empty, a call turn right after
  a user turn, the next content answering each call first with as many responses;
  (given the original) thought signatures kept on the parts that carried them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["RULES", "judge"]

Broken = list[tuple[str, str]]

# every rule this judge knows, by format (models/structure/ states each with its source)
RULES = {
    "openai-chat": ("shape", "tool-result-after-call", "tool-call-answered", "assistant-content"),
    "openai-responses": ("shape", "tool-result-after-call", "tool-call-answered",
                         "reasoning-followed", "reasoning-with-call", "approval-after-request"),
    "anthropic-messages": ("shape", "first-message-user", "tool-result-after-call",
                           "tool-result-first", "tool-call-answered", "single-result",
                           "non-empty-text", "thinking-unedited"),
    "gemini": ("shape", "content-role", "parts-non-empty", "function-call-turn",
               "tool-result-after-call", "tool-call-answered", "signature-kept"),
}  # fmt: skip


def judge(fmt: str, body: Mapping[str, Any], given: Mapping[str, Any] | None = None) -> Broken:
    """The rules ``body`` breaks (see the module)."""
    try:
        if fmt == "openai-chat":
            return _chat(body["messages"])
        if fmt == "openai-responses":
            return _responses(body["input"], None if given is None else given["input"])
        if fmt == "anthropic-messages":
            return _anthropic(body["messages"], None if given is None else given["messages"])
        if fmt == "gemini":
            return _gemini(body["contents"], None if given is None else given["contents"])
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        return [("shape", f"the body is not of the {fmt} shape: {exc!r}")]
    return [("shape", f"unknown format {fmt!r}")]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# -- Chat Completions ---------------------------------------------------------------


def _chat(messages: Sequence[Mapping[str, Any]]) -> Broken:
    broken: Broken = []
    pending: list[str] = []
    answered: set[str] = set()
    for index, m in enumerate(messages):
        role = m["role"]
        if role == "tool":
            call = m["tool_call_id"]
            if call not in pending:
                broken.append(("tool-result-after-call", f"messages[{index}] answers {call!r}"))
            else:
                pending.remove(call)
                answered.add(call)
            continue
        if pending:
            broken.append(("tool-call-answered", f"calls {pending} unanswered at [{index}]"))
        calls = [c["id"] for c in m.get("tool_calls") or []]
        content = m.get("content")
        if role == "assistant" and not calls and content is None and "refusal" not in m:
            broken.append(("assistant-content", f"messages[{index}] has neither content nor calls"))
        if role not in ("system", "developer", "user", "assistant"):
            broken.append(("shape", f"messages[{index}] has role {role!r}"))
        if not (content is None or isinstance(content, str | list)):
            broken.append(("shape", f"messages[{index}].content is {type(content).__name__}"))
        for part in content if isinstance(content, list) else []:
            if part.get("type") == "image_url" and not part.get("image_url", {}).get("url"):
                broken.append(("shape", f"messages[{index}]: an image_url part has no url"))
        pending = calls
    if pending:
        broken.append(("tool-call-answered", f"calls {pending} are never answered"))
    return broken


# -- Responses --------------------------------------------------------------------------

_PRODUCED_CALLS = ("function_call", "custom_tool_call", "computer_call", "local_shell_call")


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message"))


def _produced(item: Mapping[str, Any]) -> bool:
    kind = _kind(item)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind.endswith("_call") or kind in ("reasoning", "mcp_list_tools", "mcp_approval_request")


def _turn_reasoning(items: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """call id -> the id of the reasoning item of the turn that made the call."""
    out: dict[str, str] = {}
    reasoning: str | None = None
    for item in items:
        if not _produced(item):
            reasoning = None
        elif _kind(item) == "reasoning":
            reasoning = str(item.get("id"))
        elif _kind(item) in _PRODUCED_CALLS and reasoning is not None:
            out[str(item.get("call_id"))] = reasoning
    return out


def _responses(
    items: Sequence[Mapping[str, Any]], given: Sequence[Mapping[str, Any]] | None
) -> Broken:
    broken: Broken = []
    open_calls: dict[str, int] = {}
    requests: set[str] = set()
    for index, item in enumerate(items):
        kind = _kind(item)
        if kind in _PRODUCED_CALLS:
            open_calls[str(item.get("call_id"))] = index
        elif kind == "mcp_approval_request":
            requests.add(str(item.get("id")))
        elif kind.endswith("_call_output"):
            call = str(item.get("call_id"))
            if call not in open_calls:
                broken.append(("tool-result-after-call", f"input[{index}] answers {call!r}"))
            open_calls.pop(call, None)
        elif kind == "mcp_approval_response":
            if str(item.get("approval_request_id")) not in requests:
                broken.append(("approval-after-request", f"input[{index}] answers no request"))
        elif kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if following is None or not _produced(following):
                broken.append(("reasoning-followed", f"input[{index}] precedes nothing it made"))
        elif kind == "message" and item.get("role") != "assistant" and open_calls:
            broken.append(("tool-call-answered", f"calls {sorted(open_calls)} before [{index}]"))
            open_calls.clear()
        if kind == "message" and not isinstance(item.get("content"), str | list):
            broken.append(("shape", f"input[{index}].content is not a string or parts"))
    if open_calls:
        broken.append(("tool-call-answered", f"calls {sorted(open_calls)} are never answered"))
    if given is not None:
        needs = _turn_reasoning(given)
        kept = {str(i.get("id")) for i in items if _kind(i) == "reasoning"}
        originals = {_canonical(i) for i in given if _kind(i) == "reasoning"}
        for index, item in enumerate(items):
            if _kind(item) == "reasoning" and _canonical(item) not in originals:
                broken.append(("reasoning-with-call", f"input[{index}] is an edited reasoning"))
            call = str(item.get("call_id"))
            if _kind(item) in _PRODUCED_CALLS and call in needs and needs[call] not in kept:
                broken.append(("reasoning-with-call", f"input[{index}] lost its reasoning item"))
    return broken


# -- Anthropic Messages -----------------------------------------------------------------


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _anthropic(
    messages: Sequence[Mapping[str, Any]], given: Sequence[Mapping[str, Any]] | None
) -> Broken:
    broken: Broken = []
    if not messages or messages[0]["role"] != "user":
        broken.append(("first-message-user", "the messages do not open with a user turn"))
    called: list[str] = []
    for index, m in enumerate(messages):
        blocks = _blocks(m)
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if m["role"] not in ("user", "assistant"):
            broken.append(("shape", f"messages[{index}] has role {m['role']!r}"))
        if any(b["type"] == "thinking" and not b.get("signature") for b in blocks):
            broken.append(("shape", f"messages[{index}]: a thinking block has no signature"))
        if any(b["type"] == "text" and not b["text"] for b in blocks):
            broken.append(("non-empty-text", f"messages[{index}] has an empty text block"))
        if not blocks and not (index == len(messages) - 1 and m["role"] == "assistant"):
            broken.append(("non-empty-text", f"messages[{index}] has no content"))
        if results:
            leading = [b["type"] for b in blocks[: len(results)]]
            if m["role"] != "user" or leading != ["tool_result"] * len(results):
                broken.append(("tool-result-first", f"messages[{index}]: results do not lead"))
            if len(set(results)) != len(results):
                broken.append(("single-result", f"messages[{index}] answers a call twice"))
        if m["role"] == "user":
            if set(results) - set(called):
                broken.append(("tool-result-after-call", f"messages[{index}] answers no call"))
            if set(called) - set(results):
                broken.append(("tool-call-answered", f"calls before messages[{index}] unanswered"))
            called = []
        else:
            if called:
                broken.append(("tool-call-answered", f"calls before messages[{index}] unanswered"))
            called = [str(b["id"]) for b in blocks if b["type"] == "tool_use"]
    if called:
        broken.append(("tool-call-answered", f"calls {called} are never answered"))
    if given is not None:
        turns = [[_canonical(b) for b in _blocks(m)] for m in given if m["role"] == "assistant"]
        thinking = {_canonical(b) for m in given for b in _blocks(m)
                    if b["type"] in ("thinking", "redacted_thinking")}  # fmt: skip
        for index, m in enumerate(messages):
            for block in _blocks(m):
                if block["type"] in ("thinking", "redacted_thinking") and (
                    _canonical(block) not in thinking
                ):
                    broken.append(("thinking-unedited", f"messages[{index}] edits a thinking"))
            texts = [_canonical(b) for b in _blocks(m)]
            thinks = any(b["type"] in ("thinking", "redacted_thinking") for b in _blocks(m))
            if m["role"] == "assistant" and thinks and not _whole_turns(texts, turns):
                broken.append(("thinking-unedited", f"messages[{index}] is not given turns"))
    return broken


def _whole_turns(blocks: list[str], turns: list[list[str]]) -> bool:
    """``blocks`` is a run of whole given turns, one after another (the provider
    itself merges neighbouring turns of one role)."""
    ends = [False] * (len(blocks) + 1)
    ends[0] = True
    for start in range(len(blocks)):
        if not ends[start]:
            continue
        for turn in turns:
            if turn and blocks[start : start + len(turn)] == turn:
                ends[start + len(turn)] = True
    return ends[len(blocks)]


# -- Gemini -----------------------------------------------------------------------------


def _ref(value: Mapping[str, Any]) -> str:
    return str(value.get("id") or value.get("name"))


def _gemini(
    contents: Sequence[Mapping[str, Any]], given: Sequence[Mapping[str, Any]] | None
) -> Broken:
    broken: Broken = []
    pending: list[str] = []
    for index, content in enumerate(contents):
        role = content["role"]
        parts = content.get("parts") or []
        if role not in ("user", "model"):
            broken.append(("content-role", f"contents[{index}] has role {role!r}"))
        if not parts:
            broken.append(("parts-non-empty", f"contents[{index}] has no parts"))
        answers = [_ref(p["functionResponse"]) for p in parts if "functionResponse" in p]
        if role == "user" or pending:
            if sorted(answers) != sorted(pending):
                # as many responses as calls, each answering one: else the call turn's
                rule = "tool-call-answered" if pending else "tool-result-after-call"
                broken.append((rule, f"contents[{index}] answers {answers}, called {pending}"))
            if answers and any("functionResponse" not in p for p in parts[: len(answers)]):
                broken.append(("tool-result-after-call", f"contents[{index}]: responses lead"))
        calls = [_ref(p["functionCall"]) for p in parts if "functionCall" in p]
        if calls and (index == 0 or contents[index - 1]["role"] != "user"):
            broken.append(("function-call-turn", f"contents[{index}] does not follow a user turn"))
        pending = calls if role == "model" else []
    if pending:
        broken.append(("tool-call-answered", f"calls {pending} are never answered"))
    if given is not None:
        signed = {_canonical(p.get("functionCall")): p["thoughtSignature"]
                  for c in given for p in c.get("parts", [])
                  if "thoughtSignature" in p and "functionCall" in p}  # fmt: skip
        for index, content in enumerate(contents):
            for part in content.get("parts") or []:
                key = _canonical(part.get("functionCall"))
                lost = key in signed and part.get("thoughtSignature") != signed[key]
                if "functionCall" in part and lost:
                    broken.append(("signature-kept", f"contents[{index}] lost a signature"))
    return broken
