"""Dispatch: which format a message list is in, and that format's adapter for each step.

Input: the list (or body) given to ``fit``, the model's profile and the caller's
``format``; then, per step, the format and that step's values.
Output: the format and the name the caller knows the list by (``format_of``), the
units (``units_of``), the chosen messages back (``messages_back``), the fixed framing
taken off the budget with their names (``overheads``), the body's rules
(``check``) and its tokens as billed (``tokens``).

The format follows the model's provider (Claude: ``anthropic-messages``, Gemini:
``gemini``, any other: OpenAI), then the list's shape: LangChain message objects;
for OpenAI models, Responses input items (``type`` beside or instead of ``role``) or
a body with ``input``, else Chat Completions. A shape that is plainly another
provider's is named as such by ``shapes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest
from ..model.types import Kind
from ..render import billing
from ..render.registry import Meter, ModelProfile
from . import anthropic, gemini, langchain, openai, responses
from .units import Form, Unit

__all__ = [
    "FORMATS",
    "LIST_KEY",
    "PROVIDER",
    "SYSTEM_KEY",
    "check",
    "format_of",
    "messages_back",
    "overheads",
    "tokens",
    "units_of",
]

FORMATS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
# Fitted.provider of each format (the names it had before there were four)
PROVIDER = {"openai-chat": "openai", "anthropic-messages": "anthropic", "langchain": "langchain",
            "openai-responses": "openai-responses", "gemini": "gemini"}  # fmt: skip
# where a body holds its list and its system prompt, by Fitted.provider and by format
LIST_KEY = {"openai": "messages", "anthropic": "messages", "langchain": "messages",
            "openai-responses": "input", "gemini": "contents"}  # fmt: skip
SYSTEM_KEY = {"openai-chat": "system", "anthropic-messages": "system", "langchain": "system",
              "openai-responses": "instructions", "gemini": "systemInstruction"}  # fmt: skip
_BY_PROVIDER = {"anthropic": "anthropic-messages", "gemini": "gemini"}


def format_of(
    messages: Any, profile: ModelProfile, given: str | None
) -> tuple[str, str]:
    """The list's format and the name of the list (``messages``, ``input``, ``contents``)."""
    if given is not None and given not in FORMATS:
        raise InvalidRequest("format", f"must be one of {', '.join(FORMATS)}, not {given!r}")
    if isinstance(messages, Mapping):
        keys = [k for k in ("messages", "input", "contents") if k in messages]
        if len(keys) != 1:
            raise InvalidRequest(
                "messages", "a body holds exactly one of messages, input or contents"
            )
        where = keys[0]
        listed = messages[where]
        if given is None:
            given = {"input": "openai-responses", "contents": "gemini"}.get(where)
    else:
        where, listed = "messages", messages
    if langchain.is_langchain(listed):
        return "langchain", where
    fmt = given or _BY_PROVIDER.get(profile.provider)
    if fmt is None:
        typed = isinstance(listed, Sequence) and any(
            isinstance(m, Mapping) and "type" in m for m in listed
        )
        fmt = "openai-responses" if typed else "openai-chat"
    if fmt == "openai-responses" and not isinstance(messages, Mapping):
        where = "input"
    return fmt, where


def units_of(
    fmt: str,
    messages: Sequence[Any],
    tools: list[Any],
    system: Any,
    meter: Meter,
    elide_above: int,
    where: str,
) -> list[Unit]:
    if fmt == "langchain":
        units = langchain.units_of(messages, tools, meter, elide_above)
        if system is not None:
            from langchain_core.messages import convert_to_openai_messages

            (as_dict,) = convert_to_openai_messages([system])
            units.append(_system(system, meter.openai_message(as_dict), as_dict["content"]))
        return units
    if fmt == "openai-chat":
        units = openai.units_of(messages, tools, meter, elide_above)
        if system is not None:
            message = {"role": "system", "content": system}
            units.append(_system(system, meter.openai_message(message), system))
        return units
    if fmt == "openai-responses":
        units = responses.units_of(messages, tools, meter, elide_above, where)
        if system is not None:
            message = {"role": "developer", "content": system}
            units.append(_system(system, meter.openai_message(message), system))
        return units
    if fmt == "gemini":
        units = gemini.units_of(messages, tools, meter, elide_above, where)
        head = gemini.system_unit(system, meter)
    else:
        units = anthropic.units_of(messages, tools, meter, elide_above)
        head = anthropic.system_unit(system, meter)
    return units if head is None else [*units, head]


def _system(system: Any, tokens: int, text: Any) -> Unit:
    return Unit("system", -2, 0, Kind.SYSTEM, (Form("full", system, tokens),), required=True,
                text=str(text))  # fmt: skip


def messages_back(
    fmt: str, messages: Sequence[Any], units: list[Unit], chosen: dict[str, Form]
) -> list[Any]:
    if fmt == "anthropic-messages":
        return anthropic.messages_of(messages, units, chosen)
    if fmt == "gemini":
        return gemini.contents_of(messages, units, chosen)
    if fmt == "openai-responses":
        return responses.items_of(units, chosen)
    return openai.messages_of(units, chosen)


def overheads(fmt: str, meter: Meter, with_tools: bool) -> list[tuple[str, int]]:
    """The framing a body pays beside its parts, named (``models/framing.json``)."""
    if fmt == "anthropic-messages":
        prompt = meter.anthropic_overhead(with_tools)
        return [("Anthropic's tool-use system prompt", prompt)] if prompt else []
    if fmt == "gemini":
        return []
    out = [("the reply priming", meter.openai_overhead())]
    return [*out, ("the tool definitions' framing", 12)] if with_tools else out


def check(fmt: str, body: dict[str, Any]) -> None:
    """The provider's rules on the body, before it is returned (a failure is a bug)."""
    from ..render.formats import check_anthropic, check_openai
    from ..render.gemini import check_gemini
    from ..render.responses import check_responses

    if fmt == "anthropic-messages":
        check_anthropic({"system": [], **body})
    elif fmt == "gemini":
        check_gemini(body)
    elif fmt == "openai-responses":
        check_responses(body["input"], system_first=False)
    else:
        check_openai(body["messages"], system_first=False)


def tokens(fmt: str, meter: Meter, body: Mapping[str, Any]) -> int:
    """The body's tokens as billed."""
    if fmt == "gemini":
        return billing.gemini_body(meter, body)
    if fmt == "openai-responses":
        return billing.responses_body(meter, body)
    if fmt == "anthropic-messages":
        return meter.anthropic_body(body)
    return meter.openai_body(body)
