"""The Anthropic Messages body: built from a layout's blocks, checked, counted as billed.

Input: the blocks of a layout (``Piece``) and whether a cache-aware layout placed the
breakpoints; or a body (``{"system"?, "messages", "tools"?}``) and a ``Meter``.
Output: ``body``: the ``Body`` (``{"system": [text blocks], "messages": [...],
"tools": [...]}``) with its cache breakpoints, checked by ``check``, or
``RenderError(RENDER_PROVIDER_RULE)``; ``tokens``: a body's tokens as billed, and its
parts' (``message_tokens``, ``block_tokens``, ``system_tokens``, ``tools_tokens``).

The body: each tool definition in ``tools`` (``name``, ``description``,
``input_schema``); one block per other item, consecutive blocks of one role merged
into one message (so roles alternate and a tool result opens the user turn after its
call), ``tool_use`` ``input`` parsed from the call's content, and ``cache_control``
breakpoints at the end of the stable section, of the evidence and of the conversation
(at most 3 of the 4 allowed), or, in a cache-aware layout, where the blocks say. Its
parts, read in the order ``tools``, system, messages, concatenate to the rendered text.

Counting (figures and sources: ``assembler/facts/anthropic.json``): no tokenizer is
published, so text is a calibrated estimate (the model's encoding times its
``estimate_factor``); each message and each tool block its framing; images by the
vision formula; the tool definitions as their JSON's estimate, plus the model's
tool-use system prompt when the body has tools.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from ...facts import Provider, RenderFormat, cache_rules, framing, provider_facts
from ...stages.identities import canonical_json
from ..images import image_size
from ..interface import Body, Piece
from ..meter import Meter, json_text
from ..pieces import arguments, call_of, rule, tools_of

__all__ = [
    "FORMAT",
    "MAX_BREAKPOINTS",
    "block_tokens",
    "build",
    "check",
    "image_tokens",
    "message_tokens",
    "overheads",
    "system_tokens",
    "tokens",
    "tool_definition",
    "tools_tokens",
]

FORMAT = RenderFormat.ANTHROPIC_MESSAGES
_MESSAGE = framing(FORMAT, "message")
_TOOL_USE = framing(FORMAT, "tool_use")
_IMAGES = provider_facts(Provider.ANTHROPIC).images
# the breakpoints one request may set (a cache rules figure, the same for every family)
MAX_BREAKPOINTS = cache_rules(Provider.ANTHROPIC).breakpoints
_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_EPHEMERAL = {"type": "ephemeral"}


def tool_definition(named: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``tools`` entry: its name, description and ``input_schema``."""
    return {**named, "input_schema": schema}


def build(blocks: Sequence[Piece], *, placed: bool = False) -> Body:
    """The body of ``blocks``: breakpoints at the ends of the sections, or with
    ``placed`` (a cache-aware layout) exactly where the blocks say."""
    value, breakpoints = _built(blocks, placed)
    check(value)
    # the value is made again when asked for, from the blocks (not kept meanwhile)
    return Body(canonical_json(value), breakpoints, partial(_value, tuple(blocks), placed))


def _value(blocks: tuple[Piece, ...], placed: bool) -> dict[str, Any]:
    return _built(blocks, placed)[0]


def _built(blocks: Sequence[Piece], placed: bool) -> tuple[dict[str, Any], tuple[int, ...]]:
    system: list[dict[str, Any]] = []
    tools = tools_of(blocks, tool_definition)
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
            # tools come first (tools are cached, then system, then messages): a stable
            # section of tools alone ends with a breakpoint on its last tool
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
    value: dict[str, Any] = {"system": system, "messages": messages}
    if tools:
        value["tools"] = tools
    return value, tuple(breakpoints)


def check(body: Mapping[str, Any], *, system_first: bool = True) -> None:
    """Messages start with a user turn and alternate; tool results open the user turn
    right after the assistant turn that called them, and answer every call; tool ids
    fit the pattern; at most ``MAX_BREAKPOINTS`` cache breakpoints (``system_first``:
    a system prompt has its own field, so it is always first)."""
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


# -- counting -------------------------------------------------------------------------


def block_tokens(meter: Meter, block: Mapping[str, Any]) -> int:
    """A content block's tokens: a text, an image, thinking, a tool use or result."""
    kind = block.get("type")
    if kind == "text":
        tokens = meter.text(str(block.get("text", "")))
    elif kind == "image":
        tokens = image_tokens(_image_size(block))
    elif kind == "thinking":
        tokens = meter.text(str(block.get("thinking", "")))
    elif kind == "tool_use":
        tokens = (_TOOL_USE + meter.text(str(block.get("name", "")))
                  + meter.text(json_text(block["input"])))  # fmt: skip
    elif kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            tokens = _TOOL_USE + sum(block_tokens(meter, b) for b in content)
        else:
            tokens = _TOOL_USE + meter.text(str(content))
    else:
        # redacted thinking, documents and other blocks: their JSON, an over-estimate
        tokens = meter.text(json_text(block))
    return meter.scaled(tokens)


def message_tokens(meter: Meter, message: Mapping[str, Any]) -> int:
    content = message.get("content", "")
    if isinstance(content, str):
        return meter.scaled(_MESSAGE + meter.text(content))
    return meter.scaled(_MESSAGE) + sum(block_tokens(meter, b) for b in content)


def system_tokens(meter: Meter, system: str | Sequence[Mapping[str, Any]] | None) -> int:
    if not system:
        return 0
    if isinstance(system, str):
        return meter.scaled(meter.text(system))
    return sum(block_tokens(meter, b) for b in system)


def tools_tokens(meter: Meter, tools: Iterable[Mapping[str, Any]]) -> int:
    tools = list(tools)
    if not tools:
        return 0
    return meter.scaled(sum(meter.text(json_text(t)) for t in tools))


def _tool_prompt(meter: Meter, with_tools: bool) -> int:
    """The tool-use system prompt added when the body has tools."""
    return meter.scaled(meter.profile.tool_prompt) if with_tools else 0


def tokens(meter: Meter, body: Mapping[str, Any]) -> int:
    tools = body.get("tools", [])
    return (
        system_tokens(meter, body.get("system"))
        + sum(message_tokens(meter, m) for m in body.get("messages", []))
        + tools_tokens(meter, tools)
        + _tool_prompt(meter, bool(tools))
    )


def overheads(meter: Meter, with_tools: bool) -> list[tuple[str, int]]:
    """The framing a body pays beside its parts, named: the tool-use system prompt."""
    prompt = _tool_prompt(meter, with_tools)
    return [("Anthropic's tool-use system prompt", prompt)] if prompt else []


def image_tokens(size: tuple[int, int] | None) -> int:
    """An image's input tokens: scaled down to the long edge and pixels allowed, then
    its pixels over the pixels per token, rounded up; ``size`` None prices the largest."""
    long_edge, pixels = _IMAGES["long_edge"], _IMAGES["pixels"]
    per_token = _IMAGES["pixels_per_token"]
    if size is None:
        return math.ceil(pixels / per_token)
    width, height = float(size[0]), float(size[1])
    scale = min(1.0, long_edge / max(width, height), math.sqrt(pixels / (width * height)))
    return max(1, math.ceil(width * scale * height * scale / per_token))


def _image_size(block: Mapping[str, Any]) -> tuple[int, int] | None:
    source = block.get("source", {})
    if source.get("type") == "base64":
        return image_size(str(source.get("data", "")))
    return None
