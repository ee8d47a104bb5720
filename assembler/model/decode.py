"""The typed decoding of a request's candidates: msgspec Structs, checked in C.

Input: the ``candidates`` list of a parsed request (dicts, as JSON or a Python caller
gives them) and the ``Limits``.
Output: the ``Candidate`` of each, in the order given, or None when any candidate is
not plainly valid; the caller (``parse.py``) then judges the list by its rules, one
field at a time, which names the field and the candidate of the first fault.

msgspec converts the whole list into Structs (``Form``, made from ``Candidate``'s fields,
defaults and keys: every field's type, range, length and spelling, unknown fields
refused) in one call in C; what a Struct cannot say is checked by the decode kernel
(``decode_twin.decoded``, compiled as ``_decode``), without a message, as it fills each
``Candidate``'s slots: every string is a ``str`` (not a subclass) of Unicode scalar
values, numbers are ``int`` and ``float`` themselves, and a form's kind, role and tool
fields agree (the rules of ``parse.parse_candidate``). A list this path
accepts is one the rules accept, into the same values: it never decides an error, so
an error's words are always the rules' own. ``tests/test_parse.py`` checks both paths
give the same candidates or the same error on generated and mutated requests.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Annotated, Any, Literal

import msgspec

from ..kernels import kernel
from .rules import MAX_INTEGER
from .types import Candidate, Kind, Role

__all__ = ["decoded_candidates"]

_KINDS = tuple(kind.value for kind in Kind)
_ROLES = tuple(role.value for role in Role)
_UNSET = msgspec.UNSET
# the fields a Struct leaves UNSET when not given: each defaults from another
_DERIVED = frozenset({"identity", "role", "kind"})


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
    types = {
        "name": name,
        "integer": integer,
        "unit_number": unit,
        "flag": bool,
        "transfer": transfer,
        "role": Literal[_ROLES] | unset,
        "name_set": list[name],
        "name_list": list[name],
        "text": str,
        "label_list": list[label],
        "kind": Literal[_KINDS] | unset,
    }
    # in Candidate's order, its defaults (msgspec checks a given value's type, never a
    # default's, so an explicit null is still refused); identity, kind and role are
    # UNSET when not given (the id; each of kind and role defaults from the other)
    fields: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(Candidate):
        if not f.metadata:
            continue  # the position: no key of the JSON
        key, kind = f.metadata["key"] or f.name, types[f.metadata["rule"]]
        if f.name in _DERIVED:
            fields.append((key, kind | unset if f.name == "identity" else kind, _UNSET))
        else:
            default = msgspec.NODEFAULT if f.default is dataclasses.MISSING else f.default
            fields.append((key, kind, default))
    form = msgspec.defstruct(
        "Form",
        [(f, t) if d is msgspec.NODEFAULT else (f, t, d) for f, t, d in fields],
        forbid_unknown_fields=True,
        kw_only=True,
        gc=False,
    )
    return list[form]  # type: ignore[valid-type]


def decoded_candidates(raw: list[Any], max_name: int) -> list[Candidate] | None:
    """The candidates of ``raw`` (in its order, ``position`` its index), or None when one
    is not plainly valid (module docstring): msgspec's Structs made into candidates by
    the decode kernel (``decode_twin.decoded``, compiled as ``_decode``)."""
    try:
        forms = msgspec.convert(raw, _form_type(max_name))
    except (msgspec.ValidationError, TypeError, ValueError):
        return None
    made: list[Candidate] | None = kernel("assembler.model.decode_twin").decoded(
        forms, Candidate, _KIND_ROLE, _TOOL_KINDS, Kind.TOOL_CALL, _UNSET
    )
    return made


def _kind_role_table() -> dict[tuple[Any, Any], tuple[Kind, Role]]:
    """(kind given or UNSET, role given or UNSET) -> the form's kind and role; a pair
    that contradicts itself is absent (the rules of ``parse._kind_and_role``)."""
    table: dict[tuple[Any, Any], tuple[Kind, Role]] = {}
    kinds: tuple[Kind | None, ...] = (None, *Kind)
    roles: tuple[Role | None, ...] = (None, *Role)
    for given_kind in kinds:
        for given_role in roles:
            role = Role.EVIDENCE if given_role is None else given_role
            if given_kind is None:
                kind = Kind.SYSTEM if role is Role.INSTRUCTION else Kind.EVIDENCE
            else:
                kind = given_kind
                if given_role is None:
                    role = Role.INSTRUCTION if kind.is_instruction else Role.EVIDENCE
                elif kind.is_instruction != (role is Role.INSTRUCTION):
                    continue
            key = (_UNSET if given_kind is None else given_kind.value,
                   _UNSET if given_role is None else given_role.value)  # fmt: skip
            table[key] = (kind, role)
    return table


_KIND_ROLE = _kind_role_table()
# the kinds that name a tool call (a call and its result)
_TOOL_KINDS = frozenset({Kind.TOOL_CALL, Kind.TOOL_RESULT})
