"""Parse and validate a request.

Input: a mapping (parsed JSON) or an already typed ``Request``.
Output: a ``Request`` whose candidates are in canonical order (sorted by id),
or ``InvalidRequest`` naming the field (a JSON path) and the candidate.

Every rule here is documented in ``models/README.md``: unknown keys are errors
(a misspelt ``depends_on`` must not be silently ignored), integers are exact and
bounded so that every sum the solver forms fits in 64 bits, and numbers that are
not finite are refused.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .errors import InvalidRequest
from .types import Candidate, Kind, Operation, Request, Role, Task

__all__ = [
    "CANDIDATE_FIELDS",
    "MAX_INTEGER",
    "TASK_FIELDS",
    "parse_request",
    "request_from_json",
]

# Costs and budgets are JSON integers shared with JavaScript callers, so they are
# kept to what a double represents exactly; the sum of all costs obeys the same
# bound, which leaves CP-SAT (int64) a factor of 1000 of headroom.
MAX_INTEGER = 2**53 - 1

_TOP_KEYS = frozenset({"task", "candidates", "sources", "policy"})
# The request's fields in their documented order (models/README.md); tools that
# write requests (the hunt's saved cases) use the same order.
TASK_FIELDS = (
    "id",
    "budget",
    "scope",
    "operation",
    "min_relevance",
    "required",
    "seal",
    "instruction",
    "query",
)
CANDIDATE_FIELDS = (
    "id",
    "identity",
    "form",
    "cost",
    "relevance",
    "required",
    "scope",
    "transfer",
    "source",
    "version",
    "channel",
    "role",
    "depends_on",
    "group",
    "lineage",
    "content",
    "labels",
    "kind",
    "tool_call_id",
    "tool_name",
    "turn",
)
_TASK_KEYS = frozenset(TASK_FIELDS)
_CANDIDATE_KEYS = frozenset(CANDIDATE_FIELDS)
_STANDINGS = ("instruction", "data")
# Words with a meaning in a form's scope; a task's scope must name a project.
_RESERVED_SCOPES = frozenset({"shared", "unknown"})


def request_from_json(text: str | bytes) -> Request:
    """Parse JSON text into a validated request."""
    try:
        data = json.loads(
            text, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicate_keys
        )
    except InvalidRequest:
        raise
    except RecursionError:
        raise InvalidRequest("$", "JSON nested too deeply to be a request") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidRequest("$", f"malformed JSON: {exc}") from None
    return parse_request(data)


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON parsers disagree on which of two equal keys wins; a request must not depend
    # on that, so a repeated key is an error rather than a silent choice.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidRequest("$", f"duplicate key {key!r} in a JSON object")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise InvalidRequest("$", f"{name} is not valid JSON and not a valid number here")


def parse_request(data: Mapping[str, Any] | Request) -> Request:
    """Validate ``data`` and return the typed request.

    A ``Request`` built by hand is checked too (ids, numbers, canonical order), since
    nothing else stands between it and the solver.
    """
    if isinstance(data, Request):
        return _checked(data)
    if not isinstance(data, Mapping):
        raise InvalidRequest("$", f"a request must be a JSON object, not {_kind(data)}")
    _no_unknown_keys(data, _TOP_KEYS, "$")
    if "task" not in data:
        raise InvalidRequest("task", "is required")
    if "candidates" not in data:
        raise InvalidRequest("candidates", "is required (it may be an empty list)")
    task = _parse_task(data["task"])
    sources = _parse_string_map(data.get("sources", {}), "sources")
    authority, has_table = _parse_policy(data.get("policy", {}))
    raw_candidates = data["candidates"]
    if not isinstance(raw_candidates, list):
        raise InvalidRequest("candidates", f"must be a list, not {_kind(raw_candidates)}")
    candidates = [_parse_candidate(raw, index) for index, raw in enumerate(raw_candidates)]
    seen: dict[str, int] = {}
    total = 0
    for index, candidate in enumerate(candidates):
        if candidate.id in seen:
            raise InvalidRequest(
                f"candidates[{index}].id",
                f"duplicate id (also candidates[{seen[candidate.id]}])",
                candidate=candidate.id,
            )
        seen[candidate.id] = index
        total += candidate.cost
    _check_tool_calls(candidates)
    if total > MAX_INTEGER:
        raise InvalidRequest(
            "candidates[*].cost",
            f"the costs add up to {total}, above {MAX_INTEGER}: too large for exact arithmetic",
        )
    candidates.sort(key=lambda c: c.id)
    return Request(
        task=task,
        candidates=tuple(candidates),
        sources=tuple(sorted(sources.items())),
        authority=tuple(sorted(authority.items())),
        has_authority_table=has_table,
    )


def _checked(request: Request) -> Request:
    seen: set[str] = set()
    total = 0
    for index, c in enumerate(request.candidates):
        if c.id in seen:
            raise InvalidRequest(f"candidates[{index}].id", "duplicate id", candidate=c.id)
        seen.add(c.id)
        _integer(c.cost, f"candidates[{index}].cost", c.id)
        _unit_number(c.relevance, f"candidates[{index}].relevance", c.id)
        total += c.cost
    _integer(request.task.budget, "task.budget")
    _unit_number(request.task.min_relevance, "task.min_relevance")
    if total > MAX_INTEGER:
        raise InvalidRequest(
            "candidates[*].cost", f"the costs add up to {total}, above {MAX_INTEGER}"
        )
    ordered = tuple(sorted(request.candidates, key=lambda c: c.id))
    if ordered != request.candidates:
        request = replace(request, candidates=ordered)
    return request


def _parse_task(raw: Any) -> Task:
    if not isinstance(raw, Mapping):
        raise InvalidRequest("task", f"must be an object, not {_kind(raw)}")
    _no_unknown_keys(raw, _TASK_KEYS, "task")
    if "id" not in raw:
        raise InvalidRequest("task.id", "is required")
    if "budget" not in raw:
        raise InvalidRequest("task.budget", "is required")
    scope = _string(raw["scope"], "task.scope") if "scope" in raw else None
    if scope in _RESERVED_SCOPES:
        raise InvalidRequest("task.scope", f"{scope!r} is a form scope, not a project")
    operation = raw.get("operation", Operation.CURRENT.value)
    if operation not in {op.value for op in Operation}:
        raise InvalidRequest(
            "task.operation", f"must be 'current' or 'historical', not {operation!r}"
        )
    return Task(
        id=_string(raw["id"], "task.id"),
        budget=_integer(raw["budget"], "task.budget"),
        scope=scope,
        operation=Operation(operation),
        min_relevance=_unit_number(raw.get("min_relevance", 0), "task.min_relevance"),
        required=tuple(sorted(set(_strings(raw.get("required", []), "task.required")))),
        seal=tuple(sorted(set(_strings(raw.get("seal", []), "task.seal")))),
        instruction=_string(raw["instruction"], "task.instruction")
        if "instruction" in raw
        else None,
        query=_string(raw["query"], "task.query") if "query" in raw else None,
    )


def _parse_policy(raw: Any) -> tuple[dict[str, str], bool]:
    if not isinstance(raw, Mapping):
        raise InvalidRequest("policy", f"must be an object, not {_kind(raw)}")
    _no_unknown_keys(raw, frozenset({"authority"}), "policy")
    if "authority" not in raw:
        return {}, False
    table = _parse_string_map(raw["authority"], "policy.authority")
    for channel, standing in table.items():
        if standing not in _STANDINGS:
            raise InvalidRequest(
                f"policy.authority.{channel}",
                f"standing must be 'instruction' or 'data', not {standing!r}",
            )
    return table, True


_ROLES = {role.value: role for role in Role}


def _parse_candidate(raw: Any, index: int) -> Candidate:
    # Hot path (100k candidates in a large request): the common case does plain type
    # checks and builds no message; each message and JSON path is formatted only when
    # a check fails, by the same helpers the rest of the module uses.
    if not isinstance(raw, Mapping):
        raise InvalidRequest(f"candidates[{index}]", f"must be an object, not {_kind(raw)}")
    if not raw.keys() <= _CANDIDATE_KEYS:
        unknown = sorted(str(key) for key in set(raw) - _CANDIDATE_KEYS)
        cid = raw.get("id") if isinstance(raw.get("id"), str) else None
        raise InvalidRequest(
            f"candidates[{index}].{unknown[0]}",
            "unknown field (see models/README.md)",
            candidate=cid,
        )
    if "id" not in raw:
        raise InvalidRequest(f"candidates[{index}].id", "is required")
    candidate_id = raw["id"]
    if type(candidate_id) is not str or not candidate_id:
        candidate_id = _string(candidate_id, f"candidates[{index}].id")
    get = raw.get

    def text(name: str, default: str | None) -> str | None:
        value = get(name, default)
        if type(value) is str and value:
            return value
        if value is None and name not in raw:
            return None
        return _string(value, f"candidates[{index}].{name}", candidate_id)

    def names(name: str, *, empty: bool = False) -> list[str]:
        value = get(name)
        if value is None and name not in raw:
            return []
        if type(value) is list and all(type(v) is str and (v or empty) for v in value):
            return value
        return _strings(value, f"candidates[{index}].{name}", candidate_id, empty=empty)

    def fail(name: str, message: str) -> InvalidRequest:
        return InvalidRequest(f"candidates[{index}].{name}", message, candidate=candidate_id)

    if "cost" not in raw:
        raise fail("cost", "is required")
    cost = raw["cost"]
    if type(cost) is not int or not 0 <= cost <= MAX_INTEGER:
        cost = _integer(cost, f"candidates[{index}].cost", candidate_id)
    relevance = get("relevance", 0)
    if type(relevance) is float and 0.0 <= relevance <= 1.0:
        pass
    else:
        relevance = _unit_number(relevance, f"candidates[{index}].relevance", candidate_id)
    transfer_from: str | None = None
    if "transfer" in raw:
        transfer = raw["transfer"]
        if not isinstance(transfer, Mapping) or set(transfer) != {"from"}:
            raise fail("transfer", 'must be an object with exactly one key, "from"')
        transfer_from = _string(
            transfer["from"], f"candidates[{index}].transfer.from", candidate_id
        )
    role = _ROLES.get(get("role", "evidence"))
    if role is None:
        raise fail("role", f"must be 'evidence' or 'instruction', not {get('role')!r}")
    required = get("required", False)
    if type(required) is not bool:
        raise fail("required", f"must be true or false, not {_kind(required)}")
    content = get("content")
    if "content" in raw and type(content) is not str:
        raise fail("content", f"must be a string, not {_kind(content)}")
    depends_on = names("depends_on")
    identity = text("identity", candidate_id)
    assert identity is not None
    kind, role = _kind_and_role(raw, role, fail)
    tool_call_id = text("tool_call_id", None)
    if (tool_call_id is None) == kind.is_tool:
        raise fail("tool_call_id", f"is required for kind {kind.value!r} and only for tool kinds")
    tool_name = text("tool_name", None)
    if (tool_name is None) == (kind is Kind.TOOL_CALL):
        raise fail("tool_name", "is required for kind 'tool_call' and only for it")
    turn = _integer(get("turn", 0), f"candidates[{index}].turn", candidate_id)
    return Candidate(
        id=candidate_id,
        identity=identity,
        cost=cost,
        form=text("form", "full") or "full",
        relevance=float(relevance),
        required=required,
        scope=text("scope", "unknown") or "unknown",
        transfer_from=transfer_from,
        source=text("source", None),
        version=text("version", None),
        channel=text("channel", None),
        role=role,
        depends_on=tuple(sorted(set(depends_on))) if depends_on else (),
        group=text("group", None),
        lineage=tuple(names("lineage")),
        content=content,
        labels=tuple(names("labels", empty=True)),
        kind=kind,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        turn=turn,
        position=index,
    )


_KINDS = {kind.value: kind for kind in Kind}


def _kind_and_role(raw: Mapping[str, Any], role: Role, fail: Any) -> tuple[Kind, Role]:
    # An instruction kind renders as system material, so it must pass the authority
    # gate: kind and role agree, and each defaults from the other.
    if "kind" not in raw:
        return (Kind.SYSTEM if role is Role.INSTRUCTION else Kind.EVIDENCE), role
    kind = _KINDS.get(raw["kind"])
    if kind is None:
        raise fail("kind", f"must be one of {', '.join(_KINDS)}, not {raw['kind']!r}")
    if "role" not in raw:
        return kind, Role.INSTRUCTION if kind.is_instruction else Role.EVIDENCE
    if kind.is_instruction != (role is Role.INSTRUCTION):
        raise fail("kind", f"kind {kind.value!r} contradicts role {role.value!r}")
    return kind, role


def _check_tool_calls(candidates: list[Candidate]) -> None:
    """Each tool call id names one call identity and one result identity, and every
    form of those identities names that id with that kind (whichever form is admitted
    renders as the same call or result)."""
    ends: dict[tuple[str, Kind], str] = {}
    tool_of: dict[str, tuple[str | None, Kind]] = {}
    for index, c in enumerate(candidates):
        where = f"candidates[{index}].tool_call_id"
        mine = (c.tool_call_id, c.kind if c.kind.is_tool else Kind.EVIDENCE)
        if tool_of.setdefault(c.identity, mine) != mine:
            raise InvalidRequest(
                where,
                f"every form of identity {c.identity!r} must share kind and tool_call_id",
                candidate=c.id,
            )
        if c.tool_call_id is None:
            continue
        if ends.setdefault((c.tool_call_id, c.kind), c.identity) != c.identity:
            raise InvalidRequest(
                where,
                f"tool call {c.tool_call_id!r} has two {c.kind.value} identities",
                candidate=c.id,
            )
    for (call_id, kind), identity in sorted(ends.items()):
        other = Kind.TOOL_RESULT if kind is Kind.TOOL_CALL else Kind.TOOL_CALL
        if (call_id, other) not in ends:
            index = next(i for i, c in enumerate(candidates) if c.identity == identity)
            raise InvalidRequest(
                f"candidates[{index}].tool_call_id",
                f"{kind.value} {call_id!r} has no {other.value} in the request",
                candidate=candidates[index].id,
            )


# ---------------------------------------------------------------------------
# scalar checks


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__


def _no_unknown_keys(raw: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    unknown = sorted(str(key) for key in set(raw) - allowed)
    if unknown:
        prefix = "" if where == "$" else f"{where}."
        raise InvalidRequest(f"{prefix}{unknown[0]}", "unknown field (see models/README.md)")


def _string(value: Any, where: str, candidate: str | None = None) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(where, f"must be a string, not {_kind(value)}", candidate=candidate)
    if not value:
        raise InvalidRequest(where, "must not be empty", candidate=candidate)
    return value


def _strings(
    value: Any, where: str, candidate: str | None = None, *, empty: bool = False
) -> list[str]:
    if not isinstance(value, list):
        raise InvalidRequest(
            where, f"must be a list of strings, not {_kind(value)}", candidate=candidate
        )
    out = []
    for index, item in enumerate(value):
        if empty and isinstance(item, str):
            out.append(item)
        else:
            out.append(_string(item, f"{where}[{index}]", candidate))
    return out


def _parse_string_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise InvalidRequest(where, f"must be an object, not {_kind(value)}")
    return {str(key): _string(item, f"{where}.{key}") for key, item in value.items()}


def _integer(value: Any, where: str, candidate: str | None = None) -> int:
    # JSON has one number type; 120.0 is accepted as 120 but 120.5 is not.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequest(where, f"must be an integer, not {_kind(value)}", candidate=candidate)
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise InvalidRequest(
                where, f"must be a whole number, not {value!r}", candidate=candidate
            )
        value = int(value)
    number = int(value)
    if number < 0:
        raise InvalidRequest(where, f"must be >= 0, not {number}", candidate=candidate)
    if number > MAX_INTEGER:
        raise InvalidRequest(
            where,
            f"{number} is above {MAX_INTEGER}: too large for exact arithmetic",
            candidate=candidate,
        )
    return number


def _unit_number(value: Any, where: str, candidate: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidRequest(where, f"must be a number, not {_kind(value)}", candidate=candidate)
    number = float(value)
    if not math.isfinite(number):
        raise InvalidRequest(where, f"must be finite, not {value!r}", candidate=candidate)
    if not 0.0 <= number <= 1.0:
        raise InvalidRequest(where, f"must be between 0 and 1, not {value!r}", candidate=candidate)
    return number
