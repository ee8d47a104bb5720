"""Time limits for counterfactuals: one per figure and one over all of them.

Input: ``ExplainLimits`` (how many counterfactuals per kind, seconds per figure, seconds
overall, and the ``Settings`` of the solves: an exact strategy, its workers). Output: a
``Clock`` that hands out a ``FigureDeadline`` per figure, a share of the overall
``Deadline``; it solves derived requests with ``assemble()`` under whatever is left of
both limits, and answers None once nothing is left.

A time limit is a promise: no solve is started without time left, and each solve is
told the smaller of the figure's and the overall remainder, so the whole explanation
finishes within the overall limit plus one solve's own overhead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..api import assemble
from ..deadline import Deadline, Stopwatch
from ..model.errors import InvalidRequest
from ..model.numbers import is_number, is_whole
from ..model.rendering import RenderFormat
from ..model.types import Request, Result
from ..settings import Settings
from ..strategies import EXACT_STRATEGIES

__all__ = ["Clock", "ExplainLimits", "FigureDeadline"]


@dataclass(frozen=True, slots=True)
class ExplainLimits:
    """``top``: counterfactuals per kind (the N most valuable identities; 0 turns
    them off); ``per_figure`` and ``total``: seconds; ``settings``: how each derived
    request is solved (an exact strategy; its time limit is the figure's)."""

    top: int = 5
    per_figure: float = 2.0
    total: float = 30.0
    # keep every derived request with its answer (for audits: the tests verify each)
    audit: bool = False
    settings: Settings = field(default_factory=Settings)

    def __post_init__(self) -> None:
        if not is_whole(self.top) or self.top < 0:
            raise InvalidRequest("top", f"must be a whole number >= 0, not {self.top!r}")
        for name in ("per_figure", "total"):
            seconds = getattr(self, name)
            if not is_number(seconds):
                raise InvalidRequest(name, f"must be a number of seconds, not {seconds!r}")
            if not 0 < seconds < float("inf"):
                raise InvalidRequest(name, f"must be a positive number of seconds, not {seconds}")
        # a counterfactual compares optima: only a strategy that proves them may answer it
        if self.settings.strategy not in EXACT_STRATEGIES:
            raise InvalidRequest(
                "strategy",
                f"counterfactuals need an exact strategy ({', '.join(EXACT_STRATEGIES)}),"
                f" not {self.settings.strategy!r}",
            )


@dataclass(slots=True)
class FigureDeadline:
    """The time one figure may spend (a share of the overall deadline); ``cut`` records
    that a solve was not started."""

    deadline: Deadline
    clock: Clock
    watch: Stopwatch = field(default_factory=Stopwatch)
    cut: bool = False

    def left(self) -> float:
        return self.deadline.left()

    def spent(self) -> float:
        return self.watch.elapsed()

    def solve(self, request: Request, render: RenderFormat | None = None) -> Result | None:
        """The exact answer under the time left, or None when none is left."""
        if self.deadline.passed:
            self.cut = True
            return None
        answer = assemble(
            request,
            self.clock.limits.settings,
            time_limit=self.deadline.limit(),
            render=render,
        )
        self.clock.solves += 1
        if self.clock.limits.audit:
            self.clock.audited.append((request, answer))
        return answer


class Clock:
    """Hands out per-figure deadlines that never outlive the overall one."""

    def __init__(self, limits: ExplainLimits) -> None:
        self.limits = limits
        self.overall = Deadline.after(limits.total)
        self.solves = 0
        self.audited: list[tuple[Request, Result]] = []

    def exhausted(self) -> bool:
        return self.overall.passed

    def figure(self) -> FigureDeadline:
        return FigureDeadline(self.overall.within(self.limits.per_figure), self)

    def whole(self) -> FigureDeadline:
        """The rest of the overall limit: for the fresh solve of the request itself,
        which every figure compares against (a request that takes longer than one
        figure's limit to solve would otherwise leave nothing to compare with)."""
        return FigureDeadline(self.overall, self)
