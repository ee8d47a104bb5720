"""Formats: the blocks of a layout become a provider body, checked before it is returned.

Input: the ``Block`` tuple of a layout and a ``RenderFormat``.
Output: the provider body as plain JSON values and the cache breakpoints (byte
offsets into the rendered text), or ``RenderError(RENDER_PROVIDER_RULE)`` naming the
rule and the items.

* ``text``: the body is the rendered text itself.
* ``openai-chat``: ``{"messages": [...], "tools": [...]}`` (``tools`` only when a
  tool definition is selected): each tool definition in ``tools`` as a function with
  its JSON Schema ``parameters``; one ``system`` message with the rest of the stable
  section, one ``user`` message with the evidence, then one message per conversation
  item (a tool call is an ``assistant`` message whose content is the item's header and
  whose ``tool_calls`` carries the content as ``arguments``; its result a ``tool``
  message), the query as the last ``user`` message.
* ``anthropic-messages``: ``{"system": [text blocks], "messages": [...], "tools":
  [...]}``: each tool definition in ``tools`` (``name``, ``description``,
  ``input_schema``); one block per other item, consecutive blocks of one role merged
  into one message (so roles alternate and a tool result opens the user turn after
  its call), ``tool_use`` ``input`` parsed from the call's content, and
  ``cache_control`` breakpoints at the end of the stable section, of the evidence and
  of the conversation (at most 3 of Anthropic's 4).

In both chat formats the body's parts, read in the order ``tools``, system, messages
(each tool definition as its whole item block; message contents and text blocks; a
call's ``arguments``, or the content its ``input`` was parsed from), concatenate to
the rendered text: the body is bound to the same bytes. A rendering with nothing to
send (no item but tool definitions, no instruction or query) is
``RenderError(RENDER_EMPTY)`` in every format.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ..model.errors import RenderError
from ..model.rendering import RenderFormat
from ..stages.identities import canonical_json
from . import gemini, responses
from .layout import Block
from .parts import (
    arguments,
    call_of,
    checked_calls,
    messages_of,
    rule,
    tool_definition,
    tool_entry,
    tools_of,
)

__all__ = ["body_json", "build_body", "check_anthropic", "check_openai", "tool_definition"]

MAX_BREAKPOINTS = 4
_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_EPHEMERAL = {"type": "ephemeral"}


def build_body(
    blocks: tuple[Block, ...], fmt: RenderFormat, *, placed: bool = False
) -> tuple[Any, tuple[int, ...]]:
    """The provider body and its cache breakpoints: at the ends of the sections, or
    with ``placed`` (a cache-aware layout) exactly where the blocks say (none when the
    request's provider caches by itself)."""
    _check_sendable(blocks)
    if fmt is RenderFormat.TEXT:
        return "".join(b.text for b in blocks), ()
    checked_calls(blocks)
    if fmt is RenderFormat.OPENAI_RESPONSES:
        return responses.build(blocks), ()
    if fmt is RenderFormat.GEMINI:
        return gemini.build(blocks), ()
    if fmt is RenderFormat.OPENAI_CHAT:
        tools = tools_of(blocks, "openai")
        messages = _openai(blocks)
        check_openai(messages)
        return ({"messages": messages, "tools": tools} if tools else {"messages": messages}), ()
    body, breakpoints = _anthropic(blocks, placed)
    check_anthropic(body)
    return body, breakpoints


def body_json(
    blocks: tuple[Block, ...], fmt: RenderFormat, *, placed: bool = False
) -> tuple[str, tuple[int, ...]]:
    """``canonical_json`` of ``build_body``'s body, and its breakpoints. An
    ``openai-chat`` body is written from each message's canonical JSON, a conversation
    item's made once per block (``Block.pieces``): a session's next call writes only
    the new items' (the checks are ``build_body``'s, in its order)."""
    if fmt is not RenderFormat.OPENAI_CHAT:
        body, breakpoints = build_body(blocks, fmt, placed=placed)
        return canonical_json(body), breakpoints
    _check_sendable(blocks)
    checked_calls(blocks)
    tools = [_tool_piece(b) for b in blocks if b.kind == "tool_definition"]
    # the body's bytes, joined once: each message is a few parts, a content's JSON
    # string among them (written by orjson, as the standard encoder writes it)
    parts: list[bytes] = [b'{"messages":[']
    checks: list[dict[str, Any]] = []
    for block in messages_of(blocks):
        if isinstance(block, tuple):
            role, text = block
            parts += (_CONTENT, orjson.dumps(text), _ROLE_END[role], b",")
            checks.append(_ROLE_ONLY[role])
        else:
            made = block.pieces.get("openai")
            if made is None:
                made = block.pieces["openai"] = _openai_piece(block)
            parts += made[0]
            checks.append(made[1])
    check_openai(checks)
    if len(parts) > 1:
        parts.pop()  # the last message's comma
    parts.append(b'],"tools":[' + b",".join(tools) + b"]}" if tools else b"]}")
    return b"".join(parts).decode("utf-8"), ()


# a message's canonical JSON before and after its content, by role (and the comma that
# ends it in the list); what check_openai reads of a message that is not a tool call or
# result (its role alone)
_CONTENT = b'{"content":'
_ROLE_END = {role: b',"role":"' + role.encode() + b'"}' for role in ("system", "user", "assistant")}
_ROLE_ONLY = {role: {"role": role} for role in ("system", "user", "assistant")}


def _openai_piece(block: Block) -> tuple[tuple[bytes, ...], dict[str, Any]]:
    """A conversation item's message as the parts of its canonical JSON (``_openai``'s
    dict, keys sorted) and, last, the comma after it; and what ``check_openai`` reads."""
    dumps = orjson.dumps
    if block.kind == "tool_call":
        call_id, name = call_of(block)
        header = dumps(block.header) if block.header else b"null"
        piece: tuple[bytes, ...] = (
            _CONTENT, header, b',"role":"assistant","tool_calls":[{"function":{"arguments":',
            dumps(block.content), b',"name":', dumps(name), b'},"id":', dumps(call_id),
            b',"type":"function"}]}', b",",
        )  # fmt: skip
        return piece, {"role": "assistant", "tool_calls": [{"id": call_id}]}
    if block.kind == "tool_result":
        call_id, _ = call_of(block)
        piece = (
            _CONTENT, dumps(block.text), b',"role":"tool","tool_call_id":', dumps(call_id), b"}",
            b",",
        )  # fmt: skip
        return piece, {"role": "tool", "tool_call_id": call_id}
    role = "assistant" if block.kind == "assistant_turn" else "user"
    return (_CONTENT, dumps(block.text), _ROLE_END[role], b","), _ROLE_ONLY[role]


def _tool_piece(block: Block) -> bytes:
    """A tool definition's ``tools`` entry as canonical JSON, made once per block."""
    made: bytes | None = block.pieces.get("openai")
    if made is None:
        made = block.pieces["openai"] = canonical_json(tool_entry(block, "openai")).encode()
    return made


def _check_sendable(blocks: tuple[Block, ...]) -> None:
    if all(b.kind == "tool_definition" for b in blocks):
        raise RenderError(
            "RENDER_EMPTY",
            "the bundle renders to no message (no item but tool definitions, no instruction"
            " or query): there is nothing to send",
        )


def _openai(blocks: tuple[Block, ...]) -> list[dict[str, Any]]:
    """Messages in block order: each run of system-prompt blocks one ``system`` message,
    each run of evidence one ``user`` message, every conversation item its own."""
    messages: list[dict[str, Any]] = []
    for block in messages_of(blocks):
        if isinstance(block, tuple):
            messages.append({"role": block[0], "content": block[1]})
        elif block.kind == "tool_call":
            call_id, name = call_of(block)
            function = {"name": name, "arguments": block.content}
            messages.append({"role": "assistant", "content": block.header or None,
                             "tool_calls": [{"id": call_id, "type": "function",
                                             "function": function}]})  # fmt: skip
        elif block.kind == "tool_result":
            call_id, _ = call_of(block)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": block.text})
        else:
            role = "assistant" if block.kind == "assistant_turn" else "user"
            messages.append({"role": role, "content": block.text})
    return messages


def _anthropic(blocks: tuple[Block, ...], placed: bool) -> tuple[dict[str, Any], tuple[int, ...]]:
    system: list[dict[str, Any]] = []
    tools = tools_of(blocks, "anthropic")
    entries: list[tuple[str, dict[str, Any]]] = []
    breakpoints: list[int] = []
    offset = 0
    tool_index = 0
    for index, block in enumerate(blocks):
        text = block.text
        # str.isascii reads a flag the string keeps: only other text is encoded to count
        offset += len(text) if text.isascii() else len(text.encode("utf-8"))
        last_of_section = index + 1 == len(blocks) or blocks[index + 1].section != block.section
        if block.kind == "tool_definition":
            # tools come first (Anthropic caches tools, then system, then messages): a
            # stable section of tools alone ends with a breakpoint on its last tool
            if block.breakpoint if placed else last_of_section:
                tools[tool_index]["cache_control"] = dict(_EPHEMERAL)
                breakpoints.append(offset)
            tool_index += 1
            continue
        if block.section == "stable":
            out: list[tuple[str, dict[str, Any]]] = [
                ("system", {"type": "text", "text": block.text})
            ]
        elif block.kind == "tool_call":
            call_id, name = call_of(block)
            use = {"type": "tool_use", "id": call_id, "name": name, "input": arguments(block)}
            # a text block may not be empty: a call without a header is its use alone
            out = [("assistant", {"type": "text", "text": block.header})] if block.header else []
            out.append(("assistant", use))
        elif block.kind == "tool_result":
            call_id, _ = call_of(block)
            out = [("user", {"type": "tool_result", "tool_use_id": call_id, "content": block.text})]
        else:
            role = "assistant" if block.kind == "assistant_turn" else "user"
            # a text block may not be empty: an empty turn sends nothing
            out = [(role, {"type": "text", "text": block.text})] if block.text else []
        # A breakpoint caches the prefix up to the end of a section (or where a
        # cache-aware layout put one); the query ends the body: caching it buys nothing.
        # An empty turn's ends where the block before it does: that block carries it.
        if block.breakpoint if placed else last_of_section and block.section != "query":
            before = out[-1][1] if out else (entries[-1][1] if entries else None)
            if before is not None and "cache_control" not in before:
                before["cache_control"] = dict(_EPHEMERAL)
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
    body: dict[str, Any] = {"system": system, "messages": messages}
    if tools:
        body["tools"] = tools
    return body, tuple(breakpoints)


def check_openai(messages: list[dict[str, Any]], *, system_first: bool = True) -> None:
    """System material first (``system_first``: the rendering's layout rule; the API
    takes system messages anywhere), no leading tool message, every tool message
    directly after the assistant message that made its call, every call answered."""
    seen_other = False
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "system" and seen_other and system_first:
            raise rule("system-first", f"a system message at position {index} follows others")
        if role != "system" and not seen_other:
            seen_other = True
            if role == "tool":
                raise rule("no-leading-tool", "the first message after the system is a tool one")
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                raise rule(
                    "tool-result-after-call",
                    f"tool message {message['tool_call_id']!r} does not answer the call before it",
                )
            open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            raise rule("tool-call-answered", f"tool calls {open_calls} are not answered")
        open_calls = [call["id"] for call in message.get("tool_calls", [])]
    if open_calls:
        raise rule("tool-call-answered", f"tool calls {open_calls} are not answered")


def check_anthropic(body: dict[str, Any]) -> None:
    """Messages start with a user turn and alternate; tool results open the user turn
    right after the assistant turn that called them, and answer every call; tool ids
    fit Anthropic's pattern; at most four cache breakpoints."""
    messages = body["messages"]
    if not messages:
        raise rule("messages-non-empty", "there is no message: give evidence or a query")
    if messages[0]["role"] != "user":
        raise rule("first-message-user", "the first message is not a user turn")
    system = body.get("system") or []
    marks = sum("cache_control" in b for b in system) if isinstance(system, list) else 0
    marks += sum("cache_control" in t for t in body.get("tools", []))
    previous_calls: list[str] = []
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"]:
            raise rule("roles-alternate", f"two {message['role']} turns in a row at {index}")
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        marks += sum("cache_control" in b for b in content)
        if any(b["type"] == "text" and not b["text"] for b in content):
            raise rule("non-empty-text", f"turn {index} has an empty text block")
        answered: list[str] = []
        for position, block in enumerate(content):
            if block["type"] == "tool_result":
                if message["role"] != "user" or position != len(answered):
                    raise rule("tool-result-first", "a tool result must open a user turn")
                answered.append(block["tool_use_id"])
        if message["role"] == "user" and sorted(answered) != sorted(previous_calls):
            raise rule(
                "tool-result-after-call",
                f"turn {index} answers {answered}, the turn before called {previous_calls}",
            )
        calls = [b["id"] for b in content if b["type"] == "tool_use"]
        for call in calls:
            if not _TOOL_ID.match(call):
                raise rule("tool-id-pattern", f"tool call id {call!r} is not [A-Za-z0-9_-]+")
        previous_calls = calls if message["role"] == "assistant" else []
    if previous_calls:
        raise rule("tool-call-answered", f"tool calls {previous_calls} are not answered")
    if marks > MAX_BREAKPOINTS:
        raise rule("cache-breakpoints", f"{marks} cache breakpoints, at most {MAX_BREAKPOINTS}")
