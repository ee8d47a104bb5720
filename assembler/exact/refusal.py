"""Refusals: the structured answer "no legal bundle exists".

Input: the request and its gate report (for REQUIRED_MISSING and
REQUIRED_INELIGIBLE), or the problem and an exact backend (for
MANDATORY_OVER_BUDGET).
Output: a ``Refusal`` with its code and facts, or None when the check passes.

The mandatory cost is the exact minimum cost of a selection meeting C1-C5 with
every required identity admitted (not a sum of first forms), and the conflict is
made minimal by a deletion filter over the required identities in canonical
order: each deletion test prices the cheapest closure of the remaining ones.
"""

from __future__ import annotations

import time

from ..model.types import Refusal, RefusalCode, Request, RequiredIdentity
from ..stages.gates import GateReport
from .backend import Backend, SolveStatus, selection_cost
from .closure import Problem

__all__ = ["over_budget_refusal", "required_refusal"]


def required_refusal(request: Request, gates: GateReport) -> Refusal | None:
    """REQUIRED_MISSING, then REQUIRED_INELIGIBLE; None when every required identity
    has at least one eligible form."""
    budget = request.task.budget
    offered: dict[str, list[str]] = {}
    for candidate in request.candidates:
        offered.setdefault(candidate.identity, []).append(candidate.id)
    required = request.required_identities
    missing = [identity for identity in required if identity not in offered]
    if missing:
        return Refusal(
            code=RefusalCode.REQUIRED_MISSING,
            budget=budget,
            identities=tuple(RequiredIdentity(identity) for identity in missing),
            message="required identities with no candidate at all: " + ", ".join(missing),
        )
    ineligible = [
        RequiredIdentity(
            identity, tuple((form, gates.rejected[form][0]) for form in offered[identity])
        )
        for identity in required
        if not any(gates.is_eligible(form) for form in offered[identity])
    ]
    if ineligible:
        names = ", ".join(
            f"{item.identity} ({'; '.join(f'{f}: {g.value}' for f, g in item.forms)})"
            for item in ineligible
        )
        return Refusal(
            code=RefusalCode.REQUIRED_INELIGIBLE,
            budget=budget,
            identities=tuple(ineligible),
            message="every form of a required identity fails a gate: " + names,
        )
    return None


def over_budget_refusal(
    problem: Problem, backend: Backend, *, time_limit: float, workers: int
) -> Refusal:
    """The refusal for a problem whose required material cannot fit its budget."""
    assert problem.budget is not None, "a problem without a budget always fits"
    budget = problem.budget
    started = time.monotonic()
    closure = backend.solve(problem.mandatory(), time_limit=time_limit, workers=workers)
    time_limit -= time.monotonic() - started
    if closure.status is SolveStatus.UNKNOWN:
        # Infeasibility is proven, but no closure was priced in time: say so rather
        # than report a cost that is not one.
        return Refusal(
            code=RefusalCode.MANDATORY_OVER_BUDGET,
            budget=budget,
            message=(
                f"the required material cannot fit the budget {budget} (proven); the time"
                " limit was reached before its cheapest closure was priced"
            ),
        )
    proven = closure.status is SolveStatus.OPTIMAL
    mandatory_cost = selection_cost(problem, closure.selection)

    # One deadline for the whole deletion filter: it makes one solve per required
    # identity, and each must not get the full limit again.
    deadline = time.monotonic() + time_limit
    kept = list(problem.required)
    for identity in problem.required:
        left = deadline - time.monotonic()
        if left <= 0:
            proven = False
            break
        trial = tuple(r for r in kept if r != identity)
        priced = backend.solve(
            problem.mandatory(trial), time_limit=left, workers=workers, tiebreak=False
        )
        if priced.status is not SolveStatus.OPTIMAL:
            proven = False
            break
        if selection_cost(problem, priced.selection) > budget:
            kept = list(trial)
    conflict = tuple(problem.identities[i] for i in kept)
    excess = mandatory_cost - budget
    message = (
        f"mandatory closure {mandatory_cost} > budget {budget}, excess {excess};"
        f" these required identities alone cannot fit: {', '.join(conflict)}"
    )
    if not proven:
        message += " (time limit reached: cost and conflict not proven minimal)"
    return Refusal(
        code=RefusalCode.MANDATORY_OVER_BUDGET,
        budget=budget,
        mandatory_cost=mandatory_cost,
        excess=excess,
        forms=tuple(sorted(problem.form_ids[f] for f in closure.selection)),
        conflict=conflict,
        message=message,
    )
