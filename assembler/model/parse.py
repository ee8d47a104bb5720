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

Each field is one row of a table (``TASK_SPEC``, ``CANDIDATE_SPEC``): its key, the
attribute it fills and the rule of its kind (``rules.py``). A new field is a new row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from .cache import Cache, cache_json, parse_cache
from .collector import no_cyclic_gc
from .errors import AssemblerError, InternalError, InvalidRequest, RequestTooLarge
from .jsontext import load_json
from .limits import DEFAULT_LIMITS, Limits
from .rules import (
    MAX_INTEGER,
    Place,
    Rule,
    enum_rule,
    flag,
    integer,
    kind,
    label_list,
    mapping,
    name,
    name_list,
    name_set,
    prose,
    shown,
    text,
    unit_number,
)
from .types import Candidate, Kind, Operation, Request, Role, Task

__all__ = [
    "CANDIDATE_FIELDS",
    "MAX_INTEGER",
    "TASK_FIELDS",
    "TASK_SPEC",
    "check_tool_calls",
    "internal_errors",
    "parse_candidate",
    "parse_names_map",
    "parse_request",
    "parse_standing",
    "policy_record",
    "request_as_json",
    "request_from_json",
    "vouched",
]


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


# The request's fields in their documented order (models/README.md), each with the
# attribute it fills and the rule of its kind; tools that write requests (the hunt's
# saved cases) use the same order.
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
    with internal_errors("request_from_json"), no_cyclic_gc():
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
    with internal_errors("parse_request"), no_cyclic_gc():
        parsed = _checked(data, limits) if isinstance(data, Request) else _parse(data, limits)
    object.__setattr__(parsed, "validated_under", limits)
    return parsed


def vouched(request: Request, limits: Limits) -> Request:
    """``request``, built by this package from parts each judged by these rules under
    ``limits`` (a session's request after a delta), marked so that ``parse_request``
    takes it as it is. Never for a request built by hand."""
    object.__setattr__(request, "validated_under", limits)
    return request


@contextmanager
def internal_errors(stage: str) -> Iterator[None]:
    """Let the assembler's own errors through; turn any other exception into
    ``InternalError`` (a bug), with the original as its cause."""
    try:
        yield
    except AssemblerError:
        raise
    except (KeyboardInterrupt, MemoryError):
        # not bugs: the caller's interrupt, or a machine too small for the request
        raise
    except Exception as exc:
        raise InternalError(exc, stage=stage) from exc


def _limits(limits: Any) -> Limits:
    if not isinstance(limits, Limits):
        raise InvalidRequest("limits", f"must be an assembler.Limits, not {kind(limits)}")
    return limits


# ---------------------------------------------------------------------------
# the request


def _parse(data: Any, limits: Limits) -> Request:
    if not isinstance(data, Mapping):
        raise InvalidRequest("$", f"a request must be a JSON object, not {kind(data)}")
    root = data
    document = Place("$")
    for key in root:
        if key not in _TOP_KEYS:
            document.fail(key, "unknown field (see models/README.md)")
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
    candidates = [parse_candidate(raw, index, limits) for index, raw in enumerate(raw_candidates)]
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
    check_tool_calls(candidates)
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
            place.fail(key, "unknown field (see models/README.md)")
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
            place.fail(key, "unknown field (see models/README.md)")
        attribute, rule = row
        values[attribute] = rule(value, place, key, limits)
    return values


# ---------------------------------------------------------------------------
# candidates


