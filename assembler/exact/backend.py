"""The narrow interface between the pipeline and an exact backend.

Input: a ``Problem`` and an ``Ask``: by when, with how many searches, and how much of
the order the answer must prove.
Output: a ``SolveOutcome``: a status, the selected form indices and, when the search
stopped early, an upper bound on the value.

A backend implements the whole lexicographic order of ``assembler.model.objective``;
the pipeline never looks inside it. The CP-SAT backend and the brute-force
oracle are the two implementations.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ..deadline import NEVER, Deadline
from .closure import Problem

__all__ = [
    "UNBOUNDED",
    "Ask",
    "Backend",
    "SolveOutcome",
    "SolveStatus",
    "selection_cost",
    "selection_value",
]


class SolveStatus(StrEnum):
    OPTIMAL = "optimal"  # the selection is the unique best under the full order
    FEASIBLE = "feasible"  # legal, but the time limit stopped the proof
    INFEASIBLE = "infeasible"  # proven: nothing legal fits the budget
    UNKNOWN = "unknown"  # the time limit stopped the search before anything was found


@dataclass(frozen=True, slots=True)
class SolveOutcome:
    status: SolveStatus
    # the selection; for INFEASIBLE, the cheapest closure of the required material when
    # the backend priced it on the way (proven cheapest under the full order), else ()
    selection: tuple[int, ...] = ()
    # proven upper bound on the value (None when no bound is known)
    bound: int | None = None
    # proven lower bound on the cost of a selection of optimal value, when the search
    # stopped before proving the cost (pricing a closure: every selection has value 0)
    cost_floor: int | None = None


@dataclass(frozen=True, slots=True)
class Ask:
    """What a backend is asked, beside the problem. Past ``deadline`` it answers what it
    has proven or found (its own reads of the clock go through the deadline, shares of
    it through ``within``/``less``); ``workers``: the searches it may race. With
    ``tiebreak=False`` any selection optimal in value and cost will do (enough to price
    a closure), with ``value_only`` any selection optimal in value, and OPTIMAL means
    just that. ``hint`` is a selection to start from; it never changes the answer.
    ``proven`` holds the optimal value (and cost) when an earlier search proved them: a
    backend may fix instead of re-proving."""

    deadline: Deadline
    workers: int = 1
    tiebreak: bool = True
    hint: tuple[int, ...] | None = None
    value_only: bool = False
    proven: tuple[int, ...] = ()


# the ask of work that has no deadline (an oracle's, a test's): the whole order
UNBOUNDED = Ask(NEVER)


class Backend(Protocol):
    name: str

    def solve(self, problem: Problem, ask: Ask) -> SolveOutcome:
        """The best selection of ``problem`` under the whole lexicographic order, or as
        much of it as ``ask`` asks for."""
        ...


def selection_cost(problem: Problem, selection: tuple[int, ...]) -> int:
    return sum(problem.cost[form] for form in selection)


def selection_value(problem: Problem, selection: tuple[int, ...]) -> int:
    return sum(problem.value[form] for form in selection)
