"""``assemble``: request in, result out, for every strategy.

Input: a request (a mapping of parsed JSON, or a typed ``Request``), a strategy
name, a time limit, a worker count, a render format and counter, and optionally a
recorder (``ledger=``).
Output: a ``Result``; with a recorder, the compilation is also recorded through the
protocol of ``assembler.recorder`` (this module never imports a ledger). Bad input is an
``InvalidRequest`` (or another input error) naming the field, a request over the size
``Limits`` a ``RequestTooLarge``, and a bug inside an ``InternalError`` wrapping it.

The chain every strategy shares: parse -> gates -> the named strategy (from
``assembler.strategies``). The time limit covers the whole call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .model.arguments import DEFAULT_TIME_LIMIT, call_arguments
from .model.bugs import internal_errors
from .model.errors import InvalidRequest
from .model.limits import DEFAULT_LIMITS, Limits
from .model.parse import parse_request
from .model.rendering import RenderFormat
from .model.types import Request, Result, Status
from .recorder import OnParsed, Recorder, Run, record
from .stages.gates import apply_gates
from .strategies import Strategy, load_strategy

if TYPE_CHECKING:
    from .render import Counter

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "TRACE_PER_GATES_SECOND",
    "assemble",
    "assemble_validated",
]

# The trace that follows the decision is kept out of the decision's time: it does
# several times the per-candidate work of the gates (measured at 100k forms after the
# gates' single pass: 3.5x for a bundle; 1.9x before it), so the gates' own time on
# this request, on this machine under its current load, sets the reserve.
TRACE_PER_GATES_SECOND = 3.5


def assemble(
    request: Mapping[str, Any] | Request,
    *,
    strategy: str = "cpsat",
    time_limit: float | None = None,
    workers: int | None = None,
    render: str | RenderFormat | None = None,
    counter: Counter | None = None,
    ledger: Recorder | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Result:
    """Assemble the bundle for one request with the named strategy.

    ``render`` (a format) makes the result carry its ``Rendering``: forms without
    content are then gated ``no-content``. ``counter`` (needs ``render``) counts each
    form's cost from its rendered block and guarantees that the whole rendered text,
    counted as one text, fits the budget; the result is then that of the priced
    request (``assembler.render.priced_request``). ``ledger`` (an ``assembler.Ledger``,
    or any ``Recorder``) records the request before solving and then its outcome;
    recording never changes the answer. ``limits`` bounds the request's size."""
    run = Run(strategy, time_limit, workers, render, _counter_name(counter))
    return _recorded(request, run, counter, ledger, limits, validated=False)


def assemble_validated(
    request: Request,
    *,
    strategy: str = "cpsat",
    time_limit: float | None = None,
    workers: int | None = None,
    render: str | RenderFormat | None = None,
    counter: Counter | None = None,
    ledger: Recorder | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Result:
    """``assemble`` for a request this package already validated, without judging it
    again: a session's request, built from a parsed request and parsed deltas (the
    same rules, applied to what changed). Never for a ``Request`` built by hand."""
    run = Run(strategy, time_limit, workers, render, _counter_name(counter))
    return _recorded(request, run, counter, ledger, limits, validated=True)


def _recorded(
    request: Mapping[str, Any] | Request,
    run: Run,
    counter: Counter | None,
    ledger: Recorder | None,
    limits: Limits,
    *,
    validated: bool,
) -> Result:
    def compile(on: OnParsed | None) -> Result:
        return _assemble(
            request,
            run.strategy,
            run.time_limit,
            run.workers,
            run.render,
            counter,
            limits,
            on,
            validated=validated,
        )

    with internal_errors("assemble"):
        return compile(None) if ledger is None else record(ledger, request, run, compile)


def _counter_name(counter: Counter | None) -> str | None:
    return None if counter is None else f"{counter.name} {counter.version}"


def _assemble(
    request: Mapping[str, Any] | Request,
    strategy: str,
    time_limit: float | None,
    workers: int | None,
    render: str | RenderFormat | None,
    counter: Counter | None,
    limits: Limits,
    on_parsed: OnParsed | None,
    *,
    validated: bool = False,
) -> Result:
    strategy, limit, count = call_arguments(strategy, time_limit, workers)
    fmt = None
    if render is not None:
        # the renderer is loaded only for a call that renders (a fifth of a cold
        # command's imports otherwise)
        from .render import render_format

        fmt = render_format(render)
    if counter is not None and fmt is None:
        raise InvalidRequest("counter", "counts rendered text: give a render format too")
    run = load_strategy(strategy)
    return _pipeline(request, run, float(limit), count, fmt, counter, limits, on_parsed, validated)


def _pipeline(
    request: Mapping[str, Any] | Request,
    run: Strategy,
    limit: float,
    count: int,
    fmt: RenderFormat | None,
    counter: Counter | None,
    limits: Limits,
    on_parsed: OnParsed | None,
    validated: bool,
) -> Result:
    started = time.perf_counter()
    parsed = (
        request
        if validated and isinstance(request, Request)
        else parse_request(request, limits=limits)
    )
    if on_parsed is not None:
        # the recorder writes before the solve; the time limit does not pay for it
        paused = time.perf_counter()
        on_parsed(parsed)
        started += time.perf_counter() - paused
    parsed_at = time.perf_counter()
    stages: list[tuple[str, float]] = []

    def solve(req: Request) -> Result:
        began = time.perf_counter()
        gates = apply_gates(req, require_content=fmt is not None)
        gated_at = time.perf_counter()
        stages.append(("gates", gated_at - began))
        # The limit covers the whole call: parsing a huge request eats into it, and the
        # trace that follows the decision is set aside.
        reserve = TRACE_PER_GATES_SECOND * (gated_at - began)
        remaining = max(0.001, limit - (gated_at - started) - reserve)
        out = run(req, gates, remaining, count)
        stages.extend(out.timings)
        return out

    if fmt is None:
        result = solve(parsed)
    elif counter is None:
        result = solve(parsed)
        if result.status is Status.BUNDLE:
            began = time.perf_counter()
            from .render.manifest import build_rendering

            rendering = build_rendering(parsed, result, fmt, None)
            stages.append(("render", time.perf_counter() - began))
            result = replace(result, rendering=rendering)
    else:
        from .render import fit_to_budget

        result = fit_to_budget(parsed, fmt, counter, solve)
    timings = (
        ("parse", parsed_at - started),
        *stages,
        ("total", time.perf_counter() - started),
    )
    return replace(result, timings=timings)
