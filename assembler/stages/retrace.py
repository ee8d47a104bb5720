"""A bundle's trace kept between calls: decisions worded again only where a change reaches.

Input: the previous ``TraceState`` (or None), the request, its gates (``GateState``,
``regate.py``), the selection of eligible forms (at most one per identity: the exact
strategy's), the candidates a change took away and brought, and the ids by identity.
Output: the ``Result`` that ``bundle_result`` gives for the same selection, equal in
every field, and the ``TraceState`` for the next change.

Why it is exact: a candidate's decision reads the candidate, its gate entry, the
relevance threshold and, of the bundle, only facts about its own identity: whether it
is required, which form of it is admitted, which selected form (first in canonical
order) needs it, and its coupled groups when admitted. So the decisions worded again
are those of candidates the change brought or whose gate entry changed, and of every
form of an identity whose facts changed: its admitted form (a form entered or left the
selection), the first selected form needing it (recomputed for each identity that a
form entering or leaving needs), its groups (a group a changed candidate names gained
or lost members), or its being required. Everything else keeps its decision and its
piece of the canonical JSON that ``trace_id`` hashes; ``package_id``'s pieces (id,
cost and content hash of each selected form) are kept the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.encoder import encode_basestring as _string
from operator import attrgetter

from ..model.objective import form_value
from ..model.types import Candidate, Decision, Request, Result, Status
from .gates import named_groups
from .regate import GateState
from .trace import (
    BundleContext,
    _sha256,
    bundle_context,
    bundle_decisions,
    canonical_json,
    form_json,
    policy_json,
    render_order,
    selected_forms,
    task_json,
    trace_text,
)

__all__ = ["TraceState", "retrace"]

_BY_ID = attrgetter("id")


@dataclass(frozen=True, slots=True)
class TraceState:
    """The last bundle's trace, kept for the next change."""

    request: Request
    gates: GateState
    context: BundleContext
    admitted: dict[str, str]
    needed: dict[str, str]
    identity_groups: dict[str, list[str]]
    required: frozenset[str]
    # candidates marked required, by identity (the rest of the required set is the task's)
    flagged: dict[str, int]
    decisions: dict[str, Decision]
    # canonical JSON of [id, verdict, reason] per candidate, and of each selected form
    fragments: dict[str, str]
    forms: dict[str, str]


def retrace(
    previous: TraceState | None,
    request: Request,
    gates: GateState,
    strategy: str,
    selection: Iterable[str],
    *,
    optimal: bool,
    bound: int | None,
    by_id: Mapping[str, Candidate],
    forms_of: Mapping[str, frozenset[str]],
    gone: Iterable[Candidate] = (),
    new: Iterable[Candidate] = (),
) -> tuple[Result, TraceState]:
    """The bundle's result, and the trace state for the next change. ``gone`` and
    ``new`` are what the change since ``previous`` took away and brought."""
    chosen = frozenset(selection)
    gone, new = list(gone), list(new)
    flagged = _flagged(previous, request, gone, new)
    required = frozenset({*request.task.required, *flagged})
    if (
        previous is None
        or previous.context.threshold != request.task.min_relevance
        or not chosen.issubset(gates.report.notes)
    ):
        return _whole(request, gates, strategy, chosen, optimal, bound, flagged, required)
    return _Retrace(previous, request, gates, chosen, by_id, forms_of, gone, new).result(
        strategy, optimal, bound, flagged, required
    )


def _flagged(
    previous: TraceState | None, request: Request, gone: list[Candidate], new: list[Candidate]
) -> dict[str, int]:
    if previous is None:
        counts: dict[str, int] = {}
        for c in request.candidates:
            if c.required:
                counts[c.identity] = counts.get(c.identity, 0) + 1
        return counts
    counts = dict(previous.flagged)
    for candidates, step in ((gone, -1), (new, 1)):
        for c in candidates:
            if c.required:
                left = counts.get(c.identity, 0) + step
                if left:
                    counts[c.identity] = left
                else:
                    del counts[c.identity]
    return counts


def _decision_fragment(decision: Decision) -> str:
    # canonical_json([id, verdict, reason]) without an encoder per decision: the three
    # are strings, encoded as ensure_ascii=False does
    return f"[{_string(decision.id)},{_string(decision.verdict)},{_string(decision.reason)}]"


