"""A session delta: what changed between two model calls of one agent.

Input: a delta as parsed JSON (``models/session.md``, ``models/delta.schema.json``) or
JSON text, and the ``Limits``.
Output: a typed ``Delta`` whose new and changed candidates, task fields, sources and
policy entries were each judged by the request's own rules (``model.rules`` through
``model.parse``), or ``InvalidRequest`` naming the field (``add[2].cost``,
``task.budget``, ``remove[0]``) and the candidate.

Nothing here reads a session: what a delta may do to a *particular* session (remove
an id it has, add one it does not) is judged when it is applied (``state.apply_delta``).
So a candidate is validated once, when it arrives, and never again while it stays.

The task, ``sources`` and ``policy`` parts are JSON merge patches (RFC 7396): a key sets
its field, ``null`` puts it back to its default (removes a source, an authority entry,
the task's scope); lists such as ``task.required`` are replaced whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..model.errors import InvalidRequest, RequestTooLarge
from ..model.fields import TASK_SPEC
from ..model.jsontext import load_json
from ..model.limits import DEFAULT_LIMITS, Limits
from ..model.lookalikes import not_a_delta
from ..model.parse import parse_candidate, parse_standing, policy_record
from ..model.rules import DELTA_FIELDS, Place, Rule, kind, mapping, name, unit_number, unknown_field
from ..model.types import Candidate, Task

__all__ = ["DELTA_KEYS", "RESET", "Delta", "delta_from_json", "parse_delta", "reset_value"]

DELTA_KEYS = ("add", "remove", "update", "relevance", "task", "sources", "policy")
# the task's fields a delta can never take away (every request has them)
_REQUIRED_TASK_FIELDS = ("id", "budget")
_TASK_DEFAULTS: dict[str, Any] = {
    spec.name: spec.default for spec in fields(Task) if spec.name not in _REQUIRED_TASK_FIELDS
}


class _Reset:
    """A task field set to ``null`` in a delta: back to its default."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "RESET"


RESET: Any = _Reset()


@dataclass(frozen=True, slots=True)
class Delta:
    """One validated delta. Applied in this order: task, sources and policy patches,
    then ``remove``, ``update`` (a candidate's whole new definition, same id) and
    ``add``; an id appears at most once in the three lists.

    ``task`` holds ``(field, value)`` pairs, ``RESET`` for a field set to ``null``;
    ``sources`` and ``authority`` hold ``(name, value)`` pairs, ``None`` removing the
    entry; ``drop_authority`` removes the whole ``policy.authority`` table. An
    ``authority`` patch (even an empty one) leaves the request with a table, as a
    merge patch of an object into an absent key creates it.
    """

    add: tuple[Candidate, ...] = ()
    remove: tuple[str, ...] = ()
    update: tuple[Candidate, ...] = ()
    # a re-scoring: (candidate id, new relevance) pairs, each id at most once
    relevance: tuple[tuple[str, float], ...] = ()
    task: tuple[tuple[str, Any], ...] = ()
    sources: tuple[tuple[str, str | None], ...] = ()
    authority: tuple[tuple[str, str | None], ...] | None = None
    drop_authority: bool = False


def delta_from_json(text: str | bytes, *, limits: Limits = DEFAULT_LIMITS) -> Delta:
    """Parse JSON text into a validated delta (size, encoding and nesting checked on
    the text first, as for a request)."""
    return parse_delta(load_json(text, limits), limits=limits)


