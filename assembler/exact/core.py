"""What a reduction leaves: the forms fixed in, and the core still to search.

Input: a ``Problem`` and a fixing state per form (open, out or in) from the presolve
and the reduced-cost fixings, with the bound and incumbent they came with.
Output: a ``Reduction``: the forms in every optimum, the core ``Problem`` over the
open forms (what fixed forms need becomes required there), the proven bound and a
legal incumbent; or ``Contradiction`` when the fixings leave no legal selection.

Propagation removes what the fixings make impossible: a second form of an admitted
identity, forms whose needed identity or group partner lost every form. It is a
worklist over identities that lose their last form, so each form is removed once,
each lost identity's dependents are read once and each group collapses once: linear
in forms + dependency edges + group memberships (re-scanning after every change was
quadratic on long chains).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .closure import Problem, index_by
from .reach import group_index

__all__ = ["FREE", "IN", "OUT", "Contradiction", "Reduction", "core_of"]

FREE, OUT, IN = -1, 0, 1


class Contradiction(Exception):
    """The fixings leave no legal selection (only possible when none exists)."""


@dataclass(frozen=True, slots=True)
class Reduction:
    chosen: tuple[int, ...]  # forms in every optimum (indices of the full problem)
    core: Problem  # what is left to search
    core_forms: tuple[int, ...]  # full-problem index of each core form
    bound: int | None  # proven upper bound on the value of the full problem
    incumbent: tuple[int, ...] | None  # a legal selection of the full problem
    stats: dict[str, int] = field(default_factory=dict)

    def lift(self, core_selection: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(sorted((*self.chosen, *(self.core_forms[f] for f in core_selection))))

    def compose(self, inner: Reduction) -> Reduction:
        """This reduction followed by ``inner``, a reduction of this one's core."""
        outer = self.core_forms
        return Reduction(
            chosen=self.lift(inner.chosen),
            core=inner.core,
            core_forms=tuple(outer[f] for f in inner.core_forms),
            bound=self.bound,
            incumbent=None if inner.incumbent is None else self.lift(inner.incumbent),
            stats={**self.stats, "core": inner.core.size},
        )


def core_of(
    problem: Problem,
    state: list[int],
    forms_of: tuple[tuple[int, ...], ...],
    bound: int | None,
    incumbent: tuple[int, ...] | None,
) -> Reduction:
    """Propagate ``state`` (changed in place) and build the core; may raise Contradiction."""
    collapsed = _propagate(problem, state, forms_of)
    size = problem.size
    chosen = tuple(f for f in range(size) if state[f] == IN)
    free = [f for f in range(size) if state[f] == FREE]
    identity_of = problem.identity_of
    admitted = {identity_of[f] for f in chosen}
    must = {i for i in problem.required if i not in admitted}
    for f in chosen:
        must.update(d for d in problem.needs[f] if d not in admitted)
    core_groups: list[tuple[int, ...]] = []
    for g, group in enumerate(problem.groups):
        if collapsed[g]:
            continue
        if any(i in admitted for i in group):
            must.update(i for i in group if i not in admitted)
        else:
            core_groups.append(group)
    identities = sorted({identity_of[f] for f in free})
    position = {identity: k for k, identity in enumerate(identities)}
    if any(i not in position for i in must):
        raise Contradiction
    spent = sum(problem.cost[f] for f in chosen)
    budget = None if problem.budget is None else problem.budget - spent
    if budget is not None and budget < 0:
        raise Contradiction
    needs = problem.needs
    # the fixings and the core are rule-blind: a problem with the format's rules is
    # searched whole (``core_search.CoreSearch``)
    assert not problem.rules, "a reduction of a problem with the format's rules"
    core = replace(
        problem,
        form_ids=tuple(problem.form_ids[f] for f in free),
        identity_of=tuple(position[identity_of[f]] for f in free),
        identities=tuple(problem.identities[i] for i in identities),
        cost=tuple(problem.cost[f] for f in free),
        value=tuple(problem.value[f] for f in free),
        weight=tuple(problem.weight[f] for f in free),
        needs=tuple(
            tuple(sorted(position[d] for d in needs[f] if d not in admitted)) if needs[f] else ()
            for f in free
        ),
        groups=tuple(sorted({tuple(sorted(position[i] for i in group)) for group in core_groups})),
        required=tuple(sorted(position[i] for i in must)),
        budget=budget,
    )
    return Reduction(
        chosen=chosen, core=core, core_forms=tuple(free), bound=bound, incumbent=incumbent
    )


def _propagate(
    problem: Problem, state: list[int], forms_of: tuple[tuple[int, ...], ...]
) -> list[bool]:
    """Remove what the fixings make impossible; which groups collapsed (all forms out)."""
    identity_of, needs, groups = problem.identity_of, problem.needs, problem.groups
    identities = len(problem.identities)
    alive = [0] * identities
    admitted = [-1] * identities
    for f, s in enumerate(state):
        if s == OUT:
            continue
        identity = identity_of[f]
        alive[identity] += 1
        if s == IN:
            if admitted[identity] >= 0:
                raise Contradiction
            admitted[identity] = f
    live_needs = ((d, f) for f, s in enumerate(state) if s != OUT for d in needs[f])
    dependents = index_by(identities, live_needs)
    groups_of = group_index(problem)
    collapsed = [False] * len(groups)
    lost = [i for i in range(identities) if alive[i] == 0]

    def out(f: int) -> None:
        if state[f] == IN:
            raise Contradiction
        if state[f] == FREE:
            state[f] = OUT
            identity = identity_of[f]
            alive[identity] -= 1
            if alive[identity] == 0:
                lost.append(identity)

    # an admitted identity has its one form already
    for identity, form in enumerate(admitted):
        if form >= 0:
            for f in forms_of[identity]:
                if f != form:
                    out(f)
    required = set(problem.required)
    while lost:
        identity = lost.pop()
        if identity in required:
            raise Contradiction
        for f in dependents[identity]:
            out(f)
        for g in groups_of[identity]:
            if not collapsed[g]:
                collapsed[g] = True
                for member in groups[g]:
                    for f in forms_of[member]:
                        out(f)
    return collapsed