def _form_fragment(candidate: Candidate) -> str:
    return canonical_json(form_json(candidate))


def _whole(
    request: Request,
    gates: GateState,
    strategy: str,
    chosen: frozenset[str],
    optimal: bool,
    bound: int | None,
    flagged: dict[str, int],
    required: frozenset[str],
) -> tuple[Result, TraceState]:
    """Every decision worded afresh (the first bundle, or a new threshold)."""
    report = gates.report
    selected = selected_forms(request, chosen)
    context = bundle_context(request, report, chosen, selected, tuple(sorted(required)))
    decisions = {d.id: d for d in bundle_decisions(request.candidates, report, context)}
    fragments = {i: _decision_fragment(d) for i, d in decisions.items()}
    forms = {c.id: _form_fragment(c) for c in selected}
    result = _bundle(
        request, strategy, selected, forms, decisions, fragments, required, optimal, bound
    )
    state = TraceState(
        request=request,
        gates=gates,
        context=context,
        admitted=dict(context.admitted),
        needed=dict(context.needed),
        identity_groups={k: list(v) for k, v in context.identity_groups.items()},
        required=required,
        flagged=flagged,
        decisions=decisions,
        fragments=fragments,
        forms=forms,
    )
    return result, state


def _bundle(
    request: Request,
    strategy: str,
    selected: list[Candidate],
    forms: Mapping[str, str],
    decisions: Mapping[str, Decision],
    fragments: Mapping[str, str],
    required: frozenset[str],
    optimal: bool,
    bound: int | None,
) -> Result:
    """The result from the kept pieces: ``selected`` in canonical order, ``forms`` the
    package piece of each, ``decisions`` and ``fragments`` every candidate's decision and
    its trace piece."""
    # every candidate's piece, in canonical order: map() over the ids, the one pass
    # over the whole request left in a change (a generator costs twice as much)
    ids = list(map(_BY_ID, request.candidates))
    ordered = render_order(selected)
    package_body = (
        f'{{"forms":[{",".join(forms[c.id] for c in ordered)}],'
        f'"policy":{canonical_json(policy_json(request))},'
        f'"task":{canonical_json(task_json(request, tuple(sorted(required))))}}}'
    )
    package = _sha256(package_body)
    trace_body = trace_text(package, Status.BUNDLE, None, ",".join(map(fragments.__getitem__, ids)))
    threshold = request.task.min_relevance
    value = sum(form_value(c.relevance, threshold) for c in selected)
    return Result(
        status=Status.BUNDLE,
        strategy=strategy,
        selected=tuple(c.id for c in ordered),
        cost=sum(c.cost for c in selected),
        value=value,
        budget=request.task.budget,
        optimal=optimal,
        decisions=tuple(map(decisions.__getitem__, ids)),
        trace_id=_sha256(trace_body),
        package_id=package,
        bound=value if optimal else bound,
    )


