"""Gemini ``contents`` (with its instruction and tools) cut into units for ``fit``, and back.

Input: the contents a caller would pass to ``client.models.generate_content``
(``{"role": "user" | "model", "parts": [...]}``, parts being text, inline data,
``functionCall``, ``functionResponse``, thoughts with their ``thoughtSignature``), the
system instruction, the tools (``[{"functionDeclarations": [...]}, ...]``) and a
``Meter``.
Output: ``Unit`` values (``units``) and the kept contents back (``back``), in the
original order, neighbours of one role merged; ``assembled`` makes the body;
``check_entry`` and ``check_tools`` check each entry's shape first.

* A model content is one unit, sent whole or not at all: its thought parts and
  signatures are never edited, and the function responses answering its calls (each
  its own unit, long ones with shorter forms) are coupled with it by a group.
* A user content's other parts are one unit; a model turn depends on the user content
  before it when that one holds no function response, so that a call turn always
  follows a user turn and two model turns never meet.
* The first and last user contents, the newest content, the system instruction and the
  tools are required.

A list Gemini would refuse is an ``InvalidRequest`` naming ``contents[i]`` (or the
name the caller gave it): a response no call of the turn before asked for, a call the
next content does not answer, a call turn that does not follow a user turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from ...errors import InvalidRequest
from ...model.types import Kind
from ..interface import Problem
from ..meter import Meter
from ..units import Form, Unit, short, tool_result_forms
from .body import content_tokens, system_tokens, tools_tokens

__all__ = [
    "assembled",
    "back",
    "check_entry",
    "check_tools",
    "claims",
    "looks_like",
    "units",
]


def _text(parts: Any) -> str:
    out = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, Mapping):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif isinstance(part.get("functionResponse"), Mapping):
                out.append(_response_text(part["functionResponse"]))
    return "\n".join(out)


def _response_text(answer: Mapping[str, Any]) -> str:
    response = answer.get("response", {})
    if isinstance(response, Mapping) and set(response) <= {"output"}:
        return str(response.get("output", ""))
    return json.dumps(response, ensure_ascii=False, sort_keys=True)


def _key(value: Mapping[str, Any]) -> str:
    """A call and its response match by id when they carry one, else by name."""
    return str(value.get("id") or value.get("name"))


def _system_unit(system: Any, meter: Meter) -> Unit | None:
    if not system:
        return None
    text = system if isinstance(system, str) else _text(system.get("parts", []))
    return Unit("system", -2, 0, Kind.SYSTEM, (Form("full", system, system_tokens(meter, system)),),
                required=True, text=text)  # fmt: skip


def units(
    contents: Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str = "contents",
) -> list[Unit]:
    """The units of the contents, the tools and the system instruction (see the module)."""
    out = _content_units(contents, tools, meter, elide_above, where)
    head = _system_unit(system, meter)
    return out if head is None else [*out, head]


def _content_units(
    contents: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    meter: Meter,
    elide_above: int,
    where: str,
) -> list[Unit]:
    units: list[Unit] = []
    users = [i for i, c in enumerate(contents) if c["role"] == "user"]
    keep = {users[0], users[-1]} if users else set()
    pending: dict[str, int] = {}  # call key -> the model content that made it
    previous_plain_user: str | None = None
    for index, content in enumerate(contents):
        key = f"c{index:05d}"
        parts = list(content["parts"])
        if content["role"] == "model":
            if pending:
                raise _unanswered(pending, where)
            calls = [p["functionCall"] for p in parts if "functionCall" in p]
            if calls and (index == 0 or contents[index - 1]["role"] == "model"):
                raise InvalidRequest(
                    f"{where}[{index}]",
                    "function-call-turn: a function call turn must come right after a user"
                    " turn or after function responses",
                )
            for call in calls:
                if _key(call) in pending:
                    raise InvalidRequest(
                        f"{where}[{index}].parts",
                        f"repeats function call {_key(call)!r}: give each call its own id",
                    )
                pending[_key(call)] = index
            units.append(Unit(
                key, index, 0, Kind.ASSISTANT_TURN,
                (Form("full", content, content_tokens(meter, content)),),
                required=index == len(contents) - 1, group=f"calls:{index}" if calls else None,
                depends_on=(previous_plain_user,) if previous_plain_user else (),
                text=_text(parts),
            ))  # fmt: skip
            previous_plain_user = None
            continue
        answers = [(n, p) for n, p in enumerate(parts) if "functionResponse" in p]
        others = [p for p in parts if "functionResponse" not in p]
        for number, (position, part) in enumerate(answers, start=1):
            answer = part["functionResponse"]
            if _key(answer) not in pending:
                raise InvalidRequest(
                    f"{where}[{index}].parts[{position}].functionResponse",
                    f"answers {_key(answer)!r}, which the model turn before did not call",
                )
            owner = pending.pop(_key(answer))
            framing = content_tokens(meter, {"parts": []}) if number == 1 else 0
            forms = tool_result_forms(
                _response_text(answer), _key(answer), partial(_with_output, part),
                partial(_priced, meter, framing), elide_above,
            )  # fmt: skip
            units.append(Unit(f"{key}.r{number}", index, number, Kind.USER_TURN, forms,
                              group=f"calls:{owner}", text=_response_text(answer)))  # fmt: skip
        if pending:
            raise _unanswered(pending, where)
        if others:
            piece = {**content, "parts": others}
            units.append(Unit(
                f"{key}.u", index, len(answers) + 1, Kind.USER_TURN,
                (Form("full", others, content_tokens(meter, piece)),),
                required=index in keep or index == len(contents) - 1, text=_text(others),
            ))  # fmt: skip
        previous_plain_user = f"{key}.u" if others and not answers else None
        if index == len(contents) - 1 and answers:
            mine = {u.key for u in units if u.message == index}
            units = [replace(u, required=True) if u.key in mine else u for u in units]
    if pending:
        raise _unanswered(pending, where)
    for number, tool in enumerate(tools):
        units.append(Unit(
            f"tool{number:04d}", -1, number, Kind.TOOL_DEFINITION,
            (Form("full", tool, tools_tokens(meter, [tool])),), required=True,
            text=",".join(str(d.get("name")) for d in tool.get("functionDeclarations", [])),
        ))  # fmt: skip
    return units


def _with_output(part: Mapping[str, Any], text: str) -> dict[str, Any]:
    answer = part["functionResponse"]
    return {**part, "functionResponse": {**answer, "response": {"output": text}}}


def _priced(meter: Meter, framing: int, part: Mapping[str, Any]) -> int:
    return content_tokens(meter, {"parts": [part]}) - content_tokens(meter, {"parts": []}) + framing


def _unanswered(pending: Mapping[str, int], where: str) -> InvalidRequest:
    call, index = next(iter(pending.items()))
    return InvalidRequest(
        f"{where}[{index}]", f"function call {call!r} is not answered by the next user content"
    )


def back(
    contents: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Form]
) -> list[Any]:
    """The chosen pieces as contents, in order, neighbours of one role merged."""
    by_content: dict[int, list[Unit]] = {}
    for unit in units:
        if unit.message >= 0 and unit.key in chosen:
            by_content.setdefault(unit.message, []).append(unit)
    out: list[dict[str, Any]] = []
    for index in sorted(by_content):
        original = contents[index]
        if original["role"] == "model":
            piece = dict(original)  # whole, as given: a model turn is never edited
        else:
            parts: list[Any] = []
            for unit in sorted(by_content[index], key=lambda u: u.part):
                payload = chosen[unit.key].payload
                parts.extend(payload) if isinstance(payload, list) else parts.append(payload)
            piece = {**original, "parts": parts}
        if out and out[-1]["role"] == piece["role"]:
            out[-1] = {**out[-1], "parts": [*out[-1]["parts"], *piece["parts"]]}
        else:
            out.append(piece)
    return out


def claims(listed: Sequence[Any]) -> bool:
    return True  # the provider's one format


def looks_like(entry: Mapping[str, Any]) -> bool:
    """An entry plainly a content: it has parts, or the ``model`` role."""
    return "parts" in entry or entry.get("role") == "model"


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body: ``{"systemInstruction"?, "contents", "tools"?}`` (a system prompt
    given as a string becomes the instruction's one text part)."""
    body: dict[str, Any] = {**extra}
    if system:
        body["systemInstruction"] = (
            {"parts": [{"text": system}]} if isinstance(system, str) else system
        )
    body["contents"] = list(messages)
    if tools:
        body["tools"] = list(tools)
    return body


