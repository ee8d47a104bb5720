"""Presolve: forms that no optimum holds, found without any solver.

Input: a ``Problem`` and the forms of each identity.
Output: the forms to leave out, in increasing order.

Two rules, both keeping the unique optimum of the full lexicographic order:

* filler: a form without value whose identity nothing needs, couples or requires
  only adds cost and tie-break weight, so no optimum holds it;
* dominance: form a is left out when another form b of its identity is at least as
  valuable, no dearer, needs nothing a does not need, and is strictly better on
  (value, cost, tie-break weight): swapping a for b improves any bundle holding a.

Dominance is a strict partial order, so every dominated form has an undominated
dominator and all of them can go at once. Each identity's forms are swept once in
order of (value desc, cost, weight): a form is dominated exactly when an earlier
form, outside its own tie class, with no needs or with the same needs, is no dearer.
Only those two kinds of dominator are looked for (not every subset of the needs),
which keeps the sweep n log n for an identity of any size; missing a dominance only
leaves a form for the search.
"""

from __future__ import annotations

from .closure import Problem

__all__ = ["presolve"]


def presolve(problem: Problem, forms_of: tuple[tuple[int, ...], ...]) -> list[int]:
    needed = {d for needs in problem.needs for d in needs}
    coupled = {i for group in problem.groups for i in group}
    required = set(problem.required)
    value, cost, weight, needs = problem.value, problem.cost, problem.weight, problem.needs
    out: list[int] = []
    for identity, forms in enumerate(forms_of):
        removable = identity not in needed and identity not in coupled and identity not in required
        if len(forms) == 1:
            if removable and value[forms[0]] == 0:
                out.append(forms[0])
            continue
        ordered = sorted(forms, key=lambda f: (-value[f], cost[f], weight[f]))
        cheapest_free = -1  # cheapest earlier form that needs nothing (-1: none yet)
        cheapest_by_needs: dict[tuple[int, ...], int] = {}
        start = 0
        while start < len(ordered):
            # a tie class: forms equal on value, cost and weight dominate none of each other
            first = ordered[start]
            key = (value[first], cost[first], weight[first])
            end = start + 1
            while (
                end < len(ordered)
                and (
                    value[ordered[end]],
                    cost[ordered[end]],
                    weight[ordered[end]],
                )
                == key
            ):
                end += 1
            for a in ordered[start:end]:
                if removable and value[a] == 0:
                    out.append(a)
                    continue
                same = cheapest_by_needs.get(needs[a], -1)
                if (0 <= cheapest_free <= cost[a]) or (0 <= same <= cost[a]):
                    out.append(a)
            for b in ordered[start:end]:
                if not needs[b]:
                    if cheapest_free < 0 or cost[b] < cheapest_free:
                        cheapest_free = cost[b]
                else:
                    known = cheapest_by_needs.get(needs[b], -1)
                    if known < 0 or cost[b] < known:
                        cheapest_by_needs[needs[b]] = cost[b]
            start = end
    out.sort()
    return out
