"""The exact answer for the multiple-choice knapsack shape, without an LP solver.

Input: a ``Problem`` (``closure.py``) and a ``Deadline``.
Output: a ``SolveOutcome`` OPTIMAL (the unique best selection under the whole order of
``models/README.md`` section 6) or None: the problem is not of this shape, the
program's frontier grew past its limit, the deadline came, no legal selection fits
(the refusal is priced by the general path), or the best selection ties with another
on value, cost and tie-break weight (only the canonical walk separates them: the
general path decides).

The shape: every rule but the budget lies inside small items. An item is an identity,
or the identities coupled groups join (tool calls and their results), or those a form
needs joined with it (``knapsack.py``'s items: each option one form of each identity
taken, or "none" unless one is required). Agent transcripts and most packs are this
shape. The items' options go to the kernel as flat integer arrays
(``mckp_twin.solve_items``, compiled as ``_mckp``: ``assembler/kernels.py`` says which
one answers), which proves the optimum by a Lagrangian bound, reduced-cost fixing
and a Pareto-frontier program over the few items left.
"""

from __future__ import annotations

import dataclasses
from array import array

from ..deadline import NEVER, Deadline
from ..kernels import kernel
from .backend import SolveOutcome, SolveStatus
from .closure import Problem, item_roots
from .knapsack import items_of

__all__ = ["PATH", "STATE_LIMIT", "WALKED", "solve_mckp"]

# the name a result's timings give this path when it answered
PATH = "mckp"
# states the frontier program may make in all; past it the general path answers
STATE_LIMIT = 2_000_000
# choices (a form or none, for each identity) of an item, at most: an item joined by
# needs is walked in Python, and on Shape.scale(100) requests a walk of more cost more
# (up to 10 ms) than the general path's whole solve (3-6 ms); a coupled item's options
# are made by the kernel (a tool call with three results of five sizes each: 75)
WALKED = 1024


def solve_mckp(
    problem: Problem, deadline: Deadline = NEVER, state_limit: int = STATE_LIMIT
) -> SolveOutcome | None:
    """The optimum of ``problem``, or None (see the module's docstring)."""
    budget = problem.budget
    if budget is None or deadline.passed or _constrained_beyond(problem):
        return None
    solver = kernel("assembler.exact.mckp_twin")
    if not any(problem.needs):
        status, selection = solver.solve_coupled(
            *_columns(problem), budget, deadline.at, state_limit, WALKED
        )
        if status != 0:
            return None
        chosen = tuple(selection)
        return SolveOutcome(
            SolveStatus.OPTIMAL, chosen, bound=sum(problem.value[f] for f in chosen)
        )
    if not _small_items(problem):
        return None
    items = items_of(problem, deadline)
    if items is None or any(not options for options in items):
        return None
    start = array("q", [0])
    cost, value, weight = array("q"), array("q"), array("q")
    forms: list[tuple[int, ...]] = []
    for options in items:
        for chosen_forms, c, v, w in options:
            forms.append(chosen_forms)
            cost.append(c)
            value.append(v)
            weight.append(w)
        start.append(len(forms))
    status, chosen_options = solver.solve_items(
        start, cost, value, weight, budget, deadline.at, state_limit
    )
    if status != 0:
        return None
    selection = tuple(sorted(f for o in chosen_options for f in forms[o]))
    return SolveOutcome(
        SolveStatus.OPTIMAL, selection, bound=sum(value[o] for o in chosen_options)
    )


# the Problem's fields this kernel reads the whole of: any other one set (a constraint a
# later change adds, such as a format's structural rules) hands the problem back
_READ = frozenset(
    {"form_ids", "identity_of", "identities", "cost", "value", "weight", "needs", "groups",
     "required", "budget"}
)  # fmt: skip


def _constrained_beyond(problem: Problem) -> bool:
    """Whether ``problem`` states a rule this kernel does not read (a field beyond
    ``_READ`` that is set): the general path answers it."""
    return any(
        getattr(problem, f.name) for f in dataclasses.fields(problem) if f.name not in _READ
    )


def _small_items(problem: Problem) -> bool:
    """Whether every item (identities joined by groups and needs) has at most
    ``WALKED`` choices of a form or none for each identity: the items' options are then
    walked in a moment; past it (shared resolvers needed by many identities) the walk
    costs more than the general path, or gives up after spending its allowance."""
    roots = item_roots(problem)
    choices: dict[int, int] = {}
    for identity in problem.identity_of:
        choices[identity] = choices.get(identity, 1) + 1
    product: dict[int, int] = {}
    for identity, count in choices.items():
        head = roots[identity]
        product[head] = product.get(head, 1) * count
        if product[head] > WALKED:
            return False
    return True


def _columns(problem: Problem) -> tuple[object, ...]:
    """The arrays ``solve_coupled`` reads: each form's identity, cost, value and
    weight; the number of identities; the required ones; the groups (CSR)."""
    group_start = array("q", [0])
    members = array("q")
    for group in problem.groups:
        members.extend(group)
        group_start.append(len(members))
    return (
        array("q", problem.identity_of),
        array("q", problem.cost),
        array("q", problem.value),
        array("q", problem.weight),
        len(problem.identities),
        array("q", problem.required),
        group_start,
        members,
    )
