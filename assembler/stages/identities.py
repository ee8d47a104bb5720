"""The stable identities of a result: ``package_id`` and ``trace_id`` (models/README.md 11).

Input: the request, the selected forms (for ``package_id``); the package, status,
refusal and decisions (for ``trace_id``).
Output: hex sha256 digests of canonical JSON:

* ``package_id`` = sha256 of the canonical JSON of the task (defaults filled in,
  lists sorted), the policy as given, and for each selected form in render order
  its id, declared cost and the sha256 of its content (null without content).
  Rewriting a payload under the same id therefore changes the package.
* ``trace_id`` = sha256 of the canonical JSON of the package_id, the status, the
  refusal code and every decision's id, verdict and reason (not the free-text
  detail, so rewording a message does not change an identity).

Both are built from pieces (one per selected form, one row per decision) joined in C,
so that a caller keeping the pieces between calls re-encodes only what changed. Each
content is hashed once per request (``content_digest``, memoised in
``Request.digests``), however many stages read its digest. ``canonical_json`` writes
plain JSON (strings, integers, booleans, null, lists, objects) with orjson, which
writes those byte for byte as the standard encoder does (``tests/test_identities.py``);
anything else (a float, whose exponent notation differs) goes to the standard encoder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from json.encoder import encode_basestring as _string
from operator import attrgetter, itemgetter
from typing import Any

import orjson

from ..model.cache import cache_identity
from ..model.types import Candidate, Decision, Reason, Refusal, Request, Role, Status, Verdict

__all__ = [
    "ROW_ENDS",
    "canonical_json",
    "content_digest",
    "form_piece",
    "form_pieces",
    "package_id",
    "package_of_pieces",
    "policy_json",
    "render_order",
    "sha256_text",
    "task_json",
    "trace_id",
    "trace_of_rows",
    "trace_text",
]

# One encoder for every call: json.dumps with these arguments builds a new one each time.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_SORTED = orjson.OPT_SORT_KEYS
# the integers orjson writes (64 bits); the standard encoder writes any other exactly
_LEAST, _MOST = -(2**63), 2**64 - 1


def canonical_json(data: Any) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are (not escaped)."""
    if _plain(data):
        try:
            return orjson.dumps(data, option=_SORTED).decode("utf-8")
        except TypeError:
            pass  # a lone surrogate, a subclass orjson refuses: the standard encoder says
    return _CANONICAL.encode(data)


def _plain(data: Any) -> bool:
    """Whether ``data`` holds only what orjson writes as the standard encoder does."""
    kind = type(data)
    if kind is str or kind is bool or data is None:
        return True
    if kind is int:
        return bool(_LEAST <= data <= _MOST)
    if kind is dict:
        return all(type(k) is str for k in data) and all(map(_plain, data.values()))
    if kind is list or kind is tuple:
        return all(map(_plain, data))
    return False


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_digest(
    content: str, digests: dict[int, tuple[str, str, int]] | None = None
) -> tuple[str, int]:
    """The sha256 (hex) of ``content``'s UTF-8 and its length in bytes; ``digests`` (a
    request's memo, ``Request.digests``) holds them by the content object's id."""
    if digests is not None:
        found = digests.get(id(content))
        if found is not None and found[0] is content:
            return found[1], found[2]
    data = content.encode("utf-8")
    digest, size = hashlib.sha256(data).hexdigest(), len(data)
    if digests is not None:
        digests[id(content)] = (content, digest, size)
    return digest, size


def render_order(
    candidates: Iterable[Candidate], *, sorted_by_id: bool = False
) -> list[Candidate]:
    """Instructions first, then everything else; by id within each (``sorted_by_id``:
    ``candidates`` is a list already in id order)."""
    by_id = candidates if sorted_by_id else sorted(candidates, key=_ID_OF)
    assert isinstance(by_id, list)
    roles = list(map(_ROLE_OF, by_id))
    if Role.INSTRUCTION not in roles:
        return by_id
    first = [c for c in by_id if c.role is Role.INSTRUCTION]
    return first + [c for c in by_id if c.role is not Role.INSTRUCTION]


_ID_OF, _ROLE_OF = attrgetter("id"), attrgetter("role")


