"""One call, top to bottom: parse -> gates -> decision -> trace -> render -> record.

Input: a request (a mapping of parsed JSON, or a typed ``Request``), the call's
``Settings``, and optionally ``Kept``: what each stage kept from an earlier call (a
session's), with ``keep`` asking each stage to keep what the next call can reuse.
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
4. trace (``stages/trace.py``): decisions and identities; keeps each decision's words;
5. render (``render/``), for a bundle when a format is set; with a token counter the
   budget guarantee loops over stages 2-5 on priced requests (``render/budget.py``);
6. record: a recorder (``settings.ledger``) is told the request before the gates and
   the result after (``recorder.py``); recording never changes the answer.

The time limit covers the whole call, parsing included; the recorder's write is given
back; the trace's share (``TRACE_PER_GATES_SECOND`` times the gates' own time) is kept
back from the decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .deadline import Deadline, Stopwatch
from .model.bugs import internal_errors
from .model.parse import parse_request
from .model.types import Request, Result, Status
from .recorder import OnParsed, record
from .settings import Settings
from .stages.gates import apply_gates
from .stages.trace import TraceKept, trace
from .strategies import canonical_strategy, load_strategy

__all__ = ["TRACE_PER_GATES_SECOND", "Kept", "run"]

# The trace does several times the per-candidate work of the gates, so the gates' own
# time on this request, on this machine now, sets the trace's reserve.
TRACE_PER_GATES_SECOND = 3.5


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
) -> tuple[Result, Kept]:
    """The chain on ``request``; ``kept`` from an earlier call of the same settings
    (any earlier request: each stage checks what it may reuse)."""
    after: list[Kept] = []

    def compile(on_parsed: OnParsed | None) -> Result:
        result, kept_now = _chain(request, settings, kept or Kept(), keep, on_parsed)
        after.append(kept_now)
        return result

    with internal_errors("assemble"):
        if settings.ledger is None:
            result = compile(None)
        else:
            result = record(settings.ledger, request, settings, compile)
    return result, after[0]


def _chain(
    request: Mapping[str, Any] | Request,
    settings: Settings,
    kept: Kept,
    keep: bool,
    on_parsed: OnParsed | None,
) -> tuple[Result, Kept]:
    clock = Stopwatch()
    deadline = Deadline.after(settings.seconds)
    parsed = parse_request(request, limits=settings.limits)
    clock.lap("parse")
    if on_parsed is not None:
        on_parsed(parsed)
        deadline = deadline.later(clock.skip())
    strategy = load_strategy(settings.strategy)
    # the result names the strategy by its name, whichever alias the call used
    name = canonical_strategy(settings.strategy)
    fmt, counter, workers = settings.format, settings.counter, settings.worker_count
    kept_now = [kept]

    def decide_and_trace(req: Request) -> Result:
        gates = apply_gates(req, require_content=fmt is not None)
        reserve = TRACE_PER_GATES_SECOND * clock.lap("gates")
        choice = strategy(
            req, gates, deadline.less(reserve), workers, kept=kept_now[0].decision, keep=keep
        )
        clock.extend(choice.timings)
        result, traced = trace(req, gates, name, choice, kept_now[0].trace, keep=keep)
        clock.lap("trace")
        kept_now[0] = Kept(choice.kept if keep else None, traced)
        return result

    if fmt is None:
        result = decide_and_trace(parsed)
    else:
        # the renderer's modules are loaded only by a call that renders
        from .render import fit_to_budget
        from .render.layout import Headers
        from .render.manifest import build_rendering

        headers = Headers(settings.headers)
        if counter is not None:
            result = fit_to_budget(parsed, fmt, counter, decide_and_trace, headers=headers)
            clock.lap("render")
        else:
            result = decide_and_trace(parsed)
            if result.status is Status.BUNDLE:
                rendering = build_rendering(parsed, result, fmt, None, headers=headers)
                result = replace(result, rendering=rendering)
                clock.lap("render")
    return replace(result, timings=(*clock.laps, ("total", clock.total()))), kept_now[0]
