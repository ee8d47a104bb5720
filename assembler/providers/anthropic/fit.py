"""An Anthropic Messages list (with ``system`` and ``tools``) cut into units for ``fit``, and back.

Input: the messages (``content`` a string or blocks: text, image, document,
thinking, redacted_thinking, tool_use, tool_result), the system prompt and the tool
definitions a caller would pass to ``client.messages.create``, and a ``Meter``.
Output: ``Unit`` values (``units``) and, from the chosen forms, the messages back
(``back``), in the original order, ready to send; ``assembled`` makes the body;
``check_entry`` and ``check_tools`` check each entry's shape first, naming the
caller's path.

* An assistant message is one unit, sent whole or not at all: its thinking blocks
  keep their signatures and are never edited, and its ``tool_use`` blocks stay with
  them. When it calls tools, the ``tool_result`` blocks that answer it (each its own
  unit, with shorter forms when long) are coupled with it by a group.
* A user message's other blocks (text, images, documents) are one unit; an assistant
  message depends on the user message before it when that one holds no tool result,
  so that two assistant turns never meet when a user turn is left out.
* The first and the last user messages, the newest message, the system prompt and
  the tools are required.

Coming back, the kept blocks of each message are put together in their order, and
neighbouring messages of one role are merged (roles alternate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ...errors import InvalidRequest
from ...model.types import Kind
from ..interface import Problem
from ..meter import Meter
from ..units import Form, Unit, first_and_last_user, short, tool_result_forms
from .body import block_tokens, message_tokens, system_tokens, tools_tokens

__all__ = [
    "assembled",
    "back",
    "check_entry",
    "check_tools",
    "claims",
    "content_text",
    "looks_like",
    "units",
]


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, Mapping):
            kind = block.get("type")
            if kind == "text":
                parts.append(str(block.get("text", "")))
            elif kind == "thinking":
                parts.append(str(block.get("thinking", "")))
            elif kind == "tool_result":
                parts.append(content_text(block.get("content", "")))
    return "\n".join(parts)


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content", "")
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _system_unit(system: Any, meter: Meter) -> Unit | None:
    if not system:
        return None
    return Unit(
        "system", -2, 0, Kind.SYSTEM, (Form("full", system, system_tokens(meter, system)),),
        required=True, text=content_text(system),
    )  # fmt: skip


def units(
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str = "messages",
) -> list[Unit]:
    """The units of the messages, the tools and the system prompt (see the module)."""
    out = _message_units(messages, tools, meter, elide_above)
    head = _system_unit(system, meter)
    return out if head is None else [*out, head]


def _message_units(
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    meter: Meter,
    elide_above: int,
) -> list[Unit]:
    units: list[Unit] = []
    open_calls: dict[str, int] = {}
    keep = first_and_last_user(messages)
    previous_plain_user: str | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(
                f"messages[{index}]", "must be a message with role 'user' or 'assistant'"
            )
        key = f"m{index:05d}"
        blocks = _blocks(message)
        if message["role"] == "assistant":
            if open_calls:
                raise _unanswered(open_calls)
            calls = [
                b.get("id")
                for b in blocks
                if isinstance(b, Mapping) and b.get("type") == "tool_use"
            ]
            for call in calls:
                if str(call) in open_calls:
                    raise InvalidRequest(
                        f"messages[{index}].content", f"repeats tool_use id {call!r}"
                    )
                open_calls[str(call)] = index
            units.append(
                Unit(
                    key, index, 0, Kind.ASSISTANT_TURN,
                    (Form("full", message, message_tokens(meter, message)),),
                    required=index == len(messages) - 1,
                    group=f"calls:{index}" if calls else None,
                    depends_on=(previous_plain_user,) if previous_plain_user else (),
                    text=content_text(blocks),
                )
            )  # fmt: skip
            previous_plain_user = None
            continue
        results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        others = [
            b for b in blocks if not (isinstance(b, Mapping) and b.get("type") == "tool_result")
        ]
        for part, block in enumerate(results, start=1):
            call_id = str(block.get("tool_use_id"))
            if call_id not in open_calls:
                raise InvalidRequest(
                    f"messages[{index}].content",
                    f"a tool_result answers {call_id!r}, which the turn before did not call",
                )
            owner = open_calls.pop(call_id)
            content = block.get("content", "")
            # the first result also pays its message's framing, in case it travels alone
            framing = message_tokens(meter, {"role": "user", "content": []}) if part == 1 else 0
            forms = tool_result_forms(
                content_text(content),
                call_id,
                partial(_with_content, block),
                partial(_priced, meter, framing),
                elide_above,
            )
            if not (
                isinstance(content, str)
                or all(isinstance(c, Mapping) and c.get("type") == "text" for c in content)
            ):
                forms = forms[:1]  # images in a result are sent whole or not at all
            units.append(
                Unit(f"{key}.r{part}", index, part, Kind.USER_TURN, forms,
                     group=f"calls:{owner}", text=content_text(content))
            )  # fmt: skip
        if open_calls:
            raise _unanswered(open_calls)
        if others:
            # the message's framing is paid by this unit, or by its results when it has none
            piece = {**message, "content": others}
            units.append(
                Unit(
                    f"{key}.u", index, len(results) + 1, Kind.USER_TURN,
                    (Form("full", others, message_tokens(meter, piece)),),
                    required=index in keep or index == len(messages) - 1,
                    text=content_text(others),
                )
            )  # fmt: skip
        previous_plain_user = f"{key}.u" if others and not results else None
        if index == len(messages) - 1 and results:
            _require(units, {u.key for u in units if u.message == index})
    if open_calls:
        raise _unanswered(open_calls)
    for number, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidRequest(f"tools[{number}]", "must be a tool definition object")
        units.append(
            Unit(
                f"tool{number:04d}", -1, number, Kind.TOOL_DEFINITION,
                (Form("full", tool, tools_tokens(meter, [tool])),),
                required=True, text=str(tool.get("name", "")),
            )
        )  # fmt: skip
    return units


def _with_content(block: Mapping[str, Any], text: str) -> dict[str, Any]:
    return {**block, "content": text}


def _priced(meter: Meter, framing: int, piece: Mapping[str, Any]) -> int:
    return block_tokens(meter, piece) + framing


def _unanswered(open_calls: Mapping[str, int]) -> InvalidRequest:
    call, index = next(iter(open_calls.items()))
    return InvalidRequest(
        f"messages[{index}].content",
        f"tool_use {call!r} is not answered by the next user message",
    )


def _require(units: list[Unit], keys: set[str]) -> None:
    for position, unit in enumerate(units):
        if unit.key in keys and not unit.required:
            units[position] = replace(unit, required=True)


def back(
    messages: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Form]
) -> list[Any]:
    """The chosen pieces as messages, in order, neighbours of one role merged."""
    by_message: dict[int, list[Unit]] = {}
    for unit in units:
        if unit.message >= 0 and unit.key in chosen:
            by_message.setdefault(unit.message, []).append(unit)
    out: list[dict[str, Any]] = []
    for index in sorted(by_message):
        original = messages[index]
        if original["role"] == "assistant" or isinstance(original.get("content"), str):
            piece = dict(original)  # whole, as given: an assistant turn is never edited
        else:
            content: list[Any] = []
            for unit in sorted(by_message[index], key=lambda u: u.part):
                payload = chosen[unit.key].payload
                # a result unit's payload is one block, the other blocks' a list
                content.extend(payload) if isinstance(payload, list) else content.append(payload)
            piece = {**original, "content": content}
        if out and out[-1]["role"] == piece["role"]:
            merged = _as_blocks(out[-1]["content"]) + _as_blocks(piece["content"])
            out[-1] = {**out[-1], "content": merged}
        else:
            out.append(piece)
    return out


def _as_blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def claims(listed: Sequence[Any]) -> bool:
    return True  # the provider's one format


def looks_like(entry: Mapping[str, Any]) -> bool:
    """An entry plainly of this format: content blocks only it uses."""
    content = entry.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result", "thinking")
        for b in content
    )


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body: ``{"system"?, "messages", "tools"?}``."""
    body: dict[str, Any] = {**extra}
    if system:
        body["system"] = system
    body["messages"] = list(messages)
    if tools:
        body["tools"] = list(tools)
    return body


