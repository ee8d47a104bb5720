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
_STRS = frozenset({str})


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
    # gc=False: a Struct here refers to no container that could lead back to it, and
    # 100k of them tracked by the cyclic collector cost collections while parsing
    transfer = msgspec.defstruct(
        "Transfer",
        [("from_", name, msgspec.field(name="from"))],
        forbid_unknown_fields=True,
        gc=False,
    )
    # in Candidate's order; a default is the rules' (msgspec checks a given value's type,
    # never a default's, so an explicit null is still refused); kind and role are UNSET
    # when not given (each defaults from the other), and so is identity (the id)
    fields: list[tuple[str, Any, Any]] = [
        ("identity", name | unset, _UNSET),
        ("cost", integer, msgspec.NODEFAULT),
        ("form", name, "full"),
        ("relevance", unit, 0.0),
        ("required", bool, False),
        ("scope", name, "unknown"),
        ("transfer", transfer, None),
        ("source", name, None),
        ("version", name, None),
        ("channel", name, None),
        ("role", Literal[tuple(_ROLES)] | unset, _UNSET),
        ("depends_on", list[name], ()),
        ("group", name, None),
        ("lineage", list[name], ()),
        ("content", str, None),
        ("labels", list[label], ()),
        ("kind", Literal[tuple(_KINDS)] | unset, _UNSET),
        ("tool_call_id", name, None),
        ("tool_name", name, None),
        ("turn", integer, 0),
    ]
    form = msgspec.defstruct(
        "Form",
        [("id", name), *((f, t) if d is msgspec.NODEFAULT else (f, t, d) for f, t, d in fields)],
        forbid_unknown_fields=True,
        kw_only=True,
        gc=False,
    )
    return list[form]  # type: ignore[valid-type]


def _text(value: Any) -> bool:
    """A plain ``str`` of Unicode scalar values."""
    return type(value) is _STR and (value.isascii() or _SURROGATE.search(value) is None)


def _texts(values: list[Any]) -> bool:
    """Whether every one of ``values`` is ``_text``, read in C: their types in one set,
    their characters in one string (a surrogate is one character: joining makes none)."""
    if not set(map(type, values)) <= _STRS:
        return False
    joined = "".join(values)
    return joined.isascii() or _SURROGATE.search(joined) is None


def decoded_candidates(raw: list[Any], max_name: int) -> list[Candidate] | None:
    """The candidates of ``raw`` (in its order, ``position`` its index), or None when one
    is not plainly valid (module docstring)."""
    try:
        forms = msgspec.convert(raw, _form_type(max_name))
    except (msgspec.ValidationError, TypeError, ValueError):
        return None
    out: list[Candidate] = []
    append = out.append
    unset, astuple, text, texts = _UNSET, msgspec.structs.astuple, _text, _texts
    kinds, roles = _KINDS, _ROLES
    instruction, evidence = Role.INSTRUCTION, Role.EVIDENCE
    call, result = Kind.TOOL_CALL, Kind.TOOL_RESULT
    for index, f in enumerate(forms):
        (cid, identity, cost, form, relevance, required, scope, transfer, source, version,
         channel, role_name, depends_on, group, lineage, content, labels, kind_name,
         tool_call_id, tool_name, turn) = astuple(f)  # fmt: skip
        if identity is unset:
            identity = cid
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
        if (tool_call_id is None) == (kind is call or kind is result) or (tool_name is None) == (
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
        if depends_on:
            if not texts(depends_on):
                return None
            depends_on = tuple(sorted(set(depends_on)))
        if lineage:
            if not texts(lineage):
                return None
            lineage = tuple(lineage)
        if labels:
            if not texts(labels):
                return None
            labels = tuple(labels)
        shell = _CandidateShell()
        shell.id = cid
        shell.identity = identity
        shell.cost = cost
        shell.form = form
        shell.relevance = relevance
        shell.required = required
        shell.scope = scope
        shell.transfer_from = transfer
        shell.source = source
        shell.version = version
        shell.channel = channel
        shell.role = role
        shell.depends_on = depends_on or ()
        shell.group = group
        shell.lineage = lineage or ()
        shell.content = content
        shell.labels = labels or ()
        shell.kind = kind
        shell.tool_call_id = tool_call_id
        shell.tool_name = tool_name
        shell.turn = turn
        shell.position = index
        shell.__class__ = Candidate  # type: ignore[assignment]
        append(cast(Candidate, shell))
    return out
