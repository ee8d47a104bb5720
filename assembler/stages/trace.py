"""Trace and render: from a chosen selection to the full, explainable result.

Input: the request, its gate report, a strategy's selection (or refusal).
Output: a ``Result`` with a decision for every candidate (sorted by id), the
canonical render order, and the stable identities:

* ``package_id`` = sha256 of the canonical JSON of the task (defaults filled in,
  lists sorted), the policy as given, and for each selected form in render order
  its id, declared cost and the sha256 of its content (null without content).
  Rewriting a payload under the same id therefore changes the package.
* ``trace_id`` = sha256 of the canonical JSON of the package_id, the status, the
  refusal code and every decision's id, verdict and reason (not the free-text
  detail, so rewording a message does not change an identity).

Also ``render_text``: the human table printed by ``assembler compile --format text``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import repeat
from json.encoder import encode_basestring as _string
from operator import itemgetter
from typing import Any

from ..model.objective import form_value
from ..model.types import (
    Candidate,
    Decision,
    Reason,
    Refusal,
    Request,
    Result,
    Role,
    Status,
    Verdict,
)
from .gates import GateReport

__all__ = [
    "BundleContext",
    "bundle_context",
    "bundle_decisions",
    "bundle_result",
    "canonical_json",
    "form_json",
    "package_id",
    "policy_json",
    "refused_result",
    "render_order",
    "render_text",
    "selected_forms",
    "task_json",
    "trace_id",
    "trace_text",
    "undecided_result",
]


# One encoder for every call: json.dumps with these arguments builds a new one each time.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(data: Any) -> str:
    return _CANONICAL.encode(data)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def render_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Instructions first, then everything else; by id within each."""
    return sorted(candidates, key=lambda c: (c.role is not Role.INSTRUCTION, c.id))


