"""Derived requests: the questions a counterfactual asks, as requests of the stated model.

Input: a validated ``Request`` and an identity, form or budget.
Output: another ``Request`` whose legal selections are exactly the legal selections
of the original that answer the question; ``assemble()`` on it then gives the exact
answer with any exact strategy, which is what keeps every counterfactual exact and
solver-agnostic.

* ``with_budget(r, b)``: the same request at budget ``b``.
* ``unbounded(r)``: at a budget no selection can exceed (the sum of every cost).
* ``forced_in(r, i)``: ``i`` added to ``task.required`` (C3 now admits it).
* ``without_identity(r, i)``: every form of ``i`` gated. The identity stays in its
  groups and keeps its dependents, so a group partner or a form that needs it is
  gated too, as C4 and C5 demand of a selection that does not admit it.
* ``only_form(r, i, f)``: every form of ``i`` other than ``f`` gated.
* ``not_required(r, i)``: ``i`` no longer required (``task.required`` and the
  candidates' ``required`` flags); it stays on offer.
* ``priced(r)``: every relevance 0 and the budget unbounded, so the optimum is the
  cheapest selection meeting C1-C5: the request's mandatory closure.
* ``content_only(r)``: every form without content gated, as a rendering gates them
  (``no-content``), so that derived requests of a rendered result keep that gate
  without rendering every answer.

Gating uses a seal on a fresh lineage name given only to the forms concerned: sealing
the identity's name would also seal a form whose lineage or id happens to spell it.
"""

from __future__ import annotations

from dataclasses import replace

from ..model.types import Request

__all__ = [
    "content_only",
    "forced_in",
    "not_required",
    "only_form",
    "priced",
    "total_cost",
    "unbounded",
    "with_budget",
    "without_identity",
]


def total_cost(request: Request) -> int:
    """The sum of every candidate's cost: no selection costs more."""
    return sum(c.cost for c in request.candidates)


def with_budget(request: Request, budget: int) -> Request:
    return replace(request, task=replace(request.task, budget=budget))


def unbounded(request: Request) -> Request:
    return with_budget(request, max(request.task.budget, total_cost(request)))


def forced_in(request: Request, identity: str) -> Request:
    required = tuple(sorted({*request.task.required, identity}))
    return replace(request, task=replace(request.task, required=required))


def not_required(request: Request, identity: str) -> Request:
    task = replace(request.task, required=tuple(r for r in request.task.required if r != identity))
    candidates = tuple(
        replace(c, required=False) if c.identity == identity and c.required else c
        for c in request.candidates
    )
    return replace(request, task=task, candidates=candidates)


def without_identity(request: Request, identity: str) -> Request:
    return _gated(request, {c.id for c in request.candidates if c.identity == identity})


def only_form(request: Request, identity: str, form_id: str) -> Request:
    return _gated(
        request, {c.id for c in request.candidates if c.identity == identity and c.id != form_id}
    )


def priced(request: Request) -> Request:
    candidates = tuple(replace(c, relevance=0.0) for c in request.candidates)
    return unbounded(replace(request, candidates=candidates))


def content_only(request: Request) -> Request:
    return _gated(request, {c.id for c in request.candidates if c.content is None})


def _gated(request: Request, form_ids: set[str]) -> Request:
    if not form_ids:
        return request
    mark = _fresh_name(request, "explain:gated")
    candidates = tuple(
        replace(c, lineage=(*c.lineage, mark)) if c.id in form_ids else c
        for c in request.candidates
    )
    seal = tuple(sorted({*request.task.seal, mark}))
    return replace(request, task=replace(request.task, seal=seal), candidates=candidates)


def _fresh_name(request: Request, stem: str) -> str:
    """A name no seal can already match: no id, identity, lineage entry or seal uses it."""
    taken = {*request.task.seal}
    for c in request.candidates:
        taken.add(c.id)
        taken.add(c.identity)
        taken.update(c.lineage)
    name = stem
    while name in taken:
        name += "'"
    return name
