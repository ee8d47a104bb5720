"""One call, top to bottom: parse -> gates -> decision -> trace -> render -> record.

Input: a request (a mapping of parsed JSON, or a typed ``Request``), the call's
``Settings``, optionally ``Kept`` (what each stage kept from an earlier call, a
session's, with ``keep`` asking each stage to keep what the next call can reuse) and
the call's ``Deadline`` when it began before the chain (a served call's, from its
arrival; otherwise ``settings.time_limit`` from now).
Output: the ``Result``, and the ``Kept`` for the next call. ``assemble()`` runs the
chain with nothing kept; a ``Session`` holds what each stage kept. Whatever is kept,
the answer is the one a fresh call gives: each stage reuses only what its own input
proves unchanged, and says in its module why that is exact.

The stages, each a function of its input and, optionally, of what it kept:

1. parse (``model/parse.py``): JSON or a mapping to a typed ``Request``; a request this
   package validated (a session's) comes back as it is;
2. gates (``stages/gates.py``): a named reason for every rejected form; nothing kept
   (one linear pass, cheap beside the rest);
3. decision (the strategy; the exact one is ``exact/solve.py``): a ``Choice``; the
   exact strategy keeps the problem it proved optimal and the LP's basis;
4. trace (``stages/trace.py``): decisions and identities; keeps each decision's verdict
   and reason, and its words once read;
5. render (``render/``), for a bundle when a format is set; with a token counter the
   budget guarantee runs stages 2-5 again on the priced request until the measured
   rendering fits (``render/budget.py``);
6. record: a recorder (``settings.ledger``, ``recorder.py``) is told the request once
   it is parsed, then the outcome; recording never changes the answer.

The time limit covers the whole call, parsing included; the recorder's write is given
back; the trace's share (``TRACE_PER_GATES_SECOND`` times the gates' own time, at most
``TRACE_SECONDS_PER_CANDIDATE`` a candidate) is kept back from the decision. Every
answer is handed to the audit hooks before it is returned (``add_audit_hook``: a test
suite's verifier).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .deadline import Deadline, Stopwatch
from .model.bugs import internal_errors
from .model.parse import parse_request
from .model.rendering import Headers, RenderFormat
from .model.types import Request, Result, Status
from .settings import Settings
from .stages.gates import apply_gates
from .stages.trace import TraceKept, trace
from .strategies import load_strategy

__all__ = [
    "TRACE_PER_GATES_SECOND",
    "TRACE_SECONDS_PER_CANDIDATE",
    "AuditHook",
    "Kept",
    "add_audit_hook",
    "audit_hooks",
    "remove_audit_hook",
    "run",
]

# The trace does several times the per-candidate work of the gates, so the gates' own
# time on this request, on this machine now, sets the trace's reserve; but the gates
# also walk every dependency edge, which the trace does not: at most this much per
# candidate is kept back (2.5x the slowest trace measured, 100k undecided candidates).
TRACE_PER_GATES_SECOND = 3.5
TRACE_SECONDS_PER_CANDIDATE = 1e-5

# what an audit hook is handed: the parsed request, the settings, the answer
AuditHook = Callable[[Request, Settings, Result], None]
_AUDIT_HOOKS: list[AuditHook] = []


def add_audit_hook(hook: AuditHook) -> None:
    """Hand every answer the chain makes from now on, in this process, to ``hook``
    before it is returned (and before a recorder is told it). For a test suite or a
    debugging session that judges every answer with an independent verifier; an
    exception the hook raises is the call's."""
    _AUDIT_HOOKS.append(hook)


def remove_audit_hook(hook: AuditHook) -> None:
    """Stop handing answers to ``hook`` (added by ``add_audit_hook``)."""
    _AUDIT_HOOKS.remove(hook)


def audit_hooks() -> tuple[AuditHook, ...]:
    """The hooks every answer is handed to, in the order they were added."""
    return tuple(_AUDIT_HOOKS)


@dataclass(frozen=True, slots=True)
class Kept:
    """What the stages of one call kept for the next: the strategy's (opaque to the
    chain) and the trace's. Never changed once built."""

    decision: Any = None
    trace: TraceKept | None = None


