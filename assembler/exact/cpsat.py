"""The CP-SAT encoding and solve: the exact backend.

Input: a ``Problem``, a time limit and a worker count.
Output: an ``Outcome`` whose selection is the unique optimum of the full
lexicographic order when the status is OPTIMAL.

This is the only module that imports OR-Tools, and it does so inside
``CpSat.solve`` so that ``import assembler`` stays fast; ``cp_model`` is imported
without pandas (``_cp_model``), which it loads for helpers this module never calls.

Encoding (one Boolean x_f per eligible form, canonical order):
  C2  at most one form per identity (exactly one when required: C3);
  C4  x_f -> OR(forms of d) for every identity d that f needs; a dependency shared
      by several forms is one set of variables, so it is paid once, and cycles
      need no special case (both or neither);
  C5  the form counts of all identities of a coupled group are equal;
  C6  sum(cost * x) <= budget.
Phases (one model, re-solved with the previous answer as a hint, each fixing its
objective before the next):
  1. max V;  2. min C;  3. min H (tie-break weights);
  4. prove the optimum unique (with the answer forbidden, the least weight is
     higher); only if it is not, fix forms in canonical order (lexicographic rule).
A unique optimum is what makes the answer independent of the worker count and of
the order in which the model was built (parallel CP-SAT is not deterministic).

Workers (issue 16): every solve first runs alone the one-worker search (``ALONE``
seconds); only a solve still running then is raced by other single-worker
configurations, up to ``workers`` searches in all and never more than the cores this
process may use. The first to prove wins and the others are stopped. CP-SAT's own
parallel portfolio was measured slower than one worker here at 10k forms and on
chain/cycle requests (no different at 1k): it drops the one-worker configuration and
spends a core on first-solution and LNS workers these models do not need. A race that
starts at once still cost the one-worker search its core on a busy machine
(chain/cycle: 1.4x one worker's time). So more workers cost nothing on the
solves that are quick anyway, and on a hard one they add searches that may prove
sooner. Each search runs in its own thread and the calling thread waits, so a
Ctrl-C reaches Python's handler at once (CP-SAT's own SIGINT handler is off: it cut
the search short and left SIGINT at its fatal default afterwards, issue 15).
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import threading
import time
import types
from typing import TYPE_CHECKING, Any

from ..model.errors import SolverError
from .backend import Outcome, SolveStatus
from .closure import Problem
from .incumbent import is_legal

if TYPE_CHECKING:
    from ortools.sat.python import cp_model as cp_model_type

    from ..model.cache import CacheTerms
    from .prefix import Prefix

__all__ = ["CpSat", "racers"]

# The racing configurations, in the order more workers add them: each a single-worker
# CP-SAT search on top of the one-worker parameters. Core-based optimisation proves
# lower bounds where the LP search does not (10k forms, seed 1: it won the cost and
# uniqueness proofs); pseudo-cost branching and quick restarts won some proofs too.
_RACERS = (
    "optimize_with_core: true",
    "search_branching: PSEUDO_COST_SEARCH",
    "search_branching: PORTFOLIO_WITH_QUICK_RESTART_SEARCH",
)


# Cores of at least this many forms put every linear constraint into CP-SAT's LP from
# the start instead of lazily. Measured on the 10k-form benchmark requests, side by
# side: their cost and tie-break levels (cores of 1.6k-6.4k forms) proved 1.2-3x
# faster, 3.4 -> 2.0 s and 0.72 -> 0.49 s end to end; on trial cores of ~300 forms it
# was up to 3x slower (13 -> 38 ms), and 1k-form requests never reach this size.
EAGER_LP_FROM = 1500


def racers(workers: int) -> int:
    """How many searches a solve with ``workers`` may run at once: never more than the
    cores this process may use (more threads than cores only slow the one-worker
    search down), nor than the configurations there are."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(workers, usable or 1, 1 + len(_RACERS)))


class CpSat:
    name = "cpsat"
    # Seconds a solve runs alone before other configurations race it. Most solves of
    # the benchmark families end sooner (chain/cycle cores: 0.03-0.3 s per solve); the
    # long ones are the 10k-form cost and uniqueness proofs (1-3 s), where a second
    # search can win.
    ALONE = 0.5

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
        session = _Session(_cp_model(), problem, time_limit, workers)
        if hint is not None:
            session.hint(hint)
        return session.run(tiebreak=tiebreak, value_only=value_only, proven=proven, hint=hint)

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
        """The cache-aware order's optimum (``cached.CachedSearch``)."""
        from .cached import CachedSearch

        return CachedSearch(problem, prefix, terms, time_limit, workers).run_cached(hint)


