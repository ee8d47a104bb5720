"""The one interface every provider API's room implements, and the values it trades in.

Input: nothing. Output: ``Api``, the protocol a room (a module: ``openai_chat``,
``openai_responses``, ``anthropic``, ``gemini``) satisfies; ``Piece``, what a body
builder reads of a layout block; ``Body``, a built body (its value, its canonical JSON
made once, its cache breakpoints); and ``Problem``, a caller's entry's shape fault.

An API's room answers, from the figures of its provider's data file
(``assembler.facts``):

* the body: ``build`` (the blocks of a rendering -> the provider's body, checked),
  ``check`` (the provider's rules on a body), ``tokens`` (a body counted as the
  provider bills it) and ``overheads`` (the framing a body pays beside its parts);
* a caller's list (``fit``): ``claims`` (a list of this API's, among its provider's),
  ``check_entry`` and ``check_tools`` (shapes, faults named by the caller's path),
  ``units`` (the list cut into the pieces the solver chooses among, each priced),
  ``back`` (the chosen pieces as the same kind of list) and ``assembled`` (the body
  it is sent in, the system prompt and tools in their places);
* its names: ``NAME`` (the list's kind, as ``Fitted.format`` says it), ``FORMAT``
  (whose body it builds), ``LIST_KEY`` and ``SYSTEM_KEY`` (where a body holds its list
  and its system prompt), ``LIST_NAME`` (what a bare list is called in a fault) and
  ``ENTRY`` (what one entry of the list is called).

Adding a provider is adding a room that satisfies ``Api``, its data file, and its line
in ``providers/registry.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..facts import RenderFormat
from .meter import Meter
from .units import Form, Unit

__all__ = ["Api", "Body", "CandidateLike", "Piece", "Problem"]

# a caller's entry's fault: the path below the entry and the rule, or None
Problem = tuple[str, str] | None


class CandidateLike(Protocol):
    """What a body builder reads of a block's candidate."""

    @property
    def id(self) -> str: ...

    @property
    def tool_call_id(self) -> str | None: ...

    @property
    def tool_name(self) -> str | None: ...


class Piece(Protocol):
    """What a body builder reads of a layout block (``render.layout.Block`` is one):
    its section and kind, its candidate, its header, content and text, whether a cache
    breakpoint ends it, and ``pieces``, a memo of what bodies made of it."""

    @property
    def section(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def candidate(self) -> CandidateLike | None: ...

    @property
    def header(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def breakpoint(self) -> bool: ...

    @property
    def pieces(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Body:
    """A built body: ``json``, its canonical JSON, made once; ``breakpoints``, the byte
    offsets into the rendered text where a cache breakpoint ends a block; and ``make``,
    which makes the body as plain JSON values (``value``: never parsed back from
    ``json``)."""

    json: str
    breakpoints: tuple[int, ...]
    make: Callable[[], Any]

    def value(self) -> Any:
        """The body as plain JSON values, each object's keys in the order its canonical
        JSON writes them (sorted), as reading that JSON would give it."""
        return _in_canonical_order(self.make())


def _in_canonical_order(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _in_canonical_order(value[key]) for key in sorted(value)}
    if isinstance(value, list | tuple):
        return [_in_canonical_order(item) for item in value]
    return value


class Api(Protocol):
    """One provider API (see the module docstring)."""

    NAME: str
    FORMAT: RenderFormat
    LIST_KEY: str
    SYSTEM_KEY: str
    LIST_NAME: str
    ENTRY: str

    # -- the body ---------------------------------------------------------------------

    def build(self, blocks: Sequence[Piece], *, placed: bool) -> Body: ...

    def check(self, body: Mapping[str, Any], *, system_first: bool = True) -> None: ...

    def tokens(self, meter: Meter, body: Mapping[str, Any]) -> int: ...

    def overheads(self, meter: Meter, with_tools: bool) -> list[tuple[str, int]]: ...

    # -- a caller's list ----------------------------------------------------------------

    def claims(self, listed: Sequence[Any]) -> bool: ...

    def looks_like(self, entry: Mapping[str, Any]) -> bool: ...

    def check_entry(self, entry: Mapping[str, Any], index: int) -> Problem: ...

    def check_tools(self, tools: Sequence[Any]) -> None: ...

    def units(
        self,
        listed: Sequence[Any],
        tools: Sequence[Any],
        system: Any,
        meter: Meter,
        elide_above: int,
        where: str,
    ) -> list[Unit]: ...

    def back(
        self, listed: Sequence[Any], units: Sequence[Unit], chosen: Mapping[str, Form]
    ) -> list[Any]: ...

    def assembled(
        self, messages: Sequence[Any], system: Any, tools: Sequence[Any], extra: Mapping[str, Any]
    ) -> dict[str, Any]: ...
