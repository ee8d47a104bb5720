"""One rule per kind of value in a request, shared by every field of that kind.

Input: a value from parsed JSON (or a Python caller), the ``Limits``, and where it
sits (a ``Place`` and the field's key).
Output: the value converted to its typed form, or ``InvalidRequest`` with a one-line
message naming the field (a JSON path) and the candidate.

Every string field is judged by the same rule of text: a ``str`` of Unicode scalar
values (no lone UTF-16 surrogate, which no UTF-8 text can hold). A *name* is also
non-empty and at most ``Limits.max_name_length`` characters; a *label* may be empty;
*text* (``content``) is bounded only by the request's size. Every enum field is one
rule over its ``StrEnum``. A new field picks its rule; it writes no check of its own.

The common case (a valid value) runs a few type checks and builds no message; each
message and path is formatted only when a check fails. Messages never hold a value
verbatim: strings are escaped and shortened, containers are named by their kind, and
huge integers by their number of digits, so a message is one line of modest size.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import Any, NoReturn, TypeVar

from .errors import InvalidRequest, RequestTooLarge
from .limits import Limits
from .numbers import is_number, is_whole

__all__ = [
    "MAX_INTEGER",
    "Oversized",
    "Place",
    "Rule",
    "choice",
    "enum_rule",
    "flag",
    "integer",
    "kind",
    "label",
    "label_list",
    "mapping",
    "member",
    "name",
    "name_list",
    "name_set",
    "printable",
    "prose",
    "shown",
    "text",
    "unit_number",
]

# Costs and budgets are JSON integers shared with JavaScript callers, so they are
# kept to what a double represents exactly; the sum of all costs obeys the same
# bound, which leaves CP-SAT (int64) a factor of 1000 of headroom.
MAX_INTEGER = 2**53 - 1

E = TypeVar("E", bound=StrEnum)

# Python strings can hold lone surrogates (from a JSON "\ud800" escape, or a caller);
# UTF-8 cannot encode them, so they would fail later, when the result is written.
_SURROGATE = re.compile("[\ud800-\udfff]")
# a key shown as .key in a path; anything else is shown quoted, as ['key']
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_SHOWN_CHARACTERS = 40


class Oversized:
    """An integer literal too long to convert (Python refuses more than 4,300 digits).

    The JSON reader puts one in place of such a literal, so that the rule of the field
    holding it can name the field rather than fail inside the reader.
    """

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


class Place:
    """Where a value sits: the path of its container and, in a candidate, its id.

    A candidate's ``Place`` is built once and its path formatted only on failure.
    """

    __slots__ = ("candidate", "index", "prefix")

    def __init__(self, prefix: str, index: int | None = None) -> None:
        self.prefix = prefix
        self.index = index
        self.candidate: str | None = None

    def path(self, key: object = None) -> str:
        base = self.prefix if self.index is None else f"{self.prefix}[{self.index}]"
        return base if key is None else member(base, key)

    def inner(self, key: object) -> Place:
        """The place of the values inside the container at ``key``."""
        place = Place(self.path(key))
        place.candidate = self.candidate
        return place

    def fail(self, key: object, message: str) -> NoReturn:
        raise InvalidRequest(self.path(key), message, candidate=self.candidate)


Rule = Callable[[Any, Place, Any, Limits], Any]

# where a user who has only the installed package reads each format's fields
REQUEST_FIELDS = "the request's fields: 'assembler schema request'"
DELTA_FIELDS = "a delta's fields: 'assembler schema delta'"


def unknown_field(place: Place, key: object, known: Collection[str], fields: str) -> NoReturn:
    """The error for ``key``, a field the format does not have: the closest known
    field when one is close (a typo), and where the fields are listed."""
    guess = closest(key, known)
    hint = f"; did you mean {shown(guess)}?" if guess is not None else ""
    place.fail(key, f"unknown field{hint} ({fields})")


def closest(key: object, known: Collection[str]) -> str | None:
    """The known name ``key`` most likely misspells, or None when none is close."""
    if not isinstance(key, str) or len(key) > 64:
        return None
    lowered = {name.lower(): name for name in known}
    matches = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[matches[0]] if matches else None


# ---------------------------------------------------------------------------
# describing a value in a message


def member(base: str, key: object) -> str:
    """The JSON path of ``key`` inside ``base`` (``$`` is the document itself)."""
    if is_whole(key):
        return f"{base}[{shown(key)}]"
    if isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return key if base == "$" else f"{base}.{key}"
    return f"{base}[{shown(key) if isinstance(key, str) else f'<{kind(key)}>'}]"


def kind(value: object) -> str:
    """What a value is, in the request's (JSON's) words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Oversized):
        return f"an integer of {value.digits} digits"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, tuple):
        return "a tuple"
    return f"a {type(value).__name__}"


