"""A first legal selection, grown greedily in the order an LP (or a density) suggests.

Input: a ``Problem``, the forms still open, a preference per form (the LP's primal
value, or 0), and a deadline.
Output: a legal selection (form indices, sorted), or None when the required material
could not be placed.

Forms are offered in order of preference, then value density; each is added with
everything it drags in (for each identity it needs and each group partner, that
identity's preferred form, recursively) when the whole addition fits. Required
identities go first. Then each admitted identity is upgraded to a more valuable form
when that still fits. Rounding the LP and repairing it lost hundreds of value units
to dropped dependencies; building closures loses almost nothing.

Linear in forms + dependency edges + group memberships, whatever the shape: a walk
expands each group once, stops as soon as its cost exceeds the room left, and does
not enter an identity whose own preferred closure was already found too dear (the
room only shrinks). Failed walks share one work allowance; once it is spent, only
additions that drag nothing in are tried. The deadline is read every few hundred
offers, and whatever is chosen by then is legal.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..deadline import NEVER, Deadline
from .closure import Problem
from .reach import group_index

__all__ = ["build_incumbent"]

_CLOCK_EVERY = 256


def build_incumbent(
    problem: Problem,
    open_forms: Any,
    preference: Any,
    *,
    deadline: Deadline = NEVER,
) -> tuple[int, ...] | None:
    """A legal selection among ``open_forms`` (an index array), or None."""
    assert problem.budget is not None
    forms = np.asarray(open_forms, dtype=np.int64)
    if len(forms) == 0:
        return () if not problem.required else None
    value = np.asarray(problem.value, dtype=np.float64)[forms]
    cost = np.asarray(problem.cost, dtype=np.float64)[forms]
    rounded = np.round(np.asarray(preference, dtype=np.float64), 6)
    # offered: preferred first, then by value density, then canonical order
    order = forms[np.lexsort((forms, -value / np.maximum(cost, 1.0), -rounded))]
    # dragged in for an identity: its preferred form, else its cheapest (pulling the
    # cheapest when the LP prefers another blocks the valuable form the LP chose)
    picks = forms[np.lexsort((forms, cost, -rounded))]
    cheapest = forms[np.lexsort((forms, cost))]
    return _Grower(problem, order.tolist(), picks.tolist(), cheapest.tolist(), deadline).run()


class _Grower:
    def __init__(
        self,
        problem: Problem,
        order: list[int],
        picks: list[int],
        cheapest: list[int],
        deadline: Deadline,
    ) -> None:
        self.problem = problem
        self.order = order
        self.deadline = deadline
        assert problem.budget is not None
        self.room = problem.budget
        self.chosen: dict[int, int] = {}
        # what an addition drags in for an identity: its first form in ``picks``, and
        # when that does not fit, its cheapest
        self.pick = _first_of_each(problem, picks)
        self.cheapest = _first_of_each(problem, cheapest)
        self.groups_of = group_index(problem)
        # an identity whose cheapest closure did not fit: the room only shrinks
        self.too_dear = [False] * len(problem.identities)
        self.dead_groups: set[int] = set()
        edges = sum(map(len, problem.needs)) + sum(map(len, problem.groups))
        self.allowance = 8 * (problem.size + edges) + 10_000

    def run(self) -> tuple[int, ...] | None:
        problem = self.problem
        identity_of, needs = problem.identity_of, problem.needs
        order = np.asarray(self.order, dtype=np.int64)
        identity = np.asarray(identity_of, dtype=np.int64)[order]
        # required identities first, each with its forms in offer order
        is_required = np.zeros(len(problem.identities), dtype=bool)
        is_required[list(problem.required)] = True
        wanted = np.flatnonzero(is_required[identity])
        wanted = wanted[np.argsort(identity[wanted], kind="stable")]
        in_order: dict[int, list[int]] = {}
        for identity_index, f in zip(
            identity[wanted].tolist(), order[wanted].tolist(), strict=True
        ):
            in_order.setdefault(identity_index, []).append(f)
        for required in problem.required:
            if not any(self.try_add(f) for f in in_order.get(required, ())):
                return None
        # then every form with a value, in offer order
        value = np.asarray(problem.value, dtype=np.int64)[order]
        offers = order[value > 0].tolist()
        cost, groups_of, chosen = problem.cost, self.groups_of, self.chosen
        for k, f in enumerate(offers):
            if k % _CLOCK_EVERY == 0 and self._late():
                return self._answer()
            form_identity = identity_of[f]
            if form_identity in chosen:
                continue
            if not needs[f] and not groups_of[form_identity]:
                # drags nothing in: the common case, kept out of the walk
                if cost[f] <= self.room:
                    chosen[form_identity] = f
                    self.room -= cost[f]
                continue
            self.try_add(f)
        # then upgrades, most valuable first, among the forms worth more than the form
        # their identity holds
        held = np.full(len(problem.identities), np.iinfo(np.int64).max)
        for held_identity, f in chosen.items():
            held[held_identity] = problem.value[f]
        better = np.flatnonzero(value > held[identity])
        better = better[np.lexsort((order[better], -value[better]))]
        for k, f in enumerate(order[better].tolist()):
            if k % _CLOCK_EVERY == 0 and self._late():
                break
            self._try_upgrade(f)
        return self._answer()

    def _late(self) -> bool:
        return self.deadline.passed

    def _answer(self) -> tuple[int, ...]:
        return tuple(sorted(self.chosen.values()))

    def try_add(self, form: int) -> bool:
        problem = self.problem
        identity = problem.identity_of[form]
        if identity in self.chosen:
            return self.chosen[identity] == form
        if self.too_dear[identity] and form == self.cheapest[identity]:
            return False
        if self.allowance <= 0 and (problem.needs[form] or self.groups_of[identity]):
            return False
        addition = self._addition(form, self.pick)
        if addition is None and self.cheapest != self.pick:
            addition = self._addition(form, self.cheapest)
        if addition is None:
            if form == self.cheapest[identity]:
                # Even its cheapest closure did not fit, and the room only shrinks: it
                # never will (nor will a group holding its identity, which drags that
                # closure in). A heuristic where a dependency was admitted with a
                # dearer form; the selection stays legal either way.
                self.too_dear[identity] = True
                self.dead_groups.update(self.groups_of[identity])
            return False
        self.chosen.update(addition)
        self.room -= sum(problem.cost[f] for f in addition.values())
        return True

    def _addition(self, form: int, pick: list[int]) -> dict[int, int] | None:
        """The forms the addition of ``form`` needs (dragging in ``pick`` of each
        identity), or None when it cannot fit. Checks come before each expansion, so a
        failing walk stops at once rather than after listing a giant group."""
        problem, chosen = self.problem, self.chosen
        identity_of, needs, cost = problem.identity_of, problem.needs, problem.cost
        addition: dict[int, int] = {}
        expanded: set[int] = set()
        spent = 0
        stack = [form]
        while stack:
            f = stack.pop()
            identity = identity_of[f]
            if identity in chosen or identity in addition:
                continue
            spent += cost[f]
            self.allowance -= 1
            if spent > self.room or (f != form and self.too_dear[identity]):
                return None
            addition[identity] = f
            for d in needs[f]:
                if d not in chosen and d not in addition:
                    if pick[d] < 0:
                        return None
                    stack.append(pick[d])
            for g in self.groups_of[identity]:
                if g in expanded:
                    continue
                if g in self.dead_groups:
                    return None
                expanded.add(g)
                for partner in problem.groups[g]:
                    if partner not in chosen and partner not in addition:
                        if pick[partner] < 0:
                            return None
                        stack.append(pick[partner])
        return addition

    def _try_upgrade(self, form: int) -> None:
        problem = self.problem
        identity = problem.identity_of[form]
        current = self.chosen.get(identity)
        if current is None or current == form or problem.value[form] <= problem.value[current]:
            return
        extra = problem.cost[form] - problem.cost[current]
        if extra <= self.room and all(d in self.chosen for d in problem.needs[form]):
            self.chosen[identity] = form
            self.room -= extra


def rounded_selection(
    problem: Problem,
    columns: Any,
    primal: Any,
    *,
    value_floor: int | None = None,
    cost_cap: int | None = None,
) -> tuple[int, ...] | None:
    """The forms the LP holds at 1, when they are a legal selection worth at least
    ``value_floor`` and costing at most ``cost_cap``: at the cost and tie-break levels
    the LP is often integral, and its answer is then the level's optimum."""
    selection = tuple(sorted(np.asarray(columns)[np.asarray(primal) > 1.0 - 1e-6].tolist()))
    if not is_legal(problem, selection):
        return None
    if value_floor is not None and sum(problem.value[f] for f in selection) < value_floor:
        return None
    if cost_cap is not None and sum(problem.cost[f] for f in selection) > cost_cap:
        return None
    return selection


def is_legal(problem: Problem, selection: tuple[int, ...]) -> bool:
    """C2-C6 for a selection of eligible forms: one form per identity, the required
    identities, the closure, the groups and the budget; and the format's rules, when
    the problem has them (``Problem.rules``)."""
    identity_of = problem.identity_of
    admitted = {identity_of[f] for f in selection}
    if len(admitted) != len(selection) or not admitted.issuperset(problem.required):
        return False
    if any(d not in admitted for f in selection for d in problem.needs[f]):
        return False
    for group in problem.groups:
        inside = sum(1 for identity in group if identity in admitted)
        if inside and inside != len(group):
            return False
    if problem.budget is not None and sum(problem.cost[f] for f in selection) > problem.budget:
        return False
    return problem.breaks(selection) is None


def _first_of_each(problem: Problem, forms: list[int]) -> list[int]:
    """For each identity, its first form in ``forms`` (-1 when it has none there)."""
    first = [-1] * len(problem.identities)
    for f in reversed(forms):
        first[problem.identity_of[f]] = f
    return first
