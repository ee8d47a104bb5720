"""What every room's body builder reads of a layout's blocks: calls, tools, runs, rules.

Input: layout blocks (``Piece``: a tool call's, a tool definition's, a run of system
or evidence blocks).
Output: a call's id, name and parsed arguments; a tool definition's name, description
and JSON Schema (each room writes its own ``tools`` entry from them); the messages of a
chat body in block order (``messages_of``); or ``RenderError(RENDER_PROVIDER_RULE)``
naming the rule and the item (``rule``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import RenderError

if TYPE_CHECKING:
    from .interface import Piece

__all__ = [
    "arguments",
    "block_id",
    "call_of",
    "checked_calls",
    "messages_of",
    "rule",
    "tool_entry",
    "tool_parts",
    "tools_of",
]

# the sections whose consecutive blocks make one message, and its role
_RUNS = {"stable": "system", "evidence": "user"}


def rule(name: str, message: str, items: tuple[str, ...] = ()) -> RenderError:
    return RenderError("RENDER_PROVIDER_RULE", message, items=items, rule=name)


def block_id(block: Piece) -> str:
    return "" if block.candidate is None else block.candidate.id


def arguments(block: Piece) -> dict[str, Any]:
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


def call_of(block: Piece) -> tuple[str, str]:
    """A tool call's or result's ``(tool_call_id, tool_name)``."""
    assert block.candidate is not None
    return str(block.candidate.tool_call_id), str(block.candidate.tool_name)


def tool_parts(content: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool definition item's content (a JSON object: ``{name, description?,
    parameters | input_schema}``, or ``{type: "function", function: {...}}``) as its
    name and description (``{"name", "description"?}``) and its JSON Schema; ValueError
    when it is not one. Each room writes its ``tools`` entry from the two."""
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
    return named, schema


ToolEntry = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def tool_entry(block: Piece, entry: ToolEntry) -> dict[str, Any]:
    """A tool definition block as a room's ``tools`` entry (``entry(named, schema)``),
    else the rule's error."""
    try:
        named, schema = tool_parts(block.content)
    except ValueError:
        raise rule(
            "tool-definition",
            "a tool definition's content must be a JSON object with a name and a JSON"
            " Schema (parameters or input_schema)",
            (block_id(block),),
        ) from None
    return entry(named, schema)


def tools_of(blocks: Sequence[Piece], entry: ToolEntry) -> list[dict[str, Any]]:
    """The selected tool definitions as a room's entries, in block order."""
    return [tool_entry(b, entry) for b in blocks if b.kind == "tool_definition"]


def checked_calls(blocks: Sequence[Piece]) -> None:
    """Every tool call's content is a JSON object (``arguments``), judged once per block."""
    for block in blocks:
        if block.kind == "tool_call" and "arguments" not in block.pieces:
            arguments(block)
            block.pieces["arguments"] = True


def messages_of(blocks: Sequence[Piece]) -> Iterator[tuple[str, str] | Piece]:
    """The messages of a chat body, in block order: ``(role, text)`` for each run of
    system-prompt blocks (``system``) and of evidence (``user``), the block itself for
    every conversation item; tool definitions go elsewhere (``tools_of``)."""
    run: list[Piece] = []
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