def shown(value: object) -> str:
    """A value for a message: short, escaped, one line, and never expensive to form."""
    if isinstance(value, str):
        if len(value) <= _SHOWN_CHARACTERS:
            return _escaped(value)
        return f"{_escaped(value[:_SHOWN_CHARACTERS])}... ({len(value)} characters)"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) < 10**30:
            return str(value)
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, float):
        return repr(value)
    return kind(value)


def _escaped(text: str) -> str:
    # repr escapes every unprintable character (controls, line separators, lone
    # surrogates, bidirectional overrides), which keeps a message on one line
    return repr(text)


# ---------------------------------------------------------------------------
# text


def _is_text(value: str) -> bool:
    return value.isascii() or _SURROGATE.search(value) is None


def _not_text(value: str, place: Place, key: object) -> NoReturn:
    at = _SURROGATE.search(value)
    position = 0 if at is None else at.start()
    place.fail(
        key,
        f"holds a lone UTF-16 surrogate (U+{ord(value[position]):04X}) at character"
        f" {position}; text must be Unicode scalar values",
    )


def name(value: Any, place: Place, key: Any, limits: Limits) -> str:
    """A non-empty string of at most ``max_name_length`` scalar values."""
    if (
        type(value) is str
        and value
        and len(value) <= limits.max_name_length
        and (value.isascii() or _is_text(value))
    ):
        return value
    if not isinstance(value, str):
        place.fail(key, f"must be a string, not {kind(value)}")
    if not value:
        place.fail(key, "must not be empty")
    if not _is_text(value):
        _not_text(value, place, key)
    if len(value) > limits.max_name_length:
        _too_long(value, place, key, limits)
    return str(value)  # a subclass of str, as a plain str


