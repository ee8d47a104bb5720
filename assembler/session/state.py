"""A session's state, and a delta applied to it as a pure function.

Input: a validated ``Request`` (``initial_state``), or a ``State``, a validated
``Delta`` and the ``Limits`` (``apply_delta``).
Output: a new ``State`` (the old one is never changed), or ``InvalidRequest`` naming
the delta's field and the candidate when the delta does not fit this session (an id
it removes is not there, an id it adds already is, a tool call left without its
result, a limit passed). A failed delta therefore leaves the session as it was.

The state is the typed request itself plus per-candidate indexes (by id, by
identity, by tool call id) and running totals. Only what the delta touches is judged
again: the request-wide rules that span candidates (unique ids, the sum of costs, the
tool-call pairing, the size limits) are each checked on the identities, tool call
ids and totals the delta changes, which is exact because each of those rules is about
one identity, one tool call id or one total. Candidates the delta leaves alone are
the same objects in the new request: the stages that keep work between calls tell
what changed by that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from operator import attrgetter
from types import MappingProxyType

from ..kernels import kernel
from ..model.errors import InvalidRequest, RequestTooLarge
from ..model.limits import DEFAULT_LIMITS, Limits
from ..model.parse import check_tool_calls, vouched
from ..model.rules import MAX_INTEGER, member, shown
from ..model.types import Candidate, Request, Task
from .delta import RESET, Delta, reset_value

__all__ = ["State", "apply_delta", "hand_on_memos", "initial_state"]

_BY_ID = attrgetter("id")
_EMPTY: frozenset[str] = frozenset()
_SLOT = {name: index for index, name in enumerate(Candidate.__slots__)}


@dataclass(frozen=True, slots=True)
class State:
    """One version of a session: the typed request and its indexes.

    ``by_id``, ``forms_of`` (identity -> ids) and ``calls`` (tool call id -> ids) are
    read-only views; ``next_position`` is the arrival order the next added candidate
    gets; ``content_bytes`` the UTF-8 size of every candidate's content (what makes a
    session large, bounded by ``Limits.max_request_bytes``); ``version`` counts the
    deltas applied since the session began.
    """

    request: Request
    by_id: Mapping[str, Candidate]
    forms_of: Mapping[str, frozenset[str]]
    calls: Mapping[str, frozenset[str]]
    next_position: int
    total_cost: int
    content_bytes: int
    version: int = 0


def initial_state(request: Request) -> State:
    """The state of a session that begins with ``request`` (already validated)."""
    by_id = {c.id: c for c in request.candidates}
    forms_of: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    for c in request.candidates:
        forms_of.setdefault(c.identity, set()).add(c.id)
        if c.tool_call_id is not None:
            calls.setdefault(c.tool_call_id, set()).add(c.id)
    return State(
        request=request,
        by_id=MappingProxyType(by_id),
        forms_of=MappingProxyType({k: frozenset(v) for k, v in forms_of.items()}),
        calls=MappingProxyType({k: frozenset(v) for k, v in calls.items()}),
        next_position=1 + max((c.position for c in request.candidates), default=-1),
        total_cost=sum(c.cost for c in request.candidates),
        content_bytes=sum(_content_bytes(c) for c in request.candidates),
    )


def apply_delta(state: State, delta: Delta, limits: Limits = DEFAULT_LIMITS) -> State:
    """The state after ``delta``; ``state`` itself is left as it was."""
    task = _patched_task(state.request.task, delta)
    sources = _patched(state.request.sources, delta.sources)
    authority, has_table = _patched_policy(state.request, delta)
    _check_ids(state, delta)
    # new candidates take the places after the last one; an update keeps its place, and
    # a re-scoring is an update of the relevance alone
    added = tuple(_but(c, "position", state.next_position + i) for i, c in enumerate(delta.add))
    updated = tuple(_but(c, "position", state.by_id[c.id].position) for c in delta.update) + tuple(
        _but(state.by_id[i], "relevance", r) for i, r in delta.relevance
    )
    gone = {*delta.remove, *(c.id for c in updated)}
    old = [state.by_id[i] for i in gone]
    new = (*updated, *added)
    count = len(state.by_id) - len(delta.remove) + len(added)
    if count > limits.max_candidates:
        raise _too_large(
            f"the session would hold {count} candidates", limits, "max_candidates", count
        )
    total = state.total_cost - sum(c.cost for c in old) + sum(c.cost for c in new)
    if total > MAX_INTEGER:
        raise InvalidRequest(
            "candidates[*].cost",
            f"the session's costs would add up to {total}, above {MAX_INTEGER}: too large"
            " for exact arithmetic",
        )
    content = state.content_bytes - sum(map(_content_bytes, old)) + sum(map(_content_bytes, new))
    if content > limits.max_request_bytes:
        what = f"the session's content would be {content} bytes"
        raise _too_large(what, limits, "max_request_bytes", content)
    by_id = dict(state.by_id)
    for i in gone:
        del by_id[i]
    by_id.update((c.id, c) for c in new)
    forms_of = _reindexed(state.forms_of, old, new, attrgetter("identity"))
    calls = _reindexed(state.calls, old, new, attrgetter("tool_call_id"))
    _check_tool_calls(by_id, forms_of, calls, old, new, delta)
    kept = (
        [c for c in state.request.candidates if c.id not in gone]
        if gone
        else list(state.request.candidates)
    )
    # two sorted runs: the sort merges them in linear time
    kept.extend(sorted(new, key=_BY_ID))
    kept.sort(key=_BY_ID)
    # every part was judged when it arrived, and the request-wide rules above
    request = vouched(
        Request(
            task=task,
            candidates=tuple(kept),
            sources=sources,
            authority=authority,
            has_authority_table=has_table,
            cache=state.request.cache,
        ),
        limits,
    )
    hand_on_memos(state.request, request)
    return State(
        request=request,
        by_id=MappingProxyType(by_id),
        forms_of=forms_of,
        calls=calls,
        next_position=state.next_position + len(added),
        total_cost=total,
        content_bytes=content,
        version=state.version + 1,
    )


def hand_on_memos(before: Request, after: Request) -> Request:
    """``after`` (returned) reads the content digests and rendered blocks ``before``
    made: after a delta, or the same request with another cache section (each
    entry holds its content or candidate, so it is only ever read for what it was made
    of); a memo is pruned to what is still offered once it holds twice as much."""
    digests, blocks = before.digests, before.blocks
    if len(digests) > 2 * len(after.candidates) + 64:
        live = {id(c.content) for c in after.candidates if c.content is not None}
        digests = {k: v for k, v in digests.items() if k in live}
    if len(blocks) > 2 * len(after.candidates) + 64:
        offered = set(map(_BY_ID, after.candidates))
        blocks = {k: v for k, v in blocks.items() if k in offered}
    object.__setattr__(after, "digests", digests)
    object.__setattr__(after, "blocks", blocks)
    return after


def _too_large(what: str, limits: Limits, limit: str, actual: int) -> RequestTooLarge:
    maximum: int = getattr(limits, limit)
    return RequestTooLarge("add", what, limit=limit, maximum=maximum, actual=actual)


def _content_bytes(candidate: Candidate) -> int:
    content = candidate.content
    if content is None:
        return 0
    return len(content) if content.isascii() else len(content.encode("utf-8"))


def _but(candidate: Candidate, name: str, value: object) -> Candidate:
    """``candidate`` with one field changed, every field already checked: copied slot
    by slot into a shell (``dataclasses.replace`` runs ``__init__`` again, a call per
    field, and a re-scoring of a whole session's candidates is thousands of them)."""
    copy: Candidate = kernel("assembler.model.decode_twin").replaced(
        candidate, _SLOT[name], value
    )
    return copy


def _patched_task(task: Task, delta: Delta) -> Task:
    if not delta.task:
        return task
    values = {key: reset_value(key) if value is RESET else value for key, value in delta.task}
    return replace(task, **values)


def _patched(
    pairs: tuple[tuple[str, str], ...], patch: Iterable[tuple[str, str | None]]
) -> tuple[tuple[str, str], ...]:
    table = dict(pairs)
    changed = False
    for key, value in patch:
        changed = True
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return tuple(sorted(table.items())) if changed else pairs


def _patched_policy(request: Request, delta: Delta) -> tuple[tuple[tuple[str, str], ...], bool]:
    authority, has_table = request.authority, request.has_authority_table
    if delta.drop_authority:
        authority, has_table = (), False
    if delta.authority is not None:
        authority, has_table = _patched(authority, delta.authority), True
    return authority, has_table


def _check_ids(state: State, delta: Delta) -> None:
    """Removed and updated ids exist, added ids do not, and no id is named twice."""
    missing = "the session has no such candidate"
    held = "the session already has this candidate (change it with 'update')"
    update = f"{missing} (add a new one with 'add')"
    # (field, id, whether the session must hold it, the error when it does not)
    named = [
        *((f"remove[{n}]", i, True, missing) for n, i in enumerate(delta.remove)),
        *((f"update[{n}].id", c.id, True, update) for n, c in enumerate(delta.update)),
        *((member("relevance", i), i, True, missing) for i, _ in delta.relevance),
        *((f"add[{n}].id", c.id, False, held) for n, c in enumerate(delta.add)),
    ]
    seen: dict[str, str] = {}
    for field, candidate_id, exists, why in named:
        if candidate_id in seen:
            raise InvalidRequest(
                field,
                f"candidate {shown(candidate_id)} is named twice in the delta (also"
                f" {seen[candidate_id]}); update replaces a candidate whole",
                candidate=candidate_id,
            )
        seen[candidate_id] = field
        if (candidate_id in state.by_id) is not exists:
            raise InvalidRequest(field, why, candidate=candidate_id)


def _reindexed(
    index: Mapping[str, frozenset[str]],
    old: Iterable[Candidate],
    new: Iterable[Candidate],
    key: attrgetter[str | None],
) -> Mapping[str, frozenset[str]]:
    """``index`` (a name -> candidate ids) with ``old`` taken out and ``new`` put in."""
    out = dict(index)
    for c in old:
        name = key(c)
        if name is not None:
            rest = out[name] - {c.id}
            if rest:
                out[name] = rest
            else:
                del out[name]
    for c in new:
        name = key(c)
        if name is not None:
            out[name] = out.get(name, _EMPTY) | {c.id}
    return MappingProxyType(out)


def _check_tool_calls(
    by_id: Mapping[str, Candidate],
    forms_of: Mapping[str, frozenset[str]],
    calls: Mapping[str, frozenset[str]],
    old: list[Candidate],
    new: tuple[Candidate, ...],
    delta: Delta,
) -> None:
    """The tool-call rules of the request on what the delta touched.

    They are about one identity (its forms share kind and tool call id) or one tool
    call id (one call identity, one result identity), so checking every form of each
    touched identity and of each tool call id those forms or the removed ones name is
    the whole check: everything else is as it was, and was valid.
    """
    identities = {c.identity for c in (*old, *new)}
    named = [c.tool_call_id for c in old]
    for identity in identities:
        named.extend(by_id[i].tool_call_id for i in forms_of.get(identity, _EMPTY))
    call_ids = {call_id for call_id in named if call_id is not None}
    if not call_ids:
        # no form of a touched identity is a tool call or result (those always name a
        # tool call id), so they all share "evidence-like, no call": nothing to check
        return
    ids = set().union(*(forms_of.get(i, _EMPTY) for i in identities))
    for call_id in call_ids:
        ids.update(calls.get(call_id, _EMPTY))
    delta_ids = {c.id for c in new}
    # the session's own candidates first: a conflict is then reported on the delta's
    checked = sorted((by_id[i] for i in ids if i not in delta_ids), key=_BY_ID)
    checked += [c for c in new if c.id in ids]
    where = {c.id: f"update[{n}].tool_call_id" for n, c in enumerate(delta.update)}
    where.update((c.id, f"add[{n}].tool_call_id") for n, c in enumerate(delta.add))

    # a session candidate stranded by the delta: name the list that stranded it
    cause = "remove" if delta.remove else "update" if delta.update else "add"

    def field(index: int) -> str:
        return where.get(checked[index].id, cause)

    check_tool_calls(checked, field)