# -- shapes -----------------------------------------------------------------------------

_BLOCKS = (
    "text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result",
    "server_tool_use", "web_search_tool_result", "search_result", "container_upload",
    "mcp_tool_use", "mcp_tool_result",
)  # fmt: skip


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    """A message's shape: its role, its content blocks and the fields each needs."""
    role = entry.get("role")
    if role not in ("user", "assistant"):
        if role == "system":
            return ".role", "must be user or assistant: the system prompt goes in system="
        return ".role", f"must be user or assistant, not {short(role)}"
    if "tool_calls" in entry:
        return ".tool_calls", "is not an Anthropic field: calls are tool_use blocks"
    if index == 0 and role != "user":
        return ".role", "first-message-user: an Anthropic conversation opens with a user turn"
    content = entry.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return ".content", f"must be a string or a list of content blocks, not {short(content)}"
    for number, block in enumerate(content):
        at = f".content[{number}]"
        if not isinstance(block, Mapping):
            return at, "must be a content block object"
        kind = block.get("type")
        if not isinstance(kind, str):
            return at + ".type", "is missing: every content block names its type"
        if kind not in _BLOCKS:
            return at + ".type", f"{short(kind)} is not an Anthropic content block type"
        needs = _NEEDS.get(kind)
        if needs is not None and not isinstance(block.get(needs[0]), needs[1]):
            return f"{at}.{needs[0]}", f"a {kind} block needs {needs[0]!r}"
        if kind == "tool_use" and not isinstance(block.get("id"), str):
            return at + ".id", "a tool_use block needs its id, a string"
        if kind == "text" and not block["text"]:
            return at + ".text", "non-empty-text: a text block may not be empty"
        if kind == "tool_result" and number and content[number - 1].get("type") != "tool_result":
            return at, "tool-result-first: tool_result blocks come first in a user turn"
        if kind == "tool_result" and "content" in block:
            inner = block["content"]
            if not isinstance(inner, str | list):
                return at + ".content", "must be a string or a list of content blocks"
    return None


# the field each block type cannot do without
_NEEDS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "text": ("text", str), "thinking": ("signature", str), "redacted_thinking": ("data", str),
    "tool_use": ("input", Mapping), "tool_result": ("tool_use_id", str),
}  # fmt: skip


def check_tools(tools: Sequence[Any]) -> None:
    """Each tool definition names its tool."""
    for number, tool in enumerate(tools):
        if not isinstance(tool.get("name"), str):
            raise InvalidRequest(f"tools[{number}].name", "must be the tool's name, a string")
