"""The part of a problem its required material can reach.

Input: a ``Problem``.
Output: the sub-problem over the identities reachable from the required ones (through
any form's needs and through coupled groups), and the full-problem index of each of
its forms.

Why it is exact for pricing the required material: take any legal selection that
admits every required identity and keep only its forms of reachable identities. Each
kept form's needs are reachable and were admitted, so they are kept; each kept
identity's groups have only reachable members, all admitted, so all kept. The result
is legal, admits the required identities and costs no more (weighs strictly less
when anything was dropped), so the cheapest closure under the full order lies inside.
Breadth-first, each group expanded once: linear in forms + edges + memberships.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from .closure import Problem, index_by

__all__ = ["group_index", "reach", "required_reach"]


def group_index(problem: Problem) -> tuple[tuple[int, ...], ...]:
    """The groups of each identity (indices into ``problem.groups``)."""
    pairs = ((identity, g) for g, group in enumerate(problem.groups) for identity in group)
    return index_by(len(problem.identities), pairs)


def reach(
    problem: Problem,
    start: Iterable[int],
    forms_of: Sequence[Sequence[int]],
    groups_of: Sequence[Sequence[int]] | None = None,
) -> tuple[list[bool], list[bool]]:
    """The identities ``start`` reaches through the needs of ``forms_of`` (each
    identity's forms to follow) and through coupled groups, and the groups expanded.
    ``groups_of`` is ``group_index(problem)``, for a caller that walks one problem often."""
    if groups_of is None:
        groups_of = group_index(problem)
    reached = [False] * len(problem.identities)
    expanded = [False] * len(problem.groups)
    queue = list(start)
    for identity in queue:
        reached[identity] = True
    while queue:
        identity = queue.pop()
        neighbours: list[int] = []
        for f in forms_of[identity]:
            neighbours.extend(problem.needs[f])
        for g in groups_of[identity]:
            if not expanded[g]:
                expanded[g] = True
                neighbours.extend(problem.groups[g])
        for other in neighbours:
            if not reached[other]:
                reached[other] = True
                queue.append(other)
    return reached, expanded


def required_reach(problem: Problem) -> tuple[Problem, tuple[int, ...]]:
    # the format's rules reach past the required material: such a problem stays whole
    assert not problem.rules, "the required reach of a problem with the format's rules"
    reached, expanded = reach(problem, problem.required, problem.forms_of())
    if all(reached):
        return problem, tuple(range(problem.size))
    identities = [i for i, kept in enumerate(reached) if kept]
    position = {identity: k for k, identity in enumerate(identities)}
    forms = tuple(f for f in range(problem.size) if reached[problem.identity_of[f]])
    sub = replace(
        problem,
        form_ids=tuple(problem.form_ids[f] for f in forms),
        identity_of=tuple(position[problem.identity_of[f]] for f in forms),
        identities=tuple(problem.identities[i] for i in identities),
        cost=tuple(problem.cost[f] for f in forms),
        value=tuple(problem.value[f] for f in forms),
        weight=tuple(problem.weight[f] for f in forms),
        needs=tuple(tuple(position[d] for d in problem.needs[f]) for f in forms),
        groups=tuple(
            tuple(position[i] for i in group)
            for g, group in enumerate(problem.groups)
            if expanded[g]
        ),
        required=tuple(position[i] for i in problem.required),
    )
    return sub, forms
