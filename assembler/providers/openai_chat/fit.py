"""A Chat Completions ``messages`` list (and ``tools``) cut into units for ``fit``, and back.

Input: the messages and tool definitions a caller would pass to
``client.chat.completions.create`` (plain dicts), a system prompt given apart, and a
``Meter``.
Output: ``units``: each system, developer, user and assistant message one unit; each
tool message its own unit, coupled by a group with the assistant message whose call it
answers, with shorter forms when it is long; each tool definition a required unit; the
system prompt given apart a required unit. ``back`` turns the chosen forms back into
the list, in the original order, ready to send; ``assembled`` makes the body.
``check_entry`` and ``check_tools`` check each entry's shape first, naming the
caller's path (``messages[3].tool_calls[0].function``).

A transcript that is not valid for the API is refused with ``InvalidRequest`` naming
``messages[i]``: a tool message whose call no earlier assistant message made, or a
call left unanswered.
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
from .body import message_tokens, tool_tokens

__all__ = [
    "assembled",
    "back",
    "check_entry",
    "check_tools",
    "claims",
    "looks_like",
    "system_unit",
    "text_of",
    "units",
]

_KIND = {
    "system": Kind.SYSTEM,
    "developer": Kind.DEVELOPER,
    "user": Kind.USER_TURN,
    "assistant": Kind.ASSISTANT_TURN,
    # a tool message is a turn the model reads back; its coupling is the group
    "tool": Kind.USER_TURN,
}


def text_of(content: Any) -> str:
    """The text of a message's content (a string, or the text of its parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def claims(listed: Sequence[Any]) -> bool:
    """A list of chat messages: no entry names a ``type`` (the Responses API's items do)."""
    return not any(isinstance(m, Mapping) and "type" in m for m in listed)


def looks_like(entry: Mapping[str, Any]) -> bool:
    """An entry plainly a chat message, from keys only this format uses."""
    if "tool_calls" in entry or entry.get("role") in ("tool", "system", "developer"):
        return True
    return entry.get("role") == "assistant" and entry.get("content") is None


def _message(raw: Any, index: int) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidRequest(f"messages[{index}]", f"must be a message object, not {raw!r:.60}")
    role = raw.get("role")
    if role not in _KIND:
        raise InvalidRequest(
            f"messages[{index}].role", f"must be one of {', '.join(_KIND)}, not {role!r}"
        )
    return raw


def system_unit(system: Any, tokens: int, text: Any) -> Unit:
    """The system prompt given apart: a required unit of ``tokens``."""
    return Unit("system", -2, 0, Kind.SYSTEM, (Form("full", system, tokens),), required=True,
                text=str(text))  # fmt: skip


def units(
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str = "messages",
) -> list[Unit]:
    """The units of a Chat Completions transcript (see the module docstring)."""
    out = message_units(messages, tools, meter, elide_above)
    if system is not None:
        message = {"role": "system", "content": system}
        out.append(system_unit(system, message_tokens(meter, message), system))
    return out


def message_units(
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    meter: Meter,
    elide_above: int,
) -> list[Unit]:
    """The units of the messages and tools (no system prompt given apart)."""
    units: list[Unit] = []
    open_calls: dict[str, int] = {}
    keep = first_and_last_user(messages)
    for index, raw in enumerate(messages):
        message = _message(raw, index)
        role = message["role"]
        key = f"m{index:05d}"
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise InvalidRequest(
                    f"messages[{index}].tool_call_id",
                    f"answers call {call_id!r}, which no earlier assistant message made"
                    " (or which was answered already)",
                )
            owner = open_calls.pop(str(call_id))
            forms = tool_result_forms(
                text_of(message.get("content")),
                str(call_id),
                partial(_with_content, message),
                partial(message_tokens, meter),
                elide_above,
            )
            if not isinstance(message.get("content"), str):
                forms = forms[:1]  # parts other than text are sent whole or not at all
            units.append(
                Unit(key, index, 0, Kind.USER_TURN, forms, group=f"calls:{owner}",
                     text=text_of(message.get("content")))
            )  # fmt: skip
            continue
        if open_calls:
            pending = next(iter(open_calls))
            raise InvalidRequest(
                f"messages[{open_calls[pending]}].tool_calls",
                f"call {pending!r} is not answered before messages[{index}]",
            )
        calls = message.get("tool_calls") or []
        for number, call in enumerate(calls):
            if str(call.get("id")) in open_calls:
                raise InvalidRequest(
                    f"messages[{index}].tool_calls[{number}].id",
                    f"repeats call id {call.get('id')!r} of the same message",
                )
            open_calls[str(call.get("id"))] = index
        units.append(
            Unit(
                key,
                index,
                0,
                _KIND[role],
                (Form("full", message, message_tokens(meter, message)),),
                required=role in ("system", "developer") or index in keep,
                group=f"calls:{index}" if calls else None,
                text=text_of(message.get("content")),
            )
        )
    if open_calls:
        pending = next(iter(open_calls))
        raise InvalidRequest(
            f"messages[{open_calls[pending]}].tool_calls", f"call {pending!r} is never answered"
        )
    _require_last(units)
    for number, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidRequest(f"tools[{number}]", "must be a tool definition object")
        units.append(
            Unit(
                f"tool{number:04d}",
                -1,
                number,
                Kind.TOOL_DEFINITION,
                (Form("full", tool, tool_tokens(meter, tool)),),
                required=True,
                text=str(tool.get("function", tool).get("name", "")),
            )
        )
    return units


