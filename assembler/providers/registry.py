"""The registry: each provider API's room, by its format and by the lists ``fit`` takes.

Input: a format; or the list (or body) a caller gave ``fit``, its model's profile and
the format the caller named, then that list and its tools.
Output: the room (``Api``) of a format (``api_for``); the rooms of a caller's list
(the body's, and the list's as given) and the name the caller knows it by
(``recognised``); nothing, or one ``InvalidRequest`` naming the caller's own path for
an entry, a tool or a body field of the wrong shape (``check_shapes``,
``check_tools``, ``check_body``), saying what it looks like when it is plainly another
API's.

A list's format is recognised from its shape: every room says what in an entry is
plainly its own (``marks``: a ``tool_use`` block, ``tool_calls``, ``parts``, an
``input_text`` part, a typed item), as does a body's list key (``input``,
``contents``). The body is for the model's API whose shape the list has (the first, for
a list of plain messages); an entry of another API's shape is refused, or taken as the
``source`` format the caller names, to be converted. A framework's message objects
(LangChain's) are recognised first, whatever the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InvalidRequest
from ..facts import ModelProfile, RenderFormat, provider_of
from . import anthropic, gemini, openai_chat, openai_responses
from .interface import Api
from .openai_chat import langchain, pydantic_ai
from .units import short

__all__ = [
    "APIS", "FRAMEWORKS", "api_for", "check_body", "check_shapes", "check_tools", "holding",
    "named", "recognised", "room_counter",
]  # fmt: skip

# every provider API, one room each (the order a format's name is listed in, and the
# order a shape hint asks them in)
APIS: tuple[Api, ...] = (openai_chat, openai_responses, anthropic, gemini)
# frameworks' message objects, fitted as the API they convert them to
FRAMEWORKS: tuple[Api, ...] = (langchain, pydantic_ai)
_BY_FORMAT: dict[RenderFormat, Api] = {api.FORMAT: api for api in APIS}
_BY_NAME: dict[str, Api] = {api.NAME: api for api in APIS}
# where a body holds its list, each key once, in the order of APIS
_LIST_KEYS = tuple(dict.fromkeys(api.LIST_KEY for api in APIS))


def api_for(fmt: RenderFormat) -> Api:
    """The room of ``fmt`` (a KeyError for ``text``, which has none)."""
    return _BY_FORMAT[fmt]


def room_counter(kind: str, argument: str) -> Any:
    """A counter a room offers by name (``ctok:VERSION``: ``COUNTERS`` of its module),
    or None when no room has one of that kind."""
    for api in APIS:
        make = getattr(api, "COUNTERS", {}).get(kind)
        if make is not None:
            return make(argument)
    return None


def holding(key: str) -> Api:
    """The room whose bodies hold their list under ``key`` alone (``input``, ...)."""
    (api,) = [a for a in APIS if key == a.LIST_KEY]
    return api


def named(name: str) -> Api:
    """The room of a list's kind, by its name (``Fitted.format``)."""
    return next(api for api in (*APIS, *FRAMEWORKS) if name == api.NAME)


def recognised(
    messages: Any,
    profile: ModelProfile,
    given: str | None,
    *,
    model: str,
    known: bool = True,
    source: str | None = None,
) -> tuple[Api, Api, str]:
    """The room the body is for (``given``, else among the model's APIs the one the
    list's shape names), the room of the list as given (``source`` when it is to be
    converted, else the same) and the name of the list (``messages``, ``input``,
    ``contents``). An entry plainly of another API (its ``marks``), or a body holding
    another API's list, is one ``InvalidRequest`` naming it and what it looks like.
    ``known``: the model is in the tables (an unknown one takes any format, by
    default a Chat Completions list)."""
    target = _named(given, "format")
    origin = _named(source, "source")
    # a format named is taken as asked (an SDK that converts it, a compatible proxy)
    own = [a for a in APIS if not known or provider_of(a.FORMAT) == profile.provider]
    body_api: Api | None = None
    if isinstance(messages, Mapping):
        keys = [k for k in _LIST_KEYS if k in messages]
        if len(keys) != 1:
            listed = ", ".join(_LIST_KEYS[:-1]) + " or " + _LIST_KEYS[-1]
            raise InvalidRequest("messages", f"a body holds exactly one of {listed}")
        where = keys[0]
        holding = [a for a in APIS if where == a.LIST_KEY]
        body_api = holding[0] if len(holding) == 1 else None
        entries = messages[where]
    else:
        where, entries = "", messages
    for framework in FRAMEWORKS:
        if framework.claims(entries):
            return framework, framework, where or framework.LIST_NAME
    if isinstance(entries, str) and (body_api is None or body_api.LIST_KEY == "input"):
        # the Responses API takes a string as one user message
        body_api = next(a for a in APIS if a.LIST_KEY == "input")
    seen = _marked(entries)
    if body_api is not None and body_api not in seen:
        seen = {body_api: (-1, "", f"a body with {where}"), **seen}
    if target is None and origin is not None:
        target = origin if origin in own else own[0]
    elif target is None:
        # the model's API whose shape the list has (the first, when it has two)
        mine = [a for a in seen if a in own]
        target = mine[0] if mine else own[0]
    expected = target if origin is None else origin
    where = where or expected.LIST_NAME
    for api, (index, path, what) in seen.items():
        if api is not expected:
            raise _foreign(api, expected, target, index, path, what, where, model, origin)
    return target, expected, where


