"""A small exact search: depth-first branch and bound for the cores the reduction leaves.

Input: a ``Problem`` (a core, typically a few dozen forms) and a node limit.
Output: a ``SolveOutcome`` that is OPTIMAL (the unique best selection under the full
lexicographic order of ``assembler.model.objective``) or INFEASIBLE; or None when the node
limit was reached, and the caller asks CP-SAT instead.

Why: after the reduction, most requests of a few hundred forms leave cores of 5-50
forms, where starting three or four CP-SAT sessions costs more than the search. The
search decides identities one at a time (required ones first; forms by value), and
prunes on the budget (with the cheapest completion of the required identities still
open), on dependencies and groups as soon as they are decided, and on an optimistic
bound: value so far plus the LP relaxation of the open identities as a
multiple-choice knapsack over the budget left (the upper hull of each identity's
(cost, value) options, its segments taken by slope), then cost and tie-break weight
lower bounds when that value would only tie the best found. Dropping dependencies,
groups and requirements only loosens that relaxation, so the bound stays valid.
"""

from __future__ import annotations

import itertools
import math

from ..deadline import NEVER, Deadline
from .backend import SolveOutcome, SolveStatus
from .closure import Problem

__all__ = ["NODE_LIMIT", "SmallSearch"]

# A search still running after this long hands its core to CP-SAT, so the worst case
# costs little over CP-SAT alone (a time, not a node count: a node's cost grows with
# the core). The optimum is unique, so which exact path answers never changes it.
SECONDS = 0.003
NODE_LIMIT = 10**7


class SmallSearch:
    name = "search"

    def __init__(self, node_limit: int = NODE_LIMIT, seconds: float | None = SECONDS) -> None:
        self.node_limit = node_limit
        self.seconds = seconds

    def solve(self, problem: Problem, deadline: Deadline = NEVER) -> SolveOutcome | None:
        """The answer, or None once ``seconds`` (or ``deadline``, if sooner) ran out."""
        if self.seconds is not None:
            deadline = deadline.within(self.seconds)
        return _Search(problem, self.node_limit, deadline).run()


