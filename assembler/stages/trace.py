"""The trace: from a strategy's choice to the full, explainable result.

Input: the request, its gate report, the strategy's name and its ``Choice``; and
optionally what the trace of an earlier bundle kept (``TraceKept``, a session's).
Output: a ``Result`` with a decision for every candidate (sorted by id), the selection
in render order and the identities of ``identities.py``; and, when asked to keep,
the ``TraceKept`` for the next call.

What is kept, and why deciding only part of it again is exact: a candidate's decision
reads the candidate, its gate entry, the relevance threshold and, of the bundle, only
facts about its own identity (whether it is required, its admitted form, the first
selected form that needs it, its coupled groups when admitted). Those facts are
computed whole each time (they follow the selection, which is small); the decisions
decided again are those of candidates that are new or changed (another object), whose
gate entry changed, that entered or left the selection, or whose identity's facts
changed. Every other decision's verdict and reason (its row of ``trace_id``) is the
one kept, and so are its words once a result's decisions were read: a decision is
worded when read, as a fresh call's are, and only those not worded before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from functools import partial
from itertools import repeat
from operator import attrgetter

from ..model.objective import form_value
from ..model.types import (
    Candidate,
    Decision,
    Decisions,
    Reason,
    Refusal,
    Request,
    Result,
    Status,
    Verdict,
)
from .choice import Choice
from .gates import GateReport
from .identities import (
    ROW_ENDS,
    form_pieces,
    package_of_pieces,
    render_order,
    trace_of_rows,
)

__all__ = [
    "BundleContext",
    "TraceKept",
    "bundle_codes",
    "bundle_context",
    "bundle_decisions",
    "bundle_result",
    "identity_groups",
    "refused_result",
    "trace",
    "undecided_result",
]

_BY_ID = attrgetter("id")
_IDENTITY = attrgetter("identity")
_COST = attrgetter("cost")
_RELEVANCE = attrgetter("relevance")

# Every (verdict, reason) pair, numbered: a decision's row is a small integer (a
# shared object, no tuple per candidate for the collector to walk), its pair and the
# end of its row of ``trace_id`` read from these tables in C.
_PAIRS: tuple[tuple[Verdict, Reason], ...] = tuple((v, r) for v in Verdict for r in Reason)
_CODE = {pair: code for code, pair in enumerate(_PAIRS)}
_ENDS: tuple[str, ...] = tuple(ROW_ENDS[pair] for pair in _PAIRS)
_REQUIRED = _CODE[Verdict.ADMITTED, Reason.REQUIRED]
_DEPENDENCY = _CODE[Verdict.ADMITTED, Reason.DEPENDENCY]
_GROUP = _CODE[Verdict.ADMITTED, Reason.GROUP]
_VALUE = _CODE[Verdict.ADMITTED, Reason.VALUE]
_ALTERNATIVE = _CODE[Verdict.REJECTED, Reason.ALTERNATIVE]
_NOT_CHOSEN = _CODE[Verdict.REJECTED, Reason.NOT_CHOSEN]
_GATED = {reason: _CODE[Verdict.REJECTED, reason] for reason in Reason}


def trace(
    request: Request,
    gates: GateReport,
    strategy: str,
    choice: Choice,
    kept: TraceKept | None = None,
    *,
    keep: bool = False,
) -> tuple[Result, TraceKept | None]:
    """The result of ``choice``; with ``keep``, also what the next call's trace reuses
    (a result with no bundle keeps nothing)."""
    if choice.status is not Status.BUNDLE:
        return _no_bundle_result(request, gates, strategy, choice), None
    result, traced = _bundle(request, gates, strategy, choice, kept, keep)
    if choice.cache is not None:
        result = replace(result, cache=choice.cache)
    return result, traced


def bundle_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    selected_ids: Iterable[str],
    *,
    optimal: bool,
    bound: int | None,
    timings: tuple[tuple[str, float], ...] = (),
) -> Result:
    """The result for a bundle. Strategies that ignore gates may pass ineligible forms:
    they are recorded as admitted (the verifier, not this function, judges legality)."""
    choice = Choice.bundle(tuple(selected_ids), optimal=optimal, bound=bound, timings=timings)
    return _bundle(request, gates, strategy, choice, None, keep=False)[0]


@dataclass(frozen=True, slots=True)
class TraceKept:
    """A bundle's trace, kept for the next call: the request's candidates (by id, and
    their object ids: a candidate a change left alone is the same object) and the gate
    entries it was decided from, the forms of each identity, the bundle's facts, every
    decision's row (its verdict and reason, numbered: ``_PAIRS``), the decisions worded
    so far (``words``: filled when the result's decisions are read), and each selected
    form's piece of ``package_id``."""

    candidates: Mapping[str, Candidate]
    objects: Mapping[int, Candidate]
    rejected: Mapping[str, tuple[Reason, str]]
    notes: Mapping[str, str]
    forms_of: Mapping[str, tuple[str, ...]]
    context: BundleContext
    codes: dict[str, int]
    words: dict[str, Decision]
    pieces: dict[str, str]


def _bundle(
    request: Request,
    gates: GateReport,
    strategy: str,
    choice: Choice,
    kept: TraceKept | None,
    keep: bool,
) -> tuple[Result, TraceKept | None]:
    chosen = frozenset(choice.selected)
    candidates = request.candidates
    ids, identities = gates.columns(request)
    by_id: dict[str, Candidate] = dict(zip(ids, candidates, strict=True))
    unknown = chosen.difference(by_id)
    if unknown:
        raise ValueError(f"selection names forms the request does not have: {sorted(unknown)}")
    # canonical order is the order of ids
    selected = list(map(by_id.__getitem__, sorted(chosen)))
    required = gates.required_identities(request)
    context = bundle_context(request, gates, chosen, selected, required)
    ordered = render_order(selected, sorted_by_id=True)
    traced = None
    # verdicts and reasons now (the identities read them), the words when read
    if keep:
        traced = _kept_trace(request, by_id, gates, context, selected, kept)
        pieces: Iterable[str] = map(traced.pieces.__getitem__, map(_BY_ID, ordered))
        codes = list(map(traced.codes.__getitem__, ids))
        decisions = Decisions(partial(_kept_words, traced, candidates, gates, context))
    else:
        codes = bundle_codes(ids, identities, gates, context)
        decisions = Decisions(partial(_worded, candidates, gates, context, codes))
        pieces = form_pieces(ordered, request.digests)
    package = package_of_pieces(request, pieces, required)
    trace_digest = trace_of_rows(package, Status.BUNDLE, None, ids, map(_ENDS.__getitem__, codes))
    value = sum(map(form_value, map(_RELEVANCE, selected), repeat(context.threshold)))
    result = Result(
        status=Status.BUNDLE,
        strategy=strategy,
        selected=tuple(map(_BY_ID, ordered)),
        cost=sum(map(_COST, selected)),
        value=value,
        budget=request.task.budget,
        optimal=choice.optimal,
        decisions=decisions,
        trace_id=trace_digest,
        package_id=package,
        bound=value if choice.optimal else choice.bound,
        timings=choice.timings,
    )
    return result, traced


def _kept_trace(
    request: Request,
    by_id: dict[str, Candidate],
    gates: GateReport,
    context: BundleContext,
    selected: list[Candidate],
    kept: TraceKept | None,
) -> TraceKept:
    """Every decision's row and every selected form's piece: those of ``kept`` where
    they are exact (module docstring), the others decided again; the words kept of
    those decisions that stand."""
    candidates, digests = request.candidates, request.digests
    objects = dict(zip(map(id, candidates), candidates, strict=True))
    words: dict[str, Decision]
    if kept is None or kept.context.threshold != context.threshold:
        ids, identities = gates.columns(request)
        codes = dict(zip(ids, bundle_codes(ids, identities, gates, context), strict=True))
        words = {}
        pieces = dict(zip(map(_BY_ID, selected), form_pieces(selected, digests), strict=True))
        forms_of: dict[str, list[str]] = {}
        for c in candidates:
            forms_of.setdefault(c.identity, []).append(c.id)
        index = {identity: tuple(forms) for identity, forms in forms_of.items()}
    else:
        fresh = [objects[o] for o in objects.keys() - kept.objects.keys()]
        gone = kept.candidates.keys() - by_id.keys()
        index = _reindexed(kept, fresh, gone)
        codes, words = dict(kept.codes), dict(kept.words)
        for i in gone:
            del codes[i]
            words.pop(i, None)
        again = _reworded(kept, fresh, index, by_id, gates, context)
        again_ids = list(map(_BY_ID, again))
        again_codes = bundle_codes(again_ids, list(map(_IDENTITY, again)), gates, context)
        codes.update(zip(again_ids, again_codes, strict=True))
        for i in again_ids:
            words.pop(i, None)
        # a form's piece is its id, cost and content's: a re-scored form keeps it
        was, pieced = kept.candidates, kept.pieces
        pieces = {}
        for c in selected:
            piece = pieced.get(c.id)
            if piece is None or not _pieced_alike(was[c.id], c):
                piece = form_pieces((c,), digests)[0]
            pieces[c.id] = piece
    return TraceKept(
        by_id, objects, gates.rejected, gates.notes, index, context, codes, words, pieces
    )


def _pieced_alike(before: Candidate, now: Candidate) -> bool:
    return before is now or (before.content is now.content and before.cost == now.cost)


def _kept_words(
    traced: TraceKept,
    candidates: Sequence[Candidate],
    gates: GateReport,
    context: BundleContext,
) -> list[Decision]:
    """The decisions of a kept trace's result, read: those worded before as they were,
    the others worded now (and kept in ``traced.words`` for the calls after)."""
    words, codes = traced.words, traced.codes
    unworded = [c for c in candidates if c.id not in words]
    for decision in bundle_decisions(unworded, gates, context):
        assert decision[2:4] == _PAIRS[codes[decision.id]], "a decision's words and row disagree"
        words[decision.id] = decision
    return list(map(words.__getitem__, map(_BY_ID, candidates)))


def _reindexed(
    kept: TraceKept, fresh: list[Candidate], gone: AbstractSet[str]
) -> dict[str, tuple[str, ...]]:
    """The kept forms of each identity, after the change (``fresh``: the candidates the
    kept trace did not read; ``gone``: the ids no longer offered)."""
    index = dict(kept.forms_of)
    touched: dict[str, set[str]] = {}
    for i in gone:
        identity = kept.candidates[i].identity
        touched.setdefault(identity, set(index[identity])).discard(i)
    for c in fresh:
        before = kept.candidates.get(c.id)
        if before is not None and before.identity != c.identity:
            touched.setdefault(before.identity, set(index[before.identity])).discard(c.id)
        touched.setdefault(c.identity, set(index.get(c.identity, ()))).add(c.id)
    for identity, forms in touched.items():
        if forms:
            index[identity] = tuple(sorted(forms))
        else:
            del index[identity]
    return index


def _reworded(
    kept: TraceKept,
    fresh: list[Candidate],
    index: Mapping[str, tuple[str, ...]],
    by_id: Mapping[str, Candidate],
    gates: GateReport,
    context: BundleContext,
) -> list[Candidate]:
    """The candidates whose decision may differ from the kept one (module docstring)."""
    was = kept.context
    again = {c.id for c in fresh}
    # gate entries and bundle facts that differ (items' symmetric differences, in C)
    again.update(k for k, _ in gates.rejected.items() ^ kept.rejected.items())
    again.update(k for k, _ in gates.notes.items() ^ kept.notes.items())
    again.update(context.chosen ^ was.chosen)
    moved = {k for k, _ in context.admitted.items() ^ was.admitted.items()}
    moved.update(k for k, _ in context.needed.items() ^ was.needed.items())
    # an admitted identity's groups follow from the groups: one grouped on both sides
    # moves only when a group it is in changed (a turn adds a group: not all of them)
    moved.update(context.grouped ^ was.grouped)
    if context.groups != was.groups:
        changed = context.groups.items() ^ was.groups.items()
        touched = set().union(*(members for _, members in changed))
        touched &= context.grouped & was.grouped
        if touched:
            now, before = identity_groups(context, touched), identity_groups(was, touched)
            moved.update(k for k in touched if now.get(k) != before.get(k))
    moved.update(context.required ^ was.required)
    for identity in moved:
        again.update(index.get(identity, ()))
    return [by_id[i] for i in sorted(again) if i in by_id]


def _with_note(detail: str, note: str) -> str:
    return f"{detail}; {note}" if note else detail


@dataclass(frozen=True, slots=True)
class BundleContext:
    """What a bundle's decisions read besides each candidate and its gates: for each
    admitted identity its form, the first selected form (canonical order) needing each
    identity, the admitted identities coupled in a group with another identity
    (``grouped``; their groups, by name, from ``groups`` when a decision is worded:
    ``identity_groups``), the required identities and the relevance threshold."""

    chosen: AbstractSet[str]
    admitted: Mapping[str, str]
    needed: Mapping[str, str]
    grouped: AbstractSet[str]
    groups: Mapping[str, frozenset[str]]
    required: AbstractSet[str]
    threshold: float


def bundle_context(
    request: Request,
    gates: GateReport,
    chosen: AbstractSet[str],
    selected: list[Candidate],
    required: tuple[str, ...],
) -> BundleContext:
    """The context of a bundle; ``selected`` is the chosen candidates in canonical order,
    ``required`` the request's required identities."""
    admitted_identity = dict(zip(map(_IDENTITY, selected), map(_BY_ID, selected), strict=True))
    needed: dict[str, str] = {}
    for c in selected:
        if c.depends_on:
            for dependency in c.depends_on:
                if dependency != c.identity:
                    needed.setdefault(dependency, c.id)
    # A group of one identity couples nothing, so it explains nothing.
    coupled = [members for members in gates.groups.values() if len(members) >= 2]
    grouped = admitted_identity.keys() & frozenset().union(*coupled) if coupled else set()
    threshold = request.task.min_relevance
    return BundleContext(
        chosen, admitted_identity, needed, grouped, gates.groups, frozenset(required), threshold
    )


def identity_groups(
    context: BundleContext, among: AbstractSet[str] | None = None
) -> dict[str, list[str]]:
    """The groups (of two identities or more, by name) of each admitted grouped
    identity (of ``among`` only, when given): what a decision's words name."""
    grouped, groups = context.grouped if among is None else among, context.groups
    out: dict[str, list[str]] = {}
    for group in sorted(groups):
        members = groups[group]
        if len(members) >= 2:
            for member in members & grouped:
                out.setdefault(member, []).append(group)
    return out


def bundle_codes(
    ids: Sequence[str], identities: Sequence[str], gates: GateReport, context: BundleContext
) -> list[int]:
    """The row (``_PAIRS``: verdict and reason) of each candidate of ``ids`` (with its
    identity) in a bundle of ``context``: that of ``bundle_decisions``, without its
    words (what the identities read)."""
    chosen, admitted_identity, needed = context.chosen, context.admitted, context.needed
    grouped, required, rejected = context.grouped, context.required, gates.rejected
    out: list[int] = []
    append = out.append
    for cid, identity in zip(ids, identities, strict=True):
        if cid in chosen:
            if identity in required:
                append(_REQUIRED)
            elif identity in needed:
                append(_DEPENDENCY)
            elif identity in grouped:
                append(_GROUP)
            else:
                append(_VALUE)
            continue
        gate = rejected.get(cid) if rejected else None
        if gate is not None:
            append(_GATED[gate[0]])
        elif identity in admitted_identity:
            append(_ALTERNATIVE)
        else:
            append(_NOT_CHOSEN)
    return out


def _worded(
    candidates: Sequence[Candidate],
    gates: GateReport,
    context: BundleContext,
    codes: list[int],
) -> list[Decision]:
    """``bundle_decisions``, read for a result whose identities ``codes`` made."""
    decisions = bundle_decisions(candidates, gates, context)
    assert [d[2:4] for d in decisions] == list(map(_PAIRS.__getitem__, codes)), (
        "a decision's words and its row disagree"
    )
    return decisions


def bundle_decisions(
    candidates: Iterable[Candidate], gates: GateReport, context: BundleContext
) -> list[Decision]:
    """The decision on each of ``candidates`` in a bundle of ``context``.

    One pass: the whole request's candidates for a result, or the few a kept trace
    rewords."""
    chosen, admitted_identity, needed = context.chosen, context.admitted, context.needed
    required, grouped = context.required, context.grouped
    in_groups = identity_groups(context) if grouped else {}
    threshold, rejected, notes = context.threshold, gates.rejected, gates.notes
    admitted, refused = Verdict.ADMITTED, Verdict.REJECTED
    decisions: list[Decision] = []
    append = decisions.append
    for c in candidates:
        cid = c.id
        if cid in chosen:
            value = form_value(c.relevance, threshold)
            if c.identity in required:
                reason, detail = Reason.REQUIRED, "its identity is required"
            elif c.identity in needed:
                reason, detail = Reason.DEPENDENCY, f"{needed[c.identity]!r} depends on it"
            elif c.identity in grouped:
                groups = ", ".join(repr(g) for g in in_groups[c.identity])
                reason, detail = Reason.GROUP, f"coupled in group {groups}"
            else:
                reason, detail = Reason.VALUE, "admitted for its value"
            detail = f"{detail} (value {value}, cost {c.cost})"
            if cid in rejected:
                gate, why = rejected[cid]
                detail = f"{detail}; admitted despite failing gate {gate.value}: {why}"
            detail = _with_note(detail, notes.get(cid, ""))
            append(Decision(cid, c.identity, admitted, reason, detail))
            continue
        gate_decision = rejected.get(cid)
        if gate_decision is not None:
            append(Decision(cid, c.identity, refused, *gate_decision))
        elif c.identity in admitted_identity:
            why = f"its identity is admitted as {admitted_identity[c.identity]!r}"
            append(Decision(cid, c.identity, refused, Reason.ALTERNATIVE, why))
        else:
            value = form_value(c.relevance, threshold)
            if value == 0 and c.relevance < threshold:
                why = f"relevance {c.relevance} is below min_relevance {threshold} (value 0)"
            else:
                why = f"the bundle leaves it out (value {value}, cost {c.cost})"
            append(Decision(cid, c.identity, refused, Reason.NOT_CHOSEN, why))
    return decisions


def _no_bundle_result(request: Request, gates: GateReport, strategy: str, choice: Choice) -> Result:
    status, refusal = choice.status, choice.refusal
    if status is Status.REFUSED:
        assert refusal is not None
        reason = Reason.REFUSED
        detail = f"no bundle: the request was refused ({refusal.code.value})"
        if refusal.rules:
            # UNSENDABLE: the format's rules no bundle within the budget keeps
            detail = f"no bundle the format can send: it breaks {', '.join(refusal.rules)}"
    else:
        reason = Reason.UNDECIDED
        detail = "no bundle: the time limit was reached before a legal bundle was found"
    rejected = gates.rejected
    refused = Verdict.REJECTED
    ids, identities = gates.columns(request)
    # the rows of trace_id now (each form's verdict and reason), the words when read
    ends = [ROW_ENDS[refused, reason]] * len(ids)
    gated = [i for i, form in enumerate(ids) if form in rejected] if rejected else []
    assert len(gated) == len(rejected), "apply_gates rejects each form once"
    for i in gated:
        ends[i] = ROW_ENDS[refused, rejected[ids[i]][0]]
    decisions = Decisions(partial(_unbundled, gates, ids, identities, reason, detail, gated))
    return Result(
        status=status,
        strategy=strategy,
        selected=(),
        cost=0,
        value=0,
        budget=request.task.budget,
        optimal=False,
        decisions=decisions,
        trace_id=trace_of_rows(None, status, refusal, ids, ends),
        package_id=None,
        bound=None if status is Status.REFUSED else choice.bound,
        refusal=refusal,
        timings=choice.timings,
    )


def _unbundled(
    gates: GateReport,
    ids: Sequence[str],
    identities: Sequence[str],
    reason: Reason,
    detail: str,
    gated: list[int],
) -> tuple[Decision, ...]:
    """The decisions of a result with no bundle, worded: every eligible form ``reason``
    with ``detail`` (and its gates' note), every form at ``gated`` its gate's. Built
    column by column, in C where it can be."""
    rejected, notes = gates.rejected, gates.notes
    noted = list(map(notes.get, ids))
    # every eligible form shares one of a few details: built once per distinct note
    detail_with: dict[str | None, str] = {None: detail}
    detail_with.update((n, _with_note(detail, n)) for n in set(noted) if n is not None)
    details = list(map(detail_with.__getitem__, noted))
    reasons: list[Reason] = [reason] * len(ids)
    for i in gated:
        reasons[i], details[i] = rejected[ids[i]]
    columns = zip(ids, identities, repeat(Verdict.REJECTED), reasons, details)
    # Decision(*row) without a Python call per row: a named tuple's __new__ is
    # tuple.__new__ of its fields
    return tuple(map(tuple.__new__, repeat(Decision), columns))


def refused_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    refusal: Refusal,
    timings: tuple[tuple[str, float], ...] = (),
) -> Result:
    return _no_bundle_result(request, gates, strategy, Choice.refused(refusal, timings=timings))


def undecided_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    bound: int | None = None,
    timings: tuple[tuple[str, float], ...] = (),
) -> Result:
    choice = Choice.undecided(bound, timings=timings)
    return _no_bundle_result(request, gates, strategy, choice)
