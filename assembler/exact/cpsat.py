"""The CP-SAT encoding and solve: the exact backend, cache-blind and cache-aware.

Input: a ``Problem``, a ``Deadline`` and a worker count (for the cache-aware order also
the ``Prefix`` and the ``CacheTerms``, ``exact/cached.py``).
Output: a ``SolveOutcome`` whose selection is the unique optimum of the full
lexicographic order when the status is OPTIMAL.

``CpSatSearch`` is one lexicographic solve of one problem; ``CachedSearch`` the same
model with the kept prefix and the price encoded, solved price first.

OR-Tools is loaded inside ``CpSat.solve`` (``cpmodel.cp_helper``), so that ``import
assembler`` stays fast. The model is written as its protocol buffer
(``cpmodel.ProtoModel``) and solved with ``ortools.sat.python.cp_model_helper``, the
layer ``cp_model`` itself is written on; ``cp_model`` (which imports pandas for
helpers this package has no use for) is never imported.

Encoding (one Boolean x_f per eligible form, canonical order):
  C2  at most one form per identity (exactly one when required: C3);
  C4  x_f -> OR(forms of d) for every identity d that f needs; a dependency shared
      by several forms is one set of variables, so it is paid once, and cycles
      need no special case (both or neither);
  C5  the form counts of all identities of a coupled group are equal;
  C6  sum(cost * x) <= budget;
  the format's rules (``Problem.rules``): a clause as one Boolean OR; a leading rule
      as a chain, one Boolean per form that may not open the conversation, "a form
      that may is selected before it", implied by the one before or a form between.
Phases (one model, re-solved with the previous answer as a hint, each keeping its
objective's optimum as a bound before the next: the value at least V*, the cost at most
C*, which on the optimal face are the equalities, and which CP-SAT searches several
times faster than an equality on a sum):
  1. max V;  2. min C;  3. min H (tie-break weights);
  4. prove the optimum unique (with the answer forbidden, the least weight is
     higher); only if it is not, fix forms in canonical order (lexicographic rule).
A unique optimum is what makes the answer independent of the worker count and of
the order in which the model was built (parallel CP-SAT is not deterministic).

Workers: every solve first runs alone the one-worker search (``ALONE`` seconds); only
a solve still running then is raced by other single-worker configurations, up to
``workers`` searches in all and never more than the cores this process may use. The
first to prove wins and the others are stopped. CP-SAT's own parallel portfolio drops
the one-worker configuration and spends cores on first-solution and LNS workers these
models do not need, and a race that starts at once costs the one-worker search its
core on a busy machine: so more workers cost nothing on the solves that are quick
anyway, and on a hard one they add searches that may prove sooner. Each search runs
in its own thread and the calling thread waits, so a Ctrl-C reaches Python's handler
at once (CP-SAT's own SIGINT handler is off: it cuts the search short and leaves
SIGINT at its fatal default afterwards).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..deadline import Deadline
from ..model.errors import SolverError
from ..model.sendable import Leading
from .backend import Ask, SolveOutcome, SolveStatus
from .closure import Problem
from .cpmodel import Linear, ProtoModel, cp_helper
from .incumbent import is_legal

if TYPE_CHECKING:
    from ..cache.prefix import Prefix
    from ..model.cache import CacheTerms

__all__ = ["CachedSearch", "CpSat", "CpSatSearch", "racers"]

# The racing configurations, in the order more workers add them: each a single-worker
# CP-SAT search on top of the one-worker parameters, each chosen for the proofs it wins
# where the one-worker search is slow: core-based optimisation proves lower bounds the
# LP search does not; pseudo-cost branching and quick restarts win others.
_RACERS = (
    "optimize_with_core: true",
    "search_branching: PSEUDO_COST_SEARCH",
    "search_branching: PORTFOLIO_WITH_QUICK_RESTART_SEARCH",
)


# Cores of at least this many forms put every linear constraint into CP-SAT's LP from
# the start instead of lazily: faster on large cores, slower on small ones
EAGER_LP_FROM = 1500


def racers(workers: int) -> int:
    """How many searches a solve with ``workers`` may run at once: never more than the
    cores this process may use (more threads than cores only slow the one-worker
    search down), nor than the configurations there are."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(workers, usable or 1, 1 + len(_RACERS)))