class _CandidateShell:
    """Candidate's slots without its frozen ``__setattr__``.

    The parser fills a shell and then makes it a ``Candidate``: the two classes have
    the same layout, so Python allows assigning ``__class__``. A frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, which measured ~37k
    instructions per candidate against ~8k here: the largest single cost of parsing
    100k candidates. The result is an ordinary, frozen ``Candidate``.
    """

    __slots__ = Candidate.__slots__


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
    get = values.get
    shell = _CandidateShell()
    shell.id = candidate_id  # type: ignore[attr-defined]
    shell.identity = get("identity", candidate_id)  # type: ignore[attr-defined]
    shell.cost = values["cost"]  # type: ignore[attr-defined]
    shell.form = get("form", "full")  # type: ignore[attr-defined]
    shell.relevance = get("relevance", 0.0)  # type: ignore[attr-defined]
    shell.required = get("required", False)  # type: ignore[attr-defined]
    shell.scope = get("scope", "unknown")  # type: ignore[attr-defined]
    shell.transfer_from = get("transfer_from")  # type: ignore[attr-defined]
    shell.source = get("source")  # type: ignore[attr-defined]
    shell.version = get("version")  # type: ignore[attr-defined]
    shell.channel = get("channel")  # type: ignore[attr-defined]
    shell.role = role  # type: ignore[attr-defined]
    shell.depends_on = get("depends_on", ())  # type: ignore[attr-defined]
    shell.group = get("group")  # type: ignore[attr-defined]
    shell.lineage = get("lineage", ())  # type: ignore[attr-defined]
    shell.content = get("content")  # type: ignore[attr-defined]
    shell.labels = get("labels", ())  # type: ignore[attr-defined]
    shell.kind = form_kind  # type: ignore[attr-defined]
    shell.tool_call_id = tool_call_id  # type: ignore[attr-defined]
    shell.tool_name = get("tool_name")  # type: ignore[attr-defined]
    shell.turn = get("turn", 0)  # type: ignore[attr-defined]
    shell.position = index if position is None else position  # type: ignore[attr-defined]
    shell.__class__ = Candidate  # type: ignore[assignment]
    return shell  # type: ignore[return-value]


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


# ---------------------------------------------------------------------------
# a typed request built by hand


def _checked(request: Request, limits: Limits) -> Request:
    """A typed request, judged as the JSON it stands for (one set of rules)."""
    if not isinstance(request.candidates, tuple | list):
        raise InvalidRequest("candidates", f"must be a tuple, not {kind(request.candidates)}")
    data = _as_json(request)
    parsed = _parse(data, limits)
    # the arrival order a hand-built request recorded is kept (the dump baseline reads it)
    positions = {c.id: c.position for c in request.candidates if isinstance(c, Candidate)}
    candidates = tuple(
        replace(c, position=positions.get(c.id, c.position)) for c in parsed.candidates
    )
    return replace(parsed, candidates=candidates)


def request_as_json(request: Request) -> dict[str, Any]:
    """The JSON form of a validated request, its candidates in arrival order: what a
    caller would send to get the same request back from ``parse_request``."""
    data = _as_json(request)
    order = sorted(range(len(request.candidates)), key=lambda i: request.candidates[i].position)
    data["candidates"] = [data["candidates"][i] for i in order]
    if not data["sources"]:
        del data["sources"]
    return data


def _as_json(request: Request) -> dict[str, Any]:
    task = request.task
    if not isinstance(task, Task):
        raise InvalidRequest("task", f"must be an assembler.Task, not {kind(task)}")
    out: dict[str, Any] = {
        "task": {
            key: _plain(getattr(task, attribute))
            for key, (attribute, _) in TASK_SPEC.items()
            if getattr(task, attribute) is not None
        },
        "candidates": [_candidate_json(c, index) for index, c in enumerate(request.candidates)],
        "sources": _pairs(request.sources, "sources"),
    }
    if request.has_authority_table:
        out["policy"] = {"authority": _pairs(request.authority, "policy.authority")}
    if request.cache is not None:
        out["cache"] = cache_json(request.cache)
    return out


def _candidate_json(candidate: Any, index: int) -> Any:
    if not isinstance(candidate, Candidate):
        return candidate  # the rules name what it is
    out: dict[str, Any] = {}
    for key, (attribute, _) in CANDIDATE_SPEC.items():
        value = getattr(candidate, attribute)
        if value is None and attribute in _OPTIONAL:
            continue
        out[key] = {"from": value} if key == "transfer" else _plain(value)
    return out


# attributes a typed candidate leaves as None when the JSON leaves the key out
_OPTIONAL = frozenset(
    {
        "transfer_from",
        "source",
        "version",
        "channel",
        "group",
        "content",
        "tool_call_id",
        "tool_name",
    }
)


def _pairs(pairs: Any, where: str) -> Any:
    if not isinstance(pairs, tuple | list):
        return pairs
    out: dict[Any, Any] = {}
    for pair in pairs:
        if not (isinstance(pair, tuple | list) and len(pair) == 2):
            raise InvalidRequest(where, "must hold (name, value) pairs")
        key, value = pair
        if key in out:
            raise InvalidRequest(where, f"names {shown(key)} twice")
        out[key] = value
    return out


def _plain(value: Any) -> Any:
    # enum members become their values and tuples lists, as in JSON; anything else is
    # left for the field's rule to judge
    if isinstance(value, Operation | Role | Kind):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value
