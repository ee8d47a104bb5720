"""The candidates of decoded Structs, in pure Python: the compiled kernel's twin
(``_decode.c``).

Input: the msgspec Structs of a request's candidates (``decode._form_type``'s, fields
in ``Candidate``'s order, ``transfer`` a Struct with ``from_``), the ``Candidate``
class, the table of each (kind, role) pair as given (``msgspec.UNSET`` when absent) to
the form's kind and role, the kinds that name a tool call, the tool call kind, and
``msgspec.UNSET``.
Output: the ``Candidate`` of each Struct (``position`` its index), or None when one is
not plainly valid: a contradicting kind and role, a tool field its kind does not take
or lacks, a number not an ``int`` or ``float`` itself, a string not a plain ``str`` of
Unicode scalar values. What None leaves is the rules' to judge (``decode.py``).

Each ``Candidate`` is made as a shell (its slots without the frozen ``__setattr__``),
filled, then given the class: a frozen dataclass's ``__init__`` makes a call of
``object.__setattr__`` per field.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping, Sequence
from operator import attrgetter
from typing import Any

import msgspec

__all__ = ["decoded", "replaced"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_STR = str


def _text(value: Any) -> bool:
    """A plain ``str`` of Unicode scalar values."""
    return type(value) is _STR and (value.isascii() or _SURROGATE.search(value) is None)


def decoded(
    forms: list[Any],
    candidate: type,
    kind_role: Mapping[tuple[Any, Any], tuple[Any, Any]],
    tool_kinds: Container[Any],
    call: Any,
    unset: Any,
) -> list[Any] | None:
    """The candidates of ``forms`` (see the module's docstring)."""
    fill = _filler(candidate)
    out: list[Any] = []
    append = out.append
    text, astuple = _text, msgspec.structs.astuple
    for index, f in enumerate(forms):
        (cid, identity, cost, form, relevance, required, scope, transfer, source, version,
         channel, role_name, depends_on, group, lineage, content, labels, kind_name,
         tool_call_id, tool_name, turn) = astuple(f)  # fmt: skip
        if identity is unset:
            identity = cid
        resolved = kind_role.get((kind_name, role_name))
        if resolved is None:
            return None
        kind, role = resolved
        if (tool_call_id is None) == (kind in tool_kinds) or (tool_name is None) == (
            kind is call
        ):
            return None
        if type(cost) is not int or type(relevance) is not float or type(turn) is not int:
            return None
        if not (text(cid) and text(identity) and text(form) and text(scope)):
            return None
        for value in (source, version, channel, group, content, tool_call_id, tool_name):
            if value is not None and not text(value):
                return None
        if transfer is not None:
            transfer = transfer.from_
            if not text(transfer):
                return None
        for values in (depends_on, lineage, labels):
            if values and not all(map(text, values)):
                return None
        append(fill((
            cid, identity, cost, form, relevance, required, scope, transfer, source, version,
            channel, role, tuple(sorted(set(depends_on))) if depends_on else (), group,
            tuple(lineage) if lineage else (), content, tuple(labels) if labels else (), kind,
            tool_call_id, tool_name, turn, index,
        )))  # fmt: skip
    return out


def replaced(obj: Any, index: int, value: Any) -> Any:
    """A copy of ``obj`` (of a class with ``__slots__``) with ``value`` in its slot at
    ``index``, made without the class's ``__init__`` (every other value as it was)."""
    cls = type(obj)
    values = list(_getter(cls)(obj))
    values[index] = value
    return _filler(cls)(values)


_GETTERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
_FILLERS: dict[type, Callable[[Sequence[Any]], Any]] = {}


def _getter(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """Every slot of an instance of ``cls``, in order, read in C."""
    getter = _GETTERS.get(cls)
    if getter is None:
        getter = _GETTERS[cls] = attrgetter(*_slots(cls))
    return getter


def _filler(cls: type) -> Callable[[Sequence[Any]], Any]:
    """A function making an instance of ``cls`` of the slot values given in order: a
    shell of its slots (no frozen ``__setattr__``; the same layout, so it may then be
    given ``cls``) filled by one assignment, written once per class as ``dataclasses``
    writes an ``__init__``."""
    filler = _FILLERS.get(cls)
    if filler is None:
        slots = _slots(cls)
        shell = type(f"_{cls.__name__}Shell", (), {"__slots__": slots})
        targets = ", ".join(f"o.{name}" for name in slots)
        source = (
            "def fill(values):\n"
            "    o = shell()\n"
            f"    {targets}, = values\n"
            "    o.__class__ = cls\n"
            "    return o\n"
        )
        scope: dict[str, Any] = {"shell": shell, "cls": cls}
        exec(source, scope)  # the names are the class's own slots
        filler = _FILLERS[cls] = scope["fill"]
    return filler


def _slots(cls: type) -> tuple[str, ...]:
    slots: tuple[str, ...] = cls.__slots__  # type: ignore[attr-defined]
    return slots
