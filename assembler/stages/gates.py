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
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from ..model.types import TOOL_CALL_GROUP_PREFIX, Candidate, Operation, Reason, Request, Role

__all__ = [
    "DEFAULT_INSTRUCTION_CHANNELS",
    "GateContext",
    "GateReport",
    "apply_gates",
    "derived_gate",
    "form_gate",
    "form_note",
    "groups_of",
    "named_groups",
    "stranding_members",
]

DEFAULT_INSTRUCTION_CHANNELS = frozenset({"system", "developer", "user"})


@dataclass(frozen=True, slots=True)
class GateReport:
    """Eligibility of every candidate of one request."""

    # candidate id -> (gate, detail) for rejected forms
    rejected: dict[str, tuple[Reason, str]]
    # eligible candidate id -> note for the decision detail ("" when nothing to say)
    notes: dict[str, str]
    # ``groups_of(request)``, read once here for every later stage
    groups: dict[str, frozenset[str]]

    @property
    def eligible(self) -> frozenset[str]:
        return frozenset(self.notes)

    def is_eligible(self, candidate_id: str) -> bool:
        return candidate_id in self.notes


@dataclass(frozen=True, slots=True)
class GateContext:
    """What every form's gate consults, built once per request rather than per form."""

    seal: frozenset[str]
    sources: dict[str, str]
    authority: dict[str, str]
    # when a rendering is asked for, a form with no content cannot be admitted
    require_content: bool = False

    @classmethod
    def of(cls, request: Request, *, require_content: bool = False) -> GateContext:
        return cls(
            frozenset(request.task.seal),
            dict(request.sources),
            dict(request.authority),
            require_content,
        )

    def standing(self, channel: str | None) -> str:
        """The authority standing of a channel: the request's table over the defaults."""
        if channel is not None and channel in self.authority:
            return self.authority[channel]
        return "instruction" if channel in DEFAULT_INSTRUCTION_CHANNELS else "data"


def standing(request: Request, channel: str | None) -> str:
    """The authority standing of a channel: the request's table over the defaults."""
    return GateContext.of(request).standing(channel)


def form_gate(
    request: Request, candidate: Candidate, context: GateContext | None = None
) -> tuple[Reason, str] | None:
    """The first per-form gate the candidate fails, or None when it passes all four."""
    task = request.task
    ctx = context or GateContext.of(request)
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


def groups_of(request: Request) -> dict[str, frozenset[str]]:
    """Group id -> identities in it. Membership belongs to the identity: any form names it.

    A tool call id couples its call and its result: both are in the group named
    ``tool_call:<id>``, so every strategy that keeps groups keeps them together."""
    members: dict[str, set[str]] = defaultdict(set)
    for candidate in request.candidates:
        for group in named_groups(candidate):
            members[group].add(candidate.identity)
    return {group: frozenset(identities) for group, identities in members.items()}


def named_groups(candidate: Candidate) -> tuple[str, ...]:
    """The groups a candidate puts its identity in (``groups_of``'s reading of one form)."""
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

    Linear in candidates + dependency edges + group memberships: a form that plainly
    passes every per-form gate (not sealed, at home, current or unbound, not an
    instruction, content when needed) is judged inline, and only the others go to
    ``form_gate`` (which also words the reason); the derived gates are a worklist
    that reads each group once and explains only the forms it removed."""
    rejected: dict[str, tuple[Reason, str]] = {}
    notes: dict[str, str] = {}
    context = GateContext.of(request, require_content=require_content)
    task = request.task
    home = None if task.scope is None else (task.scope, "shared")
    checks_source = task.operation is Operation.CURRENT
    seal = context.seal
    current = context.sources
    instruction = Role.INSTRUCTION
    for candidate in request.candidates:
        if (
            (
                not seal
                or (
                    candidate.id not in seal
                    and candidate.identity not in seal
                    and (not candidate.lineage or seal.isdisjoint(candidate.lineage))
                )
            )
            and (home is None or candidate.scope in home)
            and (
                candidate.source is None
                or not checks_source
                or (
                    candidate.version is not None
                    and current.get(candidate.source) == candidate.version
                )
            )
            and candidate.role is not instruction
            and (not require_content or candidate.content is not None)
        ):
            shared = home is not None and candidate.scope == "shared"
            notes[candidate.id] = "shared scope" if shared else ""
            continue
        failure = form_gate(request, candidate, context)
        if failure is not None:
            rejected[candidate.id] = failure
            continue
        notes[candidate.id] = form_note(request, candidate)

    groups = groups_of(request)
    identity_groups: dict[str, list[str]] = defaultdict(list)
    for group, identities in sorted(groups.items()):
        for identity in identities:
            identity_groups[identity].append(group)
    removed, available = _derived_removals(request, notes, groups, identity_groups)
    if removed:
        offered = {candidate.identity for candidate in request.candidates}
        stranding = stranding_members(groups, available)
        # Reasons come from the final fixpoint, so they do not depend on visiting order.
        for candidate in removed:
            del notes[candidate.id]
            rejected[candidate.id] = derived_gate(
                candidate, available, offered, stranding, identity_groups
            )
    return GateReport(rejected=rejected, notes=notes, groups=groups)


def _derived_removals(
    request: Request,
    notes: dict[str, str],
    groups: dict[str, frozenset[str]],
    identity_groups: dict[str, list[str]],
) -> tuple[list[Candidate], set[str]]:
    """The forms passing the per-form gates that the dependencies and groups remove (in
    canonical order), and the identities left with an eligible form.

    A worklist over identities that lose their last eligible form, each group
    collapsing once: linear in the size of the request, where re-scanning every form
    after each loss would be quadratic. The counting is done by ``Counter`` and the
    dependents are gathered only from forms that have dependencies: at 100k forms this
    stage was the gates' largest part.
    """
    candidates = request.candidates
    passing = [c for c in candidates if c.id in notes]
    forms_left = Counter(c.identity for c in passing)
    dependents: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in passing:
        if candidate.depends_on:
            for dependency in candidate.depends_on:
                if dependency != candidate.identity:
                    dependents[dependency].append(candidate)
    offered = {c.identity for c in candidates}
    lost = [i for i in offered.union(dependents) if i not in forms_left]
    if not lost:
        return [], set(forms_left)
    forms_of: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in passing:
        if candidate.identity in identity_groups:
            forms_of[candidate.identity].append(candidate)
    gone: set[str] = set(lost)
    dead: dict[str, Candidate] = {}
    collapsed: set[str] = set()

    def drop(candidate: Candidate) -> None:
        if candidate.id in dead:
            return
        dead[candidate.id] = candidate
        forms_left[candidate.identity] -= 1
        if forms_left[candidate.identity] == 0 and candidate.identity not in gone:
            gone.add(candidate.identity)
            lost.append(candidate.identity)

    while lost:
        identity = lost.pop()
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
    return removed, {i for i, left in forms_left.items() if left > 0}


def stranding_members(
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


def derived_gate(
    candidate: Candidate,
    available: Container[str],
    offered: Container[str],
    stranding: Mapping[str, list[str]],
    identity_groups: Mapping[str, Sequence[str]],
) -> tuple[Reason, str]:
    for dependency in candidate.depends_on:
        if dependency == candidate.identity or dependency in available:
            continue
        if dependency not in offered:
            return (
                Reason.DEPENDENCY_UNAVAILABLE,
                f"it depends on {dependency!r}, which no candidate offers",
            )
        return (
            Reason.DEPENDENCY_UNAVAILABLE,
            f"it depends on {dependency!r}, which has no eligible form",
        )
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