def run(
    request: Mapping[str, Any] | Request,
    settings: Settings,
    kept: Kept | None = None,
    *,
    keep: bool = False,
    deadline: Deadline | None = None,
) -> tuple[Result, Kept]:
    """The chain on ``request``; ``kept`` from an earlier call of the same settings
    (any earlier request: each stage checks what it may reuse)."""
    with internal_errors("assemble"):
        clock = Stopwatch()
        if deadline is None:
            deadline = Deadline.after(settings.seconds)
        recorder = settings.ledger
        try:
            parsed = parse_request(request, limits=settings.limits)
        except Exception as error:
            if recorder is not None:
                recorder.invalid(request, settings.recorded(), error)
            raise
        clock.lap("parse")
        # the recorder's own errors reach the caller and are never reported back to it
        recording = None if recorder is None else recorder.requested(parsed, settings)
        if recording is not None:
            deadline = deadline.later(clock.skip())
        try:
            stages = _Stages(settings, keep, deadline, clock)
            result, kept_now = stages.answer(parsed, kept or Kept())
            result = replace(result, timings=(*clock.laps, ("total", clock.total())))
            for hook in _AUDIT_HOOKS:
                hook(parsed, settings, result)
        except Exception as error:
            if recording is not None:
                recording.failed(error)
            raise
        if recording is not None:
            recording.answered(result)
        return result, kept_now


@dataclass(frozen=True, slots=True)
class _Stages:
    """Stages 2-5 of one call: what they share (its settings, whether to keep, its
    deadline and stopwatch), with the request and the kept work threaded through."""

    settings: Settings
    keep: bool
    deadline: Deadline
    clock: Stopwatch

    def answer(self, request: Request, kept: Kept) -> tuple[Result, Kept]:
        """Stages 2-5 on the parsed request."""
        settings, clock = self.settings, self.clock
        # built settings hold a RenderFormat and a Headers (Settings.__post_init__)
        fmt = None if settings.render is None else RenderFormat(settings.render)
        counter = settings.counter
        if fmt is None:
            return self.decided(request, kept)
        # the renderer's modules are loaded only by a call that renders
        from .render.budget import counted_rendering, envelope_fits, measured, priced_request
        from .render.manifest import build_rendering

        headers = Headers(settings.headers)
        if counter is None:
            result, kept = self.decided(request, kept)
            if result.status is Status.BUNDLE:
                rendering = build_rendering(
                    request, result, fmt, None, headers=headers, vouched=True
                )
                result = replace(result, rendering=rendering)
                clock.lap("render")
            return result, kept
        # the budget guarantee: solve the priced request, render and count the whole
        # text; while it is over the budget, keep the measured excess back, solve again
        budget = request.task.budget
        envelope = envelope_fits(request, counter)
        priced = priced_request(request, counter, headers=headers)
        threaded = kept

        def attempt(reserve: int) -> tuple[tuple[Result, Kept], int | None]:
            nonlocal threaded
            items = max(0, budget - envelope - reserve)
            trial = replace(priced, task=replace(priced.task, budget=items))
            result, threaded = self.decided(trial, threaded)
            if result.status is not Status.BUNDLE:
                return (result, threaded), None
            rendering = counted_rendering(trial, result, fmt, counter, budget, headers)
            clock.lap("render")
            total = rendering.manifest.total_tokens or 0
            return (replace(result, rendering=rendering), threaded), total

        return measured(budget, attempt)

    def decided(self, request: Request, kept: Kept) -> tuple[Result, Kept]:
        """Stages 2-4: the gates, the decision and the trace."""
        settings, clock, keep = self.settings, self.clock, self.keep
        gates = apply_gates(request, require_content=settings.render is not None)
        reserve = min(
            TRACE_PER_GATES_SECOND * clock.lap("gates"),
            TRACE_SECONDS_PER_CANDIDATE * len(request.candidates),
        )
        strategy = load_strategy(settings.strategy)
        choice = strategy(
            request,
            gates,
            self.deadline.less(reserve),
            settings.worker_count,
            kept=kept.decision,
            keep=keep,
            render=None if settings.render is None else RenderFormat(settings.render),
        )
        clock.extend(choice.timings)
        result, traced = trace(request, gates, settings.strategy, choice, kept.trace, keep=keep)
        clock.lap("trace")
        return result, Kept(choice.kept if keep else None, traced)
