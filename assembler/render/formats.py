"""Formats: the blocks of a layout become a provider body, checked before it is returned.

Input: the ``Block`` tuple of a layout and a ``RenderFormat``.
Output: the provider body as plain JSON values and the cache breakpoints (byte
offsets into the rendered text), or ``RenderError(RENDER_PROVIDER_RULE)`` naming the
rule and the items.

* ``text``: the body is the rendered text itself.
* ``openai-chat``: a Chat Completions ``messages`` list: one ``system`` message with
  the stable section, one ``user`` message with the evidence, then one message per
  conversation item (a tool call is an ``assistant`` message whose content is the
  item's header and whose ``tool_calls`` carries the content as ``arguments``; its
  result a ``tool`` message), the query as the last ``user`` message.
* ``anthropic-messages``: ``{"system": [text blocks], "messages": [...]}``: one block
  per item, consecutive blocks of one role merged into one message (so roles
  alternate and a tool result opens the user turn after its call), ``tool_use``
  ``input`` parsed from the call's content, and ``cache_control`` breakpoints at the
  end of the stable section, of the evidence and of the conversation (at most 3 of
  Anthropic's 4).

In both chat formats the body's text parts, read in order (message contents and
text blocks; a call's ``arguments``, or the content its ``input`` was parsed from),
concatenate to the rendered text: the body is bound to the same bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..model.errors import RenderError
from ..model.rendering import RenderFormat
from .layout import Block

__all__ = ["build_body", "check_anthropic", "check_openai"]

MAX_BREAKPOINTS = 4
_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_EPHEMERAL = {"type": "ephemeral"}


def _rule(rule: str, message: str, items: tuple[str, ...] = ()) -> RenderError:
    return RenderError("RENDER_PROVIDER_RULE", message, items=items, rule=rule)


def _id(block: Block) -> str:
    return "" if block.candidate is None else block.candidate.id


def _arguments(block: Block) -> dict[str, Any]:
    try:
        value = json.loads(block.content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise _rule(
            "tool-call-arguments", "a tool call's content must be a JSON object", (_id(block),)
        )
    return value


def build_body(blocks: tuple[Block, ...], fmt: RenderFormat) -> tuple[Any, tuple[int, ...]]:
    """The provider body and its cache breakpoints."""
    if fmt is RenderFormat.TEXT:
        return "".join(b.text for b in blocks), ()
    for block in blocks:
        if block.kind == "tool_call":
            _arguments(block)
    if fmt is RenderFormat.OPENAI_CHAT:
        body: Any = _openai(blocks)
        check_openai(body)
        return body, ()
    body, breakpoints = _anthropic(blocks)
    check_anthropic(body)
    return body, breakpoints


def _call(block: Block) -> tuple[str, str]:
    assert block.candidate is not None
    return str(block.candidate.tool_call_id), str(block.candidate.tool_name)


def _openai(blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for section, role in (("stable", "system"), ("evidence", "user")):
        text = "".join(b.text for b in blocks if b.section == section)
        if text:
            messages.append({"role": role, "content": text})
    for block in blocks:
        if block.section not in ("volatile", "query"):
            continue
        if block.kind == "tool_call":
            call_id, name = _call(block)
            messages.append(
                {
                    "role": "assistant",
                    "content": block.header,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": block.content},
                        }
                    ],
                }
            )
        elif block.kind == "tool_result":
            call_id, _ = _call(block)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": block.text})
        else:
            role = "assistant" if block.kind == "assistant_turn" else "user"
            messages.append({"role": role, "content": block.text})
    return messages


def _anthropic(blocks: tuple[Block, ...]) -> tuple[dict[str, Any], tuple[int, ...]]:
    system: list[dict[str, Any]] = []
    entries: list[tuple[str, dict[str, Any]]] = []
    breakpoints: list[int] = []
    offset = 0
    for index, block in enumerate(blocks):
        offset += len(block.text.encode("utf-8"))
        last_of_section = index + 1 == len(blocks) or blocks[index + 1].section != block.section
        if block.section == "stable":
            out: list[tuple[str, dict[str, Any]]] = [
                ("system", {"type": "text", "text": block.text})
            ]
        elif block.kind == "tool_call":
            call_id, name = _call(block)
            out = [
                ("assistant", {"type": "text", "text": block.header}),
                (
                    "assistant",
                    {"type": "tool_use", "id": call_id, "name": name, "input": _arguments(block)},
                ),
            ]
        elif block.kind == "tool_result":
            call_id, _ = _call(block)
            out = [("user", {"type": "tool_result", "tool_use_id": call_id, "content": block.text})]
        else:
            role = "assistant" if block.kind == "assistant_turn" else "user"
            out = [(role, {"type": "text", "text": block.text})]
        # A breakpoint caches the prefix up to the end of a section; the query ends the
        # body, so caching it would buy nothing on the next call.
        if last_of_section and block.section != "query":
            out[-1][1]["cache_control"] = dict(_EPHEMERAL)
            breakpoints.append(offset)
        for role, content in out:
            if role == "system":
                system.append(content)
            else:
                entries.append((role, content))
    messages: list[dict[str, Any]] = []
    for role, content in entries:
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].append(content)
        else:
            messages.append({"role": role, "content": [content]})
    return {"system": system, "messages": messages}, tuple(breakpoints)


def check_openai(messages: list[dict[str, Any]]) -> None:
    """System material first, no leading tool message, every tool message directly
    after the assistant message that made its call, every call answered."""
    seen_other = False
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "system" and seen_other:
            raise _rule("system-first", f"a system message at position {index} follows others")
        if role != "system" and not seen_other:
            seen_other = True
            if role == "tool":
                raise _rule("no-leading-tool", "the first message after the system is a tool one")
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                raise _rule(
                    "tool-result-after-call",
                    f"tool message {message['tool_call_id']!r} does not answer the call before it",
                )
            open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            raise _rule("tool-call-answered", f"tool calls {open_calls} are not answered")
        open_calls = [call["id"] for call in message.get("tool_calls", [])]
    if open_calls:
        raise _rule("tool-call-answered", f"tool calls {open_calls} are not answered")


def check_anthropic(body: dict[str, Any]) -> None:
    """Messages start with a user turn and alternate; tool results open the user turn
    right after the assistant turn that called them, and answer every call; tool ids
    fit Anthropic's pattern; at most four cache breakpoints."""
    messages = body["messages"]
    if not messages:
        raise _rule("messages-non-empty", "there is no message: give evidence or a query")
    if messages[0]["role"] != "user":
        raise _rule("first-message-user", "the first message is not a user turn")
    marks = sum("cache_control" in b for b in body["system"])
    previous_calls: list[str] = []
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"]:
            raise _rule("roles-alternate", f"two {message['role']} turns in a row at {index}")
        content = message["content"]
        marks += sum("cache_control" in b for b in content)
        answered: list[str] = []
        for position, block in enumerate(content):
            if block["type"] == "tool_result":
                if message["role"] != "user" or position != len(answered):
                    raise _rule("tool-result-first", "a tool result must open a user turn")
                answered.append(block["tool_use_id"])
        if message["role"] == "user" and answered != previous_calls:
            raise _rule(
                "tool-result-after-call",
                f"turn {index} answers {answered}, the turn before called {previous_calls}",
            )
        calls = [b["id"] for b in content if b["type"] == "tool_use"]
        for call in calls:
            if not _TOOL_ID.match(call):
                raise _rule("tool-id-pattern", f"tool call id {call!r} is not [A-Za-z0-9_-]+")
        previous_calls = calls if message["role"] == "assistant" else []
    if previous_calls:
        raise _rule("tool-call-answered", f"tool calls {previous_calls} are not answered")
    if marks > MAX_BREAKPOINTS:
        raise _rule("cache-breakpoints", f"{marks} cache breakpoints, at most {MAX_BREAKPOINTS}")
