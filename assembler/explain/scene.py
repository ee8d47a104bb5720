"""The scene: the facts an inspector page shows about one compilation.

Input: a validated ``Request`` and the ``Result`` that answers it.
Output: a ``Scene``: the scenario and boundary lines, the capacity (budget, use by
category, slack; or, for a refusal, the mandatory closure over the budget by its
excess), the category table by role and channel, the admitted items, the rejected
items grouped by reason, the rendered bytes when the result carries a rendering, the
lineage and seals involved, and what the compilation does not establish.

Everything is read from the request and the result; nothing is estimated. Where the
request says nothing (the model's context window, an output allowance, the unit of
its costs) the scene says it is not stated.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from ..model.objective import form_value
from ..model.types import Candidate, Reason, RefusalCode, Request, Result, Status, Verdict
from .figures import COST_UNIT, VALUE_UNIT

__all__ = [
    "NOT_ESTABLISHED",
    "Capacity",
    "Category",
    "Item",
    "Lineage",
    "Rendered",
    "Scene",
    "Section",
    "Segment",
    "SegmentKind",
    "build_scene",
]

NOT_ESTABLISHED = (
    "Selected is not rendered, and rendered is not received: this compilation decides"
    " which material goes into the call. It does not establish that the material was"
    " rendered as listed, that the model received it, or that the model used it."
)

# rejected sections, in the order a reader meets the reasons (gates first)
_SECTIONS: dict[Reason, tuple[str, str]] = {
    Reason.SEALED: ("Sealed", "the task seals its id, its identity or an ancestor in its lineage"),
    Reason.SCOPE: ("Out of scope", "another project's material, with no transfer record"),
    Reason.SCOPE_UNKNOWN: ("Scope unknown", "deferred, never assumed to be global"),
    Reason.STALE: ("Stale", "not the current version of its source"),
    Reason.FRESHNESS_UNKNOWN: (
        "Freshness unknown",
        "the request gives no current version of its source",
    ),
    Reason.AUTHORITY: (
        "No authority",
        "an instruction from a channel without instruction standing",
    ),
    Reason.NO_CONTENT: ("No content", "a rendering was asked for and it has nothing to render"),
    Reason.DEPENDENCY_UNAVAILABLE: (
        "Dependency unavailable",
        "it needs an identity that has no eligible form",
    ),
    Reason.GROUP_INELIGIBLE: (
        "Group ineligible",
        "a partner it is coupled with has no eligible form",
    ),
    Reason.ALTERNATIVE: ("Another form admitted", "at most one form per identity"),
    Reason.NOT_CHOSEN: (
        "Eligible, left out",
        "the optimum at this budget does not take it (see the counterfactuals)",
    ),
    Reason.REFUSED: ("Eligible, no bundle", "the request was refused"),
    Reason.UNDECIDED: ("Eligible, no bundle", "the time limit was reached before a bundle"),
}


class SegmentKind(StrEnum):
    CATEGORY = "category"
    SLACK = "slack"
    OVERRUN = "overrun"  # a baseline's bundle over its budget
    UNPRICED = "unpriced"  # nothing was priced against the budget


@dataclass(frozen=True, slots=True)
class Segment:
    kind: SegmentKind
    label: str
    cost: int
    # the category's position in the category table (its colour); -1 otherwise
    index: int = -1


@dataclass(frozen=True, slots=True)
class Capacity:
    """The capacity bar. ``scale`` is what the full width stands for (cost units)."""

    budget: int
    used: int | None
    slack: int | None
    mandatory: int | None
    excess: int | None
    segments: tuple[Segment, ...]
    scale: int
    caption: str


@dataclass(frozen=True, slots=True)
class Category:
    """One role and channel: ``counted`` forms costing ``cost`` are in the bundle (or,
    for a refusal, in the mandatory closure: ``Scene.counted_as`` says which)."""

    role: str
    channel: str
    counted: int
    cost: int
    # share of the budget (None for a budget of 0)
    share: float | None
    offered: int
    rejected: int

    @property
    def label(self) -> str:
        return f"{self.role} / {self.channel}"


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    identity: str
    form: str
    role: str
    channel: str
    scope: str
    relevance: float
    value: int
    cost: int
    reason: Reason
    detail: str
    labels: tuple[str, ...]
    content_chars: int | None


@dataclass(frozen=True, slots=True)
class Section:
    reason: Reason
    title: str
    why: str
    items: tuple[Item, ...]


@dataclass(frozen=True, slots=True)
class Lineage:
    # seal entry -> the forms it gates, each with what matched (id, identity, lineage)
    seals: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    # forms that name ancestors: (form, ancestors, verdict)
    derived: tuple[tuple[str, tuple[str, ...], str], ...]
    # forms with a transfer record: (form, from, scope, verdict)
    transfers: tuple[tuple[str, str, str, str], ...]
    # source -> (current version or None, ((form, version or None, verdict), ...))
    sources: tuple[tuple[str, str | None, tuple[tuple[str, str | None, str], ...]], ...]


@dataclass(frozen=True, slots=True)
class Rendered:
    """What the result's rendering says about its bytes (sizes in UTF-8 bytes)."""

    format: str
    size: int
    sha256: str
    costs: str
    counter: str | None
    # (form id, kind, byte offset, byte length, tokens) in layout order
    items: tuple[tuple[str, str, int, int, int], ...]


