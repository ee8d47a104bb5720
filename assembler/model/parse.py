"""Parse and validate a request.

Input: a mapping (parsed JSON), JSON text, or an already typed ``Request``; and the
``Limits`` (default ``DEFAULT_LIMITS``).
Output: a ``Request`` whose candidates are in canonical order (sorted by id), or
``InvalidRequest`` (``RequestTooLarge`` for a size limit) naming the field (a JSON
path) and the candidate. A bug inside reaches the caller as ``InternalError``.

Every rule here is documented in ``models/README.md``: unknown keys are errors
(a misspelt ``depends_on`` must not be silently ignored), integers are exact and
bounded so that every sum the solver forms fits in 64 bits, numbers that are not
finite are refused, and every string is Unicode scalar values.

Each field is one row of a table (``fields.py``): its key, the attribute it fills and
the rule of its kind (``rules.py``). A new field is a new row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from operator import attrgetter
from typing import Any

from .bugs import internal_errors
from .cache import Cache, parse_cache
from .decode import decoded_candidates
from .errors import InvalidRequest, RequestTooLarge
from .fields import CANDIDATE_SPEC, TASK_SPEC
from .jsontext import load_json
from .limits import DEFAULT_LIMITS, Limits
from .lookalikes import not_a_request
from .rules import (
    MAX_INTEGER,
    REQUEST_FIELDS,
    Place,
    Rule,
    enum_rule,
    kind,
    mapping,
    name,
    shown,
    unknown_field,
)
from .serialise import request_json
from .types import Candidate, Kind, Request, Role, Task

__all__ = [
    "check_tool_calls",
    "parse_candidate",
    "parse_names_map",
    "parse_request",
    "parse_standing",
    "policy_record",
    "request_from_json",
    "vouched",
]

_TOP_KEYS = ("task", "candidates", "sources", "policy", "cache")
_REQUIRED_TASK_KEYS = ("id", "budget")
_STANDINGS = enum_rule(("instruction", "data"))
# the rule of one policy.authority entry (a session's policy patch uses it too)
parse_standing = _STANDINGS


# ---------------------------------------------------------------------------
# entry points


def request_from_json(text: str | bytes, *, limits: Limits = DEFAULT_LIMITS) -> Request:
    """Parse JSON text into a validated request.

    The size limit is checked on the text, before it is parsed into objects.
    """
    limits = _limits(limits)
    with internal_errors("request_from_json"):
        parsed = _parse(load_json(text, limits), limits)
    # marked as parse_request marks it, so assemble() does not check it a second time
    object.__setattr__(parsed, "validated_under", limits)
    return parsed


def parse_request(data: Mapping[str, Any] | Request, *, limits: Limits = DEFAULT_LIMITS) -> Request:
    """Validate ``data`` and return the typed request.

    A ``Request`` built by hand is checked by the same rules (ids, numbers, text,
    canonical order), since nothing else stands between it and the solver. A request
    this function returned comes back as it is when given again under the same limits
    (it records them in ``validated_under``); an edit through ``dataclasses.replace``
    makes a new, unmarked request, which is checked again.
    """
    limits = _limits(limits)
    if isinstance(data, Request) and data.validated_under == limits:
        return data  # this very object passed these rules already and cannot have changed
    with internal_errors("parse_request"):
        parsed = _checked(data, limits) if isinstance(data, Request) else _parse(data, limits)
    object.__setattr__(parsed, "validated_under", limits)
    return parsed


def vouched(request: Request, limits: Limits) -> Request:
    """``request``, built by this package from parts each judged by these rules under
    ``limits`` (a session's request after a delta), marked so that ``parse_request``
    takes it as it is. Never for a request built by hand."""
    object.__setattr__(request, "validated_under", limits)
    return request


def _limits(limits: Any) -> Limits:
    if not isinstance(limits, Limits):
        raise InvalidRequest("limits", f"must be an assembler.Limits, not {kind(limits)}")
    return limits


# ---------------------------------------------------------------------------
# the request


def _parse(data: Any, limits: Limits) -> Request:
    if not isinstance(data, Mapping) or "task" not in data:
        looks = not_a_request(data)
        if looks is not None:
            raise InvalidRequest("$", looks)
    if not isinstance(data, Mapping):
        raise InvalidRequest("$", f"a request must be a JSON object, not {kind(data)}")
    root = data
    document = Place("$")
    for key in root:
        if key not in _TOP_KEYS:
            unknown_field(document, key, _TOP_KEYS, REQUEST_FIELDS)
    if "task" not in root:
        raise InvalidRequest("task", "is required")
    if "candidates" not in root:
        raise InvalidRequest("candidates", "is required (it may be an empty list)")
    task = _parse_task(root["task"], limits)
    sources = parse_names_map(root.get("sources", {}), "sources", name, limits)
    authority, has_table = _parse_policy(root.get("policy", {}), limits)
    raw_candidates = root["candidates"]
    if not isinstance(raw_candidates, list):
        raise InvalidRequest("candidates", f"must be a list, not {kind(raw_candidates)}")
    if len(raw_candidates) > limits.max_candidates:
        raise RequestTooLarge(
            "candidates",
            f"{len(raw_candidates)} candidates",
            limit="max_candidates",
            maximum=limits.max_candidates,
            actual=len(raw_candidates),
        )
    # the common case decoded in C (decode.py); any fault is judged by the rules below
    decoded = decoded_candidates(raw_candidates, limits.max_name_length)
    candidates = (
        [parse_candidate(raw, index, limits) for index, raw in enumerate(raw_candidates)]
        if decoded is None
        else decoded
    )
    cache = parse_cache(root["cache"], limits) if "cache" in root else None
    return _assembled(task, candidates, sources, authority, has_table, cache)


def _assembled(
    task: Task,
    candidates: list[Candidate],
    sources: dict[str, str],
    authority: dict[str, str],
    has_table: bool,
    cache: Cache | None = None,
) -> Request:
    ids = list(map(_BY_ID, candidates))
    if len(set(ids)) != len(ids):
        seen: dict[str, int] = {}
        for index, candidate_id in enumerate(ids):
            if candidate_id in seen:
                raise InvalidRequest(
                    f"candidates[{index}].id",
                    f"duplicate id (also candidates[{seen[candidate_id]}])",
                    candidate=candidate_id,
                )
            seen[candidate_id] = index
    total = sum(map(_COST, candidates))
    check_tool_calls(candidates)
    if total > MAX_INTEGER:
        raise InvalidRequest(
            "candidates[*].cost",
            f"the costs add up to {total}, above {MAX_INTEGER}: too large for exact arithmetic",
        )
    candidates.sort(key=_BY_ID)
    return Request(
        task=task,
        candidates=tuple(candidates),
        sources=tuple(sorted(sources.items())),
        authority=tuple(sorted(authority.items())),
        has_authority_table=has_table,
        cache=cache,
    )


def _parse_task(raw: Any, limits: Limits) -> Task:
    place = Place("task")
    record = mapping(raw, Place("$"), "task")
    values = _fields(record, place, TASK_SPEC, limits)
    for key in _REQUIRED_TASK_KEYS:
        if key not in values:
            place.fail(key, "is required")
    return Task(**values)


def policy_record(raw: Any) -> Mapping[Any, Any]:
    """The ``policy`` object, its one key (``authority``) checked; a session's policy
    patch is read through it too."""
    record = mapping(raw, Place("$"), "policy")
    place = Place("policy")
    for key in record:
        if key != "authority":
            unknown_field(place, key, ("authority",), REQUEST_FIELDS)
    return record


def _parse_policy(raw: Any, limits: Limits) -> tuple[dict[str, str], bool]:
    record = policy_record(raw)
    if "authority" not in record:
        return {}, False
    return parse_names_map(record["authority"], "policy.authority", _STANDINGS, limits), True


def parse_names_map(raw: Any, where: str, rule: Rule, limits: Limits) -> dict[str, str]:
    """An object from names to values of ``rule`` (``sources``, ``policy.authority``)."""
    place = Place(where)
    record = mapping(raw, Place("$"), where)
    out: dict[str, str] = {}
    for key, value in record.items():
        # a key is a name too (a caller's mapping may hold any hashable key)
        if not isinstance(key, str):
            place.fail(key, f"keys must be strings, not {kind(key)}")
        name(key, place, key, limits)
        out[key] = rule(value, place, key, limits)
    return out


def _fields(
    record: Mapping[Any, Any], place: Place, spec: dict[str, tuple[str, Rule]], limits: Limits
) -> dict[str, Any]:
    """Each key of ``record`` through the rule of its row in ``spec``, by attribute."""
    values: dict[str, Any] = {}
    for key, value in record.items():
        row = spec.get(key) if type(key) is str else None
        if row is None:
            unknown_field(place, key, spec, REQUEST_FIELDS)
        attribute, rule = row
        values[attribute] = rule(value, place, key, limits)
    return values


# ---------------------------------------------------------------------------
# candidates


def parse_candidate(
    raw: Any, index: int, limits: Limits, *, where: str = "candidates", position: int | None = None
) -> Candidate:
    """One candidate by the request's rules; errors name ``where[index]`` and its id.

    ``position`` is its arrival order (default: ``index``); a session's delta gives
    its new candidates the places after the session's last one.
    """
    place = Place(where, index)
    if type(raw) is not dict and not isinstance(raw, Mapping):
        place.fail(None, f"must be an object, not {kind(raw)}")
    if "id" not in raw:
        place.fail("id", "is required")
    candidate_id: str = name(raw["id"], place, "id", limits)
    # every later message about this candidate names it
    place.candidate = candidate_id
    values = _fields(raw, place, CANDIDATE_SPEC, limits)
    if "cost" not in values:
        place.fail("cost", "is required")
    form_kind, role = _kind_and_role(values, place)
    tool_call_id = values.get("tool_call_id")
    if (tool_call_id is None) == form_kind.is_tool:
        place.fail(
            "tool_call_id", f"is required for kind {form_kind.value!r} and only for tool kinds"
        )
    if ("tool_name" not in values) == (form_kind is Kind.TOOL_CALL):
        place.fail("tool_name", "is required for kind 'tool_call' and only for it")
    values.setdefault("identity", candidate_id)
    values["kind"], values["role"] = form_kind, role
    values["position"] = index if position is None else position
    # the defaults are Candidate's own (its one home); the fast path is decode.py's
    return Candidate(**values)


def _tool_call_field(index: int) -> str:
    return f"candidates[{index}].tool_call_id"


def _kind_and_role(values: dict[str, Any], place: Place) -> tuple[Kind, Role]:
    # An instruction kind renders as system material, so it must pass the authority
    # gate: kind and role agree, and each defaults from the other.
    role: Role = values.get("role", Role.EVIDENCE)
    if "kind" not in values:
        return (Kind.SYSTEM if role is Role.INSTRUCTION else Kind.EVIDENCE), role
    form_kind: Kind = values["kind"]
    if "role" not in values:
        return form_kind, Role.INSTRUCTION if form_kind.is_instruction else Role.EVIDENCE
    if form_kind.is_instruction != (role is Role.INSTRUCTION):
        place.fail("kind", f"kind {form_kind.value!r} contradicts role {role.value!r}")
    return form_kind, role


def check_tool_calls(
    candidates: list[Candidate], field: Callable[[int], str] = _tool_call_field
) -> None:
    """Each tool call id names one call identity and one result identity, and every
    form of those identities names that id with that kind (whichever form is admitted
    renders as the same call or result).

    ``field(index)`` is the path an error names for ``candidates[index]``. Every rule
    here is about one identity or one tool call id, so a caller that changed a few
    candidates may check only the forms of the identities and tool call ids they touch.
    """
    if _tool_calls_agree(candidates):
        return
    ends: dict[tuple[str, Kind], str] = {}
    tool_of: dict[str, tuple[str | None, Kind]] = {}
    for index, c in enumerate(candidates):
        mine = (c.tool_call_id, c.kind if c.kind.is_tool else Kind.EVIDENCE)
        if tool_of.setdefault(c.identity, mine) != mine:
            raise InvalidRequest(
                field(index),
                f"every form of identity {shown(c.identity)} must share kind and tool_call_id",
                candidate=c.id,
            )
        if c.tool_call_id is None:
            continue
        if ends.setdefault((c.tool_call_id, c.kind), c.identity) != c.identity:
            raise InvalidRequest(
                field(index),
                f"tool call {shown(c.tool_call_id)} has two {c.kind.value} identities",
                candidate=c.id,
            )
    for (call_id, end), identity in sorted(ends.items()):
        other = Kind.TOOL_RESULT if end is Kind.TOOL_CALL else Kind.TOOL_CALL
        if (call_id, other) not in ends:
            index = next(i for i, c in enumerate(candidates) if c.identity == identity)
            raise InvalidRequest(
                field(index),
                f"{end.value} {shown(call_id)} has no {other.value} in the request",
                candidate=candidates[index].id,
            )


def _tool_calls_agree(candidates: list[Candidate]) -> bool:
    """Whether ``check_tool_calls`` finds nothing, read in C by whole columns: each
    identity's forms share one (tool call id, tool kind), each (tool call id, kind)
    names one identity, and every call has a result and every result a call. When it
    says no, the loop of ``check_tool_calls`` names the first fault."""
    identities = list(map(_IDENTITY, candidates))
    calls = list(map(_TOOL_CALL_ID, candidates))
    tooled = [k for k, c in enumerate(calls) if c is not None]
    if not tooled:
        return True
    # a form without a tool call id is of no tool kind (decoded so): an identity with
    # one is all tool forms of one (id, kind), and names the only identity of that pair
    kinds = list(map(_KIND, map(candidates.__getitem__, tooled)))
    ends = {(calls[k], kind): identities[k] for k, kind in zip(tooled, kinds, strict=True)}
    of = {identities[k]: (calls[k], kind) for k, kind in zip(tooled, kinds, strict=True)}
    if len(ends) != len(of) or len(of) != len(set(ends.values())):
        return False
    if any(of[identities[k]] != (calls[k], kind) for k, kind in zip(tooled, kinds, strict=True)):
        return False
    plain = {identities[k] for k, c in enumerate(calls) if c is None}
    if not plain.isdisjoint(of):
        return False
    called = {c for c, kind in ends if kind is Kind.TOOL_CALL}
    return called == {c for c, kind in ends if kind is not Kind.TOOL_CALL}


_BY_ID = attrgetter("id")
_COST = attrgetter("cost")
_IDENTITY = attrgetter("identity")
_TOOL_CALL_ID = attrgetter("tool_call_id")
_KIND = attrgetter("kind")


# ---------------------------------------------------------------------------
# a typed request built by hand


def _checked(request: Request, limits: Limits) -> Request:
    """A typed request, judged as the JSON it stands for (one set of rules)."""
    if not isinstance(request.candidates, tuple | list):
        raise InvalidRequest("candidates", f"must be a tuple, not {kind(request.candidates)}")
    data = request_json(request)
    parsed = _parse(data, limits)
    # the arrival order a hand-built request recorded is kept (the dump baseline reads it)
    positions = {c.id: c.position for c in request.candidates if isinstance(c, Candidate)}
    candidates = tuple(
        replace(c, position=positions.get(c.id, c.position)) for c in parsed.candidates
    )
    return replace(parsed, candidates=candidates)
