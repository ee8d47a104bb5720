"""Gemini contents and tools in and out of the neutral form
(``providers/neutral.py``) for ``fit(..., source=FORMAT)``.

Input: contents of parts (thought parts are left out; calls without ids get ids by
position, as Gemini pairs them), or neutral messages. Output: ``read`` the neutral
messages and the instruction's text, ``write`` the contents (a model turn's calls as
``functionCall`` parts, results as ``functionResponse`` parts), ``tool_of`` /
``tools_as`` the declared functions and one tool declaring them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..neutral import (
    Neutral,
    add,
    declared,
    no_equivalent,
    split,
    system_text,
)  # fmt: skip

__all__ = ["read", "tool_of", "tools_as", "write"]


def read(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    out: Neutral = []
    pending: dict[str, list[str]] = {}  # function name -> the ids of its open calls, in order
    for index, content in enumerate(listed):
        parts: list[dict[str, Any]] = []
        called = 0
        for number, part in enumerate(content["parts"]):
            at = f"{where}[{index}].parts[{number}]"
            if part.get("thought"):
                continue  # a thought summary, bound to the model that thought it
            if isinstance(part.get("text"), str):
                parts.append({"text": part["text"]})
            elif "functionCall" in part:
                call = part["functionCall"]
                called += 1
                call_id = str(call.get("id") or f"call_{index}_{called}")
                pending.setdefault(call["name"], []).append(call_id)
                parts.append({"call": {"id": call_id, "name": call["name"],
                                       "args": dict(call.get("args", {}))}})  # fmt: skip
            elif "functionResponse" in part:
                answer = part["functionResponse"]
                open_ids = pending.get(answer["name"], [])
                call_id = str(answer.get("id") or (open_ids[0] if open_ids else answer["name"]))
                if call_id in open_ids:
                    open_ids.remove(call_id)
                response = answer.get("response", {})
                text = (str(response.get("output", "")) if set(response) <= {"output"}
                        else json.dumps(response, ensure_ascii=False, sort_keys=True))  # fmt: skip
                parts.append({"result": {"id": call_id, "name": answer["name"], "text": text}})
            elif isinstance(part.get("inlineData"), Mapping):
                data = part["inlineData"]
                parts.append({"image": f"data:{data.get('mimeType')};base64,{data.get('data')}"})
            elif isinstance(part.get("fileData"), Mapping):
                parts.append({"image": str(part["fileData"].get("fileUri"))})
            else:
                raise no_equivalent(at, "a part with " + ", ".join(sorted(part)))
        add(out, "assistant" if content["role"] == "model" else "user", parts)
    return out, system_text(system)


def write(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[dict[str, Any]] = []
    for message in messages:
        results, calls, others = split(message)
        parts: list[Any] = [
            {
                "functionResponse": {
                    "id": r["id"],
                    "name": r["name"],
                    "response": {"output": r["text"]},
                }
            }
            for r in results
        ]
        for part in others:
            if "text" in part:
                if part["text"]:
                    parts.append({"text": part["text"]})
            elif part["image"].startswith("data:") and ";base64," in part["image"]:
                media, data = part["image"].removeprefix("data:").split(";base64,", 1)
                parts.append({"inlineData": {"mimeType": media, "data": data}})
            else:
                parts.append({"fileData": {"fileUri": part["image"]}})
        parts.extend({"functionCall": {"id": c["id"], "name": c["name"], "args": c["args"]}}
                     for c in calls)  # fmt: skip
        if not parts:
            continue
        role = "model" if message["role"] == "assistant" else "user"
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out, system or None


def tool_of(tool: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """Each function a tool declares (a built-in tool has no equivalent)."""
    functions = tool.get("functionDeclarations", tool.get("function_declarations"))
    if isinstance(functions, list) and set(tool) <= {
        "functionDeclarations",
        "function_declarations",
    }:
        return [
            declared(
                d["name"], d.get("description"), d.get("parameters", d.get("parametersJsonSchema"))
            )
            for d in functions
        ]
    raise no_equivalent(f"tools[{number}]", "a built-in tool")


def tools_as(functions: list[dict[str, Any]]) -> list[Any]:
    return [{"functionDeclarations": functions}] if functions else []