def _with_content(message: Mapping[str, Any], text: str) -> dict[str, Any]:
    return {**message, "content": text}


def _require_last(units: list[Unit]) -> None:
    # the newest message is the turn being answered: it and its group stay
    if units and not units[-1].required:
        units[-1] = replace(units[-1], required=True)


def back(
    messages: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Form]
) -> list[Any]:
    """The chosen messages, in their original order."""
    kept = [u for u in units if u.message >= 0 and u.key in chosen]
    kept.sort(key=lambda u: (u.message, u.part))
    return [chosen[u.key].payload for u in kept]


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body: ``{"messages", "tools"?}``, a system prompt given apart first."""
    body: dict[str, Any] = {**extra}
    if system:
        messages = [{"role": "system", "content": system}, *messages]
    body["messages"] = list(messages)
    if tools:
        body["tools"] = list(tools)
    return body


# -- shapes -----------------------------------------------------------------------------

_ROLES = ("system", "developer", "user", "assistant", "tool")


def text_or_parts(content: Any, null_ok: bool) -> Problem:
    """A content that is a string, or a list of typed parts (an image part with its url)."""
    if content is None and null_ok:
        return None
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return ".content", f"must be a string or a list of parts, not {short(content)}"
    for number, part in enumerate(content):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            return f".content[{number}]", "must be a part object with a string 'type'"
        image = part.get("image_url")
        if part["type"] == "image_url" and not (isinstance(image, Mapping) and image.get("url")):
            return f".content[{number}].image_url", "an image_url part needs its url"
    return None


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    """A chat message's shape: its role, its tool calls, its content."""
    role = entry.get("role")
    if role not in _ROLES:
        return ".role", f"must be one of {', '.join(_ROLES)}, not {short(role)}"
    calls = entry.get("tool_calls")
    if "tool_calls" in entry and role != "assistant":
        return ".tool_calls", "only an assistant message makes tool calls"
    if calls is not None:
        if not isinstance(calls, list):
            return ".tool_calls", f"must be a list of tool calls, not {short(calls)}"
        for number, call in enumerate(calls):
            at = f".tool_calls[{number}]"
            if not isinstance(call, Mapping):
                return at, "must be a tool call object"
            if not isinstance(call.get("id"), str) or not call["id"]:
                return at + ".id", "must be the call's id, a non-empty string"
            function = call.get("function")
            if not isinstance(function, Mapping):
                return at + ".function", "must be {name, arguments}: every call names its function"
            if not isinstance(function.get("name"), str):
                return at + ".function.name", "must be the function's name, a string"
            if not isinstance(function.get("arguments"), str):
                return at + ".function.arguments", "must be the arguments' JSON text, a string"
    if role == "tool" and not isinstance(entry.get("tool_call_id"), str):
        return ".tool_call_id", "a tool message names the call it answers, a string"
    # an assistant message may leave content null when it calls tools or refuses
    null_ok = role == "assistant" and (bool(calls) or "refusal" in entry)
    if "content" not in entry and not null_ok:
        return ".content", "is missing"
    return text_or_parts(entry.get("content"), null_ok)


def check_tools(tools: Sequence[Any]) -> None:
    """Each tool definition: ``{type: "function", function: {name, parameters?}}``."""
    for number, tool in enumerate(tools):
        path = f"tools[{number}]"
        function = tool.get("function")
        if tool.get("type") == "function" and not isinstance(function, Mapping):
            raise InvalidRequest(path + ".function", "must be {name, parameters?}")
        if isinstance(function, Mapping) and not isinstance(function.get("name"), str):
            raise InvalidRequest(path + ".function.name", "must be the tool's name")