class _Retrace:
    def __init__(
        self,
        previous: TraceState,
        request: Request,
        gates: GateState,
        chosen: frozenset[str],
        by_id: Mapping[str, Candidate],
        forms_of: Mapping[str, frozenset[str]],
        gone: list[Candidate],
        new: list[Candidate],
    ) -> None:
        self.previous = previous
        self.request = request
        self.gates = gates
        self.chosen = chosen
        self.by_id = by_id
        self.forms_of = forms_of
        self.gone = gone
        self.new = new
        self.gone_ids = {c.id for c in gone}
        self.new_ids = {c.id for c in new}

    def result(
        self,
        strategy: str,
        optimal: bool,
        bound: int | None,
        flagged: dict[str, int],
        required: frozenset[str],
    ) -> tuple[Result, TraceState]:
        previous, request, chosen, by_id = self.previous, self.request, self.chosen, self.by_id
        identities = set(required ^ previous.required)
        admitted, moved = self._admitted()
        if admitted is None:
            # two selected forms of one identity: not the exact strategy's selection
            return _whole(request, self.gates, strategy, chosen, optimal, bound, flagged, required)
        identities.update(moved)
        needed, needs_moved = self._needed(moved)
        identities.update(needs_moved)
        identity_groups, regrouped = self._groups(admitted, moved)
        identities.update(regrouped)
        report = self.gates.report
        context = BundleContext(
            chosen=chosen,
            admitted=admitted,
            needed=needed,
            identity_groups=identity_groups,
            required=required,
            threshold=request.task.min_relevance,
        )
        again = {i for i in self.new_ids | self.gates.changed if i in by_id}
        for identity in identities:
            again.update(self.forms_of.get(identity, ()))
        decisions = dict(previous.decisions)
        fragments = dict(previous.fragments)
        for form in self.gone_ids - self.new_ids:
            del decisions[form]
            del fragments[form]
        for decision in bundle_decisions((by_id[i] for i in again), report, context):
            old = previous.decisions.get(decision.id)
            if old is None or (old.verdict, old.reason) != (decision.verdict, decision.reason):
                fragments[decision.id] = _decision_fragment(decision)
            decisions[decision.id] = decision
        # canonical order is the order of ids
        selected = [by_id[i] for i in sorted(chosen)]
        forms = {
            c.id: previous.forms[c.id]
            if c.id in previous.forms and c.id not in self.new_ids
            else _form_fragment(c)
            for c in selected
        }
        result = _bundle(
            request, strategy, selected, forms, decisions, fragments, required, optimal, bound
        )
        state = TraceState(
            request=request,
            gates=self.gates,
            context=context,
            admitted=admitted,
            needed=needed,
            identity_groups=identity_groups,
            required=required,
            flagged=flagged,
            decisions=decisions,
            fragments=fragments,
            forms=forms,
        )
        return result, state

    def _admitted(self) -> tuple[dict[str, str] | None, set[str]]:
        """Each identity's admitted form, and the identities whose admitted form moved
        (None when the selection admits an identity twice)."""
        previous, chosen = self.previous, self.chosen
        old_chosen = previous.context.chosen
        assert isinstance(old_chosen, frozenset)
        old_version = {c.id: c for c in self.gone}
        left = [
            old_version.get(i) or self.by_id[i]
            for i in old_chosen
            if i not in chosen or i in self.gone_ids
        ]
        entered = [self.by_id[i] for i in chosen if i not in old_chosen or i in self.new_ids]
        admitted = dict(previous.admitted)
        moved: set[str] = set()
        for c in left:
            if admitted.get(c.identity) == c.id:
                del admitted[c.identity]
            moved.add(c.identity)
        for c in entered:
            if admitted.setdefault(c.identity, c.id) != c.id:
                return None, moved
            moved.add(c.identity)
        self.left, self.entered = left, entered
        return admitted, moved

    def _needed(self, moved: set[str]) -> tuple[dict[str, str], set[str]]:
        """The first selected form needing each identity, recomputed for the identities a
        form that entered or left the selection needs."""
        needed = dict(self.previous.needed)
        dependents = self.gates.dependents
        changed: set[str] = set()
        for c in (*self.left, *self.entered):
            for need in c.depends_on:
                if need == c.identity or need in changed:
                    continue
                changed.add(need)
                first = min((f for f in dependents.get(need, ()) if f in self.chosen), default=None)
                if first is None:
                    needed.pop(need, None)
                else:
                    needed[need] = first
        return needed, {i for i in changed if needed.get(i) != self.previous.needed.get(i)}

    def _groups(
        self, admitted: dict[str, str], moved: set[str]
    ) -> tuple[dict[str, list[str]], set[str]]:
        """Each admitted identity's coupled groups (of two or more identities), updated for
        the identities that moved and the members of groups that gained or lost one."""
        before, after = self.previous.gates.report.groups, self.gates.report.groups
        identities = set(moved)
        for c in (*self.gone, *self.new):
            for group in named_groups(c):
                if before.get(group) != after.get(group):
                    identities.update(before.get(group, ()))
                    identities.update(after.get(group, ()))
        identity_groups = dict(self.previous.identity_groups)
        changed: set[str] = set()
        for identity in identities:
            groups = None
            if identity in admitted:
                coupled = self.gates.identity_groups.get(identity, ())
                groups = [g for g in coupled if len(after[g]) >= 2] or None
            if groups != identity_groups.get(identity):
                changed.add(identity)
                if groups is None:
                    del identity_groups[identity]
                else:
                    identity_groups[identity] = groups
        return identity_groups, changed