def _named(name: str | None, field: str) -> Api | None:
    if name is None:
        return None
    if name not in _BY_NAME:
        raise InvalidRequest(field, f"must be one of {', '.join(_BY_NAME)}, not {short(name)}")
    return _BY_NAME[name]


def _names(apis: Sequence[Api]) -> str:
    names = [repr(a.NAME) for a in apis]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _marked(entries: Any) -> dict[Api, tuple[int, str, str]]:
    """Each API some entry is plainly of: the first such entry, where and what."""
    seen: dict[Api, tuple[int, str, str]] = {}
    if not isinstance(entries, Sequence) or isinstance(entries, str | bytes):
        return seen
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        for api in APIS:
            if api not in seen and (found := api.marks(entry)) is not None:
                seen[api] = (index, *found)
    return seen


def _foreign(
    api: Api, expected: Api, target: Api, index: int, path: str, what: str, where: str,
    model: str, origin: Api | None,
) -> InvalidRequest:  # fmt: skip
    """An entry (or the body) of ``api``'s shape where ``expected``'s was due."""
    field = where if index < 0 else f"{where}[{index}]{path}"
    this = f"{what}: this is {api.ENTRY}" if index >= 0 else f"this is {_a(api.TITLE)} body"
    if origin is not None:
        return InvalidRequest(field, f"{this}, not {origin.ENTRY} as source={origin.NAME!r} says")
    return InvalidRequest(
        field,
        f"{this}, and {model!r} takes {target.TITLE} (convert it with source={api.NAME!r})",
    )


def check_tools(expected: Api, tools: Any, model: str, target: Api) -> None:
    """Each tool is ``expected``'s: one of another API's shape is named as such."""
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        raise InvalidRequest("tools", f"must be a list of tool definitions, not {short(tools)}")
    if expected in FRAMEWORKS:
        return  # a framework's tool objects, bound by its own conversion
    for number, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise InvalidRequest(f"tools[{number}]", "must be a tool definition object")
        for api in APIS:
            what = api.tool_marks(tool)
            if what is not None and api is not expected and expected.tool_marks(tool) is None:
                how = (f"and {model!r} takes {target.TITLE} tools (convert them with"
                       f" source={api.NAME!r})") if expected is target else (
                       f"not {expected.TITLE}'s as source={expected.NAME!r} says")  # fmt: skip
                raise InvalidRequest(
                    f"tools[{number}]", f"{what}: this is {_a(api.TITLE)} tool, {how}"
                )
    expected.check_tools(tools)


def check_body(api: Api, body: Mapping[str, Any]) -> None:
    """A body's fields: one of another API's (not ``api``'s) is named as such, and
    each known field has its type."""
    if api in FRAMEWORKS:
        return
    for key in body:
        if not isinstance(key, str) or key in api.BODY_FIELDS or key == api.SYSTEM_KEY:
            continue
        other = next((a for a in APIS if key in a.BODY_FIELDS or key == a.SYSTEM_KEY), None)
        if other is not None:
            raise InvalidRequest(key, f"is a field of {other.TITLE} bodies, not of {api.TITLE}")
    problem = api.check_body(body)
    if problem is not None:
        raise InvalidRequest(*problem)


def check_shapes(api: Api, entries: Any, where: str) -> None:
    """Each entry has the shape ``api`` takes (a framework's objects are judged by its
    own conversion: the list only has to hold some)."""
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
            raise InvalidRequest(path + problem[0], problem[1])


def _a(title: str) -> str:
    return ("an " if title[0] in "AEIOU" else "a ") + title
