"""The brute-force oracle: every selection, judged by the full objective.

Input: a ``Problem``.
Output: an ``Outcome`` that is OPTIMAL (the best selection under the
lexicographic order of ``assembler.model.objective``) or INFEASIBLE.

It tries, for every identity, "none" or each one of its eligible forms, so it is
exponential: above ``ENUMERATION_LIMIT`` combinations it raises
``EnumerationTooLarge`` instead of running for hours. It shares no code with the
CP-SAT encoding, which is why it is worth comparing against.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from ..deadline import Deadline
from ..exact.backend import Outcome, SolveStatus
from ..exact.closure import Problem
from ..exact.solve import decide_exact
from ..model.errors import EnumerationTooLarge
from ..model.objective import bundle_key
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

    def solve(
        self,
        problem: Problem,
        *,
        time_limit: float = 0.0,
        workers: int = 1,
        tiebreak: bool = True,
        hint: tuple[int, ...] | None = None,
        value_only: bool = False,
        proven: tuple[int, ...] = (),
    ) -> Outcome:
        total = combinations(problem)
        if total > self.limit:
            raise EnumerationTooLarge(total, self.limit)
        options: list[list[int | None]] = [[None] for _ in problem.identities]
        for form, identity in enumerate(problem.identity_of):
            options[identity].append(form)
        for identity in problem.required:
            options[identity] = options[identity][1:]
        budget = math.inf if problem.budget is None else problem.budget

        best: tuple[int, ...] | None = None
        best_key: tuple[int, int, int, tuple[bool, ...]] | None = None
        for choice in itertools.product(*options):
            admitted = {i for i, form in enumerate(choice) if form is not None}
            selection = tuple(sorted(form for form in choice if form is not None))
            cost = sum(problem.cost[f] for f in selection)
            if cost > budget:
                continue
            if any(not set(problem.needs[f]) <= admitted for f in selection):
                continue
            if any(0 < len(admitted.intersection(g)) < len(g) for g in problem.groups):
                continue
            members = tuple(f in selection for f in range(problem.size))
            key = bundle_key(
                sum(problem.value[f] for f in selection),
                cost,
                sum(problem.weight[f] for f in selection),
                members,
            )
            if best_key is None or key < best_key:
                best, best_key = selection, key
        if best is None:
            return Outcome(SolveStatus.INFEASIBLE)
        return Outcome(SolveStatus.OPTIMAL, best, bound=sum(problem.value[f] for f in best))


def enumerate_strategy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    return decide_exact(request, gates, BruteForce(), deadline, workers)
