"""Refusals: the structured answer "no legal bundle exists".

Input: the request and its gate report (for REQUIRED_MISSING and
REQUIRED_INELIGIBLE), or the problem and an exact backend (for
MANDATORY_OVER_BUDGET).
Output: a ``Refusal`` with its code and facts, or None when the check passes.

The mandatory cost is the exact minimum cost of a selection meeting C1-C5 with
every required identity admitted (not a sum of first forms), and the conflict is
made minimal by a deletion filter over the required identities in canonical
order: each deletion test prices the cheapest closure of the remaining ones. Under a
time limit the refusal states what was proven: an interval for the mandatory cost,
and a conflict that is proven but perhaps not minimal.

One pass decides first, whatever the time limit (``linear_refusal``): every required
identity needs a form of its own, so the sum of each one's cheapest eligible cost is a
lower bound on the closure. Over the budget, that alone proves the refusal. When the
cheapest form of each required identity (section 6's rules 2-4 within the identity)
needs nothing outside the required identities and no group reaches past them, those
forms are the cheapest closure itself (nothing cheaper or lighter admits them all), so
the refusal is fully proven; when moreover no required identity needs another or shares
a group, each identity's cost is its own and the deletion filter is a subtraction per
identity: linear. Otherwise the pass states what it proved (the lower bound, a closure
grown from those forms as the upper end, a conflict proven by the bound).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..deadline import Deadline
from ..model.types import Refusal, RefusalCode, Request, RequiredIdentity
from ..stages.gates import GateReport
from .backend import Ask, Backend, SolveOutcome, SolveStatus, selection_cost
from .closure import Problem
from .reach import group_index, reach

__all__ = ["linear_refusal", "over_budget_refusal", "required_refusal", "unsendable_refusal"]


def required_refusal(request: Request, gates: GateReport) -> Refusal | None:
    """REQUIRED_MISSING, then REQUIRED_INELIGIBLE; None when every required identity
    has at least one eligible form."""
    budget = request.task.budget
    required = gates.required_identities(request)
    if not required:
        return None
    if all(gates.eligible_forms[identity] for identity in required):
        # the gates counted an eligible form for every required identity
        return None
    wanted = set(required)
    # the gates' reading of every form's id and identity: only the required ones'
    # forms are looked at one by one
    ids, identities = gates.columns(request)
    offered: dict[str, list[str]] = {}
    for i in [i for i, identity in enumerate(identities) if identity in wanted]:
        offered.setdefault(identities[i], []).append(ids[i])
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


def linear_refusal(problem: Problem) -> Refusal | None:
    """MANDATORY_OVER_BUDGET when one pass over the forms proves it (module docstring):
    the required identities' cheapest costs alone exceed the budget. None otherwise
    (the search decides). Linear in forms, needs and group memberships."""
    budget = problem.budget
    if budget is None or not problem.required:
        return None
    required = set(problem.required)
    cost, weight = problem.cost, problem.weight
    # each identity's best form for a closure: least cost, then least weight, then the
    # later in canonical order (the selection without the earlier form wins)
    best: dict[int, int] = {}
    for form, identity in enumerate(problem.identity_of):
        found = best.get(identity)
        if found is None or (cost[form], weight[form]) <= (cost[found], weight[found]):
            best[identity] = form
    if any(r not in best for r in required):
        return None  # never: the gates left every required identity an eligible form
    lower = sum(cost[best[r]] for r in problem.required)
    if lower <= budget:
        return None
    groups_of = group_index(problem)
    own = [best[r] for r in problem.required]
    closed = all(set(problem.needs[f]) <= required for f in own) and all(
        set(problem.groups[g]) <= required for r in problem.required for g in groups_of[r]
    )
    independent = closed and not any(problem.needs[f] for f in own) and not any(
        groups_of[r] for r in problem.required
    )
    closure = own if closed else _grown(problem, best, groups_of)
    upper = selection_cost(problem, tuple(closure))
    # the deletion filter on the bound: each identity dropped is dropped on a proof
    # that the rest still cannot fit; with independent identities the bound is the
    # rest's cheapest closure itself, so the filter is exact and the conflict minimal
    conflict = []
    total = lower
    for r in problem.required:
        if total - cost[best[r]] > budget:
            total -= cost[best[r]]
        else:
            conflict.append(r)
    names = ", ".join(problem.identities[i] for i in conflict)
    forms = tuple(sorted(problem.form_ids[f] for f in closure))
    # the grown closure may cost just the bound (what it added costs nothing): its cost
    # is then proven, its tie-break among closures of that cost is not
    proven = closed or upper == lower
    if proven:
        message = f"mandatory closure {upper} > budget {budget}, excess {upper - budget}"
        if not closed:
            message += (
                " (a closure of least cost grown in one pass: its tie-break among closures"
                " of that cost was not searched)"
            )
    else:
        message = (
            f"mandatory closure between {lower} and {upper} > budget {budget}, excess between"
            f" {lower - budget} and {upper - budget} (proven by the required identities'"
            " cheapest costs alone: the closure was not priced further)"
        )
    message += f"; these required identities alone cannot fit: {names}"
    if not independent:
        message += " (proven by their cheapest costs alone: not proven a minimal conflict)"
    return Refusal(
        code=RefusalCode.MANDATORY_OVER_BUDGET,
        budget=budget,
        mandatory_cost=upper if proven else None,
        excess=upper - budget if proven else None,
        mandatory_cost_lower=lower,
        mandatory_cost_upper=upper,
        forms=forms,
        conflict=tuple(problem.identities[i] for i in conflict),
        message=message,
    )


def _grown(
    problem: Problem, best: dict[int, int], groups_of: Sequence[Sequence[int]]
) -> list[int]:
    """A legal closure of the required identities: each one's best form, then the best
    form of every identity those need or share a group with, and so on (the gates left
    every such identity an eligible form). Breadth-first: linear."""
    admitted = set(problem.required)
    queue = list(problem.required)
    expanded = [False] * len(problem.groups)
    for identity in queue:
        neighbours = list(problem.needs[best[identity]])
        for g in groups_of[identity]:
            if not expanded[g]:
                expanded[g] = True
                neighbours.extend(problem.groups[g])
        for other in neighbours:
            if other not in admitted:
                admitted.add(other)
                queue.append(other)
    return sorted(best[i] for i in admitted)


def over_budget_refusal(
    problem: Problem,
    backend: Backend,
    *,
    deadline: Deadline,
    workers: int,
    priced: tuple[int, ...] = (),
) -> Refusal:
    """The refusal for a problem proven to have no legal selection within its budget.

    The cheapest closure of the required material is stated as what was proven: at
    least ``budget + 1`` (the budget is proven infeasible) or the search's proven
    floor when higher, at most the cost of the best closure found. ``mandatory_cost``
    and ``excess`` are set only when the two meet. ``priced`` is that closure when the
    solve already proved it cheapest (the backend's INFEASIBLE outcome carries it);
    otherwise it is searched for, unless ``deadline`` has passed.

    With the format's rules (``Problem.rules``), the mandatory closure is priced without
    them: when it fits the budget, only the rules stand in the way and the refusal is
    UNSENDABLE (``unsendable_refusal``); so it is too when the closure could not be
    priced in time, as that is all the search proved."""
    budget = problem.budget
    assert budget is not None, "a problem without a budget always fits"
    ruled, problem = problem, problem.blind()
    lower = budget + 1
    closure = None
    if priced:
        closure = SolveOutcome(SolveStatus.OPTIMAL, priced)
    elif not deadline.passed:
        closure = backend.solve(problem.mandatory(), Ask(deadline, workers))
        if closure.cost_floor is not None:
            lower = max(lower, closure.cost_floor)
    if ruled.rules and (
        closure is None
        or not closure.selection
        or selection_cost(problem, closure.selection) <= budget
    ):
        return unsendable_refusal(ruled, backend, deadline=deadline, workers=workers)
    if closure is None or not closure.selection:
        # Infeasibility is proven, but no closure was priced in time: say so rather
        # than report a cost that is not one.
        return Refusal(
            code=RefusalCode.MANDATORY_OVER_BUDGET,
            budget=budget,
            mandatory_cost_lower=lower,
            message=(
                f"the required material cannot fit the budget {budget} (proven: its"
                f" cheapest closure costs at least {lower}, excess at least {lower - budget});"
                " the time limit was reached before a closure was priced"
            ),
        )
    upper = selection_cost(problem, closure.selection)
    if closure.status is SolveStatus.OPTIMAL:
        lower = upper
    conflict, minimal = _conflict(problem, backend, closure.selection, deadline, workers)
    names = ", ".join(problem.identities[i] for i in conflict)
    if lower == upper:
        message = f"mandatory closure {upper} > budget {budget}, excess {upper - budget}"
    else:
        message = (
            f"mandatory closure between {lower} and {upper} > budget {budget}, excess between"
            f" {lower - budget} and {upper - budget} (time limit reached: not proven minimal)"
        )
    message += f"; these required identities alone cannot fit: {names}"
    if not minimal:
        message += " (time limit reached: not proven a minimal conflict)"
    return Refusal(
        code=RefusalCode.MANDATORY_OVER_BUDGET,
        conflict=tuple(problem.identities[i] for i in conflict),
        message=message,
        **_priced(problem, budget, lower, closure.selection),
    )


def unsendable_refusal(
    problem: Problem, backend: Backend, *, deadline: Deadline, workers: int
) -> Refusal:
    """The refusal for a problem proven to have no legal selection within its budget
    that keeps the format's rules, while the required material alone is not proven too
    dear (``over_budget_refusal``): the rules no such selection keeps together (a
    deletion filter over the rules' names, in the format's order) and the cheapest
    selection meeting C1-C5 that keeps them all, priced as far as the time allows (the
    shapes of section 7), or none when none exists at any budget."""
    assert problem.budget is not None
    budget = problem.budget
    names = list(dict.fromkeys(rule.rule for rule in problem.rules))
    minimal = True
    for name in list(names):
        if len(names) == 1:
            break
        if deadline.passed:
            minimal = False
            break
        rest = tuple(rule for rule in problem.rules if rule.rule != name and rule.rule in names)
        found = backend.solve(replace(problem, rules=rest), Ask(deadline, workers, value_only=True))
        if found.status is SolveStatus.INFEASIBLE:
            names.remove(name)  # the rest alone leave nothing sendable within the budget
        elif found.status is SolveStatus.UNKNOWN:
            minimal = False
            break
    rules = tuple(names)
    said = ", ".join(rules) + ("" if minimal else " (time limit reached: not proven minimal)")
    closure = SolveOutcome(SolveStatus.UNKNOWN)
    if not deadline.passed:
        closure = backend.solve(problem.mandatory(), Ask(deadline, workers))
    if closure.status is SolveStatus.INFEASIBLE:
        return Refusal(
            code=RefusalCode.UNSENDABLE,
            budget=budget,
            rules=rules,
            message=f"no legal selection at any budget keeps the format's rules: {said}",
        )
    lower = budget + 1
    if closure.cost_floor is not None:
        lower = max(lower, closure.cost_floor)
    if not closure.selection:
        return Refusal(
            code=RefusalCode.UNSENDABLE,
            budget=budget,
            mandatory_cost_lower=lower,
            rules=rules,
            message=(
                f"no legal selection within the budget {budget} keeps the format's rules:"
                f" {said}; the time limit was reached before the cheapest one that does"
                f" was priced (it costs at least {lower})"
            ),
        )
    upper = selection_cost(problem, closure.selection)
    if closure.status is SolveStatus.OPTIMAL:
        lower = upper
    cost = str(upper) if lower == upper else f"between {lower} and {upper}"
    return Refusal(
        code=RefusalCode.UNSENDABLE,
        rules=rules,
        message=(
            f"no legal selection within the budget {budget} keeps the format's rules:"
            f" {said}; the cheapest that does costs {cost}"
        ),
        **_priced(problem, budget, lower, closure.selection),
    )


def _priced(
    problem: Problem, budget: int, lower: int, selection: Sequence[int]
) -> dict[str, Any]:
    """A priced refusal's figures: ``selection``'s cost the upper end of the interval
    proven, ``mandatory_cost`` and ``excess`` set only when ``lower`` meets it."""
    upper = sum(problem.cost[f] for f in selection)
    proven = lower == upper
    return {
        "budget": budget,
        "mandatory_cost": upper if proven else None,
        "excess": upper - budget if proven else None,
        "mandatory_cost_lower": lower,
        "mandatory_cost_upper": upper,
        "forms": tuple(sorted(problem.form_ids[f] for f in selection)),
    }


def _conflict(
    problem: Problem,
    backend: Backend,
    closure: tuple[int, ...],
    deadline: Deadline,
    workers: int,
) -> tuple[list[int], bool]:
    """The deletion filter over the required identities in canonical order, and whether
    it finished (the conflict is then minimal; otherwise it is still a proven conflict:
    every identity left out was left out on a proof that the rest cannot fit).

    Before each exact pricing, the closure in hand is cut to what the remaining required
    identities reach (``reach.py``'s argument: still legal for them, never dearer):
    when that already fits the budget, the identity stays in the conflict without a
    search, which settles most tests when the excess is small."""
    assert problem.budget is not None
    budget = problem.budget
    kept = list(problem.required)
    # built once, and the closure's forms per identity again only when a pricing
    # replaces it: each test is then a walk over what it reaches
    groups_of = group_index(problem)
    current = closure
    forms_of = _forms_of(problem, current)
    for identity in problem.required:
        # read before every test, not only before a pricing: each test walks the
        # closure, and hundreds of required identities' tests alone overran the limit
        if deadline.passed:
            return kept, False
        trial = tuple(r for r in kept if r != identity)
        cut = _reached(problem, current, trial, forms_of, groups_of)
        if selection_cost(problem, cut) <= budget:
            continue  # the rest fits: this identity belongs to the conflict
        priced = backend.solve(problem.mandatory(trial), Ask(deadline, workers, tiebreak=False))
        cost = selection_cost(problem, priced.selection) if priced.selection else None
        if cost is not None and cost <= budget:
            continue  # a closure of the rest within the budget: proven to fit
        if priced.status is not SolveStatus.OPTIMAL:
            return kept, False
        kept = list(trial)
        current = priced.selection
        forms_of = _forms_of(problem, current)
    return kept, True


def _forms_of(problem: Problem, selection: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The selected form of each identity (none for an identity left out)."""
    forms_of: list[tuple[int, ...]] = [()] * len(problem.identities)
    for f in selection:
        forms_of[problem.identity_of[f]] = (f,)
    return forms_of


def _reached(
    problem: Problem,
    selection: tuple[int, ...],
    required: tuple[int, ...],
    forms_of: Sequence[Sequence[int]],
    groups_of: Sequence[Sequence[int]],
) -> tuple[int, ...]:
    """The forms of ``selection`` (``forms_of``: its form of each identity) whose
    identities ``required`` reaches through the selected forms' needs and the groups
    (a legal selection admits everything reached)."""
    reached, _ = reach(problem, required, forms_of, groups_of)
    return tuple(f for f in selection if reached[problem.identity_of[f]])
