"""Fields of a frozen value computed when first read, then fixed.

Input: a frozen slotted dataclass and the names of the fields that may be given as a
``later(compute)`` (``later_fields``); ``later(compute)`` itself, a zero-argument
function of values that never change (a rendering's immutable text, say).
Output: the class, each of those fields reading as ``compute()``: the first read
computes it and stores the value in the slot, every later read (equality, hashing,
``repr``, pickling and ``to_dict`` included) finds it there. A field given a plain
value reads as that value, so every constructor call of the class is as before.

Why: a call returns values some of whose fields only a few callers read (a
manifest's whole-text sha256, its items). Each such field is a function of what the
value already holds, so computing it when first read gives the value an eager
computation would have given, and a caller that never reads it pays for nothing.
``copied`` replaces fields without computing the others (``dataclasses.replace``
reads every field, so it would compute them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["Later", "copied", "later", "later_fields"]

_T = TypeVar("_T")


class Later:
    """A value computed by ``compute`` when first asked for, then kept (``get``)."""

    __slots__ = ("_compute", "_lock", "_value")

    def __init__(self, compute: Callable[[], Any]) -> None:
        self._compute: Callable[[], Any] | None = compute
        self._value: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        if self._compute is not None:
            with self._lock:
                compute = self._compute
                if compute is not None:
                    self._value = compute()
                    self._compute = None  # what it read is no longer held
        return self._value

    def __repr__(self) -> str:
        return "Later(...)" if self._compute is not None else f"Later({self._value!r})"


def later(compute: Callable[[], _T]) -> Any:
    """``compute``'s value for a field of ``later_fields``, computed when first read
    (typed ``Any``: it stands for the field's own type)."""
    return Later(compute)


class _LaterSlot:
    """A slot whose ``Later`` is replaced by its value when the field is first read."""

    __slots__ = ("_slot",)

    def __init__(self, slot: Any) -> None:
        self._slot = slot

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self._slot.__get__(obj, owner)
        if type(value) is Later:
            value = value.get()
            self._slot.__set__(obj, value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        self._slot.__set__(obj, value)

    def __delete__(self, obj: Any) -> None:
        self._slot.__delete__(obj)


def later_fields(*names: str) -> Callable[[type[_T]], type[_T]]:
    """A class decorator (applied after ``dataclass(slots=True)``): each of ``names``
    may be given as ``later(compute)``."""

    def wrap(cls: type[_T]) -> type[_T]:
        for name in names:
            setattr(cls, name, _LaterSlot(cls.__dict__[name]))
        return cls

    return wrap


def copied(value: _T, **changes: Any) -> _T:
    """``dataclasses.replace(value, **changes)`` for a frozen slotted dataclass of
    ``later_fields``, computing none of the fields it copies (a field not yet read
    stays to be computed when read, from the same ``Later``)."""
    cls = type(value)
    out = cls.__new__(cls)
    for name in cls.__slots__:  # type: ignore[attr-defined]
        slot = cls.__dict__[name]
        raw = slot._slot if isinstance(slot, _LaterSlot) else slot
        raw.__set__(out, changes[name] if name in changes else raw.__get__(value, cls))
    unknown = changes.keys() - set(cls.__slots__)  # type: ignore[attr-defined]
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    return out