def task_json(request: Request, required: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The task as ``package_id`` hashes it (defaults filled in, lists sorted)."""
    task = request.task
    return {
        "id": task.id,
        "budget": task.budget,
        "scope": task.scope,
        "operation": task.operation.value,
        "min_relevance": task.min_relevance,
        "required": sorted(request.required_identities if required is None else required),
        "seal": list(task.seal),
    }


def policy_json(request: Request) -> dict[str, Any]:
    """The policy as ``package_id`` hashes it: the authority table as given, if any."""
    return {"authority": dict(request.authority)} if request.has_authority_table else {}


def form_json(candidate: Candidate) -> dict[str, Any]:
    """A selected form as ``package_id`` hashes it: id, declared cost, content hash."""
    content = candidate.content
    return {
        "id": candidate.id,
        "cost": candidate.cost,
        "content_sha256": None if content is None else _sha256(content),
    }


def package_id(
    request: Request, selected: list[Candidate], required: tuple[str, ...] | None = None
) -> str:
    forms = [form_json(c) for c in render_order(selected)]
    policy = policy_json(request)
    task = task_json(request, required)
    return _sha256(canonical_json({"task": task, "policy": policy, "forms": forms}))


def _row_end(verdict: str, reason: str) -> str:
    """The canonical JSON of a decision's row after its id, and the opening of the next
    row: ``,"<verdict>","<reason>"],[``."""
    return f",{canonical_json(verdict)},{canonical_json(reason)}],["


class _RowEnds(dict[tuple[str, str], str]):
    """``_row_end`` by (verdict, reason): every pair of members built once, any other
    pair (plain strings) when asked for."""

    def __missing__(self, key: tuple[str, str]) -> str:
        return _row_end(*key)


_ROW_ENDS = _RowEnds({(v, r): _row_end(v, r) for v in Verdict for r in Reason})


_ID = itemgetter(0)
_VERDICT_REASON = itemgetter(2, 3)


def trace_id(
    package: str | None, status: Status, refusal: Refusal | None, decisions: Iterable[Decision]
) -> str:
    rows = decisions if isinstance(decisions, (list, tuple)) else list(decisions)
    return _trace_of_rows(
        package,
        status,
        refusal,
        list(map(_ID, rows)),
        map(_ROW_ENDS.__getitem__, map(_VERDICT_REASON, rows)),
    )


def _trace_of_rows(
    package: str | None,
    status: Status,
    refusal: Refusal | None,
    ids: Sequence[str],
    ends: Iterable[str],
) -> str:
    """``trace_id`` from each decision's id and its row's end (``_ROW_ENDS``).

    The rows are joined in C here, each id encoded as the canonical encoder encodes a
    string, rather than built as 100k lists for the encoder to walk: at 100k forms that
    was a third of a result with no bundle."""
    # One flat list of pieces, id, end, id, end...: each end closes its row and opens
    # the next, so no string is built per row.
    pieces = [""] * (2 * len(ids))
    pieces[0::2] = map(_string, ids)
    pieces[1::2] = ends
    if pieces:
        # the last row opens no next one
        pieces[-1] = pieces[-1][: -len(",[")]
    rows = "".join(pieces)
    return _sha256(trace_text(package, status, refusal, f"[{rows}" if rows else ""))


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


def selected_forms(request: Request, chosen: AbstractSet[str]) -> list[Candidate]:
    """The candidates of ``request`` whose ids are ``chosen``, in the request's order;
    a ValueError naming any chosen id the request does not have."""
    selected = [c for c in request.candidates if c.id in chosen]
    if len(selected) != len(chosen):
        unknown = chosen - {c.id for c in selected}
        raise ValueError(f"selection names forms the request does not have: {sorted(unknown)}")
    return selected


def _with_note(detail: str, note: str) -> str:
    return f"{detail}; {note}" if note else detail


@dataclass(frozen=True, slots=True)
class BundleContext:
    """What a bundle's decisions read besides each candidate and its gates: for each
    admitted identity its form, the first selected form (canonical order) needing each
    identity, the coupled groups of each admitted identity, the required identities and
    the relevance threshold."""

    chosen: Container[str]
    admitted: Mapping[str, str]
    needed: Mapping[str, str]
    identity_groups: Mapping[str, Sequence[str]]
    required: Container[str]
    threshold: float


def bundle_context(
    request: Request,
    gates: GateReport,
    chosen: Container[str],
    selected: list[Candidate],
    required: tuple[str, ...] | None = None,
) -> BundleContext:
    """The context of a bundle; ``selected`` is the chosen candidates in canonical order,
    ``required`` the request's required identities when the caller has them."""
    admitted_identity = {c.identity: c.id for c in selected}
    needed: dict[str, str] = {}
    for c in selected:
        for dependency in c.depends_on:
            if dependency != c.identity:
                needed.setdefault(dependency, c.id)
    identity_groups: dict[str, list[str]] = {}
    for group, members in sorted(gates.groups.items()):
        # A group of one identity couples nothing, so it explains nothing.
        if len(members) < 2:
            continue
        for member in members:
            if member in admitted_identity:
                identity_groups.setdefault(member, []).append(group)
    return BundleContext(
        chosen=chosen,
        admitted=admitted_identity,
        needed=needed,
        identity_groups=identity_groups,
        required=set(request.required_identities if required is None else required),
        threshold=request.task.min_relevance,
    )


def bundle_decisions(
    candidates: Iterable[Candidate], gates: GateReport, context: BundleContext
) -> list[Decision]:
    """The decision on each of ``candidates`` in a bundle of ``context``.

    One pass (the whole request's candidates for a result, or just those a session's
    change reached): at 100k forms this stage was a noticeable part of the call."""
    chosen, admitted_identity, needed = context.chosen, context.admitted, context.needed
    identity_groups, required, threshold = (
        context.identity_groups,
        context.required,
        context.threshold,
    )
    rejected, notes = gates.rejected, gates.notes
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
            elif c.identity in identity_groups:
                groups = ", ".join(repr(g) for g in identity_groups[c.identity])
                reason, detail = Reason.GROUP, f"coupled in group {groups}"
            else:
                reason, detail = Reason.VALUE, "admitted for its value"
            detail = f"{detail} (value {value}, cost {c.cost})"
            if cid in rejected:
                gate, why = rejected[cid]
                detail = f"{detail}; admitted despite failing gate {gate.value}: {why}"
            append(
                Decision(cid, c.identity, admitted, reason, _with_note(detail, notes.get(cid, "")))
            )
            continue
        gate_decision = rejected.get(cid)
        if gate_decision is not None:
            append(Decision(cid, c.identity, refused, gate_decision[0], gate_decision[1]))
        elif c.identity in admitted_identity:
            append(
                Decision(
                    cid,
                    c.identity,
                    refused,
                    Reason.ALTERNATIVE,
                    f"its identity is admitted as {admitted_identity[c.identity]!r}",
                )
            )
        else:
            value = form_value(c.relevance, threshold)
            if value == 0 and c.relevance < threshold:
                why = f"relevance {c.relevance} is below min_relevance {threshold} (value 0)"
            else:
                why = f"the bundle leaves it out (value {value}, cost {c.cost})"
            append(Decision(cid, c.identity, refused, Reason.NOT_CHOSEN, why))
    return decisions


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
    chosen = set(selected_ids)
    candidates = request.candidates
    selected = selected_forms(request, chosen)
    required = gates.required_identities(request)
    context = bundle_context(request, gates, chosen, selected, required)
    decisions = bundle_decisions(candidates, gates, context)
    threshold = context.threshold
    cost = sum(c.cost for c in selected)
    value_total = sum(form_value(c.relevance, threshold) for c in selected)
    package = package_id(request, selected, required)
    return Result(
        status=Status.BUNDLE,
        strategy=strategy,
        selected=tuple(c.id for c in render_order(selected)),
        cost=cost,
        value=value_total,
        budget=request.task.budget,
        optimal=optimal,
        decisions=tuple(decisions),
        trace_id=trace_id(package, Status.BUNDLE, None, decisions),
        package_id=package,
        bound=value_total if optimal else bound,
        timings=timings,
    )


def _no_bundle_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    status: Status,
    refusal: Refusal | None,
    bound: int | None,
    timings: tuple[tuple[str, float], ...],
) -> Result:
    reason = Reason.REFUSED if status is Status.REFUSED else Reason.UNDECIDED
    detail = (
        f"no bundle: the request was refused ({refusal.code.value})"
        if refusal is not None
        else "no bundle: the time limit was reached before a legal bundle was found"
    )
    rejected, notes = gates.rejected, gates.notes
    refused = Verdict.REJECTED
    # Built column by column, in C wherever it can be: every form is rejected with
    # ``reason`` and the detail of its note, except the forms the gates rejected. At 100k
    # forms a loop building each decision in Python was half of a result with no bundle.
    ids, identities = gates.columns(request)
    # each form's note, None for a form with none (one the gates rejected)
    noted = list(map(notes.get, ids))
    # every eligible form shares one of a few details: built once per distinct note
    detail_with: dict[str | None, str] = {None: detail}
    detail_with.update((n, _with_note(detail, n)) for n in set(noted) if n is not None)
    details = list(map(detail_with.__getitem__, noted))
    reasons: list[Reason] = [reason] * len(ids)
    ends = [_ROW_ENDS[refused, reason]] * len(ids)
    if rejected:
        # the rejected forms are among those with no note: only those are looked up in
        # ``rejected`` (one lookup per form was already spent on the notes)
        gated = [i for i, note in enumerate(noted) if note is None and ids[i] in rejected]
        if len(gated) != len(rejected):
            # a rejected form with a note as well, or a rejected id that no candidate
            # has (reports apply_gates never makes)
            gated = [i for i, cid in enumerate(ids) if cid in rejected]
        for i in gated:
            gate, details[i] = rejected[ids[i]]
            reasons[i], ends[i] = gate, _ROW_ENDS[refused, gate]
    columns = zip(ids, identities, repeat(refused), reasons, details)
    # Decision(*row) without a Python call per row: a named tuple's __new__ is
    # tuple.__new__ of its fields
    decisions: tuple[Decision, ...] = tuple(map(tuple.__new__, repeat(Decision), columns))
    return Result(
        status=status,
        strategy=strategy,
        selected=(),
        cost=0,
        value=0,
        budget=request.task.budget,
        optimal=False,
        decisions=decisions,
        trace_id=_trace_of_rows(None, status, refusal, ids, ends),
        package_id=None,
        bound=bound,
        refusal=refusal,
        timings=timings,
    )


