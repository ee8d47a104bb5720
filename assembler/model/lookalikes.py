"""What a document is when it is not the one expected: a result, a message list...

Input: a parsed JSON value that failed to be a request (or a result), or text that
failed to be JSON. Output: a phrase naming what it looks like and what to do with it,
or None when it looks like nothing in particular (the ordinary field error then
stands).

Newcomers hand a command the file next to the one it wants: a compile's output to
``compile``, a chat message list to ``compile``, a request to ``explain`` as its
result, a YAML file anywhere. The message names the mistake instead of its first
symptom (an unknown field, a missing ``task``, malformed JSON at line 1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "is_request",
    "not_a_delta",
    "not_a_message",
    "not_a_request",
    "not_a_result",
    "not_json",
]

_RESULT_KEYS = frozenset({"status", "decisions", "package_id", "trace_id", "selected"})
_DELTA_KEYS = frozenset({"add", "remove", "update", "relevance"})
_CASE_KEYS = frozenset({"name", "family", "budget_class", "request", "expected"})
# the keys a provider body holds its conversation or its system prompt under (each
# provider API's list key, and the system prompt keys that are not a request's)
_BODY_KEYS = ("messages", "input", "contents", "systemInstruction", "system_instruction",
              "instructions")  # fmt: skip
_FIT = (
    "assembler fit BODY.json (or POST /fit on the server, or assembler.fit(body) in Python)"
    " fits one (docs: guides/adapters)"
)
# a line YAML reads as a mapping entry or a list item, which JSON never starts with
_YAML_LINE = re.compile(r"(---\s*$|%YAML|[A-Za-z_][\w.-]*\s*:(\s|$)|-\s+\S)")


def not_json(text: str) -> str | None:
    """Why ``text``, which the JSON reader refused, is not JSON at all: empty, or YAML."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return "empty: no JSON value at all (an empty file or empty input)"
    first = stripped.splitlines()[0].strip()
    if _YAML_LINE.match(first):
        return "not JSON: this looks like YAML; the assembler reads JSON documents only"
    return None


def not_a_request(data: Any) -> str | None:
    """What ``data`` is if it is plainly not a request, with what to do instead."""
    if isinstance(data, list):
        if data and all(
            isinstance(item, Mapping) and ("role" in item or "type" in item) for item in data[:50]
        ):
            return f"this is a provider's message list, not a request: {_FIT}"
        return None
    if not isinstance(data, Mapping) or "task" in data:
        return None
    keys = {key for key in data if isinstance(key, str)}
    if "status" in keys and len(keys & _RESULT_KEYS) >= 2:
        return (
            "this is a result (what assembler compile prints), not a request: give the"
            " request it answers (assembler explain RESULT --request REQUEST reads both)"
        )
    held = next((key for key in _BODY_KEYS if key in keys), None)
    if held is not None:
        return f"this is a provider body (its {held!r}), not a request: {_FIT}"
    if keys & _DELTA_KEYS and "candidates" not in keys:
        return "this is a session delta, not a request: a Session applies it (Session.apply)"
    if keys >= _CASE_KEYS:
        return "this is a corpus case, not a request: its request is its 'request' field"
    return None


def is_request(data: Any) -> bool:
    """Whether ``data`` is shaped as a request (a ``task`` and ``candidates``)."""
    return isinstance(data, Mapping) and "task" in data and "candidates" in data


def not_a_delta(data: Any) -> str | None:
    """What ``data`` is if it is a whole request given as a session's delta."""
    if is_request(data):
        return (
            "this is a whole request, not a delta: open (or replace) the session with it,"
            " or send only what changed (add, remove, update, task...)"
        )
    return None


def not_a_message(data: Any) -> str | None:
    """What ``data`` is if it is a bare request sent as a server message."""
    if is_request(data):
        return 'this is a bare request, not a message: send {"request": REQUEST} instead'
    return None


def not_a_result(data: Any) -> str | None:
    """What ``data`` is if it is plainly not a result (a request, most often)."""
    if is_request(data):
        return (
            "this is a request, not a result: give it as --request, and leave the result out"
            " to have it compiled first (or give the file compile printed)"
        )
    return None
