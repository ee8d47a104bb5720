"""The budget guarantee: with counted costs, the whole rendered text fits the budget.

Input: a validated ``Request``, a format and a ``Counter``.
Output: the pieces the chain (``pipeline.py``) loops over: ``envelope_fits`` (the
envelope's tokens, or ``RenderError(RENDER_ENVELOPE_OVER_BUDGET)``), ``priced_request``
(each form's cost counted from its block), ``counted_rendering`` (the rendering of a
priced request's bundle, counted); and ``measured``, the one measure-reserve loop
(its rule: ``Rounds``), which the chain's budget guarantee and ``fit`` both run.

Pricing: each form costs the count of its whole block (header, content, closing
line); the envelope (the task's instruction and query blocks) is counted and taken
off the budget first. Tokenizers are not additive across concatenation (a merge can
span two blocks, in either direction), so the sum of the parts is not a proof. The
guarantee is by measurement: render, count the whole text; while it exceeds the
budget, take the measured excess (doubled after the third round) off the items'
budget and solve again. The items' budget strictly decreases, so this ends: with a
rendering that was measured to fit, with the strategy's refusal, or, when even the
empty selection does not fit, with ``RENDER_ENVELOPE_OVER_BUDGET``. Only a measured
fit is ever returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from ..model.errors import RenderError
from ..model.rendering import DEFAULT_HEADERS, Headers, RenderFormat, Rendering
from ..model.types import Request, Result
from .counters import Counter
from .layout import block_text, envelope_blocks
from .manifest import build_rendering

__all__ = [
    "Rounds",
    "counted_rendering",
    "envelope_fits",
    "envelope_tokens",
    "measured",
    "priced_request",
]

T = TypeVar("T")


def envelope_tokens(request: Request, counter: Counter) -> int:
    return sum(counter.count(b.text) for b in envelope_blocks(request) if b is not None)


def priced_request(
    request: Request,
    counter: Counter,
    budget: int | None = None,
    headers: Headers = DEFAULT_HEADERS,
) -> Request:
    """``request`` with each form's cost counted from its block framed by ``headers`` (a
    form without content keeps its declared cost: it cannot be admitted when rendering)
    and ``task.budget`` set to ``budget`` (default: the budget less the envelope)."""
    if budget is None:
        budget = max(0, request.task.budget - envelope_tokens(request, counter))
    candidates = tuple(
        c if c.content is None else replace(c, cost=counter.count(block_text(c, headers)))
        for c in request.candidates
    )
    return replace(request, candidates=candidates, task=replace(request.task, budget=budget))


def envelope_fits(request: Request, counter: Counter) -> int:
    """The envelope's tokens, when they leave room for the items (else a ``RenderError``)."""
    budget = request.task.budget
    envelope = envelope_tokens(request, counter)
    if envelope > budget:
        raise RenderError(
            "RENDER_ENVELOPE_OVER_BUDGET",
            f"the task's instruction and query count {envelope} tokens, above the budget {budget}",
        )
    return envelope


def counted_rendering(
    attempt: Request,
    result: Result,
    fmt: RenderFormat,
    counter: Counter,
    budget: int,
    headers: Headers,
) -> Rendering:
    """The rendering of ``result``, the chain's bundle of the priced request ``attempt``,
    counted against the task's whole ``budget``; an over-budget rendering of an attempt
    with nothing left for the items is a ``RenderError`` (no selection can fit)."""
    rendering = build_rendering(
        attempt, result, fmt, counter, budget=budget, counted=True, headers=headers, vouched=True
    )
    total = rendering.manifest.total_tokens
    assert total is not None
    if total > budget and attempt.task.budget == 0:
        raise RenderError(
            "RENDER_ENVELOPE_OVER_BUDGET",
            f"even the least selection renders to {total} tokens, above the budget {budget}",
        )
    return rendering


class Rounds:
    """The measure-reserve loop's rule, for every fit by measurement (the rendering's
    budget guarantee, ``fit()``'s provider body): each round solves with ``reserve``
    tokens kept off the items' budget and measures the whole; ``fits(total)`` says
    whether it fits, and when it does not, reserves the measured excess, doubled from
    the fourth round on, so that an excess that shrinks slowly still ends in a few
    rounds. The reserve only grows, so the items' budget comes down to nothing."""

    __slots__ = ("budget", "reserve", "rounds")

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.reserve = 0
        self.rounds = 0

    def fits(self, total: int) -> bool:
        if total <= self.budget:
            return True
        self.rounds += 1
        excess = total - self.budget
        self.reserve += excess if self.rounds <= 3 else excess * 2 ** (self.rounds - 3)
        return False


def measured(budget: int, attempt: Callable[[int], tuple[T, int | None]]) -> T:
    """The measure-reserve loop, for every fit by measurement (the rendering's budget
    guarantee, ``fit()``'s provider body): ``attempt(reserve)`` solves with ``reserve``
    tokens kept off the items' budget and returns its outcome with the whole's measured
    tokens (None: an outcome that ends the loop as it is, a refusal); while the measure
    is over ``budget``, the next attempt reserves more by ``Rounds``' rule. Only an
    outcome measured to fit (or one that ends the loop) is returned."""
    rounds = Rounds(budget)
    while True:
        outcome, total = attempt(rounds.reserve)
        if total is None or rounds.fits(total):
            return outcome
