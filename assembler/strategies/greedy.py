"""The ``greedy`` strategy: the practitioner's context compiler, kept as a baseline.

Input: a validated ``Request`` and its ``GateReport`` (the ``Deadline`` and ``workers``
are accepted for the common strategy signature and ignored: greedy never searches).
Output: a ``Result`` with ``strategy="greedy"``: a bundle (``optimal=False``,
``bound=None``: greedy proves nothing) or a refusal.

The definition, step by step:

1. **Gates.** Only forms the ``GateReport`` lists as eligible are ever considered,
   so every dependency and group partner of a considered form has an eligible form.
2. **Required refusals.** ``REQUIRED_MISSING`` and ``REQUIRED_INELIGIBLE`` exactly as
   the exact pipeline reports them (``assembler.exact.refusal.required_refusal``).
3. **Additions.** Admitting a form ``f`` of a not-yet-admitted identity admits an
   *addition*: ``f``; then, for every identity that ``f`` needs (``depends_on``) and
   every other identity of every group ``f``'s identity belongs to, when it is
   neither admitted nor already in the addition, that identity's *cheapest* eligible
   form (ties: higher value, then lower id), with the same rule applied to it in
   turn (its own dependencies and groups), until nothing is missing. Identities that
   are already admitted are not re-added, whatever form they were admitted with.
4. **Required material.** Each required identity in canonical order (sorted by
   name) that is not yet admitted (an earlier addition may have admitted it as a
   dependency or a group partner) is admitted with its *highest-value* eligible
   form (ties: lower cost, then lower id) and that form's addition. If the whole
   addition does not fit in what is left of the budget, greedy **refuses** with
   ``MANDATORY_OVER_BUDGET``. That refusal is greedy's claim, not a proof:

   * ``forms``: what greedy had admitted, plus the addition that failed, plus the
     additions of the required identities not reached yet, made by the same rule
     with no budget check, so that the listed closure admits every required
     identity and keeps C1, C2, C4 and C5 (the verifier checks a refusal's closure);
   * ``mandatory_cost``: the cost of those forms (greedy's price of the required
     material, *not* the minimum: the exact solver may fit it, which is then a
     false refusal); ``excess = mandatory_cost - budget``; the interval fields
     ``mandatory_cost_lower`` and ``mandatory_cost_upper`` both restate that claim;
   * ``conflict``: the required identities admitted before the failure plus those
     in the failing addition (including the failing one), sorted. It is not
     minimal: greedy does not run the deletion filter of the exact pipeline.
4b. **With a cache section** (models/README.md 6b), before step 4: the previous call's
   blocks are admitted in their order, each with its addition, as long as each is an
   eligible form with the same content and its addition fits: a prefix kept greedily
   (what follows may still break it, by the layout's rules). The result's ``cache``
   record gives that bundle's prefix and price, and no place in the cache-aware order
   (greedy knows no optimum to be within the tolerance of).
5. **Optional material.** Every other eligible form with a positive value, in
   decreasing value density ``value / max(cost, 1)`` (compared exactly, as
   fractions; ties: higher value, then lower cost, then lower id), in a single pass:
   a form whose identity is already admitted is skipped; otherwise its whole
   addition is admitted when it fits in what is left of the budget, and skipped
   when it does not (later, smaller forms may still fit). Forms of value 0 are
   never added on their own, only inside an addition.

The result is always a legal bundle (C1-C6 hold by construction; the tests run the
independent verifier on every greedy bundle). Greedy's failures are therefore only
of two kinds: **false refusals** (step 4 commits to the most valuable form of a
required identity and never revisits that choice, so a dearer standalone form can
crowd out a later required identity that a cheaper, shared-resolver selection would
fit) and **lost value or extra cost** (step 5 judges a form by its own density, not
by the price of its addition: a 20-token reference of high density drags in a
650-token resolver where a 400-token full form of the same content was available,
and a committed form is never swapped for a better one).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

from ..cache.prefix import build_prefix, content_sha256
from ..deadline import Deadline
from ..exact.refusal import required_refusal
from ..model.cache import CacheOutcome
from ..model.objective import form_value
from ..model.types import Candidate, Refusal, RefusalCode, Request
from ..stages.choice import Choice
from ..stages.gates import GateReport

__all__ = ["greedy_strategy"]

NAME = "greedy"


class _Greedy:
    """Greedy's state over one request: the eligible forms and what is admitted."""

    def __init__(self, request: Request, gates: GateReport) -> None:
        self.request = request
        threshold = request.task.min_relevance
        self.value = {c.id: form_value(c.relevance, threshold) for c in request.candidates}
        self.forms_of: dict[str, list[Candidate]] = defaultdict(list)
        for candidate in request.candidates:
            if gates.is_eligible(candidate.id):
                self.forms_of[candidate.identity].append(candidate)
        self.groups_of_identity: dict[str, list[str]] = defaultdict(list)
        for group, members in sorted(gates.groups.items()):
            for member in members:
                self.groups_of_identity[member].append(group)
        self.group_members = {group: sorted(members) for group, members in gates.groups.items()}
        # the cheapest form of each identity never changes: chosen once, not per visit
        self.cheapest = {
            identity: min(forms, key=lambda c: (c.cost, -self.value[c.id], c.id))
            for identity, forms in self.forms_of.items()
        }
        # identity -> admitted form; insertion order is the order of admission
        self.admitted: dict[str, Candidate] = {}
        self.spent = 0

    def best_form(self, identity: str) -> Candidate:
        return min(self.forms_of[identity], key=lambda c: (-self.value[c.id], c.cost, c.id))

    def addition(self, first: Candidate, within: int | None = None) -> dict[str, Candidate] | None:
        """``first`` plus everything it drags in (step 3), identity -> form; with
        ``within``, None as soon as its cost passes it (the rest cannot make it fit)."""
        plan: dict[str, Candidate] = {first.identity: first}
        cost = first.cost
        # A worklist rather than recursion: dependency chains may be long. The set
        # reached does not depend on the visiting order, since every identity but
        # the first is given its cheapest form.
        pending = [first]
        expanded: set[str] = set()  # each group's members are listed once per addition
        while pending:
            if within is not None and cost > within:
                return None
            form = pending.pop()
            wanted = [d for d in form.depends_on if d != form.identity]
            for group in self.groups_of_identity.get(form.identity, ()):
                if group not in expanded:
                    expanded.add(group)
                    wanted.extend(self.group_members[group])
            for identity in wanted:
                if identity in self.admitted or identity in plan:
                    continue
                # Gates guarantee an eligible form: a form needing an identity
                # without one was rejected as dependency-unavailable/group-ineligible.
                chosen = self.cheapest[identity]
                plan[identity] = chosen
                cost += chosen.cost
                pending.append(chosen)
        if within is not None and cost > within:
            return None
        return plan

    def whole_addition(self, first: Candidate) -> dict[str, Candidate]:
        plan = self.addition(first)
        assert plan is not None  # no limit given
        return plan

    def left(self) -> int:
        return self.request.task.budget - self.spent

    def density_key(self, c: Candidate) -> tuple[Fraction, int, int, str]:
        value = self.value[c.id]
        return (-Fraction(value, max(c.cost, 1)), -value, c.cost, c.id)

    def fits(self, plan: dict[str, Candidate]) -> bool:
        return self.spent + _cost(plan) <= self.request.task.budget

    def admit(self, plan: dict[str, Candidate]) -> None:
        self.admitted.update(plan)
        self.spent += _cost(plan)

    def keep_previous(self) -> None:
        """Step 4b: the previous call's blocks, in order, while each fits."""
        cache = self.request.cache
        if cache is None:
            return
        by_id = {c.id: c for forms in self.forms_of.values() for c in forms}
        for block in cache.previous:
            if block.id is None:
                continue  # the instruction: always rendered, never selected
            c = by_id.get(block.id)
            if c is None or content_sha256(c) != block.content_sha256:
                return
            if c.identity in self.admitted:
                if self.admitted[c.identity] is not c:
                    return
                continue
            plan = self.addition(c, within=self.left())
            if plan is None:
                return
            self.admit(plan)

    def run(self) -> Refusal | None:
        """Steps 4b, 4 and 5; returns greedy's refusal, or None with ``admitted`` filled."""
        self.keep_previous()
        required = self.request.required_identities
        for position, identity in enumerate(required):
            if identity in self.admitted:
                continue
            plan = self.whole_addition(self.best_form(identity))
            if not self.fits(plan):
                return self.over_budget(plan, required[position + 1 :])
            self.admit(plan)

        optional = [
            c
            for forms in self.forms_of.values()
            for c in forms
            if self.value[c.id] > 0 and c.identity not in self.admitted
        ]
        optional.sort(key=self.density_key)
        for candidate in optional:
            if candidate.identity in self.admitted:
                continue
            fitting = self.addition(candidate, within=self.left())
            if fitting is not None:
                self.admit(fitting)
        return None

    def over_budget(self, failed: dict[str, Candidate], rest: tuple[str, ...]) -> Refusal:
        required = set(self.request.required_identities)
        conflict = sorted(required & (set(self.admitted) | set(failed)))
        # Complete the closure past the failure so that the refusal lists a selection
        # admitting every required identity (the verifier's refusal check needs it).
        self.admitted.update(failed)
        for identity in rest:
            if identity not in self.admitted:
                self.admitted.update(self.whole_addition(self.best_form(identity)))
        forms = sorted(c.id for c in self.admitted.values())
        mandatory_cost = _cost(self.admitted)
        budget = self.request.task.budget
        excess = mandatory_cost - budget
        return Refusal(
            code=RefusalCode.MANDATORY_OVER_BUDGET,
            budget=budget,
            mandatory_cost=mandatory_cost,
            excess=excess,
            mandatory_cost_lower=mandatory_cost,
            mandatory_cost_upper=mandatory_cost,
            forms=tuple(forms),
            conflict=tuple(conflict),
            message=(
                f"greedy's required material costs {mandatory_cost} > budget {budget},"
                f" excess {excess}; greedy could not fit {', '.join(conflict)}"
                " (greedy's claim: neither the cost nor the conflict is proven minimal)"
            ),
        )


def _cost(plan: dict[str, Candidate]) -> int:
    return sum(c.cost for c in plan.values())


def greedy_strategy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    """Run greedy (see the module docstring) on one request (in one pass: there is
    nothing to limit)."""
    refusal = required_refusal(request, gates)
    if refusal is not None:
        return Choice.refused(refusal)
    state = _Greedy(request, gates)
    refusal = state.run()
    if refusal is not None:
        return Choice.refused(refusal)
    selected = tuple(c.id for c in state.admitted.values())
    return Choice.bundle(selected, optimal=False, bound=None, cache=_priced(request, selected))


def _priced(request: Request, selected: tuple[str, ...]) -> CacheOutcome | None:
    """A bundle's prefix and price under the request's cache section (no terms)."""
    if request.cache is None:
        return None
    forms = sorted(selected)
    by_id = {c.id: c for c in request.candidates}
    prefix = build_prefix(request, forms, [by_id[i].cost for i in forms])
    assert prefix is not None
    return prefix.outcome(tuple(range(len(forms))))
