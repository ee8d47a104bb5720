"""The typed decoding of a request's candidates: msgspec Structs, checked in C.

Input: the ``candidates`` list of a parsed request (dicts, as JSON or a Python caller
gives them) and the ``Limits``.
Output: the ``Candidate`` of each, in the order given, or None when any candidate is
not plainly valid; the caller (``parse.py``) then judges the list by its rules, one
field at a time, which names the field and the candidate of the first fault.

msgspec converts the whole list into Structs (``_Form``: every field's type, range,
length and spelling, unknown fields refused) in one call in C; what a Struct cannot
say is checked here, without a message: every string is a ``str`` (not a subclass) of
Unicode scalar values, numbers are ``int`` and ``float`` themselves, and a form's kind,
role and tool fields agree (the rules of ``parse.parse_candidate``). A list this path
accepts is one the rules accept, into the same values: it never decides an error, so
an error's words are always the rules' own. ``tests/test_parse.py`` checks both paths
give the same candidates or the same error on generated and mutated requests.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Any, Literal, cast

import msgspec

from .rules import MAX_INTEGER
from .types import Candidate, Kind, Role

__all__ = ["decoded_candidates"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_KINDS = {kind.value: kind for kind in Kind}
_ROLES = {role.value: role for role in Role}
_UNSET = msgspec.UNSET
_STR = str


class _CandidateShell:
    """Candidate's slots without its frozen ``__setattr__``: a decoder fills one, then
    makes it the ``Candidate`` it stands for (the same slots, so ``__class__`` may be
    assigned); the result is an ordinary, frozen ``Candidate``."""

    __slots__ = Candidate.__slots__
    # Candidate's fields, typed as there (tests/test_parse.py checks they match)
    id: str
    identity: str
    cost: int
    form: str
    relevance: float
    required: bool
    scope: str
    transfer_from: str | None
    source: str | None
    version: str | None
    channel: str | None
    role: Role
    depends_on: tuple[str, ...]
    group: str | None
    lineage: tuple[str, ...]
    content: str | None
    labels: tuple[str, ...]
    kind: Kind
    tool_call_id: str | None
    tool_name: str | None
    turn: int
    position: int


@lru_cache(maxsize=8)
def _form_type(max_name: int) -> Any:
    """The Struct of a candidate under names of at most ``max_name`` characters."""
    name = Annotated[str, msgspec.Meta(min_length=1, max_length=max_name)]
    label = Annotated[str, msgspec.Meta(max_length=max_name)]
    integer = Annotated[int, msgspec.Meta(ge=0, le=MAX_INTEGER)]
    unit = Annotated[float, msgspec.Meta(ge=0.0, le=1.0)]
    unset = msgspec.UnsetType
    transfer = msgspec.defstruct(
        "Transfer", [("from_", name, msgspec.field(name="from"))], forbid_unknown_fields=True
    )
    fields: list[tuple[str, Any, Any]] = [
        ("id", name, _UNSET),
        ("identity", name | unset, _UNSET),
        ("form", name | unset, _UNSET),
        ("cost", integer | unset, _UNSET),
        ("relevance", unit | unset, _UNSET),
        ("required", bool | unset, _UNSET),
        ("scope", name | unset, _UNSET),
        ("transfer", transfer | unset, _UNSET),
        ("source", name | unset, _UNSET),
        ("version", name | unset, _UNSET),
        ("channel", name | unset, _UNSET),
        ("role", Literal[tuple(_ROLES)] | unset, _UNSET),
        ("depends_on", list[name] | unset, _UNSET),
        ("group", name | unset, _UNSET),
        ("lineage", list[name] | unset, _UNSET),
        ("content", str | unset, _UNSET),
        ("labels", list[label] | unset, _UNSET),
        ("kind", Literal[tuple(_KINDS)] | unset, _UNSET),
        ("tool_call_id", name | unset, _UNSET),
        ("tool_name", name | unset, _UNSET),
        ("turn", integer | unset, _UNSET),
    ]
    form = msgspec.defstruct(
        "Form", [(f, t) if d is _UNSET and f == "id" else (f, t, d) for f, t, d in fields],
        forbid_unknown_fields=True,
    )  # fmt: skip
    return list[form]  # type: ignore[valid-type]


def _text(value: Any) -> bool:
    """A plain ``str`` of Unicode scalar values."""
    return type(value) is _STR and (value.isascii() or _SURROGATE.search(value) is None)


def decoded_candidates(raw: list[Any], max_name: int) -> list[Candidate] | None:
    """The candidates of ``raw`` (in its order, ``position`` its index), or None when one
    is not plainly valid (module docstring)."""
    try:
        forms = msgspec.convert(raw, _form_type(max_name))
    except (msgspec.ValidationError, TypeError, ValueError):
        return None
    out: list[Candidate] = []
    append = out.append
    unset = _UNSET
    kinds, roles = _KINDS, _ROLES
    instruction, evidence = Role.INSTRUCTION, Role.EVIDENCE
    for index, f in enumerate(forms):
        cid, cost = f.id, f.cost
        if cost is unset or type(cost) is not int or not _text(cid):
            return None
        identity = cid if f.identity is unset else f.identity
        kind_name, role_name = f.kind, f.role
        if kind_name is unset:
            role = evidence if role_name is unset else roles[role_name]
            kind = Kind.SYSTEM if role is instruction else Kind.EVIDENCE
        else:
            kind = kinds[kind_name]
            if role_name is unset:
                role = instruction if kind.is_instruction else evidence
            else:
                role = roles[role_name]
                if kind.is_instruction != (role is instruction):
                    return None
        tool_call_id, tool_name = f.tool_call_id, f.tool_name
        is_tool = kind is Kind.TOOL_CALL or kind is Kind.TOOL_RESULT
        if (tool_call_id is unset) == is_tool or (tool_name is unset) == (kind is Kind.TOOL_CALL):
            return None
        relevance, turn, required = f.relevance, f.turn, f.required
        if relevance is unset:
            relevance = 0.0
        elif type(relevance) is not float:
            return None
        if turn is unset:
            turn = 0
        elif type(turn) is not int:
            return None
        strings = [
            identity, f.form, f.scope, f.source, f.version, f.channel, f.group, f.content,
            tool_call_id, tool_name,
        ]  # fmt: skip
        for value in strings:
            if value is not unset and not _text(value):
                return None
        depends_on, lineage, labels, transfer = f.depends_on, f.lineage, f.labels, f.transfer
        for values in (depends_on, lineage, labels):
            if values is not unset and not all(map(_text, values)):
                return None
        if transfer is not unset and not _text(transfer.from_):
            return None
        shell = _CandidateShell()
        shell.id = cid
        shell.identity = identity
        shell.cost = cost
        shell.form = "full" if f.form is unset else f.form
        shell.relevance = relevance
        shell.required = False if required is unset else required
        shell.scope = "unknown" if f.scope is unset else f.scope
        shell.transfer_from = None if transfer is unset else transfer.from_
        shell.source = None if f.source is unset else f.source
        shell.version = None if f.version is unset else f.version
        shell.channel = None if f.channel is unset else f.channel
        shell.role = role
        shell.depends_on = (
            () if depends_on is unset or not depends_on else tuple(sorted(set(depends_on)))
        )
        shell.group = None if f.group is unset else f.group
        shell.lineage = () if lineage is unset else tuple(lineage)
        shell.content = None if f.content is unset else f.content
        shell.labels = () if labels is unset else tuple(labels)
        shell.kind = kind
        shell.tool_call_id = None if tool_call_id is unset else tool_call_id
        shell.tool_name = None if tool_name is unset else tool_name
        shell.turn = turn
        shell.position = index
        shell.__class__ = Candidate  # type: ignore[assignment]
        append(cast(Candidate, shell))
    return out