class _Session:
    """One lexicographic solve of one problem."""

    def __init__(self, cp: Any, problem: Problem, time_limit: float, workers: int) -> None:
        self.cp = cp
        self.problem = problem
        self.deadline = time.monotonic() + time_limit
        self.racers = racers(workers)
        self.floor: int | None = None  # proven lower bound of the last minimisation stopped
        self.model: cp_model_type.CpModel = cp.CpModel()
        self.x = [self.model.new_bool_var(f"x{i}") for i in range(problem.size)]
        self._encode()

    # -- model ------------------------------------------------------------------

    def _encode(self) -> None:
        problem, model, x = self.problem, self.model, self.x
        forms_of = problem.forms_of()
        required = set(problem.required)
        for identity, forms in enumerate(forms_of):
            literals = [x[f] for f in forms]
            if identity in required:
                model.add_exactly_one(literals)
            elif len(literals) > 1:
                model.add_at_most_one(literals)
        for form, needs in enumerate(problem.needs):
            for identity in needs:
                model.add_bool_or([~x[form], *(x[f] for f in forms_of[identity])])
        for group in problem.groups:
            first = self._count(forms_of[group[0]])
            for identity in group[1:]:
                model.add(first == self._count(forms_of[identity]))
        if problem.budget is not None and sum(problem.cost) > problem.budget:
            model.add(self._sum(problem.cost) <= problem.budget)

    def _count(self, forms: tuple[int, ...]) -> Any:
        return self.cp.LinearExpr.sum([self.x[f] for f in forms])

    def _sum(self, coefficients: tuple[int, ...] | list[int]) -> Any:
        return self.cp.LinearExpr.weighted_sum(self.x, list(coefficients))

    # -- solving ------------------------------------------------------------------

    def _solver(self, extra: str = "") -> Any:
        solver = self.cp.CpSolver()
        params = solver.parameters
        params.max_time_in_seconds = max(0.001, self.deadline - time.monotonic())
        params.num_workers = 1
        params.random_seed = 0
        # Ctrl-C is the caller's (see the module's docstring).
        params.catch_sigint_signal = False
        # The reduction stage has already done the presolve that matters here; CP-SAT's
        # own was measured to cost more than it saves at every size (100-form cores:
        # 21.6 -> 8.6 ms for all phases; 10k cores, value phase: 0.51 -> 0.20 s,
        # 1.55 -> 0.43 s, 0.79 -> 0.11 s).
        params.cp_model_presolve = False
        # Measured here: lin2 proves 1,000-form optima in ~0.4 s where the default
        # does not within 30 s (see issue 5).
        params.linearization_level = 2
        if self.problem.size >= EAGER_LP_FROM:
            params.add_lp_constraints_lazily = False
        if extra:
            params.merge_text_format(extra)
        return solver

    def _run(self) -> tuple[int, Any]:
        """One solve: the one-worker search, raced after ``CpSat.ALONE`` seconds by the
        other configurations when ``racers`` allows. Returns the winner's status and
        solver: the first to prove (optimal or infeasible), else the one-worker search."""
        cp = self.cp
        solvers = [self._solver()]
        statuses: list[Any] = [None]
        done = threading.Event()
        proven = (cp.OPTIMAL, cp.INFEASIBLE, cp.MODEL_INVALID)
        winner: list[int] = []
        lock = threading.Lock()

        def search(index: int) -> None:
            status = solvers[index].solve(self.model)
            with lock:
                statuses[index] = status
                if status in proven and not winner:
                    winner.append(index)
                if winner or all(s is not None for s in statuses):
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
                            statuses.append(None)
                if late:
                    for index in range(1, len(solvers)):
                        threads.append(threading.Thread(target=search, args=(index,), daemon=True))
                        threads[-1].start()
            done.wait()
        finally:
            _stop(solvers, threads)
        index = winner[0] if winner else 0
        status = statuses[index]
        if status == cp.MODEL_INVALID:
            raise SolverError(f"CP-SAT rejected the model: {self.model.validate()}")
        return status, solvers[index]

    def _selection(self, solver: Any) -> tuple[int, ...]:
        values = solver.response_proto.solution
        return tuple(i for i in range(self.problem.size) if values[i])

    def hint(self, selection: tuple[int, ...]) -> None:
        chosen = set(selection)
        self.model.clear_hints()  # type: ignore[no-untyped-call]
        for i, var in enumerate(self.x):
            self.model.add_hint(var, i in chosen)

    def run(
        self,
        *,
        tiebreak: bool = True,
        value_only: bool = False,
        proven: tuple[int, ...] = (),
        hint: tuple[int, ...] | None = None,
    ) -> Outcome:
        """The phases in order; ``proven`` levels are fixed instead of searched. A
        ``hint`` that is legal and meets both proven levels is an answer in hand."""
        assert not (value_only and proven), "a proven value needs no value-only search"
        problem = self.problem
        cp = self.cp
        if problem.size == 0:
            return Outcome(SolveStatus.OPTIMAL, (), bound=0)
        selection: tuple[int, ...] = ()
        held = False  # whether ``selection`` is a legal answer already
        value_expr = self._sum(problem.value)
        if proven:
            value = proven[0]
        else:
            # Phase 1: value. (A single objective V*K - C was measured 11x slower than
            # value then cost: its huge coefficients blunt CP-SAT's LP, 6.5 s against
            # 0.8 s on a 2,500-form core.)
            self.model.maximize(value_expr)
            status, solver = self._run()
            if status == cp.INFEASIBLE:
                return Outcome(SolveStatus.INFEASIBLE)
            if status not in (cp.OPTIMAL, cp.FEASIBLE):
                return Outcome(SolveStatus.UNKNOWN)
            selection, held = self._selection(solver), True
            if status != cp.OPTIMAL:
                bound = int(solver.best_objective_bound)
                return Outcome(SolveStatus.FEASIBLE, selection, bound=bound)
            value = round(solver.objective_value)
        if value_only:
            return Outcome(SolveStatus.OPTIMAL, selection, bound=value)
        self.model.add(value_expr == value)
        # Phase 2: cost.
        if len(proven) > 1:
            self.model.add(self._sum(problem.cost) == proven[1])
            if hint is not None and _meets(problem, hint, value, proven[1]):
                selection, held = hint, True
        else:
            if held:
                self.hint(selection)
            selection, done, held = self._minimise(list(problem.cost), selection, held)
            if not done:
                return self._stopped(selection, held, value, self.floor)
        if not tiebreak:
            return Outcome(SolveStatus.OPTIMAL, selection, bound=value)
        return self._lightest(selection, held, value)

    def _lightest(self, selection: tuple[int, ...], held: bool, value: int) -> Outcome:
        """Phases 3 and 4: the least tie-break weight among the selections of optimal
        value and cost, and whether only one selection has it (else the canonical-order
        rule decides).

        With an answer in hand (the cost phase's), the first solve minimises the weight
        with that answer forbidden: when nothing else is lighter, that one solve settles
        both phases (on 10k-form requests the cost phase's answer usually is the
        lightest). Otherwise the lightest found is checked the same way. The weight's
        minimum is never stated as a constraint before these solves: as a floor it made
        them 4-7x slower."""
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
                return Outcome(SolveStatus.FEASIBLE, selection, bound=value)
            if other is None or weight is None or weight > mine:
                return Outcome(SolveStatus.OPTIMAL, selection, bound=value)
            if weight == mine:
                self.model.add(weights == mine)
                lexmin = self._lexicographic(selection)
                if lexmin is None:
                    return Outcome(SolveStatus.FEASIBLE, selection, bound=value)
                return Outcome(SolveStatus.OPTIMAL, lexmin, bound=value)
            # lighter than the cost phase's answer, and the lightest of all: is it alone?
            selection, mine, lightest_known = other, weight, True
        raise AssertionError("the lightest selection was forbidden and a lighter one found")

    @staticmethod
    def _stopped(
        selection: tuple[int, ...], held: bool, value: int, cost_floor: int | None
    ) -> Outcome:
        if not held:
            # No legal selection in hand yet: an honest "unknown", never a guess.
            return Outcome(SolveStatus.UNKNOWN, bound=value, cost_floor=cost_floor)
        return Outcome(SolveStatus.FEASIBLE, selection, bound=value, cost_floor=cost_floor)

    def _minimise(
        self, coefficients: list[int], selection: tuple[int, ...], held: bool, fix: bool = True
    ) -> tuple[tuple[int, ...], bool, bool]:
        """Minimise a weighted sum and (with ``fix``) fix it. Returns the selection,
        whether the minimum was proven, and whether the selection is a legal answer."""
        expr = self._sum(coefficients)
        self.model.minimize(expr)
        status, solver = self._run()
        if status == self.cp.OPTIMAL:
            best = round(solver.objective_value)
            if fix:
                self.model.add(expr == best)
            return self._selection(solver), True, True
        bound = solver.best_objective_bound
        # a minimisation stopped early still proves its objective is at least this
        self.floor = math.ceil(bound - 1e-6) if math.isfinite(bound) else None
        if status == self.cp.FEASIBLE:
            return self._selection(solver), False, True
        return selection, False, held

    def _least_without(
        self, selection: tuple[int, ...], weights: Any, lightest: bool
    ) -> tuple[bool | None, tuple[int, ...] | None, int | None]:
        """The lightest selection other than ``selection`` meeting the fixed objectives:
        (True, it, its weight) when proven, (True, None, None) when there is none,
        (None, the best found or None, its weight) on time-out.

        Any other selection of optimal value and cost leaves out one of ``selection``'s
        forms, or holds all of them and more, and then weighs more: one clause keeps
        exactly what can weigh as little. When ``selection`` is known to be the lightest,
        a second clause (take a form it leaves out) is valid too: holding only its forms
        would weigh less. Minimising was measured twice as fast as asking whether
        anything of exactly that weight exists (0.25 s against 0.52-0.58 s on 10k-form
        cores): the objective's bound prunes where an equality does not. The clauses
        are guarded by a literal assumed for this solve only, so the model stays
        reusable."""
        chosen = set(selection)
        self.model.clear_hints()  # type: ignore[no-untyped-call]
        probe = self.model.new_bool_var("unique_probe")
        self.model.add_bool_or([~self.x[i] for i in chosen]).only_enforce_if(probe)
        if lightest:
            self.model.add_bool_or(
                [v for i, v in enumerate(self.x) if i not in chosen]
            ).only_enforce_if(probe)
        self.model.add_assumptions([probe])
        self.model.minimize(weights)
        status, solver = self._run()
        self.model.clear_assumptions()
        self.model.clear_objective()  # type: ignore[no-untyped-call]
        self.model.add(probe == 0)
        if status == self.cp.INFEASIBLE:
            return True, None, None
        if status in (self.cp.OPTIMAL, self.cp.FEASIBLE):
            found = self._selection(solver)
            weight = sum(self.problem.weight[f] for f in found)
            return (True if status == self.cp.OPTIMAL else None), found, weight
        return None, None, None

    def _lexicographic(self, selection: tuple[int, ...]) -> tuple[int, ...] | None:
        """The canonical-order rule: leave out each earliest form whenever possible."""
        witness = set(selection)
        for form in range(self.problem.size):
            if form not in witness:
                self.model.add(self.x[form] == 0)
                continue
            self.model.add_assumptions([~self.x[form]])
            self.hint(tuple(sorted(witness)))
            status, solver = self._run()
            self.model.clear_assumptions()
            if status in (self.cp.OPTIMAL, self.cp.FEASIBLE):
                witness = set(self._selection(solver))
                self.model.add(self.x[form] == 0)
            elif status == self.cp.INFEASIBLE:
                self.model.add(self.x[form] == 1)
            else:
                return None
        return tuple(sorted(witness))


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


