"""Gates kept between calls: a session's gate report, judged again only where a change reaches.

Input: the previous ``GateState`` (or None: nothing judged yet), the request as it is
now with its indexes (candidate by id, candidate ids by identity), the candidates a
change took away (removed ones, and the old version of each updated one) and the ones
it brought (added ones, and the new version of each updated one).
Output: a ``GateState`` whose ``report`` is exactly ``apply_gates(request)``'s, with
what the next change needs: the per-form verdicts, the derived fixpoint's counts and
reverse indexes, and ``changed``, the ids whose entry in the report differs from the
previous one.

Why each reuse is exact:

* A per-form verdict (seal, scope, freshness, authority, no-content) reads the
  candidate and, of the rest of the request, only the task's seal, scope and
  operation, the current version of the candidate's own source and the standing of
  its own channel. So a candidate is judged again when it is new or changed, when
  the task's scope changes (every detail names it), when the seal changes by a name
  that is its id, identity or an ancestor, when the operation changes and it has a
  source, when its source's version changes, or when its channel's standing changes
  and it is an instruction.
* The derived gates (dependency-unavailable, group-ineligible) are the greatest
  fixpoint of "a form survives when every identity it needs and every member of its
  identity's groups has a surviving form". A form that lost it before can only win
  it back through an identity that gained a form or a group whose members changed:
  a breadth-first walk back from those (over dead forms only) finds every form that
  may revive. Starting from the survivors, the revived and the new forms, the
  removal worklist of ``apply_gates`` then runs from the identities that may have
  lost their last form (those of the forms taken away, and those that the new,
  revived or regrouped forms need or are grouped with): it reaches the same
  fixpoint, since it starts from a superset of it and removes only what must go.
* A derived reason names the first unavailable dependency, whether anything offers
  it, and the first stranding member of a group: it is worded again for every dead
  form (few), from the final fixpoint, as ``apply_gates`` does.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..model.types import Candidate, Operation, Reason, Request, Role
from .gates import (
    GateContext,
    GateReport,
    derived_gate,
    form_gate,
    form_note,
    named_groups,
    stranding_members,
)

__all__ = ["GateState", "regate"]

_EMPTY: frozenset[str] = frozenset()
K = TypeVar("K", str, str | None)


@dataclass(frozen=True, slots=True)
class GateState:
    """The gates of one request, kept for the next change. Never changed once built:
    ``regate`` copies what it changes."""

    report: GateReport
    context: GateContext
    scope: str | None
    operation: Operation
    # per-form gates: the failure of each candidate failing one, the note of each passing
    failed: dict[str, tuple[Reason, str]]
    passed: dict[str, str]
    # passing forms the derived gates removed, and surviving forms per identity (> 0)
    dead: frozenset[str]
    alive: dict[str, int]
    # identity -> passing forms that need it (their own identity left out)
    dependents: dict[str, frozenset[str]]
    # group -> identity -> how many candidates put that identity in the group
    members: dict[str, dict[str, int]]
    # identity -> its groups, sorted (as ``apply_gates`` reads them)
    identity_groups: dict[str, tuple[str, ...]]
    # who reads what: ancestor or source name, or instruction channel -> candidate ids
    by_lineage: dict[str, frozenset[str]]
    by_source: dict[str, frozenset[str]]
    by_channel: dict[str | None, frozenset[str]]
    # ids whose entry in the report differs from the previous state's (all, at first)
    changed: frozenset[str] = field(default=_EMPTY)


def regate(
    previous: GateState | None,
    request: Request,
    by_id: Mapping[str, Candidate],
    forms_of: Mapping[str, frozenset[str]],
    gone: Iterable[Candidate],
    new: Iterable[Candidate],
    *,
    require_content: bool = False,
) -> GateState:
    """The gates of ``request`` after a change; ``previous`` is left as it was.

    ``by_id`` and ``forms_of`` index ``request`` (every candidate, by id and by
    identity). Without ``previous``, every candidate must be in ``new``."""
    return _Regate(previous, request, by_id, forms_of, require_content).run(list(gone), list(new))


class _Index(Generic[K]):
    """A name -> ids table copied from the previous state's, each entry copied the
    first time it changes (adding one id to a frozenset of k is O(k): done per change,
    building a session's first table would be quadratic in its largest entry)."""

    def __init__(self, previous: dict[K, frozenset[str]]) -> None:
        self.table: dict[K, frozenset[str] | set[str]] = dict(previous)
        self.owned: set[K] = set()

    def _own(self, key: K) -> set[str]:
        entry = self.table.get(key, _EMPTY)
        if key not in self.owned:
            self.owned.add(key)
            entry = self.table[key] = set(entry)
        assert isinstance(entry, set)
        return entry

    def add(self, key: K, candidate_id: str) -> None:
        self._own(key).add(candidate_id)

    def discard(self, key: K, candidate_id: str) -> None:
        if key in self.table:
            self._own(key).discard(candidate_id)

    def get(self, key: K) -> Collection[str]:
        return self.table.get(key, _EMPTY)

    def frozen(self) -> dict[K, frozenset[str]]:
        for key in self.owned:
            entry = self.table[key]
            if entry:
                self.table[key] = frozenset(entry)
            else:
                del self.table[key]
        return self.table  # type: ignore[return-value]


class _Regate:
    """One change applied to copies of the previous state's tables."""

    def __init__(
        self,
        previous: GateState | None,
        request: Request,
        by_id: Mapping[str, Candidate],
        forms_of: Mapping[str, frozenset[str]],
        require_content: bool,
    ) -> None:
        self.previous = previous
        self.request = request
        self.by_id = by_id
        self.forms_of = forms_of
        self.context = GateContext.of(request, require_content=require_content)
        if previous is None:
            previous = _empty(self.context, request)
        self.failed = dict(previous.failed)
        self.passed = dict(previous.passed)
        self.dead = set(previous.dead)
        self.alive = dict(previous.alive)
        self.dependents = _Index(previous.dependents)
        self.members = dict(previous.members)
        self.identity_groups = dict(previous.identity_groups)
        self.by_lineage = _Index(previous.by_lineage)
        self.by_source = _Index(previous.by_source)
        self.by_channel = _Index(previous.by_channel)
        self.old = previous
        # the groups whose set of identities the change altered (set by run)
        self.regrouped: set[str] = set()

    # -- the change ------------------------------------------------------------------

    def run(self, gone: list[Candidate], new: list[Candidate]) -> GateState:
        new_ids = {c.id for c in new}
        gone_ids = {c.id for c in gone}
        # judged again without having changed: taken away and brought back as they are
        again = [self.by_id[i] for i in self._rejudged(gone_ids) if i not in new_ids]
        regrouped = self.regrouped = self._regroup(gone, new)
        for candidate in gone:
            self._unindex(candidate)
        for candidate in (*gone, *again):
            self._forget(candidate)
        for candidate in new:
            self._index(candidate)
        fresh = [c for c in (*again, *new) if self._judge(c)]
        # the derived fixpoint, from what may have gained and what may have lost
        gained = {c.identity for c in fresh}
        for group in regrouped:
            gained.update(self.members.get(group, ()))
            gained.update(self.old.members.get(group, ()))
        revived = self._revive(gained)
        checked = [*fresh, *revived]
        suspects = {c.identity for c in (*gone, *again)}
        groups = set(regrouped)
        for candidate in checked:
            suspects.update(self._needs(candidate))
            groups.update(self.identity_groups.get(candidate.identity, ()))
        for group in groups:
            suspects.update(self.members.get(group, ()))
        killed = self._remove_stranded(suspects)
        touched = gone_ids | new_ids | {c.id for c in again} | {c.id for c in revived} | killed
        return self._state(touched)

    def _rejudged(self, gone_ids: set[str]) -> set[str]:
        """Ids of present candidates whose per-form verdict reads something that changed."""
        old, context, task = self.old, self.context, self.request.task
        if self.previous is None:
            return set()
        if task.scope != old.scope or context.require_content != old.context.require_content:
            return set(self.by_id)
        out: set[str] = set()
        for name in context.seal ^ old.context.seal:
            if name in self.by_id:
                out.add(name)
            out.update(self.forms_of.get(name, ()))
            out.update(self.by_lineage.get(name))
        if task.operation is not old.operation:
            for ids in self.by_source.table.values():
                out.update(ids)
        elif task.operation is Operation.CURRENT and context.sources != old.context.sources:
            before, after = old.context.sources, context.sources
            for source in before.keys() | after.keys():
                if before.get(source) != after.get(source):
                    out.update(self.by_source.get(source))
        if context.authority != old.context.authority:
            for channel in old.context.authority.keys() | context.authority.keys():
                if context.standing(channel) != old.context.standing(channel):
                    out.update(self.by_channel.get(channel))
        # an id taken away is either gone for good or judged as new
        return {i for i in out if i not in gone_ids and i in self.by_id}

    # -- indexes ---------------------------------------------------------------------

    def _regroup(self, gone: list[Candidate], new: list[Candidate]) -> set[str]:
        """Update group membership counts; the groups whose set of identities changed."""
        changed: set[str] = set()
        copied: set[str] = set()
        for candidates, step in ((gone, -1), (new, 1)):
            for candidate in candidates:
                for group in named_groups(candidate):
                    if group not in copied:
                        copied.add(group)
                        self.members[group] = dict(self.members.get(group, {}))
                    counts = self.members[group]
                    left = counts.get(candidate.identity, 0) + step
                    if left:
                        counts[candidate.identity] = left
                    else:
                        del counts[candidate.identity]
                    if left == 0 or (step == 1 and left == 1):
                        changed.add(group)
        touched: dict[str, set[str]] = {}
        for group in changed:
            if not self.members[group]:
                del self.members[group]
            for member in {*self.members.get(group, ()), *self.old.members.get(group, ())}:
                touched.setdefault(member, set()).add(group)
        for identity, groups in touched.items():
            kept = {g for g in self.identity_groups.get(identity, ()) if g not in groups}
            kept.update(g for g in groups if identity in self.members.get(g, ()))
            if kept:
                self.identity_groups[identity] = tuple(sorted(kept))
            else:
                self.identity_groups.pop(identity, None)
        return changed

    def _index(self, candidate: Candidate) -> None:
        for ancestor in candidate.lineage:
            self.by_lineage.add(ancestor, candidate.id)
        if candidate.source is not None:
            self.by_source.add(candidate.source, candidate.id)
        if candidate.role is Role.INSTRUCTION:
            self.by_channel.add(candidate.channel, candidate.id)

    def _unindex(self, candidate: Candidate) -> None:
        for ancestor in candidate.lineage:
            self.by_lineage.discard(ancestor, candidate.id)
        if candidate.source is not None:
            self.by_source.discard(candidate.source, candidate.id)
        if candidate.role is Role.INSTRUCTION:
            self.by_channel.discard(candidate.channel, candidate.id)

    def _needs(self, candidate: Candidate) -> list[str]:
        return [d for d in candidate.depends_on if d != candidate.identity]

    def _forget(self, candidate: Candidate) -> None:
        """Take a candidate's per-form verdict and its part in the fixpoint away."""
        self.failed.pop(candidate.id, None)
        if self.passed.pop(candidate.id, None) is None:
            return
        for need in self._needs(candidate):
            self.dependents.discard(need, candidate.id)
        if candidate.id in self.dead:
            self.dead.discard(candidate.id)
        else:
            self._count(candidate.identity, -1)

    def _judge(self, candidate: Candidate) -> bool:
        """Its per-form verdict; a passing form joins the survivors (for now)."""
        failure = form_gate(self.request, candidate, self.context)
        if failure is not None:
            self.failed[candidate.id] = failure
            return False
        self.passed[candidate.id] = form_note(self.request, candidate)
        for need in self._needs(candidate):
            self.dependents.add(need, candidate.id)
        self._count(candidate.identity, 1)
        return True

    def _count(self, identity: str, step: int) -> int:
        left = self.alive.get(identity, 0) + step
        if left:
            self.alive[identity] = left
        else:
            self.alive.pop(identity, None)
        return left

    # -- the derived fixpoint ----------------------------------------------------------

    def _group_forms(self, identity: str, expanded: set[str]) -> list[str]:
        """Passing forms of every member of each group of ``identity`` not yet expanded
        (its groups before the change as well: a group it left may free them)."""
        out: list[str] = []
        groups = {
            *self.identity_groups.get(identity, ()),
            *self.old.identity_groups.get(identity, ()),
        }
        for group in groups:
            if group in expanded:
                continue
            expanded.add(group)
            members = {*self.members.get(group, ()), *self.old.members.get(group, ())}
            for member in members:
                out.extend(self.forms_of.get(member, ()))
        return out

    def _revive(self, gained: set[str]) -> list[Candidate]:
        """Dead forms that may survive again: reached backwards from ``gained`` through
        dead forms only (their own identity, their dependents, their group-mates)."""
        if not self.dead:
            return []
        revived: list[Candidate] = []
        queue = list(gained)
        seen = set(queue)
        expanded: set[str] = set()
        while queue:
            identity = queue.pop()
            reached = [*self.forms_of.get(identity, ()), *self.dependents.get(identity)]
            reached += self._group_forms(identity, expanded)
            for form in reached:
                if form not in self.dead:
                    continue
                self.dead.discard(form)
                candidate = self.by_id[form]
                revived.append(candidate)
                self._count(candidate.identity, 1)
                if candidate.identity not in seen:
                    seen.add(candidate.identity)
                    queue.append(candidate.identity)
        return revived

    def _remove_stranded(self, suspects: set[str]) -> set[str]:
        """``apply_gates``'s removal worklist, from the identities that may be lost."""
        lost = [i for i in suspects if i not in self.alive]
        done = set(lost)
        collapsed: set[str] = set()
        killed: set[str] = set()

        def kill(form: str) -> None:
            if form in self.dead or form not in self.passed:
                return
            self.dead.add(form)
            killed.add(form)
            identity = self.by_id[form].identity
            if self._count(identity, -1) == 0 and identity not in done:
                done.add(identity)
                lost.append(identity)

        while lost:
            identity = lost.pop()
            for form in self.dependents.get(identity):
                kill(form)
            for group in self.identity_groups.get(identity, ()):
                if group in collapsed:
                    continue
                collapsed.add(group)
                for member in self.members[group]:
                    for form in self.forms_of.get(member, ()):
                        kill(form)
        return killed

    # -- the report --------------------------------------------------------------------

    def _state(self, touched: set[str]) -> GateState:
        old = self.old.report
        rejected = dict(old.rejected)
        notes = dict(old.notes)
        for form in touched:
            rejected.pop(form, None)
            notes.pop(form, None)
            if form in self.failed:
                rejected[form] = self.failed[form]
            elif form in self.passed and form not in self.dead:
                notes[form] = self.passed[form]
        groups = dict(old.groups)
        # only the groups _regroup found changed (all of them on a first gating, where
        # every form is new; a group whose identities left and came back in one change is
        # written again with the same members)
        for group in self.regrouped:
            members = self.members.get(group)
            if members:
                groups[group] = frozenset(members)
            else:
                groups.pop(group, None)
        # every dead form's reason, worded from the final fixpoint
        dead = sorted(self.dead)
        dead_groups = {
            g for f in dead for g in self.identity_groups.get(self.by_id[f].identity, ())
        }
        stranding = stranding_members({g: groups[g] for g in dead_groups}, self.alive)
        changed = set(touched)
        for form in dead:
            reason = derived_gate(
                self.by_id[form], self.alive, self.forms_of, stranding, self.identity_groups
            )
            if old.rejected.get(form) != reason:
                changed.add(form)
            rejected[form] = reason
        changed = {
            f
            for f in changed
            if rejected.get(f) != old.rejected.get(f) or notes.get(f) != old.notes.get(f)
        }
        return GateState(
            report=GateReport(rejected=rejected, notes=notes, groups=groups),
            context=self.context,
            scope=self.request.task.scope,
            operation=self.request.task.operation,
            failed=self.failed,
            passed=self.passed,
            dead=frozenset(self.dead),
            alive=self.alive,
            dependents=self.dependents.frozen(),
            members=self.members,
            identity_groups=self.identity_groups,
            by_lineage=self.by_lineage.frozen(),
            by_source=self.by_source.frozen(),
            by_channel=self.by_channel.frozen(),
            changed=frozenset(changed),
        )


def _empty(context: GateContext, request: Request) -> GateState:
    return GateState(
        report=GateReport(rejected={}, notes={}, groups={}),
        context=context,
        scope=request.task.scope,
        operation=request.task.operation,
        failed={},
        passed={},
        dead=frozenset(),
        alive={},
        dependents={},
        members={},
        identity_groups={},
        by_lineage={},
        by_source={},
        by_channel={},
    )
