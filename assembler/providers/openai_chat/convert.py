"""Chat Completions messages and tools in and out of the neutral form
(``providers/neutral.py``) for ``fit(..., source=FORMAT)``.

Input: chat messages (a system or developer message's text joins the system prompt; a
tool message becomes a result part), or neutral messages. Output: ``read`` the neutral
messages and the system prompt's text, ``write`` the chat messages (each result a tool
message before the rest of its turn), ``tool_of`` / ``tools_as`` the declared functions
and function tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..neutral import (
    Neutral,
    add,
    arguments,
    declared,
    no_equivalent,
    split,
    system_text,
    text_of,
)  # fmt: skip

__all__ = ["read", "tool_of", "tools_as", "write"]


def read(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    names: dict[str, str] = {}
    out: Neutral = []
    prompts = [system_text(system)] if system else []
    for index, message in enumerate(listed):
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            prompts.append(text_of(content))
            continue
        if role == "tool":
            call = str(message["tool_call_id"])
            part = {"result": {"id": call, "name": names.get(call, ""), "text": text_of(content)}}
            add(out, "user", [part])
            continue
        parts: list[dict[str, Any]] = []
        for number, piece in enumerate(content if isinstance(content, list) else []):
            at = f"{where}[{index}].content[{number}]"
            if piece.get("type") in ("text", "input_text", "output_text"):
                parts.append({"text": piece["text"]})
            elif piece.get("type") == "image_url":
                parts.append({"image": piece["image_url"]["url"]})
            elif piece.get("type") != "refusal":
                raise no_equivalent(at, f"a {piece.get('type')} part")
        if isinstance(content, str) and content:
            parts.append({"text": content})
        for number, call in enumerate(message.get("tool_calls") or []):
            at = f"{where}[{index}].tool_calls[{number}]"
            names[str(call["id"])] = call["function"]["name"]
            given = arguments(call["function"]["arguments"], at + ".function.arguments")
            parts.append({"call": {"id": str(call["id"]), "name": call["function"]["name"],
                                   "args": given}})  # fmt: skip
        add(out, "assistant" if role == "assistant" else "user", parts)
    return out, "\n\n".join(p for p in prompts if p)


def write(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[Any] = []
    for message in messages:
        results, calls, others = split(message)
        out.extend({"role": "tool", "tool_call_id": r["id"], "content": r["text"]} for r in results)
        if message["role"] == "assistant":
            text = "\n".join(p["text"] for p in others if "text" in p)
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in calls
                ]  # fmt: skip
            out.append(entry)
        elif others:
            out.append({"role": "user", "content": _chat_content(others)})
    return out, system or None


def _chat_content(parts: list[Any]) -> Any:
    if all("text" in p for p in parts):
        return "\n".join(p["text"] for p in parts)
    return [
        {"type": "text", "text": p["text"]} if "text" in p
        else {"type": "image_url", "image_url": {"url": p["image"]}}
        for p in parts
    ]  # fmt: skip


def tool_of(tool: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """A function tool's name, description and JSON Schema."""
    if isinstance(tool.get("function"), Mapping):
        f = tool["function"]
        return [declared(f["name"], f.get("description"), f.get("parameters"))]
    raise no_equivalent(f"tools[{number}]", "a tool other than a function")


def tools_as(functions: list[dict[str, Any]]) -> list[Any]:
    return [{"type": "function", "function": d} for d in functions]
