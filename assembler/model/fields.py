"""The request's fields: for each key of a task and of a candidate, the attribute it
fills and the rule of its kind.

Input: nothing. Output: ``TASK_SPEC`` and ``CANDIDATE_SPEC`` (key -> (attribute,
rule)), in the order ``models/README.md`` documents them, and their keys
(``TASK_FIELDS``, ``CANDIDATE_FIELDS``).

The parser reads a request through these tables and the serialiser writes one back
through them; a candidate's table is read from ``Candidate``'s fields, the one home of
its fields, defaults and keys (a new field is one field there, and its rule in
``rules.py``); tools that write requests (the hunt's saved cases) keep the same order.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .limits import Limits
from .rules import (
    Place,
    Rule,
    enum_rule,
    flag,
    integer,
    label_list,
    mapping,
    name,
    name_list,
    name_set,
    prose,
    text,
    unit_number,
)
from .types import Candidate, Kind, Operation, Role

__all__ = ["CANDIDATE_FIELDS", "CANDIDATE_RULES", "CANDIDATE_SPEC", "TASK_FIELDS", "TASK_SPEC"]


def _project_scope(value: Any, place: Place, key: Any, limits: Limits) -> str:
    scope: str = name(value, place, key, limits)
    # words with a meaning in a form's scope; a task's scope must name a project
    if scope in ("shared", "unknown"):
        place.fail(key, f"{scope!r} is a form scope, not a project")
    return scope


def _transfer(value: Any, place: Place, key: Any, limits: Limits) -> str:
    record = mapping(value, place, key)
    if record.keys() != {"from"}:
        place.fail(key, 'must be an object with exactly one key, "from"')
    origin: str = name(record["from"], place.inner(key), "from", limits)
    return origin


TASK_SPEC: dict[str, tuple[str, Rule]] = {
    "id": ("id", name),
    "budget": ("budget", integer),
    "scope": ("scope", _project_scope),
    "operation": ("operation", enum_rule(Operation)),
    "min_relevance": ("min_relevance", unit_number),
    "required": ("required", name_set),
    "seal": ("seal", name_set),
    "instruction": ("instruction", prose),
    "query": ("query", prose),
}
# the rule of each name a candidate field's metadata gives (``types.Candidate``)
CANDIDATE_RULES: dict[str, Rule] = {
    "name": name,
    "integer": integer,
    "unit_number": unit_number,
    "flag": flag,
    "transfer": _transfer,
    "role": enum_rule(Role),
    "name_set": name_set,
    "name_list": name_list,
    "text": text,
    "label_list": label_list,
    "kind": enum_rule(Kind),
}


def _candidate_spec() -> dict[str, tuple[str, Rule]]:
    """Key -> (attribute, rule) of every field of ``Candidate`` that has a JSON key, in
    the documented order: read from the class, their one home."""
    keyed = sorted((f.metadata["at"], f) for f in fields(Candidate) if f.metadata)
    return {
        f.metadata["key"] or f.name: (f.name, CANDIDATE_RULES[f.metadata["rule"]])
        for _, f in keyed
    }


CANDIDATE_SPEC: dict[str, tuple[str, Rule]] = _candidate_spec()
TASK_FIELDS = tuple(TASK_SPEC)
CANDIDATE_FIELDS = tuple(CANDIDATE_SPEC)
