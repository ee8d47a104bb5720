"""The gate-ignoring baselines: ``top-k``, ``weighted`` and ``dump``.

Input: a validated ``Request`` and its ``GateReport`` (the ``Deadline`` and ``workers``
are accepted for the common strategy signature and ignored).
Output: a ``Result`` that is always a bundle (``optimal=False``, ``bound=None``):
none of them refuses, not even when a required identity is missing or cannot fit.
An empty request gives an empty bundle.

These are the designs the exact strategy is measured against, so they ignore the
hard rules *on purpose*; their picks go to the trace as they are, which
records an ineligible admitted form honestly, and the independent verifier judges
the bundle. Only ``weighted`` reads the ``GateReport`` (for its penalties); none
reads the evaluation ``labels``.

* ``top-k`` (retrieval-style rank-fill): the candidates with a positive value (a
  relevance of at least ``min_relevance``, so the threshold acts as a similarity
  cutoff), sorted by relevance, highest first, ties by id, are taken in that order
  while they fit; it **stops at the first one that does not fit** the remaining
  budget (k is "as many as the budget holds"). It knows nothing of gates,
  requirements, dependencies, groups or alternatives, so it can admit a gate-failing
  form, a reference without its resolver, half a group, or two forms of one identity.
* ``weighted`` (the classic "score can buy legality" design): every constraint is a
  finite term of one blended score, in thousandths of relevance::

      score(f) = value(f) - 300 * [f fails a gate] + 1000 * [f's identity is required]

  where ``value`` is the objective's form value and "fails a gate" means the form is
  rejected by any gate of the ``GateReport``, per-form or derived (the report keeps
  only the first failing gate, so a form pays at most one penalty). A wrong-project
  item at relevance 0.99 therefore scores 690 and beats a legal one at 0.6. Forms
  with a positive score, in decreasing score density ``score / max(cost, 1)``
  (exact fractions; ties: higher score, lower cost, id), are added in a single pass,
  skipping a form whose identity is already admitted (it knows alternatives) and
  skipping, not stopping at, one whose addition does not fit. A form's addition is
  the form plus, for each identity it ``depends_on`` that is not yet admitted, that
  identity's highest-scoring form (ties: lower cost, id), gates or not, with its own
  dependencies in turn; a dependency no candidate offers is silently left out. It
  ignores coupled groups.
* ``dump`` (everything offered): every candidate in arrival order (its position in
  the request as sent) while it fits; it **stops at the first one that does not fit**.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from ..deadline import Deadline
from ..model.objective import form_value
from ..model.types import Candidate, Request
from ..stages.choice import Choice
from ..stages.gates import GateReport

__all__ = [
    "GATE_PENALTY",
    "REQUIRED_BONUS",
    "dump_strategy",
    "top_k_strategy",
    "weighted_score",
    "weighted_strategy",
]

# Thousandths of relevance, the unit of form values.
GATE_PENALTY = 300
REQUIRED_BONUS = 1000


def _fill_until_full(request: Request, ordered: Iterable[Candidate]) -> list[str]:
    """Take candidates in order while they fit; stop at the first that does not."""
    budget = request.task.budget
    spent = 0
    taken: list[str] = []
    for candidate in ordered:
        if spent + candidate.cost > budget:
            break
        spent += candidate.cost
        taken.append(candidate.id)
    return taken


def top_k_strategy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    """Rank by relevance (ties by id) and fill until the first misfit."""
    threshold = request.task.min_relevance
    ranked = sorted(
        (c for c in request.candidates if form_value(c.relevance, threshold) > 0),
        key=lambda c: (-c.relevance, c.id),
    )
    taken = _fill_until_full(request, ranked)
    return Choice.bundle(tuple(taken), optimal=False, bound=None)


def dump_strategy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    """Everything, in arrival order, until the first misfit."""
    arrival = sorted(request.candidates, key=lambda c: c.position)
    taken = _fill_until_full(request, arrival)
    return Choice.bundle(tuple(taken), optimal=False, bound=None)


def weighted_score(
    request: Request,
    gates: GateReport,
    candidate: Candidate,
    required: frozenset[str] | None = None,
) -> int:
    """The blended score of ``candidate`` (see the module docstring), in thousandths.

    ``required`` is the request's required identities, passed in by callers that
    score every candidate (computing it is linear in the request)."""
    if required is None:
        required = frozenset(request.required_identities)
    score = form_value(candidate.relevance, request.task.min_relevance)
    if candidate.id in gates.rejected:
        score -= GATE_PENALTY
    if candidate.identity in required:
        score += REQUIRED_BONUS
    return score


def weighted_strategy(
    request: Request, gates: GateReport, deadline: Deadline, workers: int, **_: Any
) -> Choice:
    """Fill by blended-score density, with dependencies, ignoring groups."""
    required = frozenset(request.required_identities)
    score = {c.id: weighted_score(request, gates, c, required) for c in request.candidates}
    forms_of: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in request.candidates:
        forms_of[candidate.identity].append(candidate)

    def best(identity: str) -> Candidate:
        return min(forms_of[identity], key=lambda c: (-score[c.id], c.cost, c.id))

    admitted: dict[str, Candidate] = {}
    spent = 0
    budget = request.task.budget
    ranked = sorted(
        (c for c in request.candidates if score[c.id] > 0),
        key=lambda c: (-Fraction(score[c.id], max(c.cost, 1)), -score[c.id], c.cost, c.id),
    )
    for candidate in ranked:
        if candidate.identity in admitted:
            continue
        plan = {candidate.identity: candidate}
        pending = [candidate]
        while pending:
            form = pending.pop()
            for identity in form.depends_on:
                if identity in admitted or identity in plan or identity not in forms_of:
                    continue
                plan[identity] = best(identity)
                pending.append(plan[identity])
        cost = sum(c.cost for c in plan.values())
        if spent + cost <= budget:
            admitted.update(plan)
            spent += cost
    taken = [c.id for c in admitted.values()]
    return Choice.bundle(tuple(taken), optimal=False, bound=None)
