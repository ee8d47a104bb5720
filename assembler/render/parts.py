"""The pieces every provider body is made of: rule errors, tool calls, tool definitions.

Input: layout ``Block`` values (a tool call's, a tool definition's).
Output: a call's id, name and parsed arguments; a tool definition as one provider's
``tools`` entry; or ``RenderError(RENDER_PROVIDER_RULE)`` naming the rule and the item.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..model.errors import RenderError
from .layout import Block

__all__ = [
    "arguments",
    "block_id",
    "call_of",
    "checked_calls",
    "messages_of",
    "rule",
    "tool_definition",
    "tool_entry",
    "tools_of",
]

# the sections whose consecutive blocks make one message, and its role
_RUNS = {"stable": "system", "evidence": "user"}


def rule(name: str, message: str, items: tuple[str, ...] = ()) -> RenderError:
    return RenderError("RENDER_PROVIDER_RULE", message, items=items, rule=name)


def block_id(block: Block) -> str:
    return "" if block.candidate is None else block.candidate.id


def arguments(block: Block) -> dict[str, Any]:
    """A tool call's content parsed: it must be a JSON object."""
    try:
        value = json.loads(block.content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise rule(
            "tool-call-arguments", "a tool call's content must be a JSON object", (block_id(block),)
        )
    return value


def call_of(block: Block) -> tuple[str, str]:
    """A tool call's or result's ``(tool_call_id, tool_name)``."""
    assert block.candidate is not None
    return str(block.candidate.tool_call_id), str(block.candidate.tool_name)


def tool_definition(content: str, provider: str) -> dict[str, Any]:
    """A tool definition item's content (a JSON object: ``{name, description?,
    parameters | input_schema}``, or OpenAI's ``{type: "function", function: {...}}``)
    as the ``tools`` entry of ``provider`` (``openai``: Chat Completions, ``responses``,
    ``anthropic`` or ``gemini``: a function declaration); ValueError when it is not one."""
    value = json.loads(content)
    if isinstance(value, dict) and value.get("type") == "function" and "function" in value:
        value = value["function"]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise ValueError("a tool definition is a JSON object with a string name")
    schema = value.get("parameters", value.get("input_schema", {"type": "object"}))
    if not isinstance(schema, dict):
        raise ValueError("a tool definition's schema is a JSON object")
    named = {"name": value["name"]}
    if "description" in value:
        named["description"] = value["description"]
    if provider == "openai":
        return {"type": "function", "function": {**named, "parameters": schema}}
    if provider == "responses":
        return {"type": "function", **named, "parameters": schema}
    if provider == "gemini":
        return {**named, "parametersJsonSchema": schema}
    return {**named, "input_schema": schema}


def tool_entry(block: Block, provider: str) -> dict[str, Any]:
    """A tool definition block as ``provider``'s ``tools`` entry (else the rule's error)."""
    try:
        return tool_definition(block.content, provider)
    except ValueError:
        raise rule(
            "tool-definition",
            "a tool definition's content must be a JSON object with a name and a JSON"
            " Schema (parameters or input_schema)",
            (block_id(block),),
        ) from None


def tools_of(blocks: tuple[Block, ...], provider: str) -> list[dict[str, Any]]:
    """The selected tool definitions as ``provider``'s entries, in block order."""
    return [tool_entry(b, provider) for b in blocks if b.kind == "tool_definition"]


def checked_calls(blocks: tuple[Block, ...]) -> None:
    """Every tool call's content is a JSON object (``arguments``), judged once per block."""
    for block in blocks:
        if block.kind == "tool_call" and "arguments" not in block.pieces:
            arguments(block)
            block.pieces["arguments"] = True


def messages_of(blocks: tuple[Block, ...]) -> Iterator[tuple[str, str] | Block]:
    """The messages of a chat body, in block order: ``(role, text)`` for each run of
    system-prompt blocks (``system``) and of evidence (``user``), the block itself for
    every conversation item; tool definitions go elsewhere (``tools_of``)."""
    run: list[Block] = []
    for block in blocks:
        if block.kind == "tool_definition":
            continue
        grouped = _RUNS.get(block.section)
        if run and grouped != _RUNS[run[0].section]:
            yield _RUNS[run[0].section], "".join(b.text for b in run)
            run = []
        if grouped is not None:
            run.append(block)
        else:
            yield block
    if run:
        yield _RUNS[run[0].section], "".join(b.text for b in run)