# -- shapes -----------------------------------------------------------------------------


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    """A content's shape: its role and parts, a call's and a response's fields."""
    role = entry.get("role")
    if "content" in entry and "parts" not in entry:
        return ".parts", (
            "is missing: a Gemini content carries parts (this looks like an OpenAI or"
            " Anthropic message, with content)"
        )
    if role not in ("user", "model"):
        return ".role", f"must be user or model, not {short(role)}"
    parts = entry.get("parts")
    if not isinstance(parts, list) or not parts:
        return ".parts", "must be a non-empty list of parts"
    for number, part in enumerate(parts):
        at = f".parts[{number}]"
        if not isinstance(part, Mapping) or not part:
            return at, "must be a part object"
        call = part.get("functionCall")
        if call is not None and (
            not isinstance(call, Mapping) or not isinstance(call.get("name"), str)
        ):
            return at + ".functionCall", "must be {name, args?}: a call names its function"
        if call is not None and not isinstance(call.get("args", {}), Mapping):
            return at + ".functionCall.args", "must be an object"
        answer = part.get("functionResponse")
        if answer is not None and (
            not isinstance(answer, Mapping) or not isinstance(answer.get("name"), str)
        ):
            return at + ".functionResponse", "must be {name, response}: it names its function"
        if answer is not None and not isinstance(answer.get("response", {}), Mapping):
            return at + ".functionResponse.response", "must be an object"
        if "text" in part and not isinstance(part["text"], str):
            return at + ".text", "must be a string"
    return None


def check_tools(tools: Sequence[Any]) -> None:
    """Each tool holds a list of named function declarations."""
    for number, tool in enumerate(tools):
        declarations = tool.get("functionDeclarations", [])
        if not isinstance(declarations, list) or not all(
            isinstance(d, Mapping) and isinstance(d.get("name"), str) for d in declarations
        ):
            raise InvalidRequest(
                f"tools[{number}].functionDeclarations",
                "must be a list of {name, ...} declarations",
            )
