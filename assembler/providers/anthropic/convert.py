"""Anthropic messages and tools in and out of the neutral form
(``providers/neutral.py``) for ``fit(..., source=FORMAT)``.

Input: messages of content blocks (thinking blocks are left out: signed for the model
that thought them; a document has no equivalent), or neutral messages. Output:
``read`` the neutral messages and the system prompt's text, ``write`` the messages
(results first in their user turn, neighbours of one role merged), ``tool_of`` /
``tools_as`` the declared functions and custom tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..neutral import (
    Neutral,
    add,
    declared,
    image_source,
    no_equivalent,
    split,
    system_text,
    text_of,
)  # fmt: skip

__all__ = ["read", "tool_of", "tools_as", "write"]


def read(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    names: dict[str, str] = {}
    out: Neutral = []
    for index, message in enumerate(listed):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts: list[dict[str, Any]] = []
        for number, block in enumerate(blocks):
            kind, at = block.get("type"), f"{where}[{index}].content[{number}]"
            if kind == "text":
                parts.append({"text": block["text"]})
            elif kind in ("thinking", "redacted_thinking"):
                continue  # signed for the model that thought it
            elif kind == "tool_use":
                names[str(block["id"])] = block["name"]
                parts.append({"call": {"id": str(block["id"]), "name": block["name"],
                                       "args": dict(block["input"])}})  # fmt: skip
            elif kind == "tool_result":
                call = str(block["tool_use_id"])
                text = text_of(block.get("content", ""))
                parts.append({"result": {"id": call, "name": names.get(call, ""), "text": text}})
            elif kind == "image" and isinstance(block.get("source"), Mapping):
                parts.append({"image": _image_url(block["source"], at)})
            else:
                raise no_equivalent(at, f"a {kind} block")
        add(out, message["role"], parts)
    return out, system_text(system)


def _image_url(source: Mapping[str, Any], at: str) -> str:
    if source.get("type") == "url":
        return str(source["url"])
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    raise no_equivalent(at, f"an image of source type {source.get('type')}")


def write(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[dict[str, Any]] = []
    for message in messages:
        results, calls, others = split(message)
        blocks: list[Any] = [
            {"type": "tool_result", "tool_use_id": r["id"], "content": r["text"]} for r in results
        ]
        for part in others:
            if "text" in part:
                if part["text"]:
                    blocks.append({"type": "text", "text": part["text"]})
            else:
                blocks.append({"type": "image", "source": image_source(part["image"])})
        blocks.extend({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
                      for c in calls)  # fmt: skip
        if not blocks:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message["role"], "content": blocks})
    return out, system or None


def tool_of(tool: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    """A custom tool's name, description and JSON Schema."""
    if "input_schema" in tool:
        return [declared(tool["name"], tool.get("description"), tool["input_schema"])]
    raise no_equivalent(f"tools[{number}]", f"a {tool.get('type')} tool")


def tools_as(functions: list[dict[str, Any]]) -> list[Any]:
    return [
        {**{k: v for k, v in d.items() if k != "parameters"}, "input_schema": d["parameters"]}
        for d in functions
    ]
