"""The ``gemini`` format: a layout's blocks as a Gemini ``generateContent`` body.

Input: the ``Block`` tuple of a layout.
Output: ``{"systemInstruction": {"parts": [...]}, "contents": [...], "tools":
[{"functionDeclarations": [...]}]}`` (the system instruction and tools only when
present), checked by ``check_gemini``; or ``RenderError(RENDER_PROVIDER_RULE)``.

Every block is one part: the stable section's in ``systemInstruction``, the rest in
``contents`` (evidence, user turns, tool results and the query as ``user``, assistant
turns and tool calls as ``model``), consecutive parts of one role merged into one
content. A tool call is a ``functionCall`` part (``id`` = its tool call id, ``name``,
``args`` parsed from the content; a text part with the item's header before it when
headers frame items); its result a ``functionResponse`` part (``id``, ``name``,
``response: {"output": block}``) opening the next user content. Each tool definition
is a function declaration with its JSON Schema as ``parametersJsonSchema``. The
body's texts, in the order ``tools``, ``systemInstruction``, ``contents`` (text parts,
a call's arguments, a response's output), concatenate to the rendered text; Gemini
caches prefixes by itself, so the body has no breakpoints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .layout import Block
from .parts import arguments, call_of, rule, tools_of

__all__ = ["build", "check_gemini"]


def build(blocks: tuple[Block, ...]) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    entries: list[tuple[str, dict[str, Any]]] = []
    # a result names its function as its call does (a result item has no tool_name)
    names = dict(call_of(b) for b in blocks if b.kind == "tool_call")
    for block in blocks:
        if block.kind == "tool_definition":
            continue
        if block.section == "stable":
            system.append({"text": block.text})
        elif block.kind == "tool_call":
            call_id, name = call_of(block)
            if block.header:
                entries.append(("model", {"text": block.header}))
            call = {"id": call_id, "name": name, "args": arguments(block)}
            entries.append(("model", {"functionCall": call}))
        elif block.kind == "tool_result":
            call_id, _ = call_of(block)
            answer = {"id": call_id, "name": names.get(call_id, ""),
                      "response": {"output": block.text}}  # fmt: skip
            entries.append(("user", {"functionResponse": answer}))
        elif block.text:  # a part may not be empty: an empty turn sends nothing
            entries.append(("model" if block.kind == "assistant_turn" else "user",
                            {"text": block.text}))  # fmt: skip
    contents: list[dict[str, Any]] = []
    for role, part in entries:
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].append(part)
        else:
            contents.append({"role": role, "parts": [part]})
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": system}
    body["contents"] = contents
    declarations = tools_of(blocks, "gemini")
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
    check_gemini(body)
    return body


def _calls(parts: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    out = []
    for part in parts:
        value = part.get(key)
        if isinstance(value, Mapping):
            out.append(str(value.get("id") or value.get("name")))
    return out


def check_gemini(body: Mapping[str, Any]) -> None:
    """Contents are not empty, roles are ``user`` or ``model`` and alternate, a model
    turn with function calls comes right after a user turn, and the next content
    answers each of its calls (by id, else by name) with function responses first."""
    contents = body.get("contents") or []
    if not contents:
        raise rule("contents-non-empty", "there is no content: give evidence or a query")
    pending: list[str] = []
    for index, content in enumerate(contents):
        role = content.get("role")
        if role not in ("user", "model"):
            raise rule("content-role", f"contents[{index}] has role {role!r}, not user or model")
        if index and contents[index - 1].get("role") == role:
            raise rule("roles-alternate", f"two {role} contents in a row at contents[{index}]")
        parts = content.get("parts") or []
        if not parts or any(part.get("text") == "" for part in parts):
            raise rule("parts-non-empty", f"contents[{index}] has an empty part or no part")
        answers = _calls(parts, "functionResponse")
        if answers and (role != "user" or _calls(parts[: len(answers)], "functionResponse")
                        != answers):  # fmt: skip
            raise rule("tool-result-first", "function responses must open a user content")
        if role == "user" and sorted(answers) != sorted(pending):
            raise rule(
                "tool-result-after-call",
                f"contents[{index}] answers {answers}, the turn before called {pending}",
            )
        calls = _calls(parts, "functionCall")
        if calls and role == "model" and index == 0:
            raise rule(
                "function-call-turn",
                "a function call turn must come right after a user turn or function responses",
            )
        pending = calls if role == "model" else []
    if pending:
        raise rule("tool-call-answered", f"function calls {pending} are not answered")