class _Search:
    def __init__(self, problem: Problem, node_limit: int, deadline: Deadline) -> None:
        self.problem = problem
        self.nodes_left = node_limit
        self.deadline = deadline
        required = set(problem.required)
        forms_of = problem.forms_of()
        # segments of each identity's upper hull: (slope, cost, value, identity)
        self.segments: list[tuple[float, int, int, int]] = []
        steepest = [0.0] * len(problem.identities)
        for identity, forms in enumerate(forms_of):
            hull = _hull([(problem.cost[f], problem.value[f]) for f in forms])
            for slope, dc, dv in hull:
                self.segments.append((slope, dc, dv, identity))
            steepest[identity] = hull[0][0] if hull else 0.0
        self.segments.sort(key=lambda seg: -seg[0])
        # required identities first, so infeasible budgets fail near the root; then the
        # most efficient, so good bundles are found early and prune the rest
        self.order = sorted(
            range(len(problem.identities)), key=lambda i: (i not in required, -steepest[i], i)
        )
        self.options: list[list[int | None]] = []
        for identity in self.order:
            ranked = sorted(
                forms_of[identity], key=lambda f: (-problem.value[f], problem.cost[f], f)
            )
            self.options.append([*ranked] if identity in required else [*ranked, None])
        depth = len(self.order)
        best_value = [max((problem.value[f] for f in forms_of[i]), default=0) for i in self.order]
        self.value_left = [0] * (depth + 1)
        self.cost_left = [0] * (depth + 1)  # cheapest completion of the required identities
        self.weight_left = [0] * (depth + 1)
        for k in range(depth - 1, -1, -1):
            identity = self.order[k]
            self.value_left[k] = self.value_left[k + 1] + best_value[k]
            cheapest = min((problem.cost[f] for f in forms_of[identity]), default=0)
            lightest = min((problem.weight[f] for f in forms_of[identity]), default=0)
            must = identity in required
            self.cost_left[k] = self.cost_left[k + 1] + (cheapest if must else 0)
            self.weight_left[k] = self.weight_left[k + 1] + (lightest if must else 0)
        self.groups_of: list[list[tuple[int, ...]]] = [[] for _ in problem.identities]
        for group in problem.groups:
            for identity in group:
                self.groups_of[identity].append(group)
        self.budget = math.inf if problem.budget is None else problem.budget
        self.decided: list[bool | None] = [None] * len(problem.identities)  # admitted?
        self.wanted = [0] * len(problem.identities)  # admitted forms that need it
        self.chosen: list[int] = []
        self.best: tuple[int, ...] | None = None
        self.best_key = (-1, 0, 0)  # value, cost, weight of the best found

    def run(self) -> SolveOutcome | None:
        if not self._descend(0, 0, 0, 0):
            return None
        if self.best is None:
            return SolveOutcome(SolveStatus.INFEASIBLE)
        return SolveOutcome(SolveStatus.OPTIMAL, self.best, bound=self.best_key[0])

    def _descend(self, k: int, value: int, cost: int, weight: int) -> bool:
        """Explore below depth k; False when the node limit ran out."""
        self.nodes_left -= 1
        if self.nodes_left < 0:
            return False
        # the clock is read every 128 nodes: reading it costs as much as a node
        if self.nodes_left % 128 == 0 and self.deadline.passed:
            self.nodes_left = -1
            return False
        if cost + self.cost_left[k] > self.budget:
            return True
        best_value, best_cost, best_weight = self.best_key
        reach = value + self.value_left[k]
        if reach >= best_value and self.best is not None:
            reach = min(reach, value + self._relaxation(cost))
        if reach < best_value:
            return True
        if reach == best_value:
            floor_cost = cost + self.cost_left[k]
            if floor_cost > best_cost:
                return True
            if floor_cost == best_cost and weight + self.weight_left[k] > best_weight:
                return True
        if k == len(self.order):
            self._leaf(value, cost, weight)
            return True
        identity = self.order[k]
        problem = self.problem
        for form in self.options[k]:
            admitted = form is not None
            if not self._consistent(identity, form):
                continue
            self.decided[identity] = admitted
            if form is None:
                ok = self._descend(k + 1, value, cost, weight)
            else:
                for d in problem.needs[form]:
                    self.wanted[d] += 1
                self.chosen.append(form)
                ok = self._descend(
                    k + 1,
                    value + problem.value[form],
                    cost + problem.cost[form],
                    weight + problem.weight[form],
                )
                self.chosen.pop()
                for d in problem.needs[form]:
                    self.wanted[d] -= 1
            self.decided[identity] = None
            if not ok:
                return False
        return True

    def _relaxation(self, cost: int) -> int:
        """Upper bound on the value the open identities can still add."""
        room = self.budget - cost
        gained = 0.0
        for slope, dc, dv, identity in self.segments:
            if self.decided[identity] is not None:
                continue
            if dc <= room:
                room -= dc
                gained += dv
            else:
                gained += slope * room
                break
        # values are integers: floor, with a margin for the float arithmetic
        return math.floor(gained + 1e-6)

    def _consistent(self, identity: int, form: int | None) -> bool:
        """Whether deciding ``identity`` this way agrees with what is decided already."""
        if form is None:
            if self.wanted[identity]:
                return False  # an admitted form needs it
        else:
            for d in self.problem.needs[form]:
                if self.decided[d] is False:
                    return False
        admitted = form is not None
        for group in self.groups_of[identity]:
            for partner in group:
                state = self.decided[partner]
                if partner != identity and state is not None and state != admitted:
                    return False
        return True

    def _leaf(self, value: int, cost: int, weight: int) -> None:
        selection = tuple(sorted(self.chosen))
        key = (value, cost, weight)
        best_value, best_cost, best_weight = self.best_key
        better = (
            value > best_value
            or (value == best_value and cost < best_cost)
            or (value == best_value and cost == best_cost and weight < best_weight)
        )
        if not better and key == self.best_key and self.best is not None:
            # the canonical-order rule: the bundle without the first differing form wins
            first = min(set(selection) ^ set(self.best), default=None)
            better = first is not None and first in self.best
        if better:
            self.best = selection
            self.best_key = key


def _hull(points: list[tuple[int, int]]) -> list[tuple[float, int, int]]:
    """The upper concave hull of (cost, value) options and "none" at (0, 0), as
    segments (slope, cost step, value step) of decreasing slope."""
    best: dict[int, int] = {0: 0}
    for cost, value in points:
        if value > best.get(cost, -1):
            best[cost] = value
    frontier: list[tuple[int, int]] = []
    for cost in sorted(best):
        value = best[cost]
        if frontier and value <= frontier[-1][1]:
            continue  # dearer and no more valuable: never on the hull
        while len(frontier) >= 2:
            (c1, v1), (c2, v2) = frontier[-2], frontier[-1]
            # drop the middle point when it lies on or below the chord
            if (v2 - v1) * (cost - c1) <= (value - v1) * (c2 - c1):
                frontier.pop()
            else:
                break
        frontier.append((cost, value))
    # The hull starts at "none" (0, 0): a free form's value is a step of cost 0 (its
    # slope is infinite), or the bound would leave that value out.
    if frontier[0][1] > 0:
        frontier.insert(0, (0, 0))
    segments = []
    for (c1, v1), (c2, v2) in itertools.pairwise(frontier):
        slope = (v2 - v1) / (c2 - c1) if c2 > c1 else math.inf
        segments.append((slope, c2 - c1, v2 - v1))
    return segments