class CpSat:
    name = "cpsat"
    # Seconds a solve runs alone before other configurations race it: most solves end
    # sooner, and on the long proofs a second search can win
    ALONE = 0.5

    def solve(self, problem: Problem, ask: Ask) -> SolveOutcome:
        search = CpSatSearch(cp_helper(), problem, ask.deadline, ask.workers)
        if ask.hint is not None:
            search.hint(ask.hint)
        return search.run(
            tiebreak=ask.tiebreak, value_only=ask.value_only, proven=ask.proven, hint=ask.hint
        )

    def solve_cached(
        self, problem: Problem, prefix: Prefix, terms: CacheTerms, ask: Ask
    ) -> SolveOutcome:
        """The cache-aware order's optimum (``CachedSearch``)."""
        search = CachedSearch(problem, prefix, terms, ask.deadline, ask.workers)
        return search.run_cached(ask.hint)


def _count(forms: Sequence[int]) -> Linear:
    return Linear.sum(forms, [1] * len(forms))


class CpSatSearch:
    """One lexicographic solve of one problem: the model, then its phases."""

    def __init__(self, helper: Any, problem: Problem, deadline: Deadline, workers: int) -> None:
        self.helper = helper
        status = helper.CpSolverStatus
        self.optimal, self.feasible = status.OPTIMAL, status.FEASIBLE
        self.infeasible, self.invalid = status.INFEASIBLE, status.MODEL_INVALID
        self.problem = problem
        self.deadline = deadline
        self.racers = racers(workers)
        self.floor: int | None = None  # proven lower bound of the last minimisation stopped
        self.model = ProtoModel(helper)
        # variable f is form f's Boolean, so a form's index is its literal
        for i in range(problem.size):
            self.model.new_bool(f"x{i}")
        self._encode()

    # -- model ------------------------------------------------------------------

    def _encode(self) -> None:
        problem, model = self.problem, self.model
        forms_of = problem.forms_of()
        required = set(problem.required)
        for identity, forms in enumerate(forms_of):
            if identity in required:
                model.exactly_one(forms)
            elif len(forms) > 1:
                model.at_most_one(forms)
        for form, needs in enumerate(problem.needs):
            for identity in needs:
                model.bool_or([-form - 1, *forms_of[identity]])
        for group in problem.groups:
            first = _count(forms_of[group[0]])
            for identity in group[1:]:
                # the first identity's form count minus this one's is 0
                model.fix(first - _count(forms_of[identity]), 0)
        if problem.budget is not None and sum(problem.cost) > problem.budget:
            model.at_most(self._sum(problem.cost), problem.budget)
        for rule in problem.rules:
            if isinstance(rule, Leading):
                self._lead(rule)
            else:
                model.bool_or([*rule.some, *(-f - 1 for f in rule.unless)])

    def _lead(self, rule: Leading[int]) -> None:
        """The first selected form of ``rule.order`` is a good one: each form that is
        not needs a good one selected before it. ``before`` is a Boolean that may be
        true only when a good form before is selected (the one of the bad form before,
        or a good form since): linear in the order."""
        model = self.model
        before: int | None = None
        since: list[int] = []
        for form, good in zip(rule.order, rule.good, strict=True):
            if good:
                since.append(form)
                continue
            if since:
                chained = model.new_bool(f"lead{form}")
                model.bool_or([-chained - 1, *since, *([] if before is None else [before])])
                before, since = chained, []
            model.bool_or([-form - 1] if before is None else [-form - 1, before])

    def _sum(self, coefficients: Sequence[int]) -> Linear:
        return Linear.sum(range(self.problem.size), coefficients)

    # -- solving ------------------------------------------------------------------

    def _solver(self, extra: str = "") -> Any:
        params = self.helper.SatParameters()
        params.max_time_in_seconds = self.deadline.limit()
        params.num_workers = 1
        params.random_seed = 0
        # Ctrl-C is the caller's (see the module's docstring).
        params.catch_sigint_signal = False
        # the reduction did the presolve that matters; CP-SAT's own costs more than it saves
        params.cp_model_presolve = False
        # linearization level 2 proves optima the default level does not, in far less time
        params.linearization_level = 2
        if self.problem.size >= EAGER_LP_FROM:
            params.add_lp_constraints_lazily = False
        if extra:
            params.merge_text_format(extra)
        solver = self.helper.SolveWrapper()
        solver.set_parameters(params)
        return solver

    def _run(self) -> tuple[Any, Any]:
        """One solve: the one-worker search, raced after ``CpSat.ALONE`` seconds by the
        other configurations when ``racers`` allows. Returns the winner's status and
        response: the first to prove (optimal or infeasible), else the one-worker
        search's."""
        solvers = [self._solver()]
        responses: list[Any] = [None]
        done = threading.Event()
        proven = (self.optimal, self.infeasible, self.invalid)
        winner: list[int] = []
        lock = threading.Lock()

        def search(index: int) -> None:
            response = solvers[index].solve(self.model.proto)
            with lock:
                responses[index] = response
                if response.status in proven and not winner:
                    winner.append(index)
                if winner or all(r is not None for r in responses):
                    done.set()

        threads = [threading.Thread(target=search, args=(0,), daemon=True)]
        threads[0].start()
        try:
            # a thread even alone: the calling thread's wait is what Ctrl-C interrupts
            if not done.wait(CpSat.ALONE) and self.racers > 1:
                with lock:
                    late = not done.is_set()
                    if late:
                        for extra in _RACERS[: self.racers - 1]:
                            solvers.append(self._solver(extra))
                            responses.append(None)
                if late:
                    for index in range(1, len(solvers)):
                        threads.append(threading.Thread(target=search, args=(index,), daemon=True))
                        threads[-1].start()
            done.wait()
        finally:
            _stop(solvers, threads)
        response = responses[winner[0] if winner else 0]
        if response.status == self.invalid:
            raise SolverError(f"CP-SAT rejected the model: {self.model.validate()}")
        return response.status, response

    def _selection(self, response: Any) -> tuple[int, ...]:
        values = response.solution
        return tuple(i for i in range(self.problem.size) if values[i])

    def hint(self, selection: tuple[int, ...]) -> None:
        chosen = set(selection)
        self.model.hint((i, int(i in chosen)) for i in range(self.problem.size))

    def run(
        self,
        *,
        tiebreak: bool = True,
        value_only: bool = False,
        proven: tuple[int, ...] = (),
        hint: tuple[int, ...] | None = None,
    ) -> SolveOutcome:
        """The phases in order; ``proven`` levels are fixed instead of searched. A
        ``hint`` that is legal and meets both proven levels is an answer in hand."""
        assert not (value_only and proven), "a proven value needs no value-only search"
        problem = self.problem
        if problem.size == 0:
            if problem.breaks(()) is not None:
                return SolveOutcome(SolveStatus.INFEASIBLE)  # nothing the format can send
            return SolveOutcome(SolveStatus.OPTIMAL, (), bound=0)
        selection: tuple[int, ...] = ()
        held = False  # whether ``selection`` is a legal answer already
        values = self._sum(problem.value)
        if proven:
            value = proven[0]
        else:
            # Phase 1: value. (Not one objective V*K - C: its huge coefficients blunt
            # CP-SAT's LP.)
            self.model.objective(values, maximize=True)
            status, response = self._run()
            if status == self.infeasible:
                return SolveOutcome(SolveStatus.INFEASIBLE)
            if status not in (self.optimal, self.feasible):
                return SolveOutcome(SolveStatus.UNKNOWN)
            selection, held = self._selection(response), True
            if status != self.optimal:
                bound = int(response.best_objective_bound)
                return SolveOutcome(SolveStatus.FEASIBLE, selection, bound=bound)
            value = round(response.objective_value)
        if value_only:
            return SolveOutcome(SolveStatus.OPTIMAL, selection, bound=value)
        self.model.at_least(values, value)
        # Phase 2: cost.
        if len(proven) > 1:
            self.model.at_most(self._sum(problem.cost), proven[1])
            if hint is not None and _meets(problem, hint, value, proven[1]):
                selection, held = hint, True
        else:
            if held:
                self.hint(selection)
            selection, done, held = self._minimise(list(problem.cost), selection, held)
            if not done:
                return self._stopped(selection, held, value, self.floor)
        if not tiebreak:
            return SolveOutcome(SolveStatus.OPTIMAL, selection, bound=value)
        return self._lightest(selection, held, value)

    def _lightest(self, selection: tuple[int, ...], held: bool, value: int) -> SolveOutcome:
        """Phases 3 and 4: the least tie-break weight among the selections of optimal
        value and cost, and whether only one selection has it (else the canonical-order
        rule decides).

        With an answer in hand (the cost phase's), the first solve minimises the weight
        with that answer forbidden: when nothing else is lighter, that one solve settles
        both phases (on large requests the cost phase's answer usually is the lightest).
        Otherwise the lightest found is checked the same way. The weight's minimum is
        never stated as a constraint before these solves: as a floor it makes
        them several times slower."""
        problem = self.problem
        weights = self._sum(problem.weight)
        lightest_known = not held
        if not held:
            # no answer in hand (the cost was proven elsewhere): find the lightest first
            selection, done, held = self._minimise(list(problem.weight), selection, held, False)
            if not done:
                return self._stopped(selection, held, value, None)
        mine = sum(problem.weight[f] for f in selection)
        for _ in range(2):
            status, other, weight = self._least_without(selection, weights, lightest_known)
            if status is None:
                if other is not None and weight is not None and weight < mine:
                    selection = other  # lighter, though not proven the lightest
                return SolveOutcome(SolveStatus.FEASIBLE, selection, bound=value)
            if other is None or weight is None or weight > mine:
                return SolveOutcome(SolveStatus.OPTIMAL, selection, bound=value)
            if weight == mine:
                self.model.at_most(weights, mine)
                lexmin = self._lexicographic(selection)
                if lexmin is None:
                    return SolveOutcome(SolveStatus.FEASIBLE, selection, bound=value)
                return SolveOutcome(SolveStatus.OPTIMAL, lexmin, bound=value)
            # lighter than the cost phase's answer, and the lightest of all: is it alone?
            selection, mine, lightest_known = other, weight, True
        raise AssertionError("the lightest selection was forbidden and a lighter one found")

    @staticmethod
    def _stopped(
        selection: tuple[int, ...], held: bool, value: int, cost_floor: int | None
    ) -> SolveOutcome:
        if not held:
            # No legal selection in hand yet: an honest "unknown", never a guess.
            return SolveOutcome(SolveStatus.UNKNOWN, bound=value, cost_floor=cost_floor)
        return SolveOutcome(SolveStatus.FEASIBLE, selection, bound=value, cost_floor=cost_floor)

    def _minimise(
        self, coefficients: list[int], selection: tuple[int, ...], held: bool, fix: bool = True
    ) -> tuple[tuple[int, ...], bool, bool]:
        """Minimise a weighted sum and (with ``fix``) fix it. Returns the selection,
        whether the minimum was proven, and whether the selection is a legal answer."""
        expr = self._sum(coefficients)
        self.model.objective(expr, maximize=False)
        status, response = self._run()
        if status == self.optimal:
            best = round(response.objective_value)
            if fix:
                self.model.at_most(expr, best)
            return self._selection(response), True, True
        bound = response.best_objective_bound
        # a minimisation stopped early still proves its objective is at least this
        self.floor = math.ceil(bound - 1e-6) if math.isfinite(bound) else None
        if status == self.feasible:
            return self._selection(response), False, True
        return selection, False, held

    def _least_without(
        self, selection: tuple[int, ...], weights: Linear, lightest: bool
    ) -> tuple[bool | None, tuple[int, ...] | None, int | None]:
        """The lightest selection other than ``selection`` meeting the fixed objectives:
        (True, it, its weight) when proven, (True, None, None) when there is none,
        (None, the best found or None, its weight) on time-out.

        Any other selection of optimal value and cost leaves out one of ``selection``'s
        forms, or holds all of them and more, and then weighs more: one clause keeps
        exactly what can weigh as little. When ``selection`` is known to be the lightest,
        a second clause (take a form it leaves out) is valid too: holding only its forms
        would weigh less. Minimising is faster than asking whether anything of exactly
        that weight exists: the objective's bound prunes where an equality does not. The clauses
        are guarded by a literal assumed for this solve only, so the model stays
        reusable."""
        chosen = set(selection)
        model = self.model
        model.clear_hints()
        probe = model.new_bool("unique_probe")
        model.bool_or([-i - 1 for i in chosen], enforced_by=probe)
        if lightest:
            model.bool_or([i for i in range(self.problem.size) if i not in chosen], probe)
        model.assume([probe])
        model.objective(weights, maximize=False)
        status, response = self._run()
        model.clear_assumptions()
        model.clear_objective()
        model.fix(Linear.var(probe), 0)
        if status == self.infeasible:
            return True, None, None
        if status in (self.optimal, self.feasible):
            found = self._selection(response)
            weight = sum(self.problem.weight[f] for f in found)
            return (True if status == self.optimal else None), found, weight
        return None, None, None

    def _lexicographic(self, selection: tuple[int, ...]) -> tuple[int, ...] | None:
        """The canonical-order rule: leave out each earliest form whenever possible."""
        witness = set(selection)
        model = self.model
        for form in range(self.problem.size):
            if form not in witness:
                model.fix(Linear.var(form), 0)
                continue
            model.assume([-form - 1])
            self.hint(tuple(sorted(witness)))
            status, response = self._run()
            model.clear_assumptions()
            if status in (self.optimal, self.feasible):
                witness = set(self._selection(response))
                model.fix(Linear.var(form), 0)
            elif status == self.infeasible:
                model.fix(Linear.var(form), 1)
            else:
                return None
        return tuple(sorted(witness))