@dataclass(frozen=True, slots=True)
class Scene:
    task: str
    status: Status
    strategy: str
    optimal: bool
    value: int
    bound: int | None
    scenario: str
    boundary: str
    capacity: Capacity
    categories: tuple[Category, ...]
    # what the categories' counted forms are: "admitted", "in the mandatory closure"
    counted_as: str
    admitted: tuple[Item, ...]
    rejected: tuple[Section, ...]
    lineage: Lineage
    refusal_code: RefusalCode | None
    refusal_message: str
    conflict: tuple[str, ...]
    package_id: str | None
    trace_id: str
    rendered: Rendered | None = None
    not_established: str = NOT_ESTABLISHED


def _channel(candidate: Candidate) -> str:
    return candidate.channel if candidate.channel is not None else "no channel"


def _category_key(candidate: Candidate) -> tuple[str, str]:
    return candidate.role.value, _channel(candidate)


def build_scene(request: Request, result: Result) -> Scene:
    by_id = {c.id: c for c in request.candidates}
    threshold = request.task.min_relevance
    decisions = {d.id: d for d in result.decisions}

    def item(form: str) -> Item:
        c = by_id[form]
        d = decisions[form]
        return Item(
            c.id,
            c.identity,
            c.form,
            c.role.value,
            _channel(c),
            c.scope,
            c.relevance,
            form_value(c.relevance, threshold),
            c.cost,
            d.reason,
            d.detail,
            c.labels,
            None if c.content is None else len(c.content),
        )

    categories = _categories(request, result)
    admitted = tuple(item(form) for form in result.selected)
    rejected = []
    # a reason this page does not know yet still gets its section, under its own name
    order = [*_SECTIONS, *(r for r in Reason if r not in _SECTIONS)]
    for reason in order:
        title, why = _SECTIONS.get(reason, (reason.value, "see the decision's detail"))
        members = [
            d.id for d in result.decisions if d.verdict is Verdict.REJECTED and d.reason is reason
        ]
        if members:
            rejected.append(Section(reason, title, why, tuple(item(f) for f in members)))
    refusal = result.refusal
    return Scene(
        task=request.task.id,
        status=result.status,
        strategy=result.strategy,
        optimal=result.optimal,
        value=result.value,
        bound=result.bound,
        scenario=_scenario(request),
        boundary=_boundary(request),
        capacity=_capacity(request, result, categories),
        categories=categories,
        counted_as="in the mandatory closure"
        if refusal is not None and refusal.forms
        else "admitted",
        admitted=admitted,
        rejected=tuple(rejected),
        lineage=_lineage(request, result),
        refusal_code=None if refusal is None else refusal.code,
        refusal_message="" if refusal is None else refusal.message,
        conflict=() if refusal is None else refusal.conflict,
        package_id=result.package_id,
        trace_id=result.trace_id,
        rendered=_rendered(result),
    )


def _rendered(result: Result) -> Rendered | None:
    rendering = result.rendering
    if rendering is None:
        return None
    manifest = rendering.manifest
    return Rendered(
        format=rendering.format.value,
        size=len(rendering.data),
        sha256=manifest.rendered_sha256,
        costs=manifest.costs,
        counter=manifest.counter_name,
        items=tuple((i.id, i.kind, i.offset, i.length, i.tokens) for i in manifest.items),
    )


def _scenario(request: Request) -> str:
    task = request.task
    identities = len({c.identity for c in request.candidates})
    where = f", scope {task.scope!r}" if task.scope is not None else ", no scope"
    required = len(request.required_identities)
    parts = [
        f"Task {task.id!r} ({task.operation.value}{where}):",
        f"{len(request.candidates)} candidates offering {identities} identities,",
        f"{required} required, budget {task.budget} {COST_UNIT}",
    ]
    if task.min_relevance:
        parts.append(f"(relevance below {task.min_relevance} is worth 0 {VALUE_UNIT})")
    return " ".join(parts) + "."


