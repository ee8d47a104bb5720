"""What a client asks the server, in either transport, as one typed ``ServedCall``.

Input: a JSON-lines message (a decoded JSON value), or an HTTP route's path
parameters, query parameters and body; the server's ``ServerConfig``.
Output: a ``ServedCall`` (its operation, session key, payload, its ``assembler.Settings``,
its deadline, a session's cache and the ``id`` to echo), or ``InvalidRequest`` naming the field
(``session``, ``time_limit``, ``render``, ``strategy``, an unknown key). The options
are ``Settings``' own fields, checked by ``Settings``; what is the server's alone is
checked here: the time limit at most the server's (and, when not given, the server's).
The time limit is read here once, as seconds, and becomes the call's ``Deadline``
(counted from its arrival: the line read, or the HTTP body whole); only the deadline
goes further in (the seconds stay in the settings, which the ledger records).

One message, one operation (``models/session.md``, "The server"):

=================================================  ===========================
``{"request": R}``                                 assemble R once
``{"session": K, "request": R}``                   open session K with R (or replace it)
``{"session": K, "delta": D}``                     apply D to session K
``{"session": K, "close": true}``                  drop session K
=================================================  ===========================

with the options ``strategy``, ``render`` and ``headers`` (assemble and open: a
session keeps those it was opened with), ``cache`` (open only, with ``render``: a
provider's name, or in JSON lines a request's ``cache`` section without its previous
call; the session then carries its previous rendering into each next call, as
``Session(request, cache=...)`` does), ``time_limit`` (any; at most the server's),
``version`` (a delta only: the session version it was made for, so that a delta sent
again, to this replica or another, is applied once) and ``id`` (any JSON value, echoed
in the reply).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import unquote_to_bytes

from ..deadline import Deadline
from ..facts import Provider
from ..model.errors import InvalidRequest
from ..model.keys import key as key_rule
from ..model.limits import Limits
from ..model.lookalikes import not_a_message
from ..model.numbers import is_whole
from ..model.rules import Place, kind, shown, unknown_field
from ..settings import SERVED, Settings

__all__ = ["Op", "ServedCall", "call_from_http", "call_from_message", "session_key"]

_MESSAGE_KEYS = (
    "id", "request", "session", "delta", "close", "strategy", "render", "headers", "cache",
    "time_limit", "version",
)  # fmt: skip
_QUERY_KEYS = ("strategy", "render", "headers", "cache", "time_limit", "version")
# the options a session keeps from its opening call (a delta may not name them)
_KEPT = ("strategy", "render", "headers", "cache")
# the options that are the call's ``Settings`` (the fields a served call may set)
_SETTINGS = SERVED
_PROVIDERS = tuple(p.value for p in Provider)


class Op(StrEnum):
    ASSEMBLE = "assemble"
    OPEN = "open"
    DELTA = "delta"
    CLOSE = "close"


@dataclass(frozen=True, slots=True)
class ServedCall:
    """One operation: ``payload`` is the request (assemble, open) or the delta as JSON
    (a decoded value, or the body's bytes, decoded later off the event loop);
    ``settings`` how it is computed (a delta's and a close's: its time limit alone, the
    rest is its session's); ``deadline`` when its answer is due (its time limit after
    its arrival)."""

    op: Op
    settings: Settings
    deadline: Deadline
    key: str | None = None
    payload: Any = None
    # a session's cache: a provider's name or a cache section (``Session(cache=...)``)
    cache: str | Mapping[str, Any] | None = None
    id: Any = None
    # a delta's: the session version it was made for (None: whatever the session's is)
    version: int | None = None


def call_from_message(
    message: Any, limits: Limits, max_time_limit: float, arrived: float | None = None
) -> ServedCall:
    """A JSON-lines message as a call, read at ``arrived`` (``time.monotonic()``; None:
    now)."""
    if not isinstance(message, Mapping):
        raise InvalidRequest("$", f"a message must be a JSON object, not {kind(message)}")
    looks = not_a_message(message)
    if looks is not None:
        raise InvalidRequest("$", looks)
    place = Place("$")
    for key in message:
        if key not in _MESSAGE_KEYS:
            unknown_field(place, key, _MESSAGE_KEYS, f"a message has {', '.join(_MESSAGE_KEYS)}")
    key = session_key(message["session"], limits) if "session" in message else None
    if "delta" in message or "close" in message:
        what = "delta" if "delta" in message else "close"
        if key is None:
            raise InvalidRequest("session", f"is required with {what!r}")
        for other in ("request", "delta", "close", *_KEPT):
            if other != what and other in message:
                raise InvalidRequest(
                    other, f"goes with 'request', not with {what!r} (a session keeps its options)"
                )
        if what == "close" and message["close"] is not True:
            raise InvalidRequest("close", f"must be true, not {shown(message['close'])}")
        op = Op.DELTA if what == "delta" else Op.CLOSE
        payload = message.get("delta")
    elif "request" in message:
        op = Op.ASSEMBLE if key is None else Op.OPEN
        payload = message["request"]
    else:
        raise InvalidRequest(
            "$",
            "a message has 'request' (assembled once, or opening the session named by"
            " 'session'), or 'session' with 'delta' or 'close'",
        )
    settings = _settings(message, limits, max_time_limit)
    return ServedCall(
        op=op,
        settings=settings,
        deadline=Deadline.after(settings.seconds, since=arrived),
        key=key,
        payload=payload,
        cache=_cache(message.get("cache"), op, settings, sections=True),
        id=message.get("id"),
        version=_version(message.get("version"), op),
    )


def call_from_http(
    op: Op,
    key: str | None,
    query: Mapping[str, str],
    body: bytes | None,
    limits: Limits,
    max_time_limit: float,
    arrived: float,
) -> ServedCall:
    """An HTTP route's call: options from the query string, payload the body's bytes,
    whole at ``arrived`` (``time.monotonic()``)."""
    place = Place("query")
    for name_ in query:
        if name_ not in _QUERY_KEYS:
            place.fail(name_, f"unknown parameter: the options are {', '.join(_QUERY_KEYS)}")
    if op in (Op.DELTA, Op.CLOSE):
        for option in _KEPT:
            if option in query:
                raise InvalidRequest(option, "is set when the session is opened, not per delta")
    options: dict[str, Any] = dict(query)
    if "time_limit" in options:
        # the one option a query string spells as text that is not one of its values
        try:
            options["time_limit"] = float(options["time_limit"])
        except ValueError:
            raise InvalidRequest(
                "time_limit", f"must be a number, not {shown(options['time_limit'])}"
            ) from None
    settings = _settings(options, limits, max_time_limit)
    return ServedCall(
        op=op,
        settings=settings,
        deadline=Deadline.after(settings.seconds, since=arrived),
        key=None if key is None else session_key(key, limits),
        payload=body,
        cache=_cache(query.get("cache"), op, settings, sections=False),
        version=_version(_number(query.get("version")), op),
    )


def session_key(value: Any, limits: Limits) -> str:
    """A session key by the rule of keys (``model.keys``: a name that shows only
    itself); from an HTTP path (bytes, percent-encoded), decoded as UTF-8 exactly,
    so that two different paths never name one session."""
    if isinstance(value, bytes):
        raw = unquote_to_bytes(value)
        try:
            value = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidRequest(
                "session",
                f"is not UTF-8 once percent-decoded (byte {raw[exc.start]:#04x} at"
                f" {exc.start}); a key is text",
            ) from None
    checked: str = key_rule(value, Place("$"), "session", limits)
    return checked


def _number(text: str | None) -> Any:
    """A query parameter that is a whole number, as one (anything else as it is, for
    ``_version`` to name)."""
    if text is not None and text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return text


def _version(value: Any, op: Op) -> int | None:
    """A delta's ``version``: the session version it was made for."""
    if value is None:
        return None
    if op is not Op.DELTA:
        raise InvalidRequest("version", "is an option of a delta (the version it was made for)")
    if not is_whole(value) or value < 0:
        raise InvalidRequest("version", f"must be a whole number >= 0, not {shown(value)}")
    return value


def _settings(options: Mapping[str, Any], limits: Limits, maximum: float) -> Settings:
    """The call's ``Settings`` from its options: each checked by ``Settings``, the time
    limit the server's when not given, and never above it."""
    given = {name: options[name] for name in _SETTINGS if name in options}
    given.setdefault("time_limit", maximum)
    settings = Settings(limits=limits, **given)
    if settings.seconds > maximum:
        raise InvalidRequest(
            "time_limit",
            f"{shown(given['time_limit'])} s is above this server's limit of {maximum:g} s"
            " (--time-limit)",
        )
    return settings


def _cache(
    value: Any, op: Op, settings: Settings, *, sections: bool
) -> str | Mapping[str, Any] | None:
    """A session's ``cache`` option: a provider's name (or, ``sections``, a cache
    section, checked when the session opens), only when a session is opened with a
    render format (what it rendered is what the provider holds)."""
    if value is None:
        return None
    if op is not Op.OPEN:
        raise InvalidRequest(
            "cache",
            "is an option of a session's opening call (a one-off request carries its own"
            " cache section)",
        )
    chosen: str | Mapping[str, Any]
    if isinstance(value, str):
        if value not in _PROVIDERS:
            raise InvalidRequest(
                "cache", f"must be a provider ({', '.join(_PROVIDERS)}), not {shown(value)}"
            )
        chosen = value
    elif sections and isinstance(value, Mapping):
        chosen = value
    else:
        what = "a provider's name or a cache section" if sections else "a provider's name"
        raise InvalidRequest("cache", f"must be {what}, not {kind(value)}")
    if settings.render is None:
        raise InvalidRequest(
            "cache",
            "needs 'render': the previous call's rendering is what the provider holds",
        )
    return chosen
