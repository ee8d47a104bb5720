"""The request's fields: for each key of a task and of a candidate, the attribute it
fills and the rule of its kind.

Input: nothing. Output: ``TASK_SPEC`` and ``CANDIDATE_SPEC`` (key -> (attribute,
rule)), in the order ``models/README.md`` documents them, and their keys
(``TASK_FIELDS``, ``CANDIDATE_FIELDS``).

The parser reads a request through these tables and the serialiser writes one back
through them, so a new field is one row here (and its rule in ``rules.py``); tools
that write requests (the hunt's saved cases) keep the same order.
"""

from __future__ import annotations

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
from .types import Kind, Operation, Role

__all__ = ["CANDIDATE_FIELDS", "CANDIDATE_SPEC", "TASK_FIELDS", "TASK_SPEC"]


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
CANDIDATE_SPEC: dict[str, tuple[str, Rule]] = {
    "id": ("id", name),
    "identity": ("identity", name),
    "form": ("form", name),
    "cost": ("cost", integer),
    "relevance": ("relevance", unit_number),
    "required": ("required", flag),
    "scope": ("scope", name),
    "transfer": ("transfer_from", _transfer),
    "source": ("source", name),
    "version": ("version", name),
    "channel": ("channel", name),
    "role": ("role", enum_rule(Role)),
    "depends_on": ("depends_on", name_set),
    "group": ("group", name),
    "lineage": ("lineage", name_list),
    "content": ("content", text),
    "labels": ("labels", label_list),
    "kind": ("kind", enum_rule(Kind)),
    "tool_call_id": ("tool_call_id", name),
    "tool_name": ("tool_name", name),
    "turn": ("turn", integer),
}
TASK_FIELDS = tuple(TASK_SPEC)
CANDIDATE_FIELDS = tuple(CANDIDATE_SPEC)
