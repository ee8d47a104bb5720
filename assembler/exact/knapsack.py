"""Exact answers for knapsack-shaped cores: dynamic programming over the budget.

Input: a ``Problem`` (usually a core the reduction left), a cell limit and a deadline.
Output: an ``Outcome``, OPTIMAL (the unique best selection under the full
lexicographic order of ``assembler.model.objective``) or INFEASIBLE; or None when the
core is not knapsack-shaped (some form needs another identity), has no budget, is too
large for the cell limit, past the deadline, or when two selections tie on value,
cost and tie-break weight (only the canonical-order rule separates them: the caller's
search decides).

Why: the cores an agent's requests leave (a few dozen forms, tool calls coupled to
their results, no shared resolvers) are knapsacks on which the branch and bound of
``search.py`` runs out of its few milliseconds (on one 27-form core it needed 457,000
nodes, ~1 s) and a CP-SAT session costs 12-20 ms per call, two or three calls per
request. Over the budget's integer costs the same cores take a few milliseconds.

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
import time

import numpy as np

from .backend import Outcome, SolveStatus
from .closure import Problem

__all__ = ["CELL_LIMIT", "OPTION_LIMIT", "solve_knapsack"]

# items x (budget + 1) cells: measured 70-100 ms of numpy at a million cells (with two
# cores busy), so at this limit ~30 ms, about a CP-SAT session on such a core
CELL_LIMIT = 400_000
# combinations of forms of one coupled item
OPTION_LIMIT = 64

_UNREACHED = np.iinfo(np.int64).min // 4

# an item's option: (forms, cost, value, weight)
_Option = tuple[tuple[int, ...], int, int, int]


def solve_knapsack(
    problem: Problem, cell_limit: int = CELL_LIMIT, deadline: float | None = None
) -> Outcome | None:
    """The answer, or None (see the module's docstring). ``deadline`` is a
    ``time.monotonic()`` instant, read after each item."""
    budget = problem.budget
    if budget is None or any(problem.needs):
        return None
    items = _items(problem)
    if items is None:
        return None
    if not items:
        return Outcome(SolveStatus.OPTIMAL, (), bound=0)
    if len(items) * (budget + 1) > cell_limit:
        return None
    return _solve(items, budget, deadline)


def _items(problem: Problem) -> list[list[_Option]] | None:
    """Each item's options, or None when one has too many; an item that cannot be
    admitted nor left out makes the list [[]] (no option: infeasible)."""
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
    for component in members.values():
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
                        sum(problem.cost[f] for f in forms),
                        sum(problem.value[f] for f in forms),
                        sum(problem.weight[f] for f in forms),
                    )
                )
        if not options:
            return [[]]
        if len(options) > 1 or must:
            items.append(options)
    return items


def _solve(items: list[list[_Option]], budget: int, deadline: float | None) -> Outcome | None:
    width = budget + 1
    value = np.full(width, _UNREACHED, dtype=np.int64)
    weight = np.zeros(width, dtype=np.int64)
    tied = np.zeros(width, dtype=bool)
    value[0] = 0
    choice = np.zeros((len(items), width), dtype=np.int16)
    for k, options in enumerate(items):
        if deadline is not None and time.monotonic() > deadline:
            return None
        best_value = np.full(width, _UNREACHED, dtype=np.int64)
        best_weight = np.zeros(width, dtype=np.int64)
        best_tied = np.zeros(width, dtype=bool)
        best_choice = choice[k]
        for index, (_, cost, gain, heft) in enumerate(options):
            if cost > budget:
                continue
            # this option taken at cell c comes from cell c - cost
            new_value = np.full(width, _UNREACHED, dtype=np.int64)
            new_weight = np.zeros(width, dtype=np.int64)
            new_tied = np.zeros(width, dtype=bool)
            source = value[: width - cost]
            reached = source > _UNREACHED
            new_value[cost:] = np.where(reached, source + gain, _UNREACHED)
            new_weight[cost:] = weight[: width - cost] + heft
            new_tied[cost:] = tied[: width - cost]
            better = (new_value > best_value) | (
                (new_value == best_value) & (new_weight < best_weight)
            )
            equal = (
                (new_value == best_value) & (new_weight == best_weight) & (new_value > _UNREACHED)
            )
            # two options reaching the same (value, weight) at one cost: two selections
            best_tied = np.where(better, new_tied, best_tied | equal)
            best_value = np.where(better, new_value, best_value)
            best_weight = np.where(better, new_weight, best_weight)
            best_choice[better] = index
        value, weight, tied = best_value, best_weight, best_tied
    if not (value > _UNREACHED).any():
        return Outcome(SolveStatus.INFEASIBLE)
    top = int(value.max())
    cost = int(np.flatnonzero(value == top)[0])  # the cheapest cell of that value
    if tied[cost]:
        return None
    selection: list[int] = []
    cell = cost
    for k in range(len(items) - 1, -1, -1):
        forms, option_cost, _, _ = items[k][int(choice[k, cell])]
        selection.extend(forms)
        cell -= option_cost
    assert cell == 0, "the walk back must end at cost 0"
    return Outcome(SolveStatus.OPTIMAL, tuple(sorted(selection)), bound=top)
