"""What makes a list, a tool or a body plainly OpenAI Responses, and its body fields.

Input: one entry of a caller's list, one tool definition, or a whole body.
Output: ``marks`` and ``tool_marks`` (where an entry or tool shows this format and
what it is, or None), ``BODY_FIELDS`` (the request fields the API takes) and
``check_body`` (a body field of the wrong type: ``instructions: 5``, ``text: 5``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.numbers import is_whole

__all__ = ["BODY_FIELDS", "OUTPUT_FIELDS", "check_body", "marks", "tool_marks"]

# where a body reserves its output tokens (dotted paths, the first present wins)
OUTPUT_FIELDS: tuple[str, ...] = ("max_output_tokens",)

# content part types only the Responses API uses
_PARTS = ("input_text", "output_text", "input_image", "input_file", "input_audio")
# hosted tools (a function tool names itself at the top, not under ``function``)
_TOOLS = (
    "web_search", "web_search_preview", "file_search", "computer_use_preview", "computer",
    "code_interpreter", "image_generation", "mcp", "local_shell", "shell", "apply_patch",
)  # fmt: skip

BODY_FIELDS = frozenset({
    "input", "model", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "max_output_tokens", "max_tool_calls", "temperature", "top_p", "stream", "stream_options",
    "store", "metadata", "reasoning", "text", "truncation", "include", "previous_response_id",
    "conversation", "background", "service_tier", "user", "prompt", "prompt_cache_key",
    "prompt_cache_retention", "safety_identifier", "top_logprobs", "context_management",
})  # fmt: skip


def marks(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where ``entry`` is plainly a Responses input item, and what shows it."""
    kind = entry.get("type")
    if isinstance(kind, str) and "parts" not in entry:
        return ".type", f"an item of type {kind}"
    content = entry.get("content")
    if isinstance(content, list):
        for number, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") in _PARTS:
                return f".content[{number}]", f"an {part['type']} part"
    return None


def tool_marks(tool: Mapping[str, Any]) -> str | None:
    """What shows ``tool`` is a Responses tool definition."""
    if tool.get("type") == "function" and "name" in tool and "function" not in tool:
        return "a function tool named at its top level"
    if tool.get("type") in _TOOLS:
        return f"a hosted {tool['type']} tool"
    return None


def check_body(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """A body field of the wrong type."""
    if "instructions" in body and not isinstance(body["instructions"], str | list | None):
        return (
            "instructions",
            f"must be a string (or a list of input items), not {body['instructions']!r:.40}",
        )
    if "text" in body and not isinstance(body["text"], Mapping | None):
        return "text", f"must be the text output options, an object, not {body['text']!r:.40}"
    if "reasoning" in body and not isinstance(body["reasoning"], Mapping | None):
        return "reasoning", f"must be an object, not {body['reasoning']!r:.40}"
    value = body.get("max_output_tokens")
    if value is not None and (not is_whole(value) or value < 0):
        return "max_output_tokens", f"must be a whole number of tokens, not {value!r:.40}"
    return None