def printable(text: str) -> str:
    """``text`` with each character that is not printable escaped (``\\x1b``,
    ``\\u202e``), for showing text on a terminal (a task id, an error)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _too_long(value: str, place: Place, key: object, limits: Limits) -> NoReturn:
    raise RequestTooLarge(
        place.path(key),
        f"a name of {len(value)} characters",
        limit="max_name_length",
        maximum=limits.max_name_length,
        actual=len(value),
        candidate=place.candidate,
    )


def label(value: Any, place: Place, key: Any, limits: Limits) -> str:
    """A string of at most ``max_name_length`` scalar values; may be empty."""
    if type(value) is str and not value:
        return value
    return name(value, place, key, limits)


def text(value: Any, place: Place, key: Any, limits: Limits) -> str:
    """A string of scalar values, of any length (the request's size bounds it)."""
    if type(value) is str and _is_text(value):
        return value
    if not isinstance(value, str):
        place.fail(key, f"must be a string, not {kind(value)}")
    if not _is_text(value):
        _not_text(value, place, key)
    return str(value)  # a subclass of str, as a plain str


def prose(value: Any, place: Place, key: Any, limits: Limits) -> str:
    """A non-empty string of scalar values, of any length (the task's own words)."""
    if type(value) is str and value and _is_text(value):
        return value
    if isinstance(value, str) and not value:
        place.fail(key, "must not be empty")
    return text(value, place, key, limits)


def _items(value: Any, place: Place, key: Any, limits: Limits, item: Rule, what: str) -> list[Any]:
    if not isinstance(value, list):
        place.fail(key, f"must be a list of {what}, not {kind(value)}")
    try:
        return [item(entry, place, key, limits) for entry in value]
    except InvalidRequest:
        pass
    # Only now is the path of each entry worth forming: find the first bad one again.
    inner = place.inner(key)
    for index, entry in enumerate(value):
        item(entry, inner, index, limits)
    raise AssertionError("an entry failed its rule once but not twice")  # pragma: no cover


def name_list(value: Any, place: Place, key: Any, limits: Limits) -> tuple[str, ...]:
    """A list of names, kept in order."""
    return tuple(_items(value, place, key, limits, name, "names"))


def name_set(value: Any, place: Place, key: Any, limits: Limits) -> tuple[str, ...]:
    """A list of names, duplicates dropped, sorted (order carries no meaning)."""
    if type(value) is list and not value:
        return ()
    return tuple(sorted(set(_items(value, place, key, limits, name, "names"))))


def label_list(value: Any, place: Place, key: Any, limits: Limits) -> tuple[str, ...]:
    """A list of labels (strings that may be empty), kept in order."""
    return tuple(_items(value, place, key, limits, label, "strings"))


def choice(choices: type[E], value: object, field: str) -> E:
    """A setting that is one of an enum's values (``render``, ``headers``): the member,
    or ``InvalidRequest`` naming ``field`` and every choice."""
    if isinstance(value, choices):
        return value
    if isinstance(value, str):
        for member in choices:
            if member.value == value:
                return member
    listed = ", ".join(member.value for member in choices)
    raise InvalidRequest(field, f"must be one of {listed}, not {shown(value)}")


def enum_rule(choices: type[StrEnum] | tuple[str, ...]) -> Rule:
    """The rule of a field whose value is one of ``choices`` (an enum's values, or
    plain strings); it returns the enum member, or the string."""
    members: dict[str, Any] = (
        {value: value for value in choices}
        if isinstance(choices, tuple)
        else {member.value: member for member in choices}
    )
    listed = " or ".join(repr(value) for value in members)

    def one_of(value: Any, place: Place, key: Any, limits: Limits) -> Any:
        # the type check comes first: a list or an object is not hashable
        found = members.get(value) if type(value) is str else None
        if found is not None:
            return found
        if isinstance(value, str):
            found = members.get(str(value))  # a subclass of str
            if found is not None:
                return found
            place.fail(key, f"must be {listed}, not {shown(value)}")
        place.fail(key, f"must be {listed} (a string), not {kind(value)}")

    return one_of


# ---------------------------------------------------------------------------
# numbers and flags


def integer(value: Any, place: Place, key: Any, limits: Limits) -> int:
    """An exact integer in ``0 .. MAX_INTEGER``; a whole float (``120.0``) counts."""
    if type(value) is int and 0 <= value <= MAX_INTEGER:
        return value
    if isinstance(value, Oversized):
        place.fail(key, f"is an integer of {value.digits} digits, above {MAX_INTEGER}")
    if not is_number(value):
        place.fail(key, f"must be an integer, not {kind(value)}")
    if isinstance(value, float):
        # JSON has one number type; 120.0 is accepted as 120 but 120.5 is not
        if not math.isfinite(value) or not value.is_integer():
            place.fail(key, f"must be a whole number, not {shown(value)}")
        value = int(value)
    number = int(value)
    if number < 0:
        place.fail(key, f"must be >= 0, not {shown(number)}")
    if number > MAX_INTEGER:
        place.fail(key, f"{shown(number)} is above {MAX_INTEGER}: too large for exact arithmetic")
    return number


def unit_number(value: Any, place: Place, key: Any, limits: Limits) -> float:
    """A finite number in [0, 1], as a float."""
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    if type(value) is int and 0 <= value <= 1:
        return float(value)
    if isinstance(value, Oversized):
        place.fail(key, f"must be between 0 and 1, not an integer of {value.digits} digits")
    if not is_number(value):
        place.fail(key, f"must be a number, not {kind(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        place.fail(key, f"must be finite, not {shown(value)}")
    if 0 <= value <= 1:
        return float(value)  # a subclass of int or float (numpy's float64 is one)
    # compared as given: an integer too large for a float is still just out of range
    place.fail(key, f"must be between 0 and 1, not {shown(value)}")


def flag(value: Any, place: Place, key: Any, limits: Limits) -> bool:
    """``true`` or ``false``."""
    if type(value) is bool:
        return value
    place.fail(key, f"must be true or false, not {kind(value)}")


def mapping(value: Any, place: Place, key: Any) -> Mapping[Any, Any]:
    """A JSON object (any ``Mapping`` from a Python caller)."""
    if type(value) is dict or isinstance(value, Mapping):
        return value
    place.fail(key, f"must be an object, not {kind(value)}")
