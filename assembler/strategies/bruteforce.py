"""The brute-force oracle: every selection, judged by the full objective.

Input: a ``Problem``.
Output: an ``SolveOutcome`` that is OPTIMAL (the best selection under the
lexicographic order of ``assembler.model.objective``) or INFEASIBLE.

It tries, for every identity, "none" or each one of its eligible forms, so it is
exponential: above ``ENUMERATION_LIMIT`` combinations it raises
``EnumerationTooLarge`` instead of running for hours. It shares no code with the
CP-SAT encoding, which is why it is worth comparing against.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

from ..cache.prefix import Prefix
from ..deadline import Deadline
from ..exact.backend import (
    UNBOUNDED,
    Ask,
    SolveOutcome,
    SolveStatus,
    selection_cost,
    selection_value,
)
from ..exact.cached import feasible
from ..exact.closure import Problem
from ..exact.solve import decide_exact
from ..model.cache import CacheTerms
from ..model.errors import EnumerationTooLarge
from ..model.objective import bundle_key
from ..model.rendering import RenderFormat
from ..model.types import Request
from ..stages.choice import Choice
from ..stages.gates import GateReport

__all__ = ["ENUMERATION_LIMIT", "BruteForce", "combinations", "enumerate_strategy"]

ENUMERATION_LIMIT = 1 << 18


def combinations(problem: Problem) -> int:
    counts: list[int] = [1] * len(problem.identities)
    for identity in problem.identity_of:
        counts[identity] += 1
    return math.prod(counts)


class BruteForce:
    name = "enumerate"

    def __init__(self, limit: int = ENUMERATION_LIMIT) -> None:
        self.limit = limit

    def solve(self, problem: Problem, ask: Ask = UNBOUNDED) -> SolveOutcome:
        # enumeration proves the whole order whatever was asked: the most it can answer
        best = min(
            ((_key(problem, selection), selection) for selection in self._legal(problem)),
            default=None,
        )
        if best is None:
            return SolveOutcome(SolveStatus.INFEASIBLE)
        return SolveOutcome(SolveStatus.OPTIMAL, best[1], bound=selection_value(problem, best[1]))

    def solve_cached(
        self, problem: Problem, prefix: Prefix, terms: CacheTerms, ask: Ask = UNBOUNDED
    ) -> SolveOutcome:
        """The cache-aware order by enumeration: the least price among the feasible
        legal selections, then section 6's order."""
        best = min(
            (
                ((prefix.price(selection).price, *_key(problem, selection)), selection)
                for selection in self._legal(problem)
                if feasible(problem, prefix, terms, selection)
            ),
            default=None,
        )
        if best is None:
            return SolveOutcome(SolveStatus.INFEASIBLE)
        return SolveOutcome(SolveStatus.OPTIMAL, best[1], bound=selection_value(problem, best[1]))

    def _legal(self, problem: Problem) -> Iterator[tuple[int, ...]]:
        """Every selection meeting C2-C6 (and the format's rules, when the problem has
        them), each once."""
        total = combinations(problem)
        if total > self.limit:
            raise EnumerationTooLarge(total, self.limit)
        options: list[list[int | None]] = [[None] for _ in problem.identities]
        for form, identity in enumerate(problem.identity_of):
            options[identity].append(form)
        for identity in problem.required:
            options[identity] = options[identity][1:]
        budget = math.inf if problem.budget is None else problem.budget
        for choice in itertools.product(*options):
            admitted = {i for i, form in enumerate(choice) if form is not None}
            selection = tuple(sorted(form for form in choice if form is not None))
            if sum(problem.cost[f] for f in selection) > budget:
                continue
            if any(not set(problem.needs[f]) <= admitted for f in selection):
                continue
            if any(0 < len(admitted.intersection(g)) < len(g) for g in problem.groups):
                continue
            if problem.rules and problem.breaks(selection) is not None:
                continue  # the format cannot send it
            yield selection


def _key(problem: Problem, selection: tuple[int, ...]) -> tuple[int, int, int, tuple[bool, ...]]:
    chosen = set(selection)
    return bundle_key(
        selection_value(problem, selection),
        selection_cost(problem, selection),
        sum(problem.weight[f] for f in selection),
        tuple(f in chosen for f in range(problem.size)),
    )


def enumerate_strategy(
    request: Request,
    gates: GateReport,
    deadline: Deadline,
    workers: int,
    *,
    render: RenderFormat | None = None,
    **_: Any,
) -> Choice:
    return decide_exact(request, gates, BruteForce(), deadline, workers, render=render)
