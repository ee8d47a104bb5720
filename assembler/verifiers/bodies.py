"""The render verifier's reading of the ``openai-responses`` and ``gemini`` bodies.

Input: a provider body as JSON values (``models/README.md`` section 14).
Output: the body's parts in the order their text is rendered (``Part``: a tool
definition, a text, a tool call's arguments) and the provider rules it breaks, each a
line naming the rule. It imports nothing from the renderer or the provider rooms
(``assembler.providers``): both are re-derived here, a second reading on purpose.

* ``openai-responses``: ``tools`` (each ``{type: "function", name, description?,
  parameters}``), then ``input``: a message's string content, a ``function_call``'s
  ``arguments``, a ``function_call_output``'s ``output``. Rules: system messages
  first, no output before any other item, each output after its call, every call
  answered before the next message.
* ``gemini``: ``tools[*].functionDeclarations`` (``{name, description?,
  parametersJsonSchema}``), ``systemInstruction.parts``, then ``contents[*].parts``: a
  ``text``, a ``functionCall``'s ``args`` (parsed), a ``functionResponse``'s
  ``response.output``. Rules: roles ``user`` / ``model`` alternating, a call turn
  after a user turn, the next user content answering every call first, by id and name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

__all__ = ["Part", "tool_entry", "walk"]


@dataclass(frozen=True, slots=True)
class Part:
    """``tool``: ``value`` a tools entry; ``text``: a string; ``call``: ``key`` the
    call id, ``value`` its arguments (``parsed`` when a JSON value, not its text)."""

    kind: str
    value: Any
    key: str = ""
    parsed: bool = False


def tool_entry(content: str, provider: str) -> Any:
    """A tool definition's ``tools`` entry for ``provider``, re-derived from section 14."""
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if isinstance(value, dict) and value.get("type") == "function" and "function" in value:
        value = value["function"]
    if not isinstance(value, dict):
        return None
    schema = value.get("parameters", value.get("input_schema", {"type": "object"}))
    entry: dict[str, Any] = {"name": value.get("name")}
    if "description" in value:
        entry["description"] = value["description"]
    if provider == "openai":
        return {"type": "function", "function": {**entry, "parameters": schema}}
    if provider == "responses":
        return {"type": "function", **entry, "parameters": schema}
    if provider == "gemini":
        return {**entry, "parametersJsonSchema": schema}
    return {**entry, "input_schema": schema}


def walk(fmt: str, body: Any) -> tuple[list[Part], list[str]]:
    """The parts of a ``fmt`` body in text order, and the rules it breaks."""
    if fmt == "openai-responses":
        return _responses(body)
    return _gemini(body)


def _responses(body: dict[str, Any]) -> tuple[list[Part], list[str]]:
    parts = [Part("tool", entry) for entry in body.get("tools", [])]
    broken: list[str] = []
    open_calls: set[str] = set()
    seen_other = False
    for item in body["input"]:
        kind = item.get("type", "message")
        if kind == "message":
            if not isinstance(item["content"], str):
                broken.append("message-content: a rendered message's content is its text")
                continue
            parts.append(Part("text", item["content"]))
            if item["role"] in ("system", "developer"):
                if seen_other:
                    broken.append("system-first: a system message follows other items")
                continue
            if open_calls and item["role"] != "assistant":
                broken.append("tool-call-answered: a function call is not answered")
                open_calls = set()
        elif kind == "function_call":
            parts.append(Part("call", item["arguments"], key=item["call_id"]))
            open_calls.add(item["call_id"])
        elif kind == "function_call_output":
            parts.append(Part("text", item["output"]))
            if not seen_other:
                broken.append("no-leading-tool: an output leads the input")
            if item["call_id"] not in open_calls:
                broken.append("tool-result-after-call: an output answers no call before it")
            open_calls.discard(item["call_id"])
        else:
            broken.append(f"input-item: a rendering has no {kind!r} item")
        seen_other = seen_other or item.get("role") not in ("system", "developer")
    if open_calls:
        broken.append("tool-call-answered: a function call is not answered")
    return parts, broken


def _gemini(body: dict[str, Any]) -> tuple[list[Part], list[str]]:
    parts = [
        Part("tool", entry)
        for tool in body.get("tools", [])
        for entry in tool["functionDeclarations"]
    ]
    broken: list[str] = []
    for part in body.get("systemInstruction", {"parts": []})["parts"]:
        parts.append(Part("text", part["text"]))
    contents = body["contents"]
    if not contents:
        broken.append("contents-non-empty: there is no content")
    pending: dict[str, str] = {}
    for index, content in enumerate(contents):
        role = content["role"]
        if role not in ("user", "model"):
            broken.append(f"content-role: a content's role is {role!r}")
        if index and contents[index - 1]["role"] == role:
            broken.append("roles-alternate: two contents of one role in a row")
        answered: dict[str, str] = {}
        calls: dict[str, str] = {}
        leading = True
        for part in content["parts"]:
            if "functionResponse" in part:
                answer = part["functionResponse"]
                answered[str(answer.get("id"))] = str(answer.get("name"))
                parts.append(Part("text", answer["response"]["output"]))
                if not leading or role != "user":
                    broken.append("tool-result-first: function responses open a user content")
                continue
            leading = False
            if "functionCall" in part:
                call = part["functionCall"]
                calls[str(call.get("id"))] = str(call.get("name"))
                parts.append(Part("call", call["args"], key=str(call.get("id")), parsed=True))
            else:
                parts.append(Part("text", part["text"]))
        if role == "user" and answered != pending:
            broken.append("tool-result-after-call: responses do not answer the calls before them")
        if calls and index == 0:
            broken.append("function-call-turn: a call turn must follow a user turn")
        pending = calls if role == "model" else {}
    if pending:
        broken.append("tool-call-answered: a function call is not answered")
    return parts, broken
