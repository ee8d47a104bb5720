"""Responses input items and tools in and out of the neutral form
(``providers/neutral.py``) for ``fit(..., source=FORMAT)``.

Input: input items (reasoning items are left out: bound to the model that produced
them; a hosted call has no equivalent), or neutral messages. Output: ``read`` the
neutral messages and the system prompt's text, ``write`` the items (a call a
``function_call``, a result its ``function_call_output``), ``tool_of`` / ``tools_as``
the declared functions and function tools.
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
    for index, item in enumerate(listed):
        kind = item.get("type", "message")
        at = f"{where}[{index}]"
        if kind == "reasoning":
            continue  # bound to the model that produced it
        if kind == "function_call":
            names[str(item["call_id"])] = item["name"]
            call = {"id": str(item["call_id"]), "name": item["name"],
                    "args": arguments(item["arguments"], at + ".arguments")}  # fmt: skip
            add(out, "assistant", [{"call": call}])
        elif kind == "function_call_output":
            call_id = str(item["call_id"])
            result = {
                "id": call_id,
                "name": names.get(call_id, ""),
                "text": text_of(item["output"]),
            }
            add(out, "user", [{"result": result}])
        elif kind == "message":
            role = item["role"]
            if role in ("system", "developer"):
                prompts.append(text_of(item.get("content")))
                continue
            content = item.get("content")
            parts: list[dict[str, Any]] = []
            if isinstance(content, str):
                parts.append({"text": content})
            for number, piece in enumerate(content if isinstance(content, list) else []):
                if piece.get("type") in ("input_text", "output_text", "text"):
                    parts.append({"text": piece["text"]})
                elif piece.get("type") == "input_image" and piece.get("image_url"):
                    parts.append({"image": piece["image_url"]})
                elif piece.get("type") != "refusal":
                    raise no_equivalent(f"{at}.content[{number}]", f"a {piece.get('type')} part")
            add(out, "assistant" if role == "assistant" else "user", parts)
        else:
            raise no_equivalent(at, f"an item of type {kind}")
    return out, "\n\n".join(p for p in prompts if p)


def write(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[Any] = []
    for message in messages:
        results, calls, others = split(message)
        out.extend({"type": "function_call_output", "call_id": r["id"], "output": r["text"]}
                   for r in results)  # fmt: skip
        if message["role"] == "assistant":
            text = "\n".join(p["text"] for p in others if "text" in p)
            if text:
                out.append({"role": "assistant", "content": text})
            out.extend({"type": "function_call", "call_id": c["id"], "name": c["name"],
                        "arguments": json.dumps(c["args"])} for c in calls)  # fmt: skip
        elif others:
            content = (
                "\n".join(p["text"] for p in others) if all("text" in p for p in others)
                else [{"type": "input_text", "text": p["text"]} if "text" in p
                      else {"type": "input_image", "image_url": p["image"]} for p in others]
            )  # fmt: skip
            out.append({"role": "user", "content": content})
    return out, system or None


def tool_of(tool: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """A function tool's name, description and JSON Schema."""
    if tool.get("type") == "function":
        return [declared(tool["name"], tool.get("description"), tool.get("parameters"))]
    raise no_equivalent(f"tools[{number}]", f"a hosted {tool.get('type')} tool")


def tools_as(functions: list[dict[str, Any]]) -> list[Any]:
    return [{"type": "function", **d} for d in functions]
