"""What makes a list, a tool or a body plainly Anthropic Messages, and its body fields.

Input: one entry of a caller's list, one tool definition, or a whole body.
Output: ``marks`` and ``tool_marks`` (where an entry or tool shows this format and
what it is, or None), ``BODY_FIELDS`` (the request fields the API takes, Bedrock's and
Vertex AI's ``anthropic_version`` too) and ``check_body`` (a field of the wrong type).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...model.numbers import is_whole

__all__ = ["BODY_FIELDS", "OUTPUT_FIELDS", "check_body", "marks", "tool_marks"]

# where a body reserves its output tokens (dotted paths, the first present wins)
OUTPUT_FIELDS: tuple[str, ...] = ("max_tokens",)

# content block types only Anthropic uses (``text`` and ``image`` are shared names)
_BLOCKS = (
    "tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use",
    "web_search_tool_result", "document", "search_result", "container_upload", "mcp_tool_use",
    "mcp_tool_result",
)  # fmt: skip
# a server or client tool of a dated version: web_search_20250305, bash_20250124, ...
_VERSIONED_TOOL = re.compile(r"^[a-z_]+_\d{8}$")

BODY_FIELDS = frozenset({
    "model", "messages", "system", "max_tokens", "tools", "tool_choice", "temperature",
    "top_p", "top_k", "stop_sequences", "stream", "metadata", "thinking", "service_tier",
    "container", "mcp_servers", "context_management", "anthropic_version", "output_config",
    "inference_geo",
})  # fmt: skip


def marks(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where ``entry`` is plainly an Anthropic message, and what shows it."""
    content = entry.get("content")
    if not isinstance(content, list):
        return None
    for number, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in _BLOCKS:
            return f".content[{number}]", f"a {kind} block"
        if kind == "image" and isinstance(block.get("source"), Mapping):
            return f".content[{number}]", "an image block with its source"
        if "cache_control" in block:
            return f".content[{number}].cache_control", "a cache_control breakpoint"
    return None


def tool_marks(tool: Mapping[str, Any]) -> str | None:
    """What shows ``tool`` is an Anthropic tool definition."""
    if "input_schema" in tool:
        return "a tool with input_schema"
    if isinstance(tool.get("type"), str) and _VERSIONED_TOOL.match(tool["type"]):
        return f"an Anthropic {tool['type']} tool"
    return None


def check_body(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """A body field of the wrong type."""
    value = body.get("max_tokens")
    if "max_tokens" in body and (not is_whole(value) or value < 1):
        return "max_tokens", f"must be a whole number of tokens >= 1, not {value!r:.40}"
    system = body.get("system")
    if system is not None and not isinstance(system, str | list):
        return "system", f"must be a string or a list of text blocks, not {system!r:.40}"
    return None
