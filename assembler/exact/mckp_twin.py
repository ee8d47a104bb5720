"""The multiple-choice knapsack kernel, in pure Python: the compiled kernel's twin.

Input: items as flat arrays of options (``start``: item ``i``'s options are
``start[i]..start[i+1]``; each option's ``cost``, ``value`` and tie-break ``weight``,
integers >= 0), the capacity ``cap``, a deadline (an instant on ``time.monotonic()``)
and a limit on the states the program may make.
Output: ``(status, chosen)``: ``OPTIMAL`` with the index of the option each item takes
(the unique best under most value, then least cost, then least weight), or a status
saying why the caller must answer by another path (``TIE``: the best is tied on all
three levels with another selection, which only the canonical walk separates;
``INFEASIBLE``; ``LIMIT``; ``DEADLINE``) and no choice.

Exactly one option per item is taken (an item that may be left out has an option of
cost 0, value 0 and weight 0). The steps, each linear or n log n in the options
(``docs/explanation/algorithm.md``):

1. each item's undominated options in cost order (value strictly rising); an item with
   one is fixed;
2. the LP bound as a Lagrangian: ``lam`` is the slope of the first segment of the
   items' upper hulls, taken greedily by falling slope, that no longer fits; all
   arithmetic is on integers, ``lam = p / q`` (reduced profits scaled by ``q``);
3. an incumbent: each item's cheapest best option at ``lam`` (it fits), then upgrades
   in order of their reduced-profit gap while they fit;
4. reduced-cost fixing: an option whose gap exceeds the bound's lead over the
   incumbent is in no optimum;
5. a program over the items left: the Pareto frontier of (cost, value, weight) states,
   each state pruned when its Lagrangian bound falls below the incumbent's value; two
   states equal on all three levels are one state flagged as a tie.

The compiled kernel (``_mckp.c``) is this module step for step, over C integers.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence

__all__ = ["DEADLINE", "INFEASIBLE", "LIMIT", "OPTIMAL", "TIE", "solve_coupled", "solve_items"]

OPTIMAL = 0
TIE = 1
LIMIT = 2
INFEASIBLE = 3
DEADLINE = 4


def solve_coupled(
    identity_of: Sequence[int],
    cost: Sequence[int],
    value: Sequence[int],
    weight: Sequence[int],
    identities: int,
    required: Sequence[int],
    group_start: Sequence[int],
    group_members: Sequence[int],
    cap: int,
    deadline_at: float,
    state_limit: int,
    option_limit: int,
) -> tuple[int, list[int]]:
    """``solve_items`` on the items of forms without dependency edges: each identity,
    or the identities coupled groups join (``group_members[group_start[g]..]``), is an
    item; its options are "none" (unless one of its identities is ``required``), then
    one form of each identity (``itertools.product`` order, forms in index order).
    Items come in the order of their first identity. Returns the chosen forms, sorted
    (``LIMIT`` when an item has more than ``option_limit`` combinations)."""
    parent = list(range(identities))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for g in range(len(group_start) - 1):
        first = group_members[group_start[g]]
        for k in range(group_start[g] + 1, group_start[g + 1]):
            parent[root(group_members[k])] = root(first)
    forms_of: list[list[int]] = [[] for _ in range(identities)]
    for form, identity in enumerate(identity_of):
        forms_of[identity].append(form)
    members: dict[int, list[int]] = {}
    for identity in range(identities):
        members.setdefault(root(identity), []).append(identity)
    needed = {root(r) for r in required}
    start, o_cost, o_value, o_weight = [0], [], [], []
    o_forms: list[tuple[int, ...]] = []
    for head, component in members.items():
        choices = [forms_of[i] for i in component]
        if math.prod(map(len, choices)) > option_limit:
            return LIMIT, []
        options: list[tuple[int, ...]] = [] if head in needed else [()]
        options += itertools.product(*choices)
        for option in options:
            o_forms.append(option)
            o_cost.append(sum(cost[f] for f in option))
            o_value.append(sum(value[f] for f in option))
            o_weight.append(sum(weight[f] for f in option))
        start.append(len(o_forms))
    status, chosen = solve_items(
        start, o_cost, o_value, o_weight, cap, deadline_at, state_limit
    )
    if status != OPTIMAL:
        return status, []
    return OPTIMAL, sorted(f for o in chosen for f in o_forms[o])


def solve_items(
    start: Sequence[int],
    cost: Sequence[int],
    value: Sequence[int],
    weight: Sequence[int],
    cap: int,
    deadline_at: float,
    state_limit: int,
) -> tuple[int, list[int]]:
    """The best option of each item (see the module's docstring)."""
    items = len(start) - 1
    # 1. undominated options of each item, cheapest first; an exact duplicate of a
    # kept option (equal cost, value and weight) flags it as tied
    options: list[list[int]] = []
    tied = [0] * len(cost)
    for i in range(items):
        order = sorted(range(start[i], start[i + 1]), key=lambda o: (cost[o], -value[o], weight[o]))
        kept: list[int] = []
        for o in order:
            if kept and value[o] <= value[kept[-1]]:
                last = kept[-1]
                if value[o] == value[last] and cost[o] == cost[last] and weight[o] == weight[last]:
                    tied[last] = 1
                continue
            kept.append(o)
        options.append(kept)
    chosen = [kept[0] for kept in options]
    room = cap - sum(cost[kept[0]] for kept in options if len(kept) == 1)
    free = [i for i in range(items) if len(options[i]) > 1]
    least = sum(cost[options[i][0]] for i in free)
    if room < 0 or least > room:
        return INFEASIBLE, []

    # 2. the multiplier: segments of each item's upper hull, by falling slope
    segments: list[tuple[int, int]] = []  # (dv, dc)
    for i in free:
        hull: list[int] = []
        for o in options[i]:
            while len(hull) >= 2:
                a, b = hull[-2], hull[-1]
                # b is not above the line from a to o: it is no vertex of the hull
                if (value[b] - value[a]) * (cost[o] - cost[b]) <= (value[o] - value[b]) * (
                    cost[b] - cost[a]
                ):
                    hull.pop()
                else:
                    break
            hull.append(o)
        segments += [
            (value[b] - value[a], cost[b] - cost[a]) for a, b in itertools.pairwise(hull)
        ]
    segments.sort(key=_SlopeKey, reverse=True)
    p, q = 0, 1
    used = least
    for dv, dc in segments:
        if used + dc > room:
            p, q = dv, dc
            break
        used += dc

    # 3. the incumbent: each item's cheapest option of most reduced profit
    best: dict[int, int] = {}
    for i in free:
        top = None
        for o in options[i]:
            reduced = q * value[o] - p * cost[o]
            if top is None or reduced > top:
                top, chosen[i] = reduced, o
        assert top is not None
        best[i] = top
    slack = room - sum(cost[chosen[i]] for i in free)
    if slack < 0:
        return LIMIT, []  # impossible by the hull's order; never trusted blindly
    upgrades = sorted(
        (best[i] - (q * value[o] - p * cost[o]), i, o)
        for i in free
        for o in options[i]
        if value[o] > value[chosen[i]]
    )
    for _, i, o in upgrades:
        now = chosen[i]
        if value[o] > value[now] and cost[o] - cost[now] <= slack:
            slack -= cost[o] - cost[now]
            chosen[i] = o
    floor = sum(value[chosen[i]] for i in free)
    bound = p * room + sum(best.values())  # q times the LP bound

    # 4. reduced-cost fixing: keep what can still reach the incumbent's value
    lead = bound - q * floor
    core: list[int] = []
    for i in free:
        left = [o for o in options[i] if best[i] - (q * value[o] - p * cost[o]) <= lead]
        if len(left) == 1:
            chosen[i] = left[0]
            room -= cost[left[0]]
            floor -= value[left[0]]
        else:
            options[i] = left
            core.append(i)
    if not core:
        if any(tied[chosen[i]] for i in range(items)):
            return TIE, []
        return OPTIMAL, chosen

    # 5. the program over the core's frontier
    later = [0] * (len(core) + 1)  # the core items' best reduced profits after each
    for k in range(len(core) - 1, -1, -1):
        later[k] = later[k + 1] + best[core[k]]
    scaled_floor = q * floor
    # the frontier: parallel lists, cost rising, value strictly rising
    f_cost, f_value, f_weight, f_tie = [0], [0], [0], [0]
    steps: list[tuple[list[int], list[int]]] = []  # each item's (parent state, option)
    made = 1
    for k, i in enumerate(core):
        if time.monotonic() >= deadline_at:
            return DEADLINE, []
        rest = later[k + 1]
        merged: tuple[list[int], ...] | None = None
        for o in options[i]:
            oc, ov, ow, ot = cost[o], value[o], weight[o], tied[o]
            shifted: tuple[list[int], ...] = ([], [], [], [], [], [])
            for s in range(len(f_cost)):
                c = f_cost[s] + oc
                if c > room:
                    break
                v = f_value[s] + ov
                if q * v + p * (room - c) + rest < scaled_floor:
                    continue
                shifted[0].append(c)
                shifted[1].append(v)
                shifted[2].append(f_weight[s] + ow)
                shifted[3].append(f_tie[s] | ot)
                shifted[4].append(s)
                shifted[5].append(o)
            made += len(shifted[0])
            merged = shifted if merged is None else _merge(merged, shifted)
        if made > state_limit:
            return LIMIT, []
        assert merged is not None
        f_cost, f_value, f_weight, f_tie = merged[0], merged[1], merged[2], merged[3]
        steps.append((merged[4], merged[5]))
        if not f_cost:
            return LIMIT, []  # impossible: the incumbent's states survive
    state = len(f_cost) - 1  # the most valuable state
    in_core = set(core)
    if f_tie[state] or any(tied[chosen[i]] for i in range(items) if i not in in_core):
        return TIE, []
    for k in range(len(core) - 1, -1, -1):
        parents, picked = steps[k]
        chosen[core[k]] = picked[state]
        state = parents[state]
    return OPTIMAL, chosen


class _SlopeKey:
    """A segment's slope ``dv / dc`` compared exactly (cross-multiplied); equal slopes
    by their rise, so that every implementation sorts them alike."""

    __slots__ = ("dc", "dv")

    def __init__(self, segment: tuple[int, int]) -> None:
        self.dv, self.dc = segment

    def __lt__(self, other: _SlopeKey) -> bool:
        left, right = self.dv * other.dc, other.dv * self.dc
        return left < right or (left == right and self.dv < other.dv)


def _merge(a: tuple[list[int], ...], b: tuple[list[int], ...]) -> tuple[list[int], ...]:
    """The Pareto frontier of two frontiers (each cost rising, value strictly rising):
    a state is dropped when a kept one costs no more and is worth no less (at equal
    cost and value, of no more weight); an exact duplicate flags the kept one."""
    out: tuple[list[int], ...] = ([], [], [], [], [], [])
    oc, ov, ow, ot = out[0], out[1], out[2], out[3]
    i = j = 0
    na, nb = len(a[0]), len(b[0])
    while i < na or j < nb:
        if j >= nb or (
            i < na and (a[0][i], -a[1][i], a[2][i]) <= (b[0][j], -b[1][j], b[2][j])
        ):
            src, k = a, i
            i += 1
        else:
            src, k = b, j
            j += 1
        c, v, w = src[0][k], src[1][k], src[2][k]
        if oc and v <= ov[-1]:
            if v == ov[-1] and c == oc[-1] and w == ow[-1]:
                ot[-1] = 1
            continue
        for column in range(6):
            out[column].append(src[column][k])
    return out
