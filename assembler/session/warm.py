"""A session's answer from what the previous answer kept: only what a delta touches is redone.

Input: a ``State``, the session's ``Options`` and time limit, the ``Warm`` that the
answer of an earlier state left, or None, and the state the delta was applied to.
Output: the ``Result`` that ``assemble_validated(state.request, ...)`` gives, identical
in every compared field, and the ``Warm`` for the next delta; or None when the options
take a path kept whole (a strategy other than ``cpsat``, or a token counter, whose
budget guarantee re-solves priced requests): the caller then runs the whole chain.

What is kept and why each reuse is exact:

* the gates (``stages/regate.py``): candidates judged again only where the delta
  reaches, the derived fixpoint re-run from the identities that may have moved;
* the trace (``stages/retrace.py``): decisions worded again only for the candidates
  whose own facts moved, the identities' JSON pieces kept;
* the solve: the previous problem and its outcome. When the new problem is equal to
  it and the outcome was proven optimal, no backend runs (``exact.solve.decide_exact``:
  the lexicographic order has one optimum, so every proof finds it). Any other
  outcome (a time-out's incumbent, a refusal) is never reused;
* the LP's basis (``exact.relaxation.LpMemory``): the first LP of every solve starts
  from the basis the previous one ended with. Only a start: the LP is solved to
  optimality from it and its bound recomputed from the duals, so the answer is the
  one a cold start finds (the unique optimum when proven).

The chain and its time accounting are ``api._pipeline``'s: the time limit covers the
whole call, the trace's share is kept back by the gates' time, a rendering is built
for a bundle when a format is set, and a recorder sees the request before the solve.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..api import TRACE_PER_GATES_SECOND
from ..exact.backend import SolveOutcome, SolveStatus
from ..exact.closure import Problem
from ..exact.solve import decide_exact, exact_backend
from ..model.arguments import call_arguments
from ..model.bugs import internal_errors
from ..model.limits import DEFAULT_LIMITS, Limits
from ..model.rendering import RenderFormat
from ..model.types import Candidate, Result, Status
from ..recorder import OnParsed, Recorder, Run, record
from ..stages.regate import GateState, regate
from ..stages.retrace import TraceState, retrace
from .state import State

if TYPE_CHECKING:
    from ..exact.relaxation import LpMemory
    from ..render import Counter

__all__ = ["Options", "Warm", "warm_answer"]


@dataclass(frozen=True, slots=True)
class Options:
    """How every answer of a session is computed (``assemble``'s keyword arguments)."""

    strategy: str = "cpsat"
    workers: int | None = None
    render: RenderFormat | None = None
    counter: Counter | None = None
    ledger: Recorder | None = None
    limits: Limits = DEFAULT_LIMITS
    time_limit: float | None = None


@dataclass(frozen=True, slots=True)
class Warm:
    """What the answer of ``state`` leaves for the next delta's: its gates, the trace
    of its bundle (None without one), and the problem solved with its outcome (None
    when the chain stopped before a solve)."""

    state: State
    gates: GateState
    trace: TraceState | None = None
    solved: tuple[Problem, SolveOutcome] | None = None
    # the basis of the last LP the session solved: the next solve's first LP starts
    # from it (a start only; shared by the Warms of one session, see LpMemory)
    lp: LpMemory | None = None


def warm_answer(
    state: State,
    options: Options,
    time_limit: float | None,
    kept: Warm | None,
    base: State | None = None,
) -> tuple[Result, Warm] | None:
    """The answer of ``state``, from ``kept`` when it belongs to ``state`` itself or to
    ``base``, the state whose delta made ``state`` (``state.touched`` then says what
    changed); None when these options are answered by the whole chain."""
    if options.strategy != "cpsat" or options.counter is not None:
        return None
    limit_given = options.time_limit if time_limit is None else time_limit
    _, limit, workers = call_arguments(options.strategy, limit_given, options.workers)
    run = Run(options.strategy, limit_given, options.workers, options.render, None)
    warm: list[Warm] = []

    def compile(on_parsed: OnParsed | None) -> Result:
        result, after = _answer(state, base, options, float(limit), workers, kept, on_parsed)
        warm.append(after)
        return result

    with internal_errors("assemble"):
        if options.ledger is None:
            result = compile(None)
        else:
            result = record(options.ledger, state.request, run, compile)
    return result, warm[0]


def _changes(
    state: State, base: State | None, kept: Warm
) -> tuple[list[Candidate], list[Candidate]] | None:
    """The candidates taken away and brought since ``kept``'s state; None when ``kept``
    belongs to neither ``state`` nor ``base``."""
    if kept.state is state:
        return [], []
    if kept.state is not base or base is None:
        return None
    touched = state.touched
    gone = [base.by_id[i] for i in (*touched.removed, *touched.updated)]
    new = [state.by_id[i] for i in (*touched.updated, *touched.added)]
    return gone, new


def _answer(
    state: State,
    base: State | None,
    options: Options,
    limit: float,
    workers: int,
    kept: Warm | None,
    on_parsed: OnParsed | None,
) -> tuple[Result, Warm]:
    request = state.request
    started = time.perf_counter()
    if on_parsed is not None:
        # the recorder writes before the solve; the time limit does not pay for it
        on_parsed(request)
        started = time.perf_counter()
    render = options.render
    changes = None if kept is None else _changes(state, base, kept)
    previous = kept if changes is not None else None
    gone, new = changes if changes is not None else ([], list(request.candidates))
    began = time.perf_counter()
    gates = regate(
        None if previous is None else previous.gates,
        request,
        state.by_id,
        state.forms_of,
        gone,
        new,
        require_content=render is not None,
    )
    gated_at = time.perf_counter()
    reserve = TRACE_PER_GATES_SECOND * (gated_at - began)
    remaining = max(0.001, limit - (gated_at - started) - reserve)
    # the LP's module (numpy) is loaded here, with the solve, not when sessions are
    from ..exact.relaxation import LpMemory

    memory = kept.lp if kept is not None and kept.lp is not None else LpMemory()
    backend = exact_backend(memory)
    known = None if previous is None else previous.solved
    decided = decide_exact(request, gates.report, backend, remaining, workers, known)
    stages: list[tuple[str, float]] = [("gates", gated_at - began), *decided.timings]
    if decided.result is not None:
        result, warm = decided.result, Warm(state, gates, None, None, memory)
    else:
        problem, outcome = decided.problem, decided.outcome
        assert problem is not None and outcome is not None
        traced_at = time.perf_counter()
        result, trace = retrace(
            None if previous is None else previous.trace,
            request,
            gates,
            backend.name,
            _ids(problem, outcome.selection),
            optimal=outcome.status is SolveStatus.OPTIMAL,
            # retrace reports the bundle's own value as the bound when optimal
            bound=outcome.bound,
            by_id=state.by_id,
            forms_of=state.forms_of,
            gone=gone,
            new=new,
        )
        stages.append(("trace", time.perf_counter() - traced_at))
        warm = Warm(state, gates, trace, (problem, outcome), memory)
        if render is not None and result.status is Status.BUNDLE:
            # loaded only when rendering, as assemble() does
            from ..render.manifest import build_rendering

            began = time.perf_counter()
            rendering = build_rendering(request, result, render, None)
            stages.append(("render", time.perf_counter() - began))
            result = replace(result, rendering=rendering)
    timings = (("parse", 0.0), *stages, ("total", time.perf_counter() - started))
    return replace(result, timings=timings), warm


def _ids(problem: Problem, selection: Iterable[int]) -> list[str]:
    return [problem.form_ids[f] for f in selection]
