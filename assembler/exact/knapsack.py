"""Exact answers for knapsack-shaped cores: dynamic programming over the budget.

Input: a ``Problem`` (usually a core the reduction left), a cell limit and a deadline.
Output: a ``SolveOutcome``, OPTIMAL (the unique best selection under the full
lexicographic order of ``assembler.model.objective``) or INFEASIBLE; or None when the
core is not knapsack-shaped (some form needs another identity), has no budget, is too
large for the cell limit, past the deadline, or when two selections tie on value,
cost and tie-break weight (only the canonical-order rule separates them: the caller's
search decides).

Why: the cores an agent's requests leave (a few dozen forms, tool calls coupled to
their results, no shared resolvers) are knapsacks on which the branch and bound of
``search.py`` runs out of its few milliseconds and a CP-SAT session costs more than
they take, two or three calls per request. Over the budget's integer costs the same
cores take a few milliseconds.

The items: identities joined by coupled groups form one item (all of its identities
admitted, each with one form, or none), whose options are the combinations of its
identities' forms, plus "none" unless an identity in it is required. ``best[c]`` is
the best (value, then least weight) of the items so far at total cost exactly ``c``,
with a flag when two different selections reach it; the answer is the most valuable
cell, then the cheapest, then its weight. A flagged answer is a tie on all three
levels and is handed back (None).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..deadline import NEVER, Deadline
from .backend import SolveOutcome, SolveStatus, selection_cost, selection_value
from .closure import Problem

__all__ = ["CELL_LIMIT", "OPTION_LIMIT", "solve_knapsack"]

# items x (budget + 1) cells, the budget capped and divided as in ``solve_knapsack``
CELL_LIMIT = 1_000_000
# combinations of forms of one coupled item
OPTION_LIMIT = 64

_UNREACHED = np.iinfo(np.int64).min // 4
# An unreached cell plus any gains stays below this (gains are far below 2**61): cells
# are compared without masking, and only cells above it count as reached.
_REACHED = _UNREACHED // 2

# an item's option: (forms, cost, value, weight)
_Option = tuple[tuple[int, ...], int, int, int]


def solve_knapsack(
    problem: Problem, cell_limit: int = CELL_LIMIT, deadline: Deadline = NEVER
) -> SolveOutcome | None:
    """The answer, or None (see the module's docstring). ``deadline`` is read on
    entry, while the items are gathered and before each option is merged."""
    budget = problem.budget
    if budget is None or any(problem.needs) or deadline.passed:
        return None
    items = _items(problem, deadline)
    if items is None:
        return None
    if not items:
        return SolveOutcome(SolveStatus.OPTIMAL, (), bound=0)
    if any(not options for options in items):
        return SolveOutcome(SolveStatus.INFEASIBLE)
    # The cost axis, shrunk exactly: no selection costs more than every item's dearest
    # option together, and when every cost is a multiple of g only multiples of g are
    # reached (a core's budget is often far above what its forms can spend, and
    # generated and rounded costs share factors).
    reach = sum(max(option[1] for option in options) for options in items)
    step = math.gcd(*(option[1] for options in items for option in options)) or 1
    top = min(budget, reach) // step
    if len(items) * (top + 1) > cell_limit:
        return None
    if step > 1:
        items = [
            [(forms, cost // step, gain, heft) for forms, cost, gain, heft in options]
            for options in items
        ]
    return _solve(items, top, deadline)


def _items(problem: Problem, deadline: Deadline) -> list[list[_Option]] | None:
    """Each item's options, or None when one has too many or the deadline passed; an
    item that cannot be admitted nor left out makes the list [[]] (no option:
    infeasible). A pass in Python over every form: the deadline is read every 1,024
    items."""
    count = len(problem.identities)
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for group in problem.groups:
        for other in group[1:]:
            parent[root(other)] = root(group[0])
    members: dict[int, list[int]] = {}
    for identity in range(count):
        members.setdefault(root(identity), []).append(identity)
    forms_of = problem.forms_of()
    required = set(problem.required)
    items: list[list[_Option]] = []
    for k, component in enumerate(members.values()):
        if k % 1024 == 1023 and deadline.passed:
            return None
        must = any(i in required for i in component)
        choices = [forms_of[i] for i in component]
        options: list[_Option] = [] if must else [((), 0, 0, 0)]
        if all(choices):
            combinations = 1
            for forms in choices:
                combinations *= len(forms)
            if combinations > OPTION_LIMIT:
                return None
            for forms in itertools.product(*choices):
                options.append(
                    (
                        tuple(sorted(forms)),
                        selection_cost(problem, forms),
                        selection_value(problem, forms),
                        sum(problem.weight[f] for f in forms),
                    )
                )
        if not options:
            return [[]]
        if len(options) > 1 or must:
            items.append(options)
    return items


def _solve(items: list[list[_Option]], top: int, deadline: Deadline) -> SolveOutcome | None:
    width = top + 1
    value = np.full(width, _UNREACHED, dtype=np.int64)
    weight = np.zeros(width, dtype=np.int64)
    tied = np.zeros(width, dtype=bool)
    value[0] = 0
    choice = np.zeros((len(items), width), dtype=np.int16)
    # Cells past what the items so far can spend are unreached: each option only
    # touches the reached prefix shifted by its cost (until the budget caps it).
    reach = 0
    for k, options in enumerate(items):
        best_value = np.full(width, _UNREACHED, dtype=np.int64)
        best_weight = np.zeros(width, dtype=np.int64)
        best_tied = np.zeros(width, dtype=bool)
        row = choice[k]
        spent = 0
        for index, (_, cost, gain, heft) in enumerate(options):
            # read per option: one item's options can take a tenth of a second together
            if deadline.passed:
                return None
            if cost > top:
                continue
            # this option taken at cell c comes from cell c - cost (views, no copies)
            end = min(width - cost, reach + 1)
            spent = max(spent, cost)
            offered_value = value[:end] + gain
            offered_weight = weight[:end] + heft
            held_value = best_value[cost : cost + end]
            held_weight = best_weight[cost : cost + end]
            held_tied = best_tied[cost : cost + end]
            same = offered_value == held_value
            better = (offered_value > held_value) | (same & (offered_weight < held_weight))
            # two options reaching the same (value, weight) at one cost: two selections
            held_tied |= same & (offered_weight == held_weight) & (offered_value > _REACHED)
            np.copyto(held_tied, tied[:end], where=better)
            np.copyto(held_value, offered_value, where=better)
            np.copyto(held_weight, offered_weight, where=better)
            row[cost : cost + end][better] = index
        reach = min(top, reach + spent)
        value, weight, tied = best_value, best_weight, best_tied
    if not (value > _REACHED).any():
        return SolveOutcome(SolveStatus.INFEASIBLE)
    best = int(value.max())
    cost = int(np.flatnonzero(value == best)[0])  # the cheapest cell of that value
    if tied[cost]:
        return None
    selection: list[int] = []
    cell = cost
    for k in range(len(items) - 1, -1, -1):
        forms, option_cost, _, _ = items[k][int(choice[k, cell])]
        selection.extend(forms)
        cell -= option_cost
    assert cell == 0, "the walk back must end at cost 0"
    return SolveOutcome(SolveStatus.OPTIMAL, tuple(sorted(selection)), bound=best)