# -- importing cp_model without pandas -------------------------------------------
#
# ``ortools.sat.python.cp_model`` imports pandas at module level (measured ~0.3 s of
# CPU, most of a cold ``assembler compile``) for its ``*_series`` helpers and the
# ``values`` of a ``pd.Index``, none of which this module calls. While it is imported,
# ``sys.modules["pandas"]`` holds a stand-in whose ``Index`` and ``Series`` are checked
# and built by the real pandas the moment anything uses them (so cp_model still works
# for any other caller in the process), and which is taken out again right after: a
# later ``import pandas`` anywhere gets the real one.

_import_lock = threading.Lock()


def _cp_model() -> Any:
    """``ortools.sat.python.cp_model``, imported without loading pandas."""
    loaded = sys.modules.get("ortools.sat.python.cp_model")
    if loaded is not None:
        return loaded
    with _import_lock:
        stand_in = None
        if "pandas" not in sys.modules:
            stand_in = sys.modules["pandas"] = _DeferredPandas("pandas")
        try:
            return importlib.import_module("ortools.sat.python.cp_model")
        finally:
            if stand_in is not None and sys.modules.get("pandas") is stand_in:
                del sys.modules["pandas"]


def _real_pandas() -> Any:
    if isinstance(sys.modules.get("pandas"), _DeferredPandas):
        del sys.modules["pandas"]
    return importlib.import_module("pandas")


class _Deferred(type):
    """A pandas class (``Index``, ``Series``) that the real pandas stands behind."""

    def __instancecheck__(cls, instance: Any) -> bool:
        # an object of a pandas class can only exist once pandas is loaded
        real = sys.modules.get("pandas")
        if real is None or isinstance(real, _DeferredPandas):
            return False
        return isinstance(instance, getattr(real, cls.__name__))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return getattr(_real_pandas(), cls.__name__)(*args, **kwargs)


class _DeferredPandas(types.ModuleType):
    """What cp_model's ``import pandas as pd`` binds: the real pandas, loaded when used."""

    def __getattr__(self, name: str) -> Any:
        if name in ("Index", "Series"):
            deferred = _Deferred(name, (), {})
            setattr(self, name, deferred)
            return deferred
        return getattr(_real_pandas(), name)