def parse_delta(data: Mapping[str, Any] | Delta, *, limits: Limits = DEFAULT_LIMITS) -> Delta:
    """Validate a delta's JSON form (a typed ``Delta`` passes through)."""
    if isinstance(data, Delta):
        return data
    if not isinstance(data, Mapping):
        raise InvalidRequest("$", f"a delta must be a JSON object, not {kind(data)}")
    looks = not_a_delta(data)
    if looks is not None:
        raise InvalidRequest("$", looks)
    document = Place("$")
    for key in data:
        if key not in DELTA_KEYS:
            unknown_field(document, key, DELTA_KEYS, f"a delta has {', '.join(DELTA_KEYS)}")
    add = _candidates(data, "add", limits)
    update = _candidates(data, "update", limits)
    remove = _ids(data.get("remove", []), limits)
    drop, authority = _policy(data.get("policy", {}), limits)
    return Delta(
        add=add,
        remove=remove,
        update=update,
        relevance=_scores(data.get("relevance", {}), limits),
        task=_task(data.get("task", {}), limits),
        sources=_names_patch(data.get("sources", {}), "sources", name, limits),
        authority=authority,
        drop_authority=drop,
    )


def _candidates(data: Mapping[str, Any], key: str, limits: Limits) -> tuple[Candidate, ...]:
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise InvalidRequest(key, f"must be a list of candidates, not {kind(raw)}")
    if len(raw) > limits.max_candidates:
        raise RequestTooLarge(
            key,
            f"{len(raw)} candidates",
            limit="max_candidates",
            maximum=limits.max_candidates,
            actual=len(raw),
        )
    return tuple(
        parse_candidate(entry, index, limits, where=key) for index, entry in enumerate(raw)
    )


def _ids(raw: Any, limits: Limits) -> tuple[str, ...]:
    if not isinstance(raw, list):
        raise InvalidRequest("remove", f"must be a list of candidate ids, not {kind(raw)}")
    place = Place("remove")
    return tuple(name(entry, place, index, limits) for index, entry in enumerate(raw))


def _task(raw: Any, limits: Limits) -> tuple[tuple[str, Any], ...]:
    record = mapping(raw, Place("$"), "task")
    place = Place("task")
    out: list[tuple[str, Any]] = []
    for key, value in record.items():
        row = TASK_SPEC.get(key) if type(key) is str else None
        if row is None:
            unknown_field(place, key, TASK_SPEC, DELTA_FIELDS)
        attribute, rule = row
        if value is None:
            if attribute in _REQUIRED_TASK_FIELDS:
                place.fail(key, "is required: a delta can change it but not remove it")
            out.append((attribute, RESET))
        else:
            out.append((attribute, rule(value, place, key, limits)))
    return tuple(out)


def reset_value(attribute: str) -> Any:
    """The default a task field takes back when a delta sets it to ``null``."""
    return _TASK_DEFAULTS[attribute]


def _names_patch(
    raw: Any, where: str, rule: Rule, limits: Limits
) -> tuple[tuple[str, str | None], ...]:
    """A merge patch of an object from names to values: ``null`` removes the entry."""
    record = mapping(raw, Place("$"), where)
    place = Place(where)
    out: list[tuple[str, str | None]] = []
    for key, value in record.items():
        if not isinstance(key, str):
            place.fail(key, f"keys must be strings, not {kind(key)}")
        name(key, place, key, limits)
        out.append((str(key), None if value is None else rule(value, place, key, limits)))
    return tuple(out)


def _scores(raw: Any, limits: Limits) -> tuple[tuple[str, float], ...]:
    """A re-scoring: candidate id -> its new relevance (a number in [0, 1])."""
    record = mapping(raw, Place("$"), "relevance")
    place = Place("relevance")
    out: list[tuple[str, float]] = []
    for key, value in record.items():
        if not isinstance(key, str):
            place.fail(key, f"keys must be candidate ids, not {kind(key)}")
        name(key, place, key, limits)
        out.append((key, unit_number(value, place, key, limits)))
    return tuple(out)


def _policy(raw: Any, limits: Limits) -> tuple[bool, tuple[tuple[str, str | None], ...] | None]:
    if raw is None:
        # the policy back to its default: no authority table
        return True, None
    record = policy_record(raw)
    if "authority" not in record:
        return False, None
    if record["authority"] is None:
        return True, None
    return False, _names_patch(record["authority"], "policy.authority", parse_standing, limits)
