"""Closure and groups: the solver-neutral problem.

Input: a validated ``Request`` and its ``GateReport``.
Output: a ``Problem``: eligible forms in canonical order with integer cost,
value and tie-break weight; the identity of each form; the identities each form
needs (dependency closure); the coupled groups as sets of identities; the
required identities; the budget; and, when the bundle is rendered in a format, the
rules a selection keeps for the format to send it (``sendable.py``).

Nothing here knows about any solver (the CP-SAT encoding and the brute-force
oracle both read a ``Problem``). Gates have already removed every form whose
dependencies or group partners cannot be admitted, so without the budget a
problem always has a legal selection.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import accumulate, pairwise, repeat
from operator import attrgetter

from ..deadline import Deadline
from ..model.objective import form_value, tiebreak_weights
from ..model.rendering import RenderFormat
from ..model.sendable import Leading, Rule, broken
from ..model.types import Candidate, Request
from ..stages.gates import GateReport
from .sendable import form_rules

__all__ = ["Problem", "build_problem", "build_problem_by", "item_roots"]


@dataclass(frozen=True, slots=True)
class Problem:
    """Indices: forms 0..n-1 in canonical order; identities 0..m-1 sorted by name."""

    form_ids: tuple[str, ...]
    identity_of: tuple[int, ...]
    identities: tuple[str, ...]
    cost: tuple[int, ...]
    value: tuple[int, ...]
    weight: tuple[int, ...]
    # identity indices each form needs admitted (its own identity left out)
    needs: tuple[tuple[int, ...], ...]
    # each coupled group as identity indices (only groups of two or more identities)
    groups: tuple[tuple[int, ...], ...]
    required: tuple[int, ...]
    # None: no budget (used to price the mandatory closure)
    budget: int | None
    # the format's rules over form indices (``sendable.py``): a selection breaking one
    # cannot be sent; none when the bundle is not rendered
    rules: tuple[Rule[int], ...] = ()

    @property
    def size(self) -> int:
        return len(self.form_ids)

    @property
    def entries(self) -> int:
        """Forms, dependency edges, group memberships and the rules' terms: what the
        LP's rows and the CP-SAT model's constraints follow (a dense request has a
        hundred edges a form)."""
        terms = (len(r.order) if isinstance(r, Leading) else len(r.some) + len(r.unless)
                 for r in self.rules)  # fmt: skip
        return self.size + sum(map(len, self.needs)) + sum(map(len, self.groups)) + sum(terms)

    def blind(self) -> Problem:
        """The same problem without the format's rules."""
        return replace(self, rules=()) if self.rules else self

    def breaks(self, selection: Iterable[int]) -> str | None:
        """The first of the format's rules ``selection`` breaks, or None."""
        return broken(self.rules, set(selection)) if self.rules else None

    def forms_of(self) -> tuple[tuple[int, ...], ...]:
        """Form indices of each identity, in canonical order."""
        identity_of = self.identity_of
        counts = [0] * len(self.identities)
        for identity in identity_of:
            counts[identity] += 1
        starts = list(accumulate(counts, initial=0))
        # a stable sort by identity: each identity's forms stay in canonical order, with
        # no list per identity (see index_by)
        order = sorted(range(len(identity_of)), key=identity_of.__getitem__)
        return tuple(tuple(order[s:e]) for s, e in pairwise(starts))

    def mandatory(self, required: tuple[int, ...] | None = None) -> Problem:
        """The same problem with no budget and no value: its optimum is the cheapest
        selection that admits ``required`` (default: all required identities)."""
        return replace(
            self,
            value=(0,) * len(self.value),
            budget=None,
            required=self.required if required is None else tuple(sorted(required)),
        )


def build_problem(
    request: Request,
    gates: GateReport,
    before: Problem | None = None,
    render: RenderFormat | None = None,
) -> Problem:
    """The problem of ``request``, rendered in ``render`` (None: not rendered);
    ``before``, a problem built earlier (a session's previous request), lends the
    tie-break weights of the forms it shares (a weight depends on the id alone, and
    hashing every id was a third of the build)."""
    problem = _build(request, gates, before, None, render)
    assert problem is not None, "with no deadline the build always ends"
    return problem


