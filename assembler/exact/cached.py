"""The cache-aware decision: the cheapest bundle to send within the tolerance (section 6b).

Input: a validated ``Request`` with a ``cache`` section, its ``GateReport``, the
problem and the cache-blind optimum (``decide_exact`` found them), a backend, the
deadline and a worker count.
Output: a ``Choice`` for the cache-aware order, with its ``CacheOutcome``.

The order, from ``models/README.md`` section 6b: V* is the cache-blind optimum's value
at the budget B and F = ceil((1 - tolerance) V*) the value floor. The rewrite budget is
B' = B - ceil(headroom x B) when some legal selection of cost at most B' reaches F, else
B. A legal selection is feasible when its value reaches F and it either keeps every
previous block or costs at most the rewrite budget. Among the feasible: the least price
(``prefix.Prefix.price``), then section 6's order (most value, least cost, least weight,
canonical). The cache-blind optimum is feasible whenever B' is not taken, and a selection
reaching F within B' exists when it is, so a request with a legal bundle always gets
one; refusals are the cache-blind decision's.

Each backend solves the last step its own way (``Backend.solve_cached``): CP-SAT with
the kept prefix as a monotone chain of Booleans (``CachedSearch``), the brute-force
oracle by enumeration.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from ..deadline import Deadline
from ..model.cache import CacheOutcome, CacheTerms
from ..model.types import Request
from .backend import Backend, Outcome, SolveStatus, selection_cost, selection_value
from .closure import Problem
from .cpsat import _cp_model, _Session
from .prefix import Prefix, build_prefix

__all__ = ["CachedBackend", "CachedSearch", "decide_cached", "feasible"]


class CachedBackend(Protocol):
    def solve_cached(
        self,
        problem: Problem,
        prefix: Prefix,
        terms: CacheTerms,
        *,
        time_limit: float,
        workers: int,
        hint: tuple[int, ...] | None = None,
    ) -> Outcome:
        """The least-price feasible selection, then section 6's order; OPTIMAL when
        proven. ``cost_floor`` carries a proven lower bound on the price when stopped."""
        ...


def decide_cached(
    request: Request,
    problem: Problem,
    blind: Outcome,
    backend: Backend,
    deadline: Deadline,
    workers: int,
) -> tuple[Outcome, CacheOutcome]:
    """The cache-aware answer, from the cache-blind optimum ``blind`` of ``problem``."""
    cache = request.cache
    prefix = build_prefix(request, problem.form_ids, problem.cost)
    assert cache is not None and prefix is not None and problem.budget is not None
    blind_value = selection_value(problem, blind.selection)
    floor = cache.value_floor(blind_value)
    rewrite_budget = cache.rewrite_budget(problem.budget)
    rewrite_hint: tuple[int, ...] | None = None
    if selection_cost(problem, blind.selection) > rewrite_budget:
        # the headroom holds only where the tolerance allows it: the best value within
        # it must reach the floor, else a rewrite may fill the whole budget
        narrower = backend.solve(
            replace(problem, budget=rewrite_budget),
            time_limit=deadline.limit(),
            workers=workers,
            value_only=True,
        )
        found = narrower.status is SolveStatus.OPTIMAL
        if found and selection_value(problem, narrower.selection) >= floor:
            rewrite_hint = narrower.selection
        else:
            rewrite_budget = problem.budget
    terms = CacheTerms(
        append_floor=floor if prefix.complete else None,
        rewrite_budget=rewrite_budget,
        rewrite_floor=floor,
    )
    blind_price = prefix.price(blind.selection).price
    hint = blind.selection if rewrite_hint is None else rewrite_hint
    solve_cached = getattr(backend, "solve_cached", None)
    if solve_cached is None:
        raise TypeError(f"the {backend.name} backend has no cache-aware search")
    outcome: Outcome = solve_cached(
        problem, prefix, terms, time_limit=deadline.limit(), workers=workers, hint=hint
    )
    if (
        outcome.status is SolveStatus.UNKNOWN
        or (not outcome.selection
        and not feasible(problem, prefix, terms, outcome.selection))
    ):
        # nothing feasible found in time: the cache-blind optimum, legal, unproven here
        outcome = Outcome(SolveStatus.FEASIBLE, blind.selection, cost_floor=outcome.cost_floor)
    price = prefix.price(outcome.selection)
    report = CacheOutcome(
        terms=terms,
        blind_value=blind_value,
        blind_price=blind_price,
        kept=price.kept,
        previous=len(cache.previous),
        read=price.read,
        written=price.written,
        uncached=price.uncached,
        price=price.price,
        price_floor=None if outcome.status is SolveStatus.OPTIMAL else outcome.cost_floor,
        appended=prefix.complete and price.kept == prefix.size,
        entry=price.entry,
    )
    return outcome, report


def feasible(
    problem: Problem, prefix: Prefix, terms: CacheTerms, selection: tuple[int, ...]
) -> bool:
    """Whether a legal ``selection`` is in the cache-aware order's feasible set."""
    value = selection_value(problem, selection)
    if (
        terms.append_floor is not None
        and value >= terms.append_floor
        and prefix.kept(selection) == prefix.size
    ):
        return True
    return (
        selection_cost(problem, selection) <= terms.rewrite_budget and value >= terms.rewrite_floor
    )


