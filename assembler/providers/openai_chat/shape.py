"""What makes a list, a tool or a body plainly OpenAI Chat Completions, and its body fields.

Input: one entry of a caller's list, one tool definition, or a whole body.
Output: ``marks`` and ``tool_marks``: where the entry or tool shows this format and what
it is (``(".tool_calls", "calls as tool_calls")``), or None when nothing in it is this
format's alone; ``BODY_FIELDS``, the request fields the API takes; ``check_body``, a
body field of the wrong type as ``(field, rule)``, or None.

``registry.recognised`` asks every room, so that a list in another provider's shape is
named as such instead of being fitted as this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.numbers import is_whole

__all__ = ["BODY_FIELDS", "OUTPUT_FIELDS", "check_body", "marks", "tool_marks"]

# where a body reserves its output tokens (dotted paths, the first present wins)
OUTPUT_FIELDS: tuple[str, ...] = ("max_completion_tokens", "max_tokens")

# content part types only Chat Completions uses (``text`` is Anthropic's too)
_PARTS = ("image_url", "input_audio", "file")

BODY_FIELDS = frozenset({
    "messages", "model", "tools", "tool_choice", "parallel_tool_calls", "max_tokens",
    "max_completion_tokens", "temperature", "top_p", "n", "stream", "stream_options", "stop",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs",
    "response_format", "seed", "user", "store", "metadata", "reasoning_effort", "service_tier",
    "modalities", "audio", "prediction", "web_search_options", "functions", "function_call",
    "verbosity", "prompt_cache_key", "prompt_cache_retention", "safety_identifier",
})  # fmt: skip


def marks(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where ``entry`` is plainly a Chat Completions message, and what shows it."""
    if "tool_calls" in entry:
        return ".tool_calls", "calls as tool_calls"
    if entry.get("role") == "tool":
        return ".role", "a tool message"
    if "function_call" in entry and "type" not in entry:
        return ".function_call", "a legacy function_call"
    content = entry.get("content")
    if isinstance(content, list):
        for number, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") in _PARTS:
                return f".content[{number}]", f"a {part['type']} part"
    if entry.get("role") == "assistant" and "content" in entry and content is None:
        return ".content", "an assistant message with content null"
    return None


def tool_marks(tool: Mapping[str, Any]) -> str | None:
    """What shows ``tool`` is a Chat Completions tool definition."""
    if isinstance(tool.get("function"), Mapping):
        return "a {type, function: {name, parameters}} tool"
    if tool.get("type") == "custom" and isinstance(tool.get("custom"), Mapping):
        return "a {type: custom, custom: {...}} tool"
    return None


def check_body(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """A body field of the wrong type."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (not is_whole(value) or value < 0):
            return key, f"must be a whole number of tokens, not {value!r:.40}"
    return None