def item_roots(problem: Problem) -> list[int]:
    """Each identity's item, named by one of its identities: identities joined by a group
    or by a form's needs are one item (every rule but the budget then inside one)."""
    parent = list(range(len(problem.identities)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for group in problem.groups:
        for other in group[1:]:
            parent[root(other)] = root(group[0])
    for form, needs in enumerate(problem.needs):
        for needed in needs:
            parent[root(needed)] = root(problem.identity_of[form])
    return [root(i) for i in range(len(parent))]


def index_by(size: int, pairs: Iterable[tuple[int, int]]) -> tuple[tuple[int, ...], ...]:
    """For each key in ``range(size)``, the values paired with it, in the pairs' order.

    Tuples of integers, with a list only for a key that occurs: the cyclic collector
    stops tracking the tuples, while a list for every identity would stay in each of
    its passes over the whole heap for as long as the call holds it."""
    found: dict[int, list[int]] = {}
    for key, value in pairs:
        found.setdefault(key, []).append(value)
    return tuple(tuple(found[key]) if key in found else () for key in range(size))


def build_problem_by(
    deadline: Deadline, request: Request, gates: GateReport, render: RenderFormat | None = None
) -> Problem | None:
    """``build_problem``, or None once ``deadline`` has passed
    during its first pass over the forms (checked every ``_CHUNK`` forms). A problem
    finished past its deadline is never searched, so a call whose time is already spent
    (the pipeline's floor of 1 ms, after a parse longer than the limit) stops within a
    chunk instead of building the whole problem only to answer undecided."""
    return _build(request, gates, None, deadline, render)


# forms read between two looks at the clock in build_problem_by (about a millisecond)
_CHUNK = 4096


def _build(
    request: Request,
    gates: GateReport,
    before: Problem | None,
    deadline: Deadline | None,
    render: RenderFormat | None,
) -> Problem | None:
    eligible_ids = gates.notes
    candidates = request.candidates
    eligible: list[Candidate] = []
    # (one look more after the last chunk)
    for start in range(0, len(candidates) + _CHUNK, _CHUNK):
        if deadline is not None and deadline.passed:
            return None
        eligible += [c for c in candidates[start : start + _CHUNK] if c.id in eligible_ids]
    identities = tuple(sorted({c.identity for c in eligible}))
    index = {name: i for i, name in enumerate(identities)}
    threshold = request.task.min_relevance
    groups: list[tuple[int, ...]] = []
    for _, members in sorted(gates.groups.items()):
        # Gates rejected every form of a group with an unavailable member, so what is
        # left of a group is either all available or has no eligible form at all.
        present = tuple(sorted(index[m] for m in members if m in index))
        if len(present) >= 2:
            groups.append(present)
    # each column read in C (map over attrgetters)
    form_ids = tuple(map(_ID, eligible))
    cost = tuple(map(_COST, eligible))
    return Problem(
        form_ids=form_ids,
        identity_of=tuple(map(index.__getitem__, map(_IDENTITY, eligible))),
        identities=identities,
        cost=cost,
        value=tuple(map(form_value, map(_RELEVANCE, eligible), repeat(threshold))),
        weight=_weights(form_ids, before),
        needs=tuple(
            tuple(sorted({index[d] for d in c.depends_on if d != c.identity}))
            if c.depends_on
            else ()
            for c in eligible
        ),
        groups=tuple(sorted(set(groups))),
        required=tuple(sorted(index[r] for r in gates.required_identities(request) if r in index)),
        budget=request.task.budget,
        rules=form_rules(request, render, form_ids, cost),
    )


_ID, _IDENTITY = attrgetter("id"), attrgetter("identity")
_COST, _RELEVANCE = attrgetter("cost"), attrgetter("relevance")


def _weights(form_ids: tuple[str, ...], before: Problem | None) -> tuple[int, ...]:
    if before is None:
        return tuple(tiebreak_weights(form_ids))
    known = dict(zip(before.form_ids, before.weight, strict=True))
    missing = [i for i in form_ids if i not in known]
    known.update(zip(missing, tiebreak_weights(missing), strict=True))
    return tuple(map(known.__getitem__, form_ids))
