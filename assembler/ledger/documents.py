"""What the ledger stores about a compilation, as plain JSON documents, and back.

Input: a parsed ``Request`` (or whatever a caller passed, when it did not parse), a
``Run``, a ``Result`` or an exception. Output: JSON documents (the request's in
canonical JSON) whose ``content`` is replaced by ``content_sha256`` (the bytes go to
content-addressed artifacts), and the inverse: a request dict that ``assemble``
accepts, a ``Result`` rebuilt from its stored dict.

A request document is the request in its own JSON format (models/README.md section 2),
candidates in the order they arrived, optional fields at their defaults left out,
each ``content`` replaced by ``content_sha256``: feeding it back (with the contents
restored) gives the same ``Request``, so a replay solves exactly what was offered.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from operator import attrgetter
from typing import Any

from ..model.cache import cache_json
from ..model.types import (
    Candidate,
    Decision,
    Kind,
    Reason,
    Refusal,
    RefusalCode,
    Request,
    RequiredIdentity,
    Result,
    Role,
    Status,
    Verdict,
)
from ..settings import RECORDED, WITH_RENDER
from .events import canonical, sha256_hex

__all__ = [
    "CANDIDATE_ATTRIBUTES",
    "TASK_ATTRIBUTES",
    "error_document",
    "raw_document",
    "request_document",
    "request_from_document",
    "result_dict",
    "result_document",
    "result_from_dict",
    "run_document",
    "run_from_document",
    "storable",
    "storable_name",
]


def _candidate_document(c: Candidate) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": c.id,
        "identity": c.identity,
        "form": c.form,
        "cost": c.cost,
        "relevance": c.relevance,
    }
    if c.required:
        out["required"] = True
    if c.scope != "unknown":
        out["scope"] = c.scope
    if c.transfer_from is not None:
        out["transfer"] = {"from": c.transfer_from}
    for name in ("source", "version", "channel", "group"):
        value = getattr(c, name)
        if value is not None:
            out[name] = value
    if c.role is Role.INSTRUCTION:
        out["role"] = c.role.value
    # kind and role default from each other (models/README.md section 2)
    if c.kind is not (Kind.SYSTEM if c.role is Role.INSTRUCTION else Kind.EVIDENCE):
        out["kind"] = c.kind.value
    for name in ("tool_call_id", "tool_name"):
        value = getattr(c, name)
        if value is not None:
            out[name] = value
    if c.turn:
        out["turn"] = c.turn
    for name in ("depends_on", "lineage", "labels"):
        value = getattr(c, name)
        if value:
            out[name] = list(value)
    if c.content is not None:
        out["content_sha256"] = sha256_hex(c.content.encode("utf-8"))
    return out


# every Candidate field the document writes (a new field must be added here and above:
# tests/test_ledger.py checks this against the dataclass)
CANDIDATE_ATTRIBUTES = frozenset(
    {"id", "identity", "form", "cost", "relevance", "required", "scope", "transfer_from",
     "source", "version", "channel", "group", "role", "kind", "tool_call_id", "tool_name",
     "turn", "depends_on", "lineage", "labels", "content", "position"}
)  # fmt: skip
TASK_ATTRIBUTES = frozenset(
    {"id", "budget", "scope", "operation", "min_relevance", "required", "seal",
     "instruction", "query"}
)  # fmt: skip

# a candidate's compared fields (what ``Candidate.__eq__`` compares: not its position)
# -> (its canonical JSON in a request document, its content's sha256)
Fragments = dict[tuple[Any, ...], tuple[str, str | None]]
# The memo is keyed by this tuple rather than by the Candidate: a parse makes new
# Candidate objects every call, and the dataclass's generated __hash__/__eq__ build a
# tuple in Python bytecode on each lookup; attrgetter builds the same tuple in C.
_compared = attrgetter(*(f.name for f in fields(Candidate) if f.compare))
_position = attrgetter("position")
# past this many distinct candidates the memo starts again (bounded memory)
_FRAGMENTS_KEPT = 50_000


def request_document(
    request: Request, fragments: Fragments | None = None
) -> tuple[str, dict[str, str]]:
    """The request as canonical JSON text without its contents, and the contents by sha256.

    ``fragments`` memoises each candidate's part across calls: material offered again
    (a system prompt, the history of an agent's session) is neither re-encoded nor
    re-hashed. The text is exactly ``canonical(document)`` (tested): the keys are
    written in sorted order.
    """
    memo: Fragments = {} if fragments is None else fragments
    if len(memo) > _FRAGMENTS_KEPT:
        memo.clear()
    task = request.task
    task_doc: dict[str, Any] = {"id": task.id, "budget": task.budget}
    if task.scope is not None:
        task_doc["scope"] = task.scope
    task_doc["operation"] = task.operation.value
    task_doc["min_relevance"] = task.min_relevance
    if task.required:
        task_doc["required"] = list(task.required)
    if task.seal:
        task_doc["seal"] = list(task.seal)
    for name in ("instruction", "query"):
        value = getattr(task, name)
        if value is not None:
            task_doc[name] = value
    parts = []
    contents: dict[str, str] = {}
    for c in sorted(request.candidates, key=_position):
        key = _compared(c)
        known = memo.get(key)
        if known is None:
            document = _candidate_document(c)
            known = memo[key] = (canonical(document), document.get("content_sha256"))
        parts.append(known[0])
        if known[1] is not None:
            assert c.content is not None
            contents[known[1]] = c.content
    policy = {"authority": dict(request.authority)} if request.has_authority_table else {}
    # what the provider holds is part of the request (models/README.md 6b): its section,
    # every default written out, first in the sorted keys
    cache = "" if request.cache is None else f'"cache":{canonical(cache_json(request.cache))},'
    text = (
        f'{{{cache}"candidates":[{",".join(parts)}],"policy":{canonical(policy)},'
        f'"sources":{canonical(dict(request.sources))},"task":{canonical(task_doc)}}}'
    )
    return text, contents


def request_from_document(
    document: dict[str, Any], content: Callable[[str], str]
) -> dict[str, Any]:
    """The request dict back, each ``content_sha256`` resolved by ``content``."""
    candidates = []
    for raw in document["candidates"]:
        candidate = dict(raw)
        digest = candidate.pop("content_sha256", None)
        if digest is not None:
            candidate["content"] = content(digest)
        candidates.append(candidate)
    return {**document, "candidates": candidates}


def _jsonable(value: Any) -> Any:
    """``value`` if JSON can carry it exactly, else its repr (marked as such)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"repr": repr(value)}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _jsonable(v) for k, v in value.items()}
    return {"repr": repr(value)}


