"""An OpenAI Responses ``input`` item list (and ``tools``) cut into units for ``fit``, and back.

Input: the items a caller would pass as ``client.responses.create(input=...)``
(messages, ``reasoning``, ``function_call`` / ``function_call_output``, hosted tool
calls, MCP approval requests and responses, opaque items such as compaction), the
tools, and a ``Meter``.
Output: ``Unit`` values (``units``) and the kept items back (``back``), in the
original order, ready to send; ``assembled`` makes the body (the system prompt as its
``instructions``); ``check_entry`` and ``check_tools`` check each entry's shape first.

* An assistant turn, the run of items the model produced together (its reasoning,
  messages and calls), is one unit, sent whole or not at all: a reasoning item keeps
  its ``encrypted_content`` and stays with the item it produced, and is never edited.
* Each output answering a call of that turn (``function_call_output``, custom, computer
  and shell outputs) and each approval response is its own unit (long outputs with
  shorter forms), coupled with the turn by a group.
* User, system and developer messages are one unit each; system and developer
  messages, the first and last user messages, the newest item and any item of a type
  this adapter does not know (compaction, item references: opaque, so kept whole) are
  required.

A list the API would refuse is an ``InvalidRequest`` naming ``input[i]``: an output
whose call no earlier item made, a call left unanswered before the next message, a
reasoning item not followed by what it produced.
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
from ..openai_chat.body import message_tokens, tool_tokens
from ..openai_chat.fit import system_unit, text_or_parts
from ..units import Form, Unit, short, tool_result_forms
from .body import item_tokens

__all__ = [
    "assembled",
    "back",
    "check_entry",
    "check_tools",
    "claims",
    "looks_like",
    "units",
]

# the items a model turn produces together
_TURN = frozenset({
    "reasoning", "function_call", "custom_tool_call", "web_search_call", "file_search_call",
    "computer_call", "code_interpreter_call", "image_generation_call", "local_shell_call",
    "mcp_call", "mcp_list_tools", "mcp_approval_request",
})  # fmt: skip
# the items answering a call of the turn before them; hosted calls need no answer
_ANSWERS = {
    "function_call_output": "function_call",
    "custom_tool_call_output": "custom_tool_call",
    "computer_call_output": "computer_call",
    "local_shell_call_output": "local_shell_call",
}


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message"))


def _role_kind(item: Mapping[str, Any]) -> str:
    kind = _kind(item)
    if kind == "message" and item.get("role") == "assistant":
        return "turn"
    if kind in _TURN:
        return "turn"
    if kind in _ANSWERS or kind == "mcp_approval_response":
        return "answer"
    return "message" if kind == "message" else "opaque"


def _text(item: Mapping[str, Any]) -> str:
    content = item.get("content", item.get("output", ""))
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def units(
    items: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str = "input",
) -> list[Unit]:
    """The units of the items, the tools and the instructions (see the module)."""
    out = _item_units(items, tools, meter, elide_above, where)
    if system is not None:
        message = {"role": "developer", "content": system}
        out.append(system_unit(system, message_tokens(meter, message), system))
    return out


def _item_units(
    items: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    meter: Meter,
    elide_above: int,
    where: str,
) -> list[Unit]:
    units: list[Unit] = []
    users = [i for i, item in enumerate(items) if _role_kind(item) == "message"
             and item.get("role") == "user"]  # fmt: skip
    keep = {users[0], users[-1]} if users else set()
    # call id -> (the call's item index, its type, its turn's index)
    open_calls: dict[str, tuple[int, str, int]] = {}
    requests: dict[str, int] = {}  # approval request id -> turn index
    index = 0
    while index < len(items):
        item = items[index]
        what = _role_kind(item)
        if what == "turn":
            end = index
            while end < len(items) and _role_kind(items[end]) == "turn":
                end += 1
            if open_calls:
                raise _unanswered(open_calls, index, where)
            turn = list(items[index:end])
            if _kind(turn[-1]) == "reasoning":
                raise InvalidRequest(
                    f"{where}[{end - 1}]",
                    "a reasoning item must be followed by the item it produced (a message or"
                    " a call of the same turn)",
                )
            calls = False
            for offset, piece in enumerate(turn):
                if _kind(piece) in _ANSWERS.values():
                    if str(piece["call_id"]) in open_calls:
                        raise InvalidRequest(
                            f"{where}[{index + offset}].call_id",
                            f"repeats call id {piece['call_id']!r} of the same turn",
                        )
                    open_calls[str(piece["call_id"])] = (index + offset, _kind(piece), index)
                    calls = True
                elif _kind(piece) == "mcp_approval_request":
                    requests[str(piece.get("id"))] = index
            units.append(Unit(
                f"i{index:05d}", index, 0, Kind.ASSISTANT_TURN,
                (Form("full", turn, sum(item_tokens(meter, p) for p in turn)),),
                required=end == len(items), group=f"calls:{index}" if calls or any(
                    _kind(p) == "mcp_approval_request" for p in turn) else None,
                text="\n".join(_text(p) for p in turn),
            ))  # fmt: skip
            index = end
            continue
        key = f"i{index:05d}"
        if what == "answer":
            kind = _kind(item)
            if kind == "mcp_approval_response":
                request = str(item.get("approval_request_id"))
                if request not in requests:
                    raise InvalidRequest(
                        f"{where}[{index}].approval_request_id",
                        f"answers approval request {request!r}, which no earlier item made",
                    )
                owner = requests.pop(request)
                forms: tuple[Form, ...] = (Form("full", item, item_tokens(meter, item)),)
            else:
                call = str(item.get("call_id"))
                if call not in open_calls or open_calls[call][1] != _ANSWERS[kind]:
                    raise InvalidRequest(
                        f"{where}[{index}].call_id",
                        f"answers call {call!r}, which no earlier {_ANSWERS[kind]} made"
                        " (or which was answered already)",
                    )
                _, _, owner = open_calls.pop(call)
                output = item.get("output")
                forms = tool_result_forms(
                    _text(item), call, partial(_with_output, item),
                    partial(item_tokens, meter), elide_above,
                )  # fmt: skip
                if not isinstance(output, str):
                    forms = forms[:1]  # images and files in an output go whole or not at all
            units.append(Unit(key, index, 0, Kind.USER_TURN, forms, group=f"calls:{owner}",
                              text=_text(item)))  # fmt: skip
            index += 1
            continue
        if open_calls:
            raise _unanswered(open_calls, index, where)
        role = item.get("role")
        kinds = {"system": Kind.SYSTEM, "developer": Kind.DEVELOPER}
        units.append(Unit(
            key, index, 0, kinds.get(str(role), Kind.USER_TURN),
            (Form("full", item, item_tokens(meter, item)),),
            required=what == "opaque" or role in kinds or index in keep
            or index == len(items) - 1, text=_text(item),
        ))  # fmt: skip
        index += 1
    if open_calls:
        raise _unanswered(open_calls, -1, where)
    last = units[-1]
    if last.group is not None:  # the newest item's turn: every answer of it stays
        units = [replace(u, required=True) if u.group == last.group else u for u in units]
    for number, tool in enumerate(tools):
        units.append(Unit(
            f"tool{number:04d}", -1, number, Kind.TOOL_DEFINITION,
            (Form("full", tool, tool_tokens(meter, tool)),), required=True,
            text=str(tool.get("name", tool.get("type", ""))),
        ))  # fmt: skip
    return units


def _with_output(item: Mapping[str, Any], text: str) -> dict[str, Any]:
    return {**item, "output": text}


def _unanswered(
    open_calls: Mapping[str, tuple[int, str, int]], before: int, where: str
) -> InvalidRequest:
    call, (index, kind, _) = next(iter(open_calls.items()))
    if before >= 0:
        return InvalidRequest(
            f"{where}[{index}]", f"{kind} {call!r} is not answered before {where}[{before}]"
        )
    return InvalidRequest(f"{where}[{index}]", f"{kind} {call!r} is never answered")


def back(listed: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Form]) -> list[Any]:
    """The kept items, in their original order (a turn's items together)."""
    out: list[Any] = []
    for unit in sorted((u for u in units if u.message >= 0 and u.key in chosen),
                       key=lambda u: u.message):  # fmt: skip
        payload = chosen[unit.key].payload
        out.extend(payload) if isinstance(payload, list) else out.append(payload)
    return out


def claims(listed: Sequence[Any]) -> bool:
    """A list of input items: some entry names its ``type``."""
    return any(isinstance(m, Mapping) and "type" in m for m in listed)


def looks_like(entry: Mapping[str, Any]) -> bool:
    """An entry plainly an input item: a type without a role, or parts only it uses."""
    if "role" not in entry and isinstance(entry.get("type"), str):
        return True
    content = entry.get("content")
    return isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("input_text", "output_text", "input_image")
        for b in content
    )


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body: ``{"instructions"?, "input", "tools"?}``."""
    body: dict[str, Any] = {**extra}
    if system:
        body["instructions"] = system
    body["input"] = list(messages)
    if tools:
        body["tools"] = list(tools)
    return body


# -- shapes -----------------------------------------------------------------------------


_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "computer_call_output",
                 "local_shell_call_output", "mcp_approval_response")  # fmt: skip


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    """An input item's shape: a message (role, content) or a typed item's fields."""
    kind = entry.get("type", "message" if "role" in entry else None)
    if not isinstance(kind, str):
        return ".type", "is missing: an input item is a message (role) or names its type"
    if kind == "message":
        role = entry.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            return ".role", f"must be user, assistant, system or developer, not {short(role)}"
        if "tool_calls" in entry:
            return ".tool_calls", "is a Chat Completions field: calls are function_call items"
        if "content" not in entry:
            return ".content", "is missing"
        return text_or_parts(entry.get("content"), False)
    if kind in ("function_call", "custom_tool_call"):
        for key in ("call_id", "name"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                return f".{key}", f"a {kind} item needs {key!r}, a non-empty string"
        key = "arguments" if kind == "function_call" else "input"
        if not isinstance(entry.get(key), str):
            return f".{key}", f"a {kind} item carries its {key} as a string"
    if kind in _OUTPUT_TYPES and kind != "mcp_approval_response":
        if not isinstance(entry.get("call_id"), str):
            return ".call_id", f"a {kind} item names the call it answers, a string"
        if kind == "function_call_output" and not isinstance(entry.get("output"), str | list):
            return ".output", "must be a string or a list of content parts"
    if kind == "mcp_approval_response" and not isinstance(entry.get("approval_request_id"), str):
        return ".approval_request_id", "an approval response names its request, a string"
    if kind == "reasoning" and not isinstance(entry.get("summary", []), list):
        return ".summary", "a reasoning item's summary is a list"
    return None


def check_tools(tools: Sequence[Any]) -> None:
    """Each tool names its type, and a function tool its name."""
    for number, tool in enumerate(tools):
        path = f"tools[{number}]"
        if not isinstance(tool.get("type"), str):
            raise InvalidRequest(path + ".type", "must name the tool's type (function, ...)")
        if tool["type"] == "function" and not isinstance(tool.get("name"), str):
            raise InvalidRequest(path + ".name", "a function tool needs its name")
