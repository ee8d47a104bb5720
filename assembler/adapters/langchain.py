"""LangChain messages to units and back (``pip install 'assembler[langchain]'``).

Input: a list of ``langchain_core`` messages (``SystemMessage``, ``HumanMessage``,
``AIMessage`` with ``tool_calls``, ``ToolMessage``), tools (``BaseTool`` objects or
tool dicts) and a ``Meter``.
Output: ``Unit`` values whose payloads are the caller's own message objects (a
shortened tool result is a copy of its ``ToolMessage`` with the new content; every
other message is the very object given), and ``is_langchain`` to tell such a list.

The coupling and validity rules are the OpenAI adapter's, read from
``langchain_core.messages.convert_to_openai_messages``: LangChain's own conversion,
so a message is judged as LangChain would send it. Counts use the same conversion
(thinking blocks are priced as their JSON, an over-estimate).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..render.registry import Meter
from . import openai
from .units import Form, Unit

__all__ = ["is_langchain", "tool_dicts", "units_of"]


def is_langchain(messages: Any) -> bool:
    """True when ``messages`` holds LangChain message objects."""
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes) or not messages:
        return False
    return type(messages[0]).__module__.startswith("langchain_core.messages")


def tool_dicts(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """Tools as Chat Completions tool definitions, as LangChain binds them."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return [dict(t) if isinstance(t, Mapping) else convert_to_openai_tool(t) for t in tools]


def units_of(
    messages: Sequence[Any], tools: Sequence[Any], meter: Meter, elide_above: int
) -> list[Unit]:
    from langchain_core.messages import convert_to_openai_messages

    dicts = convert_to_openai_messages(list(messages))
    units = openai.units_of(dicts, tool_dicts(tools), meter, elide_above)
    out: list[Unit] = []
    for unit in units:
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
    return out
