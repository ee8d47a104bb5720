"""LangChain messages, fitted as the Chat Completions messages LangChain makes of them.

Input: a list of ``langchain_core`` messages (``SystemMessage``, ``HumanMessage``,
``AIMessage`` with ``tool_calls``, ``ToolMessage``), tools (``BaseTool`` objects or
tool dicts), a system message given apart, and a ``Meter``
(``pip install 'assembler[langchain]'``).
Output: the ``Api`` of ``providers/interface.py`` for such a list (``NAME``
``langchain``): ``units`` whose payloads are the caller's own message objects (a
shortened tool result is a copy of its ``ToolMessage`` with the new content; every other
message is the very object given), ``back`` (the chosen objects, in order),
``assembled`` (the body as Chat Completions dicts) and ``claims`` (a list of LangChain
messages); the body's rules, counting and overheads are the chat format's.

The coupling and validity rules are the chat format's, read from
``langchain_core.messages.convert_to_openai_messages``: LangChain's own conversion,
so a message is judged as LangChain would send it. Counts use the same conversion
(thinking blocks are priced as their JSON, an over-estimate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..interface import Problem
from ..meter import Meter
from ..units import Form, Unit
from . import fit
from .body import FORMAT, build, check, message_tokens, overheads, tokens

__all__ = [
    "ENTRY",
    "FORMAT",
    "LIST_KEY",
    "LIST_NAME",
    "NAME",
    "SYSTEM_KEY",
    "assembled",
    "back",
    "build",
    "check",
    "check_entry",
    "check_tools",
    "claims",
    "looks_like",
    "overheads",
    "tokens",
    "tool_dicts",
    "units",
]

NAME = "langchain"
LIST_KEY = "messages"
SYSTEM_KEY = "system"
LIST_NAME = "messages"
ENTRY = "a LangChain message"


def claims(listed: Sequence[Any]) -> bool:
    """True when ``listed`` holds LangChain message objects."""
    if not isinstance(listed, Sequence) or isinstance(listed, str | bytes) or not listed:
        return False
    return type(listed[0]).__module__.startswith("langchain_core.messages")


def looks_like(entry: Mapping[str, Any]) -> bool:
    return False  # LangChain's messages are objects, never a mapping


def check_entry(entry: Mapping[str, Any], index: int) -> Problem:
    return None  # LangChain's own conversion judges each message


def check_tools(tools: Sequence[Any]) -> None:
    return None


def tool_dicts(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """Tools as Chat Completions tool definitions, as LangChain binds them."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return [dict(t) if isinstance(t, Mapping) else convert_to_openai_tool(t) for t in tools]


def units(
    messages: Sequence[Any],
    tools: Sequence[Any],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str = "messages",
) -> list[Unit]:
    from langchain_core.messages import convert_to_openai_messages

    dicts = convert_to_openai_messages(list(messages))
    out: list[Unit] = []
    for unit in fit.message_units(dicts, tool_dicts(tools), meter, elide_above):
        original = messages[unit.message] if unit.message >= 0 else tools[unit.part]
        forms = tuple(
            Form(
                form.name,
                original if form.name == "full" else original.model_copy(
                    update={"content": form.payload["content"]}
                ),
                form.tokens,
            )
            for form in unit.forms
        )  # fmt: skip
        out.append(replace(unit, forms=forms))
    if system is not None:
        (as_dict,) = convert_to_openai_messages([system])
        out.append(fit.system_unit(system, message_tokens(meter, as_dict), as_dict["content"]))
    return out


back = fit.back


def assembled(
    messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The body as Chat Completions dicts: the system message first, the tools bound."""
    from langchain_core.messages import convert_to_openai_messages

    converted = convert_to_openai_messages(list(messages))
    if system is not None:
        converted = [*convert_to_openai_messages([system]), *converted]
    body: dict[str, Any] = {**extra, "messages": list(converted)}
    if tools:
        body["tools"] = tool_dicts(tools)
    return body