class CachedSearch(_Session):
    """One cache-aware lexicographic solve with CP-SAT: the prefix kept as a chain of
    Booleans over the matchable run, the price as a linear expression of them and of
    the forms (module docstring), then the phases of section 6 with the price fixed."""

    def __init__(
        self,
        problem: Problem,
        prefix: Prefix,
        terms: CacheTerms,
        time_limit: float,
        workers: int,
    ) -> None:
        super().__init__(_cp_model(), problem, time_limit, workers)
        self.prefix = prefix
        self.terms = terms
        self.price = self._encode_cache()

    def _encode_cache(self) -> Any:
        model, x, prefix, cp = self.model, self.x, self.prefix, self.cp
        cache, pricing = prefix.cache, prefix.cache.pricing
        one = model.new_constant(1)
        keep: list[Any] = []
        for j, form in enumerate(prefix.forms):
            if form is None:
                keep.append(one)
                continue
            var = model.new_bool_var(f"keep{j}")
            model.add_implication(var, x[form])
            if keep:
                model.add_implication(var, keep[-1])
            keep.append(var)
        for form, barrier in prefix.barriers.items():
            model.add_bool_or([~x[form], ~keep[barrier]])
        total = prefix.instruction + cp.LinearExpr.weighted_sum(x, list(self.problem.cost))
        top = prefix.instruction + sum(self.problem.cost)
        read: Any = 0
        if cache.breakpoints > 0:
            reached = 0
            for entry in prefix.entries:
                gained = sum(prefix.tokens[reached : entry + 1])
                read = read + gained * keep[entry]
                reached = entry + 1
        elif prefix.automatic_from is not None:
            least, step = cache.min_prefix_tokens, cache.step_tokens
            hit = keep[prefix.automatic_from]
            steps = model.new_int_var(0, max(0, (sum(prefix.tokens) - least) // step), "steps")
            kept_tokens = cp.LinearExpr.weighted_sum(keep, list(prefix.tokens))
            model.add(least * hit + step * steps <= kept_tokens)
            model.add(steps == 0).only_enforce_if(~hit)
            read = least * hit + step * steps
        price: Any = pricing.read * read + pricing.input * (total - read)
        if cache.writes and pricing.write != pricing.input:
            # written: everything past the entry read, once the content is cacheable
            cacheable = model.new_bool_var("cacheable")
            least = cache.min_prefix_tokens
            model.add(total >= least).only_enforce_if(cacheable)
            model.add(total <= least - 1).only_enforce_if(~cacheable)
            written = model.new_int_var(0, top, "written")
            model.add(written == total - read).only_enforce_if(cacheable)
            model.add(written == 0).only_enforce_if(~cacheable)
            price = price + (pricing.write - pricing.input) * written
        terms = self.terms
        value = cp.LinearExpr.weighted_sum(x, list(self.problem.value))
        appended = model.new_bool_var("appended")
        if terms.append_floor is None:
            model.add(appended == 0)
        else:
            if keep:
                model.add_implication(appended, keep[-1])
            model.add(value >= terms.append_floor).only_enforce_if(appended)
        model.add(total - prefix.instruction <= terms.rewrite_budget).only_enforce_if(~appended)
        model.add(value >= terms.rewrite_floor).only_enforce_if(~appended)
        return price

    def run_cached(self, hint: tuple[int, ...] | None) -> Outcome:
        """Price, then value, then section 6's cost, weight and canonical phases."""
        cp, problem = self.cp, self.problem
        if hint is not None:
            self.hint(hint)
        self.model.minimize(self.price)
        status, solver = self._run()
        if status == cp.INFEASIBLE:
            return Outcome(SolveStatus.INFEASIBLE)
        if status not in (cp.OPTIMAL, cp.FEASIBLE):
            return Outcome(SolveStatus.UNKNOWN)
        selection = self._selection(solver)
        if status != cp.OPTIMAL:
            floor = int(solver.best_objective_bound + 0.5)
            return Outcome(SolveStatus.FEASIBLE, selection, cost_floor=floor)
        self.model.add(self.price == round(solver.objective_value))
        value_expr = self._sum(problem.value)
        self.model.maximize(value_expr)
        self.hint(selection)
        status, solver = self._run()
        if status != cp.OPTIMAL:
            return Outcome(SolveStatus.FEASIBLE, selection)
        selection = self._selection(solver)
        value = round(solver.objective_value)
        self.model.add(value_expr == value)
        self.hint(selection)
        selection, done, held = self._minimise(list(problem.cost), selection, True)
        if not done:
            return self._stopped(selection, held, value, None)
        return self._lightest(selection, held, value)
