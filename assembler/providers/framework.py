"""What a framework's room answers alike: its objects are not mappings, and its own
conversion judges them.

Input: nothing. Output: the ``Api`` members every framework room (LangChain's,
Pydantic AI's: their messages are objects) answers the same way: no marks on a mapping,
no tool or body field of its own, no shape fault of its own, and no conversion by
``fit(source=...)`` (the framework converts its own messages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest
from .interface import Problem

__all__ = [
    "BODY_FIELDS", "OUTPUT_FIELDS", "check_body", "check_entry", "check_tools", "marks", "read",
    "tool_marks", "tool_of", "tools_as", "write",
]  # fmt: skip

BODY_FIELDS: frozenset[str] = frozenset()
OUTPUT_FIELDS: tuple[str, ...] = ()


def marks(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    return None  # a framework's messages are objects, never a mapping


def tool_marks(tool: Mapping[str, Any]) -> str | None:
    return None


def check_body(body: Mapping[str, Any]) -> tuple[str, str] | None:
    return None


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    return None  # the framework's own conversion judges each message


def check_tools(tools: Sequence[Any]) -> None:
    return None


def read(listed: Sequence[Any], system: Any, where: str) -> tuple[list[dict[str, Any]], str]:
    raise _not_converted(where)


def write(messages: list[dict[str, Any]], system: str) -> tuple[list[Any], Any]:
    raise _not_converted("source")


def tool_of(tool: Mapping[str, Any], number: int) -> list[dict[str, Any]]:
    raise _not_converted(f"tools[{number}]")


def tools_as(functions: list[dict[str, Any]]) -> list[Any]:
    raise _not_converted("source")


def _not_converted(where: str) -> InvalidRequest:
    return InvalidRequest(
        where, "a framework's messages are converted by the framework itself, not by source="
    )
