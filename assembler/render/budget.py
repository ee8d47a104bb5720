"""The budget guarantee: with counted costs, the whole rendered text fits the budget.

Input: a validated ``Request``, a format, a ``Counter`` and ``solve`` (request ->
``Result``: the gates and the strategy, supplied by ``assemble``).
Output: a ``Result`` of the priced request carrying its ``Rendering``, whose text,
counted as one text by the same counter, is at most ``task.budget``; or the
strategy's refusal / undecided result; or ``RenderError(RENDER_ENVELOPE_OVER_BUDGET)``.

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

from ..model.errors import RenderError
from ..model.rendering import RenderFormat
from ..model.types import Request, Result, Status
from .counters import Counter
from .layout import Headers, block_text, envelope_blocks
from .manifest import build_rendering

__all__ = ["envelope_tokens", "fit_to_budget", "priced_request"]


def envelope_tokens(request: Request, counter: Counter) -> int:
    return sum(counter.count(b.text) for b in envelope_blocks(request) if b is not None)


def priced_request(
    request: Request,
    counter: Counter,
    budget: int | None = None,
    headers: Headers = Headers.PROVENANCE,
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


def fit_to_budget(
    request: Request,
    fmt: RenderFormat,
    counter: Counter,
    solve: Callable[[Request], Result],
    headers: Headers = Headers.PROVENANCE,
) -> Result:
    budget = request.task.budget
    envelope = envelope_tokens(request, counter)
    if envelope > budget:
        raise RenderError(
            "RENDER_ENVELOPE_OVER_BUDGET",
            f"the task's instruction and query count {envelope} tokens, above the budget {budget}",
        )
    priced = priced_request(request, counter, headers=headers)
    reserve = 0
    rounds = 0
    while True:
        items_budget = max(0, budget - envelope - reserve)
        attempt = replace(priced, task=replace(priced.task, budget=items_budget))
        result = solve(attempt)
        if result.status is not Status.BUNDLE:
            return result
        rendering = build_rendering(
            attempt, result, fmt, counter, budget=budget, counted=True, headers=headers
        )
        total = rendering.manifest.total_tokens
        assert total is not None
        if total <= budget:
            return replace(result, rendering=rendering)
        if items_budget == 0:
            raise RenderError(
                "RENDER_ENVELOPE_OVER_BUDGET",
                f"even the least selection renders to {total} tokens, above the budget {budget}",
            )
        rounds += 1
        excess = total - budget
        reserve += excess if rounds <= 3 else excess * 2 ** (rounds - 3)
