"""Time limits for counterfactuals: one per figure and one over all of them.

Input: ``ExplainLimits`` (how many counterfactuals per kind, seconds per figure, seconds
overall, the exact strategy). Output: a ``Clock`` that hands out a ``FigureDeadline`` per
figure; a deadline solves derived requests with ``assemble()`` under whatever is
left of both limits, and answers None once nothing is left.

A time limit is a promise: no solve is started without time left, and each solve is
told the smaller of the figure's and the overall remainder, so the whole explanation
finishes within the overall limit plus one solve's own overhead.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..api import assemble
from ..model.errors import InvalidRequest
from ..model.rendering import RenderFormat
from ..model.types import Request, Result
from ..strategies import EXACT_STRATEGIES, canonical_strategy

__all__ = ["Clock", "ExplainLimits", "FigureDeadline"]


@dataclass(frozen=True, slots=True)
class ExplainLimits:
    """``top``: counterfactuals per kind (the N most valuable identities; 0 turns
    them off); ``per_figure`` and ``total``: seconds."""

    top: int = 5
    per_figure: float = 2.0
    total: float = 30.0
    strategy: str = "exact"
    workers: int | None = None
    # keep every derived request with its answer (for audits: the tests verify each)
    audit: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.top, bool) or not isinstance(self.top, int) or self.top < 0:
            raise InvalidRequest("top", f"must be a whole number >= 0, not {self.top!r}")
        for name in ("per_figure", "total"):
            seconds = getattr(self, name)
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                raise InvalidRequest(name, f"must be a number of seconds, not {seconds!r}")
            if not 0 < seconds < float("inf"):
                raise InvalidRequest(name, f"must be a positive number of seconds, not {seconds}")
        # a counterfactual compares optima: only a strategy that proves them may answer it
        if canonical_strategy(self.strategy) not in EXACT_STRATEGIES:
            raise InvalidRequest(
                "strategy",
                f"counterfactuals need an exact strategy ({', '.join(EXACT_STRATEGIES)}),"
                f" not {self.strategy!r}",
            )


@dataclass(slots=True)
class FigureDeadline:
    """The time one figure may spend; ``cut`` records that a solve was not started."""

    at: float
    clock: Clock
    started: float = field(default_factory=time.monotonic)
    cut: bool = False

    def left(self) -> float:
        return self.at - time.monotonic()

    def spent(self) -> float:
        return time.monotonic() - self.started

    def solve(self, request: Request, render: RenderFormat | None = None) -> Result | None:
        """The exact answer under the time left, or None when none is left."""
        left = self.left()
        if left <= 0:
            self.cut = True
            return None
        limits = self.clock.limits
        answer = assemble(
            request,
            strategy=limits.strategy,
            time_limit=left,
            workers=limits.workers,
            render=render,
        )
        self.clock.solves += 1
        if limits.audit:
            self.clock.audited.append((request, answer))
        return answer


class Clock:
    """Hands out per-figure deadlines that never outlive the overall one."""

    def __init__(self, limits: ExplainLimits) -> None:
        self.limits = limits
        self.overall = time.monotonic() + limits.total
        self.solves = 0
        self.audited: list[tuple[Request, Result]] = []

    def exhausted(self) -> bool:
        return time.monotonic() >= self.overall

    def figure(self) -> FigureDeadline:
        at = min(time.monotonic() + self.limits.per_figure, self.overall)
        return FigureDeadline(at, self)

    def whole(self) -> FigureDeadline:
        """The rest of the overall limit: for the fresh solve of the request itself,
        which every figure compares against (a request that takes longer than one
        figure's limit to solve would otherwise leave nothing to compare with)."""
        return FigureDeadline(self.overall, self)
