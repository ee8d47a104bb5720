"""What makes a list, a tool or a body plainly Gemini, and its body fields.

Input: one entry of a caller's list, one tool definition, or a whole body.
Output: ``marks`` and ``tool_marks`` (where an entry or tool shows this format and
what it is, or None), ``BODY_FIELDS`` (the request fields the API takes, in the REST
API's camelCase and the Python SDK's snake_case) and ``check_body`` (a field of the
wrong type).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...model.numbers import is_whole

__all__ = ["BODY_FIELDS", "OUTPUT_FIELDS", "check_body", "marks", "tool_marks"]

# where a body reserves its output tokens (dotted paths, the first present wins)
OUTPUT_FIELDS: tuple[str, ...] = (
    "generationConfig.maxOutputTokens",
    "generation_config.max_output_tokens",
)

_TOOL_KEYS = (
    "functionDeclarations", "function_declarations", "googleSearch", "google_search",
    "googleSearchRetrieval", "google_search_retrieval", "codeExecution", "code_execution",
    "urlContext", "url_context", "fileSearch", "file_search", "googleMaps", "google_maps",
    "computerUse", "computer_use", "retrieval",
)  # fmt: skip

BODY_FIELDS = frozenset({
    "contents", "model", "systemInstruction", "system_instruction", "tools", "toolConfig",
    "tool_config", "generationConfig", "generation_config", "safetySettings", "safety_settings",
    "cachedContent", "cached_content", "labels",
})  # fmt: skip


def marks(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """Where ``entry`` is plainly a Gemini content, and what shows it."""
    if "parts" in entry:
        return ".parts", "a content with parts"
    if entry.get("role") == "model":
        return ".role", "the role 'model'"
    return None


def tool_marks(tool: Mapping[str, Any]) -> str | None:
    """What shows ``tool`` is a Gemini tool."""
    key = next((k for k in _TOOL_KEYS if k in tool), None)
    return None if key is None else f"a tool with {key}"


def check_body(body: Mapping[str, Any]) -> tuple[str, str] | None:
    """A body field of the wrong type."""
    for key in ("generationConfig", "generation_config"):
        config = body.get(key)
        if config is None:
            continue
        if not isinstance(config, Mapping):
            return key, f"must be an object, not {config!r:.40}"
        for field in ("maxOutputTokens", "max_output_tokens"):
            value = config.get(field)
            if value is not None and (not is_whole(value) or value < 1):
                return f"{key}.{field}", f"must be a whole number of tokens >= 1, not {value!r:.40}"
    return None
