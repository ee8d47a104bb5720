"""A typed request as the JSON it stands for.

Input: a ``Request`` (validated, or built by hand). Output: its JSON form (a dict of
plain values: enums as their values, tuples as lists), keys in the documented order
of ``fields.py``: ``request_as_json`` with the candidates in arrival order, as a caller
would send it; ``request_json`` in the request's own order, for the parser to judge a
hand-built request by the JSON rules. What a hand-built request holds that JSON
cannot say (a task that is not a ``Task``, pairs that are not pairs) is an
``InvalidRequest`` naming the field.
"""

from __future__ import annotations

from typing import Any

from .cache import cache_json
from .errors import InvalidRequest
from .fields import CANDIDATE_SPEC, TASK_SPEC
from .rules import kind, shown
from .types import Candidate, Kind, Operation, Request, Role, Task

__all__ = ["request_as_json", "request_json"]


def request_as_json(request: Request) -> dict[str, Any]:
    """The JSON form of a validated request, its candidates in arrival order: what a
    caller would send to get the same request back from ``parse_request``."""
    data = request_json(request)
    order = sorted(range(len(request.candidates)), key=lambda i: request.candidates[i].position)
    data["candidates"] = [data["candidates"][i] for i in order]
    if not data["sources"]:
        del data["sources"]
    return data


def request_json(request: Request) -> dict[str, Any]:
    """The JSON form of ``request``, its candidates in the request's own order."""
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