def task_json(request: Request, required: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The task as ``package_id`` hashes it (defaults filled in, lists sorted)."""
    task = request.task
    out: dict[str, Any] = {
        "id": task.id,
        "budget": task.budget,
        "scope": task.scope,
        "operation": task.operation.value,
        "min_relevance": task.min_relevance,
        "required": sorted(request.required_identities if required is None else required),
        "seal": list(task.seal),
    }
    if request.cache is not None:
        # the cache's rules and the previous rendering decide the bundle too (the
        # clock only through whether the previous call's entries live)
        out["cache"] = cache_identity(request.cache)
    return out


def policy_json(request: Request) -> dict[str, Any]:
    """The policy as ``package_id`` hashes it: the authority table as given, if any."""
    return {"authority": dict(request.authority)} if request.has_authority_table else {}


def form_piece(candidate: Candidate, digests: dict[int, tuple[str, str, int]] | None = None) -> str:
    """One selected form's piece of ``package_id``: the canonical JSON of its id,
    declared cost and content hash (keys in sorted order; ``digests``: the request's)."""
    content = candidate.content
    digest = "null" if content is None else f'"{content_digest(content, digests)[0]}"'
    cost, name = int(candidate.cost), _string(candidate.id)
    return f'{{"content_sha256":{digest},"cost":{cost},"id":{name}}}'


def form_pieces(
    candidates: Iterable[Candidate], digests: dict[int, tuple[str, str, int]]
) -> list[str]:
    """``form_piece`` of each of ``candidates``, in one loop (a call per form, and one
    more per content digest, was most of the trace of a long transcript)."""
    out: list[str] = []
    append, known = out.append, digests.get
    for c in candidates:
        content = c.content
        if content is None:
            digest = "null"
        else:
            found = known(id(content))
            if found is not None and found[0] is content:
                digest = f'"{found[1]}"'
            else:
                data = content.encode("utf-8")
                hexed = _sha256(data).hexdigest()
                digests[id(content)] = (content, hexed, len(data))
                digest = f'"{hexed}"'
        append(f'{{"content_sha256":{digest},"cost":{int(c.cost)},"id":{_string(c.id)}}}')
    return out


_sha256 = hashlib.sha256


def package_of_pieces(
    request: Request, pieces: Iterable[str], required: tuple[str, ...] | None = None
) -> str:
    """``package_id`` from the selected forms' pieces, in render order."""
    policy = canonical_json(policy_json(request))
    task = canonical_json(task_json(request, required))
    return sha256_text(f'{{"forms":[{",".join(pieces)}],"policy":{policy},"task":{task}}}')


def package_id(
    request: Request, selected: list[Candidate], required: tuple[str, ...] | None = None
) -> str:
    pieces = form_pieces(render_order(selected), request.digests)
    return package_of_pieces(request, pieces, required)


def _row_end(verdict: str, reason: str) -> str:
    """The canonical JSON of a decision's row after its id, and the opening of the next
    row: ``,"<verdict>","<reason>"],[``."""
    return f",{canonical_json(verdict)},{canonical_json(reason)}],["


class _RowEnds(dict[tuple[str, str], str]):
    """``_row_end`` by (verdict, reason): every pair of members built once, any other
    pair (plain strings) when asked for."""

    def __missing__(self, key: tuple[str, str]) -> str:
        return _row_end(*key)


ROW_ENDS = _RowEnds({(v, r): _row_end(v, r) for v in Verdict for r in Reason})
_ID = itemgetter(0)
_VERDICT_REASON = itemgetter(2, 3)


def trace_id(
    package: str | None, status: Status, refusal: Refusal | None, decisions: Iterable[Decision]
) -> str:
    rows = decisions if isinstance(decisions, list | tuple) else list(decisions)
    return trace_of_rows(
        package,
        status,
        refusal,
        list(map(_ID, rows)),
        map(ROW_ENDS.__getitem__, map(_VERDICT_REASON, rows)),
    )


def trace_of_rows(
    package: str | None,
    status: Status,
    refusal: Refusal | None,
    ids: Sequence[str],
    ends: Iterable[str],
) -> str:
    """``trace_id`` from each decision's id and its row's end (``ROW_ENDS``), joined in C
    rather than built as a list per row for the encoder to walk."""
    # one flat list id, end, id, end...: each end closes its row and opens the next
    pieces = [""] * (2 * len(ids))
    pieces[0::2] = list(map(_string, ids))
    pieces[1::2] = list(ends)
    if pieces:
        # the last row opens no next one
        pieces[-1] = pieces[-1][: -len(",[")]
    rows = "".join(pieces)
    return sha256_text(trace_text(package, status, refusal, f"[{rows}" if rows else ""))


def trace_text(package: str | None, status: Status, refusal: Refusal | None, rows: str) -> str:
    """The text ``trace_id`` hashes: canonical_json of {"decisions": [...], "package_id",
    "refusal", "status"}, given ``rows``, the decisions' canonical rows joined by commas
    ("decisions" sorts first, so the rest is one canonical object after it)."""
    rest = canonical_json(
        {
            "package_id": package,
            "refusal": None if refusal is None else refusal.code.value,
            "status": status.value,
        }
    )
    return f'{{"decisions":[{rows}],{rest[1:]}'