def raw_document(request: object) -> tuple[bytes, bool]:
    """A request that did not parse, as JSON bytes; False when JSON could not hold it
    exactly (then replaying it is not meaningful). A string the JSON decoder accepts
    but UTF-8 cannot hold (a lone surrogate) is written escaped: read back, it is the
    same string."""
    try:
        text = json.dumps(request, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return storable(canonical(_jsonable(request))).encode("utf-8"), False
    return storable(text).encode("utf-8"), True


# a UTF-16 surrogate on its own: JSON's decoder makes one of "\ud800", UTF-8 holds none
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """JSON text with every lone surrogate written as its escape (``\\ud800``): the
    same JSON value, and text that UTF-8 (a file, PostgreSQL) can hold."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def storable_name(name: str) -> str:
    """A name to record beside events (a compilation's session) that is text a store can
    hold: as it is, or, when it holds a lone surrogate or NUL (which PostgreSQL's text
    cannot), its JSON escape without the quotes (``t\\u0000``)."""
    if "\x00" not in name and (name.isascii() or _SURROGATE.search(name) is None):
        return name
    return json.dumps(name)[1:-1]


# the settings a recorder writes down (``settings.RECORDED``), and those written with a
# render format only (older ledgers have none of them)
_OPTIONAL_SETTINGS = WITH_RENDER
_SETTINGS = tuple(name for name in RECORDED if name not in WITH_RENDER)


def run_document(given: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a call as recorded (``Settings.recorded()``), as JSON values."""
    out = {key: _jsonable(given.get(key)) for key in _SETTINGS}
    out.update((key, _jsonable(given[key])) for key in _OPTIONAL_SETTINGS if key in given)
    return out


def run_from_document(document: dict[str, Any]) -> dict[str, Any]:
    """The recorded settings of a compilation (a ledger of an older version may lack
    ``render`` and ``counter``: None)."""
    out = {key: document.get(key) for key in _SETTINGS}
    out.update((key, document[key]) for key in _OPTIONAL_SETTINGS if key in document)
    return out


def error_document(error: BaseException) -> dict[str, Any]:
    """The error's type, message and structured fields (its public attributes)."""
    fields = {
        name: _jsonable(value)
        for name, value in sorted(vars(error).items())
        if not name.startswith("_")
    }
    return {"type": type(error).__name__, "message": str(error), "fields": fields}


_decision_row = attrgetter("id", "identity", "verdict", "reason", "detail")


def result_document(result: Result) -> bytes:
    """``Result.to_dict()`` as stored: decisions as rows [id, identity, verdict, reason,
    detail] (a third of the bytes, and no dict per decision to build), and without the
    rendering, whose text and body are artifacts of their own."""
    data = replace(result, decisions=(), rendering=None).to_dict()
    # rows built in C; the enums go in as they are: both encoders write a StrEnum as
    # its value, and reading Enum.value is a Python-level property call per field
    data["decisions"] = list(map(_decision_row, result.decisions))
    # imported here: reading a ledger (list, show, verify, explain) never writes one
    import orjson

    try:
        # orjson: the same JSON values, written on the caller's thread far more quickly
        # than json.dumps; the bytes are not hashed into any id, only stored and read
        return orjson.dumps(data)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        # what orjson refuses (an integer past 64 bits) the standard encoder still writes
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def result_dict(document: bytes) -> dict[str, Any]:
    """The stored result document back as ``Result.to_dict()`` gave it."""
    data: dict[str, Any] = json.loads(document)
    keys = ("id", "identity", "verdict", "reason", "detail")
    data["decisions"] = [dict(zip(keys, row, strict=True)) for row in data["decisions"]]
    return data


def result_from_dict(data: dict[str, Any]) -> Result:
    """A ``Result`` rebuilt from ``Result.to_dict()`` (for printing a stored one)."""
    refusal = None
    if data["refusal"] is not None:
        r = data["refusal"]
        refusal = Refusal(
            code=RefusalCode(r["code"]),
            budget=r["budget"],
            mandatory_cost=r["mandatory_cost"],
            excess=r["excess"],
            forms=tuple(r["forms"]),
            conflict=tuple(r["conflict"]),
            identities=tuple(
                RequiredIdentity(
                    i["identity"], tuple((f["id"], Reason(f["gate"])) for f in i["forms"])
                )
                for i in r["identities"]
            ),
            message=r["message"],
        )
    status = Status(data["status"])
    return Result(
        status=status,
        strategy=data["strategy"],
        selected=tuple(data["selected"]),
        cost=data["cost"],
        value=data["value"],
        budget=data["budget"],
        optimal=data["optimal"],
        decisions=tuple(
            Decision(
                d["id"], d["identity"], Verdict(d["verdict"]), Reason(d["reason"]), d["detail"]
            )
            for d in data["decisions"]
        ),
        trace_id=data["trace_id"],
        package_id=data["package_id"],
        # to_dict() writes value as the bound of an optimal bundle: the same either way
        bound=data["bound"],
        # printing a stored result needs its decisions, not its rendering
        rendering=None,
        refusal=refusal,
        timings=tuple((k, float(v)) for k, v in data["timings"].items()),
    )