def _boundary(request: Request) -> str:
    task = request.task
    scope = f"scope {task.scope!r}" if task.scope is not None else "scope gate off (no task scope)"
    fresh = (
        "freshness off (historical)"
        if task.operation.value == "historical"
        else f"freshness against {len(request.sources)} source versions"
    )
    authority = "authority by policy table" if request.has_authority_table else "default authority"
    seals = {0: "no seals", 1: "1 seal entry"}.get(len(task.seal), f"{len(task.seal)} seal entries")
    return (
        f"Boundary: the budget of {task.budget} {COST_UNIT} (the request's unit, not named"
        " by it) is the only capacity stated; the model's context window and output"
        f" allowance are not stated (unknown). Gates: {scope}; {fresh}; {authority}; {seals}."
    )


def _categories(request: Request, result: Result) -> tuple[Category, ...]:
    chosen = set(result.selected)
    closure = set(result.refusal.forms) if result.refusal is not None else set()
    counts: dict[tuple[str, str], list[int]] = {}
    for c in request.candidates:
        row = counts.setdefault(_category_key(c), [0, 0, 0, 0])
        row[2] += 1
        if c.id in chosen or c.id in closure:
            row[0] += 1
            row[1] += c.cost
        else:
            row[3] += 1
    budget = request.task.budget
    rows = [
        Category(role, channel, n, cost, cost / budget if budget else None, offered, rejected)
        for (role, channel), (n, cost, offered, rejected) in counts.items()
    ]
    return tuple(sorted(rows, key=lambda r: (-r.cost, -r.offered, r.role, r.channel)))


def _capacity(request: Request, result: Result, categories: tuple[Category, ...]) -> Capacity:
    budget = request.task.budget
    index = {(c.role, c.channel): i for i, c in enumerate(categories)}
    by_id = {c.id: c for c in request.candidates}

    def by_category(forms: Iterable[str]) -> list[Segment]:
        costs: dict[int, int] = {}
        for form in forms:
            c = by_id[form]
            position = index[_category_key(c)]
            costs[position] = costs.get(position, 0) + c.cost
        return [
            Segment(SegmentKind.CATEGORY, categories[i].label, costs[i], i) for i in sorted(costs)
        ]

    if result.status is Status.BUNDLE:
        used = result.cost
        segments = by_category(result.selected)
        slack = budget - used
        if slack >= 0:
            segments.append(Segment(SegmentKind.SLACK, "slack", slack))
            caption = f"{used} of {budget} {COST_UNIT} used, {slack} slack"
        else:
            caption = f"{used} {COST_UNIT} used: over the budget of {budget} by {-slack}"
        return Capacity(
            budget, used, slack, None, None, tuple(segments), max(budget, used, 1), caption
        )
    refusal = result.refusal
    if refusal is not None and refusal.mandatory_cost is not None:
        mandatory = refusal.mandatory_cost
        excess = refusal.excess
        caption = (
            f"mandatory closure {mandatory} {COST_UNIT} > budget {budget}: excess {excess};"
            " no bundle, nothing used"
        )
        return Capacity(
            budget,
            None,
            None,
            mandatory,
            excess,
            tuple(by_category(refusal.forms)),
            max(mandatory, budget, 1),
            caption,
        )
    if refusal is not None and refusal.code is RefusalCode.MANDATORY_OVER_BUDGET:
        why = "the required material cannot fit (proven), but its cost was not priced in time"
    elif refusal is not None:
        why = f"{refusal.code.value}: a gate or a missing candidate, not the budget, refuses it"
    else:
        why = "the time limit was reached before a legal bundle was found"
    segment = Segment(SegmentKind.UNPRICED, "not priced", budget)
    return Capacity(
        budget,
        None,
        None,
        None,
        None,
        (segment,),
        max(budget, 1),
        f"budget {budget} {COST_UNIT}; no bundle: {why}",
    )


def _lineage(request: Request, result: Result) -> Lineage:
    decided = {d.id: d for d in result.decisions}

    def verdict(form: str) -> str:
        d = decided[form]
        return f"{d.verdict.value} ({d.reason.value})"

    seals = []
    for entry in request.task.seal:
        hits = []
        for c in request.candidates:
            if c.id == entry:
                hits.append((c.id, "id"))
            elif c.identity == entry:
                hits.append((c.id, "identity"))
            elif entry in c.lineage:
                hits.append((c.id, "lineage"))
        seals.append((entry, tuple(hits)))
    derived = tuple((c.id, c.lineage, verdict(c.id)) for c in request.candidates if c.lineage)
    transfers = tuple(
        (c.id, c.transfer_from, c.scope, verdict(c.id))
        for c in request.candidates
        if c.transfer_from is not None
    )
    current = dict(request.sources)
    bound: dict[str, list[tuple[str, str | None, str]]] = {}
    for c in request.candidates:
        if c.source is not None:
            bound.setdefault(c.source, []).append((c.id, c.version, verdict(c.id)))
    sources = tuple(
        (source, current.get(source), tuple(forms)) for source, forms in sorted(bound.items())
    )
    return Lineage(tuple(seals), derived, transfers, sources)