def refused_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    refusal: Refusal,
    timings: tuple[tuple[str, float], ...] = (),
) -> Result:
    return _no_bundle_result(request, gates, strategy, Status.REFUSED, refusal, None, timings)


def undecided_result(
    request: Request,
    gates: GateReport,
    strategy: str,
    bound: int | None = None,
    timings: tuple[tuple[str, float], ...] = (),
) -> Result:
    return _no_bundle_result(request, gates, strategy, Status.UNDECIDED, None, bound, timings)


# Widths in the text table: ids wider than this are cut (the JSON output has them
# whole), so that one long id cannot pad every row of the table.
ID_COLUMN = 48
_DETAIL_CHARACTERS = 240


def render_text(result: Result) -> str:
    """A readable table: admitted forms, then rejected ones, then the budget line.

    Safe for a terminal: every control or formatting character of an id, a detail or
    a message is shown escaped (``\\x1b``, ``\\u202e``), so no escape sequence, line
    break or bidirectional override passes through; ids longer than ``ID_COLUMN`` and
    details longer than a few lines' worth are cut, marked with ``…``.
    """
    lines = [f"{result.status.value.upper()} ({_safe(result.strategy, 40)})"]
    if result.refusal is not None:
        refusal = result.refusal
        lines.append(f"refusal: {refusal.code.value}: {_safe(refusal.message, _DETAIL_CHARACTERS)}")
    ids = {d.id: _safe(d.id, ID_COLUMN) for d in result.decisions}
    width = max([len(shown) for shown in ids.values()] + [4])
    for verdict in (Verdict.ADMITTED, Verdict.REJECTED):
        rows = [d for d in result.decisions if d.verdict is verdict]
        if verdict is Verdict.ADMITTED:
            order = {form: i for i, form in enumerate(result.selected)}
            rows.sort(key=lambda d: order.get(d.id, len(order)))
        lines.append(f"\n{verdict.value} ({len(rows)}):")
        for d in rows:
            detail = _safe(d.detail, _DETAIL_CHARACTERS)
            lines.append(f"  {ids[d.id]:<{width}}  {d.reason.value:<22}  {detail}")
    if result.status is Status.BUNDLE:
        proof = "proven optimal" if result.optimal else _unproven(result)
        lines.append(
            f"\nbudget {result.budget}: cost {result.cost}, slack {result.slack},"
            f" value {result.value} ({proof})"
        )
        lines.append(f"package {result.package_id}")
    else:
        lines.append(f"\nbudget {result.budget}")
    lines.append(f"trace   {result.trace_id}")
    return "\n".join(lines) + "\n"


def _safe(text: str, limit: int) -> str:
    """``text`` on one line, unprintable characters escaped, at most ``limit`` long."""
    if not text.isprintable():
        # isprintable() is false for controls, format characters (bidirectional
        # overrides, zero widths), line and paragraph separators and lone surrogates
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _unproven(result: Result) -> str:
    if result.bound is None:
        return "not proven optimal, no bound"
    return f"not proven optimal: bound {result.bound}, gap {result.gap:.2%}"
