"""Hard gates: which forms may be admitted at all.

Input: a validated ``Request``.
Output: a ``GateReport``: for every candidate either eligible (with a note, for
example that it was transferred from another project) or rejected with the first
gate it fails and a sentence saying why.

Gates run before, and independently of, any scoring: a high relevance never buys
legality. The per-form gates are checked in the order of ``models/README.md``;
the derived gates (a dependency or a coupled identity with no eligible form) are
computed as a fixpoint, because rejecting one form can strand another.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..kernels import kernel
from ..model.types import (
    TOOL_CALL_GROUP_PREFIX,
    Candidate,
    Operation,
    Reason,
    Request,
    Role,
    required_names,
)

__all__ = [
    "DEFAULT_INSTRUCTION_CHANNELS",
    "GateContext",
    "GateReport",
    "apply_gates",
    "form_gate",
    "form_note",
    "named_groups",
]

DEFAULT_INSTRUCTION_CHANNELS = frozenset({"system", "developer", "user"})


@dataclass(frozen=True, slots=True)
class GateReport:
    """Eligibility of every candidate of one request, and what the gates' one pass
    read on its way for the stages that would otherwise walk every form again: each
    candidate's id and identity (in the request's order), the number of eligible forms
    of every offered identity (0 for a name no form offers) and the required
    identities."""

    # candidate id -> (gate, detail) for rejected forms
    rejected: dict[str, tuple[Reason, str]]
    # eligible candidate id -> note for the decision detail ("" when nothing to say)
    notes: dict[str, str]
    # group id -> its identities (``named_groups`` of every form)
    groups: dict[str, frozenset[str]]
    ids: list[str] = field(compare=False, repr=False)
    identities: list[str] = field(compare=False, repr=False)
    eligible_forms: Counter[str] = field(compare=False, repr=False)
    required: tuple[str, ...] = field(compare=False, repr=False)
    # the request read (that very object: a report is never read for another)
    request: Request = field(compare=False, repr=False)

    def columns(self, request: Request) -> tuple[Sequence[str], Sequence[str]]:
        """Each candidate's id and identity, in the order of ``request`` (this report's)."""
        assert request is self.request, "a gate report read for another request"
        return self.ids, self.identities

    def required_identities(self, request: Request) -> tuple[str, ...]:
        """``request.required_identities`` (this report's request), as the gates read them."""
        assert request is self.request, "a gate report read for another request"
        return self.required

    def is_eligible(self, candidate_id: str) -> bool:
        return candidate_id in self.notes


@dataclass(frozen=True, slots=True)
class GateContext:
    """What every form's gate consults, built once per request rather than per form."""

    seal: frozenset[str]
    sources: dict[str, str]
    authority: dict[str, str]
    # when a rendering is asked for, a form with no content cannot be admitted
    require_content: bool

    def standing(self, channel: str | None) -> str:
        """The authority standing of a channel: the request's table over the defaults."""
        if channel is not None and channel in self.authority:
            return self.authority[channel]
        return "instruction" if channel in DEFAULT_INSTRUCTION_CHANNELS else "data"


def form_gate(
    request: Request, candidate: Candidate, ctx: GateContext
) -> tuple[Reason, str] | None:
    """The first per-form gate the candidate fails, or None when it passes them all."""
    task = request.task
    seal = ctx.seal
    if seal:
        if candidate.id in seal:
            return Reason.SEALED, f"its id {candidate.id!r} is sealed"
        if candidate.identity in seal:
            return Reason.SEALED, f"its identity {candidate.identity!r} is sealed"
        for ancestor in candidate.lineage:
            if ancestor in seal:
                return Reason.SEALED, f"it derives from sealed {ancestor!r}"
    if task.scope is not None and candidate.scope not in (task.scope, "shared"):
        if candidate.scope == "unknown":
            return Reason.SCOPE_UNKNOWN, "its scope is unknown (deferred, never assumed global)"
        if candidate.transfer_from is None:
            return (
                Reason.SCOPE,
                f"it belongs to {candidate.scope!r}, not {task.scope!r}, with no transfer record",
            )
    if task.operation is Operation.CURRENT and candidate.source is not None:
        current = ctx.sources.get(candidate.source)
        if current is None:
            return (
                Reason.FRESHNESS_UNKNOWN,
                f"the request gives no current version of source {candidate.source!r}",
            )
        if candidate.version != current:
            return (
                Reason.STALE,
                f"version {candidate.version!r} of {candidate.source!r} is not current"
                f" ({current!r})",
            )
    if candidate.role is Role.INSTRUCTION:
        channel_standing = ctx.standing(candidate.channel)
        if channel_standing != "instruction":
            channel = (
                "no channel" if candidate.channel is None else f"channel {candidate.channel!r}"
            )
            return (
                Reason.AUTHORITY,
                f"an instruction from {channel}, which has {channel_standing} standing",
            )
    if ctx.require_content and candidate.content is None:
        return Reason.NO_CONTENT, "a rendering was asked for and it has no content to render"
    return None


def _groups(candidates: Iterable[Candidate]) -> dict[str, frozenset[str]]:
    """Group id -> identities in it. Membership belongs to the identity: any form names it."""
    members: dict[str, set[str]] = defaultdict(set)
    for candidate in candidates:
        for group in named_groups(candidate):
            members[group].add(candidate.identity)
    return {group: frozenset(identities) for group, identities in members.items()}


def named_groups(candidate: Candidate) -> tuple[str, ...]:
    """The groups a candidate puts its identity in: its ``group``, and ``tool_call:<id>``
    for a tool call id, which couples a call and its result."""
    if candidate.group is None:
        if candidate.tool_call_id is None:
            return ()
        return (TOOL_CALL_GROUP_PREFIX + candidate.tool_call_id,)
    if candidate.tool_call_id is None:
        return (candidate.group,)
    return (candidate.group, TOOL_CALL_GROUP_PREFIX + candidate.tool_call_id)


def apply_gates(request: Request, *, require_content: bool = False) -> GateReport:
    """Run every gate over every candidate of ``request`` (``no-content`` only when
    ``require_content``: a rendering was asked for).

    Linear in candidates + dependency edges + group memberships: one pass over the
    forms picks out those that do not plainly pass every per-form gate at home, and only
    those go to ``form_gate`` (which words the reason) and ``form_note``; the derived
    gates are a worklist that reads each group once and explains only the forms it
    removed. The same pass gathers what the later stages read (ids, identities, counts),
    so none walks every form again in Python."""
    task = request.task
    sources, authority = dict(request.sources), dict(request.authority)
    context = GateContext(frozenset(task.seal), sources, authority, require_content)
    # the one pass over every candidate, in C (``gates_twin.first_pass``)
    ids, identities, flagged, picked, shared, linked = kernel(
        "assembler.stages.gates_twin"
    ).first_pass(
        request.candidates,
        context.seal,
        sources,
        task.scope,
        task.operation is Operation.CURRENT,
        require_content,
        Role.INSTRUCTION,
    )
    # a form not picked passes every per-form gate, with nothing to note but sharing
    notes = dict.fromkeys(ids, "")
    for cid in shared:
        notes[cid] = "shared scope"
    rejected: dict[str, tuple[Reason, str]] = {}
    failed: list[Candidate] = []
    for candidate in picked:
        failure = form_gate(request, candidate, context)
        if failure is None:
            note = form_note(request, candidate)
            if note:
                notes[candidate.id] = note
            continue
        rejected[candidate.id] = failure
        del notes[candidate.id]
        failed.append(candidate)

    groups = _groups(c for c in linked if c.group is not None or c.tool_call_id is not None)
    removed, forms_left, identity_groups = _derived_removals(
        request, identities, linked, notes, failed, groups
    )
    if removed:
        # every offered identity is counted, with 0 when it has no eligible form left
        offered = forms_left.keys()
        available = _Left(forms_left)
        stranding = _stranding_members(groups, available)
        # Reasons come from the final fixpoint, so they do not depend on visiting order.
        for candidate in removed:
            del notes[candidate.id]
            rejected[candidate.id] = _derived_gate(
                candidate, available, offered, stranding, identity_groups
            )
    required = required_names(task.required, flagged)
    return GateReport(rejected, notes, groups, ids, identities, forms_left, required, request)


@dataclass(frozen=True, slots=True)
class _Left:
    """The identities with an eligible form left, read from the counts (the reasons ask
    about a few of them: no set of every offered identity is built)."""

    counts: Counter[str]

    def __contains__(self, identity: object) -> bool:
        return isinstance(identity, str) and self.counts[identity] > 0


def _derived_removals(
    request: Request,
    identities: list[str],
    linked: list[Candidate],
    notes: dict[str, str],
    failed: list[Candidate],
    groups: dict[str, frozenset[str]],
) -> tuple[list[Candidate], Counter[str], dict[str, list[str]]]:
    """The forms passing the per-form gates (``notes``; ``failed`` are the others) that
    the dependencies and groups remove (in canonical order), for every offered
    identity (and no other) the number of its forms left eligible, and the groups of
    each grouped identity, by group name (made only when a form is removed: a list per
    identity is work, and memory for the collector, that most requests never read).
    ``identities`` is
    each candidate's identity (in order), ``linked`` the candidates that have
    dependencies or name a group. A worklist over the identities that lose their last
    eligible form, each group collapsing once: linear, where re-scanning is quadratic."""
    candidates = request.candidates
    forms_left = Counter(identities)
    # an identity offered only by failed forms has no eligible form from the start
    lost: set[str] = set()
    for candidate in failed:
        identity = candidate.identity
        forms_left[identity] -= 1
        if not forms_left[identity]:
            lost.add(identity)
    dependents: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in [c for c in linked if c.depends_on and c.id in notes]:
        for dependency in candidate.depends_on:
            if dependency != candidate.identity:
                dependents[dependency].append(candidate)
                # (reading a name no form offers does not add it: Counter gives 0)
                if not forms_left[dependency]:
                    lost.add(dependency)
    if not lost:
        return [], forms_left, {}
    identity_groups: dict[str, list[str]] = defaultdict(list)
    for group in sorted(groups):
        for identity in groups[group]:
            identity_groups[identity].append(group)
    forms_of: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in linked:
        if candidate.identity in identity_groups and candidate.id in notes:
            forms_of[candidate.identity].append(candidate)
    if any(len(forms_of[m]) != forms_left[m] for m in identity_groups):
        # a grouped identity has a passing form that names no group and needs nothing:
        # read every form's identity for them all
        forms_of.clear()
        for i in [i for i, identity in enumerate(identities) if identity in identity_groups]:
            candidate = candidates[i]
            if candidate.id in notes:
                forms_of[candidate.identity].append(candidate)
    worklist = list(lost)
    dead: dict[str, Candidate] = {}
    collapsed: set[str] = set()

    def drop(candidate: Candidate) -> None:
        if candidate.id in dead:
            return
        dead[candidate.id] = candidate
        forms_left[candidate.identity] -= 1
        if forms_left[candidate.identity] == 0 and candidate.identity not in lost:
            lost.add(candidate.identity)
            worklist.append(candidate.identity)

    while worklist:
        identity = worklist.pop()
        for dependent in dependents.get(identity, ()):
            drop(dependent)
        for group in identity_groups.get(identity, ()):
            if group in collapsed:
                continue
            collapsed.add(group)
            for member in groups[group]:
                for form in forms_of.get(member, ()):
                    drop(form)
    # candidates are in canonical order (by id), and so is this
    removed = [dead[i] for i in sorted(dead)]
    return removed, forms_left, identity_groups


def _stranding_members(
    groups: Mapping[str, frozenset[str]], available: Container[str]
) -> dict[str, list[str]]:
    """For each group, its first two members (by name) with no eligible form: enough to
    name, for any form, a member that stranded it other than its own identity."""
    out: dict[str, list[str]] = {}
    for group, members in groups.items():
        missing = [m for m in members if m not in available]
        if missing:
            out[group] = sorted(missing)[:2]
    return out


def _derived_gate(
    candidate: Candidate,
    available: Container[str],
    offered: Container[str],
    stranding: Mapping[str, list[str]],
    identity_groups: Mapping[str, Sequence[str]],
) -> tuple[Reason, str]:
    for dependency in candidate.depends_on:
        if dependency == candidate.identity or dependency in available:
            continue
        which = "no candidate offers" if dependency not in offered else "has no eligible form"
        return Reason.DEPENDENCY_UNAVAILABLE, f"it depends on {dependency!r}, which {which}"
    for group in identity_groups.get(candidate.identity, ()):
        # Name the member that stranded it, not the form's own identity.
        missing = stranding.get(group, [])
        others = [m for m in missing if m != candidate.identity]
        for member in others or missing:
            return (
                Reason.GROUP_INELIGIBLE,
                f"its group {group!r} includes {member!r}, which has no eligible form",
            )
    # Unreachable when the identity is unavailable; kept as the honest fallback.
    return Reason.GROUP_INELIGIBLE, "its identity lost every eligible form"


def form_note(request: Request, candidate: Candidate) -> str:
    task = request.task
    if (
        task.scope is not None
        and candidate.scope not in (task.scope, "shared", "unknown")
        and candidate.transfer_from is not None
    ):
        return f"transferred from {candidate.transfer_from!r} (scope {candidate.scope!r})"
    if task.scope is not None and candidate.scope == "shared":
        return "shared scope"
    return ""
