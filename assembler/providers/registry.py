"""The registry: each provider API's room, by its format and by the lists ``fit`` takes.

Input: a format; or the list (or body) a caller gave ``fit``, its model's profile and
the format the caller named, then that list and its tools.
Output: the room (``Api``) of a format (``api_for``); the room of a caller's list and
the name the caller knows it by (``recognised``); nothing, or one ``InvalidRequest``
naming the caller's own path for an entry or a tool of the wrong shape, saying when the
entry is plainly another format's (``check_shapes``).

A list's room follows the model's provider (its one API, or among its APIs the one
whose shape the list has: Responses input items name a ``type``), unless the caller
names the format or gives a body (whose list key names it: ``input``, ``contents``); a
framework's message objects (LangChain's) are recognised first, whatever the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidRequest
from ..facts import ModelProfile, RenderFormat, provider_of
from . import anthropic, gemini, openai_chat, openai_responses
from .interface import Api
from .openai_chat import langchain
from .units import short

__all__ = ["APIS", "FRAMEWORKS", "api_for", "check_shapes", "named", "recognised"]

# every provider API, one room each (the order a format's name is listed in, and the
# order a shape hint asks them in)
APIS: tuple[Api, ...] = (openai_chat, openai_responses, anthropic, gemini)
# frameworks' message objects, fitted as the API they convert them to
FRAMEWORKS: tuple[Api, ...] = (langchain,)
_BY_FORMAT: dict[RenderFormat, Api] = {api.FORMAT: api for api in APIS}
_BY_NAME: dict[str, Api] = {api.NAME: api for api in APIS}
# where a body holds its list, each key once, in the order of APIS
_LIST_KEYS = tuple(dict.fromkeys(api.LIST_KEY for api in APIS))


def api_for(fmt: RenderFormat) -> Api:
    """The room of ``fmt`` (a KeyError for ``text``, which has none)."""
    return _BY_FORMAT[fmt]


def named(name: str) -> Api:
    """The room of a list's kind, by its name (``Fitted.format``)."""
    return next(api for api in (*APIS, *FRAMEWORKS) if name == api.NAME)


def recognised(messages: Any, profile: ModelProfile, given: str | None) -> tuple[Api, str]:
    """The room of a caller's list (or body) and the name of the list (``messages``,
    ``input``, ``contents``)."""
    if given is not None and given not in _BY_NAME:
        raise InvalidRequest("format", f"must be one of {', '.join(_BY_NAME)}, not {given!r}")
    api = None if given is None else _BY_NAME[given]
    if isinstance(messages, Mapping):
        keys = [k for k in _LIST_KEYS if k in messages]
        if len(keys) != 1:
            listed = ", ".join(_LIST_KEYS[:-1]) + " or " + _LIST_KEYS[-1]
            raise InvalidRequest("messages", f"a body holds exactly one of {listed}")
        where = keys[0]
        if api is None:
            holding = [a for a in APIS if where == a.LIST_KEY]
            api = holding[0] if len(holding) == 1 else None
        entries = messages[where]
    else:
        where, entries = "messages", messages
    for framework in FRAMEWORKS:
        if framework.claims(entries):
            return framework, where
    if api is None:
        own = [a for a in APIS if provider_of(a.FORMAT) == profile.provider]
        api = next((a for a in own if a.claims(entries)), own[0])
    if not isinstance(messages, Mapping):
        where = api.LIST_NAME
    return api, where


def check_shapes(api: Api, entries: Any, tools: Any, where: str, model: str) -> None:
    """Each entry and each tool has the shape ``api`` takes (a framework's objects are
    judged by its own conversion: the list only has to hold some)."""
    if api in FRAMEWORKS:
        if not entries:
            raise InvalidRequest(where, "is empty: there is no conversation to fit")
        return
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        raise InvalidRequest(where, f"must be a list, not {short(entries)}")
    if not entries:
        raise InvalidRequest(where, "is empty: there is no conversation to fit")
    for index, entry in enumerate(entries):
        path = f"{where}[{index}]"
        if not isinstance(entry, Mapping):
            raise InvalidRequest(path, f"must be an object, not {short(entry)}")
        problem = api.check_entry(entry, index)
        if problem is not None:
            field, rule = problem
            other = next((a for a in APIS if a.looks_like(entry)), None)
            hint = ""
            if other is not None and other is not api:
                hint = f"; this is {other.ENTRY}, and {model!r} takes {api.ENTRY}s"
            raise InvalidRequest(path + field, rule + hint)
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise InvalidRequest("tools", f"must be a list of tool definitions, not {short(tools)}")
    for number, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidRequest(f"tools[{number}]", "must be a tool definition object")
    api.check_tools(tools)