class CachedSearch(CpSatSearch):
    """One cache-aware lexicographic solve with CP-SAT: the prefix kept as a chain of
    Booleans over the matchable run, the price as a linear expression of them and of
    the forms (module docstring), then the phases of section 6 with the price fixed."""

    def __init__(
        self,
        problem: Problem,
        prefix: Prefix,
        terms: CacheTerms,
        deadline: Deadline,
        workers: int,
    ) -> None:
        super().__init__(cp_helper(), problem, deadline, workers)
        self.prefix = prefix
        self.terms = terms
        self.price = self._encode_cache()

    def _encode_cache(self) -> Linear:
        model, prefix, size = self.model, self.prefix, self.problem.size
        cache, pricing = prefix.cache, prefix.cache.pricing
        keep: list[int] = []
        for j, form in enumerate(prefix.forms):
            var = model.new_bool(f"keep{j}")
            # the instruction is always sent, yet kept only where the order allows it
            # (a tool definition new to this call goes before it)
            if form is not None:
                model.implication(var, form)
            if keep:
                model.implication(var, keep[-1])
            keep.append(var)
        for form, barrier in prefix.barriers.items():
            model.bool_or([-form - 1, -keep[barrier] - 1])
        total = prefix.instruction + Linear.sum(range(size), self.problem.cost)
        top = prefix.instruction + sum(self.problem.cost)
        read: Linear | int = 0
        if cache.breakpoints > 0:
            reached = 0
            for entry in prefix.entries:
                gained = sum(prefix.tokens[reached : entry + 1])
                read = read + gained * Linear.var(keep[entry])
                reached = entry + 1
        elif prefix.automatic_from is not None:
            least, step = cache.min_prefix_tokens, cache.step_tokens
            hit = keep[prefix.automatic_from]
            steps = model.new_int(0, max(0, (sum(prefix.tokens) - least) // step), "steps")
            kept_tokens = Linear.sum(keep, prefix.tokens)
            model.at_most(least * Linear.var(hit) + step * Linear.var(steps) - kept_tokens, 0)
            model.fix(Linear.var(steps), 0, enforced_by=-hit - 1)
            read = least * Linear.var(hit) + step * Linear.var(steps)
        price = pricing.read * read + pricing.input * (total - read)
        if cache.writes and pricing.write != pricing.input:
            # written: everything past the entry read, once the content is cacheable
            cacheable = model.new_bool("cacheable")
            least = cache.min_prefix_tokens
            model.at_least(total, least, enforced_by=cacheable)
            model.at_most(total, least - 1, enforced_by=-cacheable - 1)
            written = model.new_int(0, top, "written")
            model.fix(Linear.var(written) - (total - read), 0, enforced_by=cacheable)
            model.fix(Linear.var(written), 0, enforced_by=-cacheable - 1)
            price = price + (pricing.write - pricing.input) * Linear.var(written)
        terms = self.terms
        value = Linear.sum(range(size), self.problem.value)
        appended = model.new_bool("appended")
        if terms.append_floor is None:
            model.fix(Linear.var(appended), 0)
        else:
            if keep:
                model.implication(appended, keep[-1])
            model.at_least(value, terms.append_floor, enforced_by=appended)
        model.at_most(total - prefix.instruction, terms.rewrite_budget, enforced_by=-appended - 1)
        model.at_least(value, terms.rewrite_floor, enforced_by=-appended - 1)
        assert isinstance(price, Linear)
        return price

    def run_cached(self, hint: tuple[int, ...] | None) -> SolveOutcome:
        """Price, then value, then section 6's cost, weight and canonical phases."""
        problem = self.problem
        if hint is not None:
            self.hint(hint)
        self.model.objective(self.price, maximize=False)
        status, response = self._run()
        if status == self.infeasible:
            return SolveOutcome(SolveStatus.INFEASIBLE)
        if status not in (self.optimal, self.feasible):
            return SolveOutcome(SolveStatus.UNKNOWN)
        selection = self._selection(response)
        if status != self.optimal:
            floor = int(response.best_objective_bound + 0.5)
            return SolveOutcome(SolveStatus.FEASIBLE, selection, cost_floor=floor)
        # each level proven is kept as a bound (the least price, then the most value):
        # equal to an equality on its face, and an inequality CP-SAT searches better
        self.model.at_most(self.price, round(response.objective_value))
        values = Linear.sum(range(problem.size), problem.value)
        self.model.objective(values, maximize=True)
        self.hint(selection)
        status, response = self._run()
        if status != self.optimal:
            return SolveOutcome(SolveStatus.FEASIBLE, selection)
        selection = self._selection(response)
        value = round(response.objective_value)
        self.model.at_least(values, value)
        self.hint(selection)
        selection, done, held = self._minimise(list(problem.cost), selection, True)
        if not done:
            return self._stopped(selection, held, value, None)
        return self._lightest(selection, held, value)


def _stop(solvers: list[Any], threads: list[threading.Thread]) -> None:
    """Stop every search still running and wait for its thread. A search asked to stop
    before it started would not hear it, so the request is repeated until it ends (its
    time limit ends it in any case)."""
    for solver, thread in zip(solvers, threads, strict=False):
        while thread.is_alive():
            solver.stop_search()
            thread.join(0.005)


def _meets(problem: Problem, selection: tuple[int, ...], value: int, cost: int) -> bool:
    """Whether ``selection`` is legal with exactly this value and cost."""
    return (
        is_legal(problem, selection)
        and sum(problem.value[f] for f in selection) == value
        and sum(problem.cost[f] for f in selection) == cost
    )
