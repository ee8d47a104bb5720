"""The pipeline: request in, result out, for every strategy.

Input: a request (a mapping of parsed JSON, or a typed ``Request``), a strategy
name, a time limit and a worker count.
Output: a ``Result``.

The exact pipeline is a visible chain of pure stages:
parse -> gates -> required refusals -> closure/groups -> backend solve ->
(refusal with mandatory cost and conflict | bundle | undecided) -> trace.
Baselines share the parse and gate stages and the result type; each strategy is a
function ``(request, gates, time_limit, workers) -> Result`` registered by name
and imported only when asked for.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..model.errors import InvalidRequest, UnknownStrategy
from ..model.parse import parse_request
from ..model.types import Request, Result
from ..stages.gates import GateReport, apply_gates
from ..stages.trace import bundle_result, refused_result, undecided_result
from .backend import Backend, Outcome, SolveStatus, selection_cost, selection_value
from .closure import Problem, build_problem
from .reduce import Level, Reduction
from .refusal import over_budget_refusal, required_refusal

__all__ = ["DEFAULT_TIME_LIMIT", "STRATEGIES", "assemble", "solve_exact"]

# Seconds. At the limit a caller gets the best legal bundle found with its bound and
# gap (optimal=false), or "undecided": never a false refusal, never an illegal bundle.
DEFAULT_TIME_LIMIT = 10.0

Strategy = Callable[[Request, GateReport, float, int], Result]

_TRACE_SECONDS_PER_CANDIDATE = 1e-5

# name -> "module:function"; imported lazily so that a baseline never loads OR-Tools.
STRATEGIES: dict[str, str] = {
    "cpsat": "assembler.exact.solve:cpsat_strategy",
    "enumerate": "assembler.exact.solve:enumerate_strategy",
    "greedy": "assembler.greedy:greedy_strategy",
    "top-k": "assembler.baselines:top_k_strategy",
    "weighted": "assembler.baselines:weighted_strategy",
    "dump": "assembler.baselines:dump_strategy",
}


def assemble(
    request: Mapping[str, Any] | Request,
    *,
    strategy: str = "cpsat",
    time_limit: float | None = None,
    workers: int | None = None,
) -> Result:
    """Assemble the bundle for one request with the named strategy."""
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
        raise InvalidRequest("time_limit", f"must be a finite number of seconds, not {limit!r}")
    if limit <= 0:
        raise InvalidRequest("time_limit", f"must be positive, not {limit!r}")
    count = 1 if workers is None else workers
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InvalidRequest("workers", f"must be a positive integer, not {count!r}")
    run = _strategy(strategy)
    started = time.perf_counter()
    parsed = parse_request(request)
    parsed_at = time.perf_counter()
    gates = apply_gates(parsed)
    gated_at = time.perf_counter()
    # The limit covers the whole call: parsing a huge request eats into it, and the
    # trace that follows the solve is set aside (measured ~8 us per candidate).
    reserve = _TRACE_SECONDS_PER_CANDIDATE * len(parsed.candidates)
    remaining = max(0.001, float(limit) - (gated_at - started) - reserve)
    result = run(parsed, gates, remaining, count)
    timings = (
        ("parse", parsed_at - started),
        ("gates", gated_at - parsed_at),
        *result.timings,
        ("total", time.perf_counter() - started),
    )
    return _with_timings(result, timings)


def _with_timings(result: Result, timings: tuple[tuple[str, float], ...]) -> Result:
    return replace(result, timings=timings)


def _strategy(name: str) -> Strategy:
    target = STRATEGIES.get(name)
    if target is None:
        raise UnknownStrategy(name, tuple(STRATEGIES))
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    found: Strategy = getattr(module, function)
    return found


def solve_exact(
    request: Request, gates: GateReport, backend: Backend, time_limit: float, workers: int
) -> Result:
    """The exact pipeline after the gates, for any backend."""
    deadline = time.monotonic() + time_limit
    name = backend.name
    started = time.perf_counter()
    refusal = required_refusal(request, gates)
    if refusal is not None:
        return refused_result(request, gates, name, refusal)
    problem = build_problem(request, gates)
    built_at = time.perf_counter()
    # building the problem is part of the call's time too
    outcome = backend.solve(
        problem, time_limit=max(0.001, deadline - time.monotonic()), workers=workers
    )
    solved_at = time.perf_counter()
    timings: tuple[tuple[str, float], ...] = (
        ("closure", built_at - started),
        ("solve", solved_at - built_at),
    )
    if outcome.status is SolveStatus.INFEASIBLE:
        remaining = max(0.001, deadline - time.monotonic())
        refusal = over_budget_refusal(problem, backend, time_limit=remaining, workers=workers)
        timings += (("refusal", time.perf_counter() - solved_at),)
        return refused_result(request, gates, name, refusal, timings)
    if outcome.status is SolveStatus.UNKNOWN:
        return undecided_result(request, gates, name, outcome.bound, timings)
    optimal = outcome.status is SolveStatus.OPTIMAL
    result = bundle_result(
        request,
        gates,
        name,
        (problem.form_ids[f] for f in outcome.selection),
        optimal=optimal,
        bound=selection_value(problem, outcome.selection) if optimal else outcome.bound,
    )
    return _with_timings(result, (*timings, ("trace", time.perf_counter() - solved_at)))


class Reducing:
    """A backend that first reduces the problem exactly, then searches only the core.

    Cores of a few dozen forms are solved by a small exact search (``search.py``)
    rather than a CP-SAT session, which costs more to start than they take; the
    search gives up after a few milliseconds and the core goes to ``inner``. Problems
    without a budget (pricing the mandatory closure) go straight to ``inner``: the
    value bound has nothing to prune there.
    """

    # forms up to which the small search is tried first (measured on 100-form requests:
    # a cap of 48 gave a median of 5.2 ms, 96 gave 2.7 ms, 200 no better)
    SMALL_CORE = 96

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name

    def solve(
        self,
        problem: Problem,
        *,
        time_limit: float,
        workers: int,
        tiebreak: bool = True,
        hint: tuple[int, ...] | None = None,
        value_only: bool = False,
        proven: tuple[int, ...] = (),
    ) -> Outcome:
        from .reduce import reduce_problem
        from .search import SmallSearch

        deadline = time.monotonic() + time_limit

        def remaining() -> float:
            return max(0.001, deadline - time.monotonic())

        if problem.budget is None:
            return self.inner.solve(
                problem, time_limit=time_limit, workers=workers, tiebreak=tiebreak
            )
        reduction = reduce_problem(problem)
        if reduction is None:
            return Outcome(SolveStatus.INFEASIBLE)
        # Each pass proves one more level of the objective on the core, then the next
        # reduction keeps only the forms that can still beat or tie that answer at the
        # next level: value, then cost, then tie-break weight. The uniqueness proof,
        # the most expensive phase, only ever sees forms that tie on all three.
        optimum: list[int] = []  # value, then cost, of the full problem once proven

        def proven_levels(current: Reduction) -> tuple[int, ...]:
            # the proven levels in the terms of the current core (fixed forms taken out)
            fixed = current.chosen
            totals = (problem.value, problem.cost)
            return tuple(
                level - sum(totals[k][f] for f in fixed) for k, level in enumerate(optimum)
            )

        gave_up = [self.SMALL_CORE + 1]  # smallest core the search failed on

        def small(core: Problem) -> Outcome | None:
            # a core that stumped the search once is retried only once it has halved
            if core.size > self.SMALL_CORE or core.size * 2 > gave_up[0]:
                return None
            found = SmallSearch().solve(core)
            if found is None:
                gave_up[0] = core.size
            return found

        for level, stop in ((Level.COST, "value"), (Level.WEIGHT, "cost")):
            core = reduction.core
            searched = small(core)
            if searched is not None:
                return self._lifted(problem, reduction, searched)
            if not tiebreak:
                break
            if remaining() < self.MODEL_SECONDS_PER_FORM * core.size:
                # Not even time to build the model: answer with what is proven.
                return self._fallback(problem, reduction)
            found = self.inner.solve(
                core,
                time_limit=remaining(),
                workers=workers,
                value_only=stop == "value",
                tiebreak=False,
                hint=_restrict(reduction, reduction.incumbent),
                proven=proven_levels(reduction),
            )
            if found.status is SolveStatus.INFEASIBLE:
                return found
            if found.status is not SolveStatus.OPTIMAL:
                # Out of time before this level was proven: later phases cannot run.
                return self._unproven(problem, reduction, found)
            best = reduction.lift(found.selection)
            optimum.append(
                selection_value(problem, best) if stop == "value" else selection_cost(problem, best)
            )
            # Reduce the core (which carries the earlier fixings) at the next level.
            again = reduce_problem(core, known=found.selection, level=level)
            if again is None:
                break
            # the value optimum is proven: it is the bound from here on
            reduction = replace(
                reduction.compose(again), bound=selection_value(problem, best), incumbent=best
            )
        core = reduction.core
        searched = small(core)
        if searched is not None:
            return self._lifted(problem, reduction, searched)
        found = self.inner.solve(
            core,
            time_limit=remaining(),
            workers=workers,
            tiebreak=tiebreak,
            hint=_restrict(reduction, reduction.incumbent),
            proven=proven_levels(reduction),
        )
        if found.status in (SolveStatus.INFEASIBLE, SolveStatus.OPTIMAL):
            return self._lifted(problem, reduction, found)
        return self._unproven(problem, reduction, found)

    @staticmethod
    def _lifted(problem: Problem, reduction: Reduction, found: Outcome) -> Outcome:
        """A proven answer on the core as the answer to the whole problem."""
        if found.status is SolveStatus.INFEASIBLE:
            return found
        selection = reduction.lift(found.selection)
        return Outcome(SolveStatus.OPTIMAL, selection, bound=selection_value(problem, selection))

    # Seconds to build a CP-SAT model, per form (measured ~10 us; doubled for safety).
    MODEL_SECONDS_PER_FORM = 2e-5

    @staticmethod
    def _fallback(problem: Problem, reduction: Reduction) -> Outcome:
        if reduction.incumbent is None:
            return Outcome(SolveStatus.UNKNOWN, bound=reduction.bound)
        return Outcome(SolveStatus.FEASIBLE, reduction.incumbent, bound=reduction.bound)

    @staticmethod
    def _unproven(problem: Problem, reduction: Reduction, found: Outcome) -> Outcome:
        """The better of the core search's answer and the incumbent, with the best bound."""
        assert found.status in (SolveStatus.FEASIBLE, SolveStatus.UNKNOWN), found.status
        if found.status is SolveStatus.UNKNOWN:
            return Reducing._fallback(problem, reduction)
        selection = reduction.lift(found.selection)
        bounds = [b for b in (reduction.bound,) if b is not None]
        if found.bound is not None:
            bounds.append(sum(problem.value[f] for f in reduction.chosen) + found.bound)
        incumbent = reduction.incumbent
        if incumbent is not None and selection_value(problem, incumbent) > selection_value(
            problem, selection
        ):
            selection = incumbent
        return Outcome(SolveStatus.FEASIBLE, selection, bound=min(bounds) if bounds else None)


def _restrict(reduction: Reduction, selection: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A full-problem selection as a hint for the core (forms outside the core dropped)."""
    if selection is None:
        return None
    position = {form: k for k, form in enumerate(reduction.core_forms)}
    return tuple(position[f] for f in selection if f in position)


def cpsat_strategy(request: Request, gates: GateReport, time_limit: float, workers: int) -> Result:
    from .cpsat import CpSat

    return solve_exact(request, gates, Reducing(CpSat()), time_limit, workers)


def enumerate_strategy(
    request: Request, gates: GateReport, time_limit: float, workers: int
) -> Result:
    from ..bruteforce import BruteForce

    return solve_exact(request, gates, BruteForce(), time_limit, workers)
