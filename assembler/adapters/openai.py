"""OpenAI Chat Completions: a ``messages`` list (and ``tools``) to units and back.

Input: the messages and tool definitions a caller would pass to
``client.chat.completions.create`` (plain dicts), and a ``Meter``.
Output: ``Unit`` values (``units_of``): each system, developer, user and assistant
message one unit; each tool message its own unit, coupled by a group with the
assistant message whose call it answers, with shorter forms when it is long; each tool
definition a required unit. ``messages_of`` turns the chosen forms back into the
list, in the original order, ready to send.

A transcript that is not valid for the API is refused with ``InvalidRequest`` naming
``messages[i]``: a tool message whose call no earlier assistant message made, or a
call left unanswered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ..model.errors import InvalidRequest
from ..model.types import Kind
from ..render.registry import Meter
from .units import Form, Unit, first_and_last_user, tool_result_forms

__all__ = ["messages_of", "text_of", "tools_of", "units_of"]

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


def _message(raw: Any, index: int) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidRequest(f"messages[{index}]", f"must be a message object, not {raw!r:.60}")
    role = raw.get("role")
    if role not in _KIND:
        raise InvalidRequest(
            f"messages[{index}].role", f"must be one of {', '.join(_KIND)}, not {role!r}"
        )
    return raw


def units_of(
    messages: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    meter: Meter,
    elide_above: int,
) -> list[Unit]:
    """The units of a Chat Completions transcript (see the module docstring)."""
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
                meter.openai_message,
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
                (Form("full", message, meter.openai_message(message)),),
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
                (Form("full", tool, meter.openai_tools([tool]) - 12),),
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


def messages_of(units: Sequence[Unit], chosen: Mapping[str, Form]) -> list[Any]:
    """The chosen messages, in their original order."""
    kept = [u for u in units if u.message >= 0 and u.key in chosen]
    kept.sort(key=lambda u: (u.message, u.part))
    return [chosen[u.key].payload for u in kept]


def tools_of(units: Sequence[Unit], chosen: Mapping[str, Form]) -> list[Any]:
    kept = sorted((u for u in units if u.message < 0 and u.key in chosen), key=lambda u: u.part)
    return [chosen[u.key].payload for u in kept]
