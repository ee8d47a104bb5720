"""Shapes: a message list checked against its format before it is cut, every fault named.

Input: a list as the caller gave it (OpenAI Chat Completions messages, Anthropic
messages, OpenAI Responses input items, Gemini contents), its tools, and the name the
caller knows it by (``messages``, ``input``, ``contents``).
Output: nothing, or one ``InvalidRequest`` whose field is the caller's own path
(``messages[3].tool_calls[0].function``, ``tools[1]``, ``input[2].call_id``) and whose
message states the rule; when the entry is plainly another provider's shape (an
OpenAI message given with a Claude model), the message says so.

Only shapes are checked here; pairing rules (a result answers an earlier call, every
call is answered) are the provider adapters', which name the same paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest

__all__ = ["check_list", "check_tools", "looks_like"]

_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")
_ANTHROPIC_BLOCKS = (
    "text", "image", "document", "thinking", "redacted_thinking", "tool_use", "tool_result",
    "server_tool_use", "web_search_tool_result", "search_result", "container_upload",
    "mcp_tool_use", "mcp_tool_result",
)  # fmt: skip


def looks_like(entry: Any) -> str | None:
    """Which format an entry plainly belongs to, from keys only that format uses."""
    if not isinstance(entry, Mapping):
        return None
    if "parts" in entry or entry.get("role") == "model":
        return "gemini"
    if "tool_calls" in entry or entry.get("role") in ("tool", "system", "developer"):
        return "openai-chat"
    if "role" not in entry and isinstance(entry.get("type"), str):
        return "openai-responses"
    if entry.get("role") == "assistant" and entry.get("content") is None:
        return "openai-chat"
    content = entry.get("content")
    if isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("input_text", "output_text", "input_image")
        for b in content
    ):
        return "openai-responses"
    if isinstance(content, list) and any(
        isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_result", "thinking")
        for b in content
    ):
        return "anthropic-messages"
    return None


_NAMES = {
    "openai-chat": "an OpenAI Chat Completions message",
    "openai-responses": "an OpenAI Responses input item",
    "anthropic-messages": "an Anthropic Messages message",
    "gemini": "a Gemini content",
}


def _bad(field: str, rule: str, entry: Any, fmt: str, model: str) -> InvalidRequest:
    other = looks_like(entry)
    hint = ""
    if other is not None and other != fmt:
        hint = f"; this is {_NAMES[other]}, and {model!r} takes {_NAMES[fmt]}s"
    return InvalidRequest(field, rule + hint)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_list(entries: Any, fmt: str, where: str, model: str) -> None:
    """Each entry of ``entries`` has the shape ``fmt`` requires (see the module)."""
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise InvalidRequest(where, f"must be a list, not {_short(entries)}")
    if not entries:
        raise InvalidRequest(where, "is empty: there is no conversation to fit")
    check = _CHECKS[fmt]
    for index, entry in enumerate(entries):
        path = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise InvalidRequest(path, f"must be an object, not {_short(entry)}")
        problem = check(entry, index)
        if problem is not None:
            field, rule = problem
            raise _bad(path + field, rule, entry, fmt, model)


Problem = tuple[str, str] | None


def _text_or_parts(content: Any, null_ok: bool) -> Problem:
    if content is None and null_ok:
        return None
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return ".content", f"must be a string or a list of parts, not {_short(content)}"
    for number, part in enumerate(content):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            return f".content[{number}]", "must be a part object with a string 'type'"
        image = part.get("image_url")
        if part["type"] == "image_url" and not (isinstance(image, Mapping) and image.get("url")):
            return f".content[{number}].image_url", "an image_url part needs its url"
    return None


def _chat(entry: Mapping[str, Any], index: int) -> Problem:
    role = entry.get("role")
    if role not in _CHAT_ROLES:
        return ".role", f"must be one of {', '.join(_CHAT_ROLES)}, not {_short(role)}"
    calls = entry.get("tool_calls")
    if "tool_calls" in entry and role != "assistant":
        return ".tool_calls", "only an assistant message makes tool calls"
    if calls is not None:
        if not isinstance(calls, list):
            return ".tool_calls", f"must be a list of tool calls, not {_short(calls)}"
        for number, call in enumerate(calls):
            at = f".tool_calls[{number}]"
            if not isinstance(call, Mapping):
                return at, "must be a tool call object"
            if not isinstance(call.get("id"), str) or not call["id"]:
                return at + ".id", "must be the call's id, a non-empty string"
            function = call.get("function")
            if not isinstance(function, Mapping):
                return at + ".function", "must be {name, arguments}: every call names its function"
            if not isinstance(function.get("name"), str):
                return at + ".function.name", "must be the function's name, a string"
            if not isinstance(function.get("arguments"), str):
                return at + ".function.arguments", "must be the arguments' JSON text, a string"
    if role == "tool" and not isinstance(entry.get("tool_call_id"), str):
        return ".tool_call_id", "a tool message names the call it answers, a string"
    # an assistant message may leave content null when it calls tools or refuses
    null_ok = role == "assistant" and (bool(calls) or "refusal" in entry)
    if "content" not in entry and not null_ok:
        return ".content", "is missing"
    return _text_or_parts(entry.get("content"), null_ok)


def _anthropic(entry: Mapping[str, Any], index: int) -> Problem:
    role = entry.get("role")
    if role not in ("user", "assistant"):
        if role == "system":
            return ".role", "must be user or assistant: the system prompt goes in system="
        return ".role", f"must be user or assistant, not {_short(role)}"
    if "tool_calls" in entry:
        return ".tool_calls", "is not an Anthropic field: calls are tool_use blocks"
    if index == 0 and role != "user":
        return ".role", "first-message-user: an Anthropic conversation opens with a user turn"
    content = entry.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return ".content", f"must be a string or a list of content blocks, not {_short(content)}"
    for number, block in enumerate(content):
        at = f".content[{number}]"
        if not isinstance(block, Mapping):
            return at, "must be a content block object"
        kind = block.get("type")
        if not isinstance(kind, str):
            return at + ".type", "is missing: every content block names its type"
        if kind not in _ANTHROPIC_BLOCKS:
            return at + ".type", f"{_short(kind)} is not an Anthropic content block type"
        needs = _NEEDS.get(kind)
        if needs is not None and not isinstance(block.get(needs[0]), needs[1]):
            return f"{at}.{needs[0]}", f"a {kind} block needs {needs[0]!r}"
        if kind == "tool_use" and not isinstance(block.get("id"), str):
            return at + ".id", "a tool_use block needs its id, a string"
        if kind == "text" and not block["text"]:
            return at + ".text", "non-empty-text: a text block may not be empty"
        if kind == "tool_result" and number and content[number - 1].get("type") != "tool_result":
            return at, "tool-result-first: tool_result blocks come first in a user turn"
        if kind == "tool_result" and "content" in block:
            inner = block["content"]
            if not isinstance(inner, str | list):
                return at + ".content", "must be a string or a list of content blocks"
    return None


# the field each block type cannot do without
_NEEDS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "text": ("text", str), "thinking": ("signature", str), "redacted_thinking": ("data", str),
    "tool_use": ("input", Mapping), "tool_result": ("tool_use_id", str),
}  # fmt: skip
_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "computer_call_output",
                 "local_shell_call_output", "mcp_approval_response")  # fmt: skip


def _responses(entry: Mapping[str, Any], index: int) -> Problem:
    kind = entry.get("type", "message" if "role" in entry else None)
    if not isinstance(kind, str):
        return ".type", "is missing: an input item is a message (role) or names its type"
    if kind == "message":
        role = entry.get("role")
        if role not in ("user", "assistant", "system", "developer"):
            return ".role", f"must be user, assistant, system or developer, not {_short(role)}"
        if "tool_calls" in entry:
            return ".tool_calls", "is a Chat Completions field: calls are function_call items"
        if "content" not in entry:
            return ".content", "is missing"
        return _text_or_parts(entry.get("content"), False)
    if kind in ("function_call", "custom_tool_call"):
        for key in ("call_id", "name"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                return f".{key}", f"a {kind} item needs {key!r}, a non-empty string"
        key = "arguments" if kind == "function_call" else "input"
        if not isinstance(entry.get(key), str):
            return f".{key}", f"a {kind} item carries its {key} as a string"
    if kind in _OUTPUT_TYPES and kind != "mcp_approval_response":
        if not isinstance(entry.get("call_id"), str):
            return ".call_id", f"a {kind} item names the call it answers, a string"
        if kind == "function_call_output" and not isinstance(entry.get("output"), str | list):
            return ".output", "must be a string or a list of content parts"
    if kind == "mcp_approval_response" and not isinstance(entry.get("approval_request_id"), str):
        return ".approval_request_id", "an approval response names its request, a string"
    if kind == "reasoning" and not isinstance(entry.get("summary", []), list):
        return ".summary", "a reasoning item's summary is a list"
    return None


def _gemini(entry: Mapping[str, Any], index: int) -> Problem:
    role = entry.get("role")
    if "content" in entry and "parts" not in entry:
        return ".parts", (
            "is missing: a Gemini content carries parts (this looks like an OpenAI or"
            " Anthropic message, with content)"
        )
    if role not in ("user", "model"):
        return ".role", f"must be user or model, not {_short(role)}"
    parts = entry.get("parts")
    if not isinstance(parts, list) or not parts:
        return ".parts", "must be a non-empty list of parts"
    for number, part in enumerate(parts):
        at = f".parts[{number}]"
        if not isinstance(part, Mapping) or not part:
            return at, "must be a part object"
        call = part.get("functionCall")
        if call is not None and (
            not isinstance(call, Mapping) or not isinstance(call.get("name"), str)
        ):
            return at + ".functionCall", "must be {name, args?}: a call names its function"
        if call is not None and not isinstance(call.get("args", {}), Mapping):
            return at + ".functionCall.args", "must be an object"
        answer = part.get("functionResponse")
        if answer is not None and (
            not isinstance(answer, Mapping) or not isinstance(answer.get("name"), str)
        ):
            return at + ".functionResponse", "must be {name, response}: it names its function"
        if answer is not None and not isinstance(answer.get("response", {}), Mapping):
            return at + ".functionResponse.response", "must be an object"
        if "text" in part and not isinstance(part["text"], str):
            return at + ".text", "must be a string"
    return None


_CHECKS = {
    "openai-chat": _chat,
    "anthropic-messages": _anthropic,
    "openai-responses": _responses,
    "gemini": _gemini,
}


def check_tools(tools: Any, fmt: str) -> None:
    """Each tool definition has the shape ``fmt`` sends."""
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise InvalidRequest("tools", f"must be a list of tool definitions, not {_short(tools)}")
    for number, tool in enumerate(tools):
        path = f"tools[{number}]"
        if not isinstance(tool, Mapping):
            raise InvalidRequest(path, "must be a tool definition object")
        if fmt == "openai-chat":
            function = tool.get("function")
            if tool.get("type") == "function" and not isinstance(function, Mapping):
                raise InvalidRequest(path + ".function", "must be {name, parameters?}")
            if isinstance(function, Mapping) and not isinstance(function.get("name"), str):
                raise InvalidRequest(path + ".function.name", "must be the tool's name")
        elif fmt == "anthropic-messages":
            if not isinstance(tool.get("name"), str):
                raise InvalidRequest(path + ".name", "must be the tool's name, a string")
        elif fmt == "openai-responses":
            if not isinstance(tool.get("type"), str):
                raise InvalidRequest(path + ".type", "must name the tool's type (function, ...)")
            if tool["type"] == "function" and not isinstance(tool.get("name"), str):
                raise InvalidRequest(path + ".name", "a function tool needs its name")
        elif fmt == "gemini":
            declarations = tool.get("functionDeclarations", [])
            if not isinstance(declarations, list) or not all(
                isinstance(d, Mapping) and isinstance(d.get("name"), str) for d in declarations
            ):
                raise InvalidRequest(
                    path + ".functionDeclarations", "must be a list of {name, ...} declarations"
                )
