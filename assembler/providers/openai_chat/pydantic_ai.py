"""Pydantic AI messages, fitted as the Chat Completions messages they stand for.

Input: a list of ``pydantic_ai.messages`` values (``ModelRequest`` with system, user,
tool-return and retry parts; ``ModelResponse`` with text, tool-call and thinking
parts), as a history processor receives them (``pip install 'assembler[pydantic-ai]'``),
and a ``Meter``.
Output: the ``Api`` of ``providers/interface.py`` for such a list (``NAME``
``pydantic-ai``): ``units`` of the chat messages the parts make (each request part
its own message, each response one assistant message), whose payloads say which parts
of which message they keep; ``back`` (the caller's own messages with the kept parts,
a shortened tool return as a copy of its part; a message with no part kept is left
out), ``assembled`` (the body as Chat Completions dicts) and ``claims``. The coupling
rules, counting and overheads are the chat format's: a tool call and its returns are
kept together, an answer with its question.

Thinking parts are priced as their text and stay with their response, never edited.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..framework import (
    BODY_FIELDS,
    OUTPUT_FIELDS,
    check_body,
    check_entry,
    check_tools,
    marks,
    read,
    tool_marks,
    tool_of,
    tools_as,
    write,
)  # fmt: skip
from ..meter import Meter
from ..units import Elision, Unit
from . import fit
from .body import FORMAT, build, check, message_tokens, overheads, tokens

__all__ = [
    "BODY_FIELDS", "ENTRY", "FORMAT", "LIST_KEY", "LIST_NAME", "NAME", "OUTPUT_FIELDS",
    "SYSTEM_KEY", "TITLE", "assembled", "back", "build", "check", "check_body", "check_entry",
    "check_tools", "claims", "marks", "overheads", "read", "tokens", "tool_marks", "tool_of",
    "tools_as", "units", "write",
]  # fmt: skip

NAME = "pydantic-ai"
LIST_KEY = "messages"
SYSTEM_KEY = "system"
LIST_NAME = "messages"
TITLE = "Pydantic AI"
ENTRY = "a Pydantic AI message"


@dataclass(frozen=True, slots=True)
class KeptParts:
    """A unit's payload: the chat dict it was priced as, the message it comes from, the
    indices of its parts, and a part to put in place of the only one (shortened)."""

    chat: dict[str, Any]
    message: int
    parts: tuple[int, ...]
    instead: Any = None


def claims(listed: Sequence[Any]) -> bool:
    """True when ``listed`` holds Pydantic AI messages."""
    if not isinstance(listed, Sequence) or isinstance(listed, str | bytes) or not listed:
        return False
    return type(listed[0]).__module__.startswith("pydantic_ai.")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _chats(messages: Sequence[Any]) -> list[KeptParts]:
    """The chat messages the parts make, each with where it comes from."""
    out: list[KeptParts] = []
    for index, message in enumerate(messages):
        if message.kind == "response":
            text = [p.content for p in message.parts if p.part_kind in ("text", "thinking")]
            calls = [
                {"id": p.tool_call_id, "type": "function",
                 "function": {"name": p.tool_name, "arguments": p.args_as_json_str()}}
                for p in message.parts if p.part_kind == "tool-call"
            ]  # fmt: skip
            chat: dict[str, Any] = {"role": "assistant", "content": "\n".join(text) or None}
            if calls:
                chat["tool_calls"] = calls
            out.append(KeptParts(chat, index, tuple(range(len(message.parts)))))
            continue
        for number, part in enumerate(message.parts):
            kind = part.part_kind
            if kind == "system-prompt":
                chat = {"role": "system", "content": part.content}
            elif kind == "user-prompt":
                chat = {"role": "user", "content": _text(part.content)}
            elif kind == "tool-return" or (kind == "retry-prompt" and part.tool_name):
                text = part.model_response_str() if kind == "tool-return" else part.model_response()
                chat = {"role": "tool", "tool_call_id": part.tool_call_id, "content": text}
            else:  # a retry prompt not tied to a tool call reads as a user turn
                chat = {"role": "user", "content": part.model_response()}
            out.append(KeptParts(chat, index, (number,)))
    return out


def units(
    messages: Sequence[Any],
    tools: Sequence[Any],
    system: Any,
    meter: Meter,
    elide_above: Elision | int,
    where: str = "messages",
) -> list[Unit]:
    kept = _chats(messages)
    out: list[Unit] = []
    for unit in fit.message_units([k.chat for k in kept], list(tools), meter, elide_above):
        if unit.message < 0:
            out.append(unit)
            continue
        source = kept[unit.message]
        forms = tuple(
            replace(form, payload=source if form.name == "full" else _shortened(
                messages, source, form.payload["content"]))
            for form in unit.forms
        )  # fmt: skip
        # the unit names the caller's message; its place among the chat messages orders it
        out.append(replace(unit, message=source.message, part=unit.message, forms=forms))
    if system is not None:
        message = {"role": "system", "content": system}
        out.append(fit.system_unit(system, message_tokens(meter, message), system))
    return out


def _shortened(messages: Sequence[Any], source: KeptParts, text: str) -> KeptParts:
    (number,) = source.parts
    part = messages[source.message].parts[number]
    return replace(source, chat={**source.chat, "content": text},
                   instead=replace(part, content=text))  # fmt: skip


def back(listed: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Any]) -> list[Any]:
    """The caller's messages with their kept parts, in order."""
    parts: dict[int, dict[int, Any]] = {}
    for unit in units:
        if unit.message >= 0 and unit.key in chosen:
            kept: KeptParts = chosen[unit.key].payload
            message = listed[kept.message]
            for number in kept.parts:
                parts.setdefault(kept.message, {})[number] = (
                    kept.instead if kept.instead is not None else message.parts[number]
                )
    out = []
    for index in sorted(parts):
        message = listed[index]
        whole = [parts[index][n] for n in sorted(parts[index])]
        same = len(whole) == len(message.parts) and all(
            a is b for a, b in zip(whole, message.parts, strict=True)
        )
        out.append(message if same else replace(message, parts=whole))
    return out


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body as Chat Completions dicts, a system prompt given apart first."""
    body: dict[str, Any] = {**extra, "messages": [k.chat for k in _chats(messages)]}
    if system:
        body["messages"].insert(0, {"role": "system", "content": system})
    if tools:
        body["tools"] = list(tools)
    return body
