"""Budget questions: the smallest budget whose optimal bundle admits an identity, and
the next budget at which the optimum gains value.

Input: a request, an identity, the request's exact optimum (a proven bundle) and a
``Deadline``. Output: ``Figure`` values (budgets in cost units, gains in value points).

Definition. Write O(b) for the unique optimal bundle of the request at budget b
(``models/README.md`` section 6). The figure is

    B_min = min { b integer, b >= B : O(b) admits the identity }

where B is the request's budget, or *none* when no such b exists. Inclusion is not
monotone in b (a bigger budget can swap an identity out for a better set), so this is
not a bisection on inclusion. It walks the breakpoints of O instead:

* O(b) changes only where the optimal value V*(b) rises (a bundle as valuable and
  better ranked would have fitted at the smaller budget already), and V*(b) is
  non-decreasing, so the next breakpoint after b is the least b' with V*(b') > V*(b):
  a bisection on V*, which is monotone. A solve at mid that finds more value proves
  a breakpoint at or below the cost of what it found, which shortens the bisection.
* Past the cost of O(total cost of all candidates), O never changes again: when the
  walk reaches that bundle without admitting the identity, the answer is *none*.

Each breakpoint's bundle is checked for the identity, so the first one admitting it
is B_min. When the deadline stops the walk, every budget up to the last one shown to
leave the identity out is excluded: the figure is then a lower bound.

The next breakpoint is the walk's first step: B_next = min { b > B : V*(b) > V*(B) },
with the gain V*(B_next) - V*(B), or *none* when O(B) is already the unbounded optimum.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..model.types import Request, Result, Status, Verdict
from .derive import total_cost, with_budget
from .figures import COST_UNIT, VALUE_UNIT, Figure, FigureStatus
from .limits import Deadline

__all__ = ["next_breakpoint", "smallest_budget"]

_KEY = "smallest_budget"
_LABEL = "smallest budget whose optimal bundle admits it"


def _admits(result: Result, identity: str) -> bool:
    return any(d.identity == identity and d.verdict is Verdict.ADMITTED for d in result.decisions)


def _proven(result: Result | None) -> bool:
    return result is not None and result.status is Status.BUNDLE and result.optimal


class _Breakpoints:
    """The optimal bundles above a budget, one breakpoint at a time.

    ``here`` is O(``at``); every budget in [``at``, ``last``] is proven to have the
    same optimal bundle, and every budget from the start up to ``at`` has one of the
    bundles visited before.
    """

    def __init__(self, request: Request, reference: Result, deadline: Deadline) -> None:
        self.request = request
        self.deadline = deadline
        self.here = reference
        self.at = self.last = request.task.budget
        self.top: Result | None = None

    def advance(self) -> bool | None:
        """Move to the next breakpoint: True when moved, False when there is none (the
        bundle is the unbounded optimum), None when the deadline stopped the search."""
        if self.top is None:
            ceiling = total_cost(self.request)
            if self.at >= ceiling:
                self.top = self.here
            else:
                self.top = self.deadline.solve(with_budget(self.request, ceiling))
            if not _proven(self.top):
                return None
        assert self.top is not None
        # Only the unbounded optimum is worth as much as it: nothing changes past it.
        if self.here.value >= self.top.value:
            return False
        # V*(low) == here.value < V*(high): bisect for the next rise of V*
        low, high, found = self.at, self.top.cost, self.top
        while high - low > 1:
            mid = (low + high) // 2
            probe = self.deadline.solve(with_budget(self.request, mid))
            if probe is None or not _proven(probe):
                return None
            if probe.value > self.here.value:
                # a breakpoint at or below the cost of what it found
                high, found = probe.cost, probe
            else:
                low = self.last = mid
        self.here, self.at, self.last = found, high, high
        return True


def _figure(status: FigureStatus, deadline: Deadline, **fields: Any) -> Figure:
    return Figure(_KEY, _LABEL, COST_UNIT, status, seconds=deadline.spent(), **fields)


def smallest_budget(
    request: Request, identity: str, reference: Result, deadline: Deadline
) -> Figure:
    if not _proven(reference):
        return _figure(
            FigureStatus.NOT_EVALUATED, deadline, note="the request's own optimum is not proven"
        )
    walk = _Breakpoints(request, reference, deadline)
    while not _admits(walk.here, identity):
        moved = walk.advance()
        if moved is None:
            return _figure(
                FigureStatus.BOUND_ONLY,
                deadline,
                low=walk.last + 1,
                note=f"the time limit stopped the search; no budget up to {walk.last} admits it",
            )
        if not moved:
            assert walk.top is not None
            return _figure(
                FigureStatus.PROVEN,
                deadline,
                never=True,
                note=f"the optimal bundle at any budget of {walk.top.cost} or more leaves it out",
            )
    note = ""
    if walk.top is not None and not _admits(walk.top, identity):
        note = (
            f"not monotone: at a budget of {walk.top.cost} or more the optimal bundle"
            " leaves it out again"
        )
    return _figure(FigureStatus.PROVEN, deadline, low=walk.at, high=walk.at, note=note)


def next_breakpoint(
    request: Request, reference: Result, deadline: Deadline
) -> tuple[Figure, Figure, Result | None]:
    """The least budget above the request's at which the optimal value rises, how much
    it rises (value points), and the optimal bundle there."""
    label = "next budget at which the optimum gains value"
    gain_label = "value the optimum gains there"
    if not _proven(reference):
        missing = Figure(
            "next_budget",
            label,
            COST_UNIT,
            FigureStatus.NOT_EVALUATED,
            note="the request's own optimum is not proven",
        )
        return missing, replace(missing, key="gain", label=gain_label, unit=VALUE_UNIT), None
    walk = _Breakpoints(request, reference, deadline)
    moved = walk.advance()
    spent = deadline.spent()
    if moved is None:
        note = f"the time limit stopped the search; none up to {walk.last}"
        return (
            Figure(
                "next_budget",
                label,
                COST_UNIT,
                FigureStatus.BOUND_ONLY,
                low=walk.last + 1,
                seconds=spent,
                note=note,
            ),
            Figure("gain", gain_label, VALUE_UNIT, FigureStatus.TIMED_OUT, seconds=spent),
            None,
        )
    if not moved:
        note = "the bundle is already the optimum at any budget: more budget buys nothing"
        return (
            Figure(
                "next_budget",
                label,
                COST_UNIT,
                FigureStatus.PROVEN,
                never=True,
                seconds=spent,
                note=note,
            ),
            Figure("gain", gain_label, VALUE_UNIT, FigureStatus.PROVEN, 0, 0, seconds=spent),
            None,
        )
    gain = walk.here.value - reference.value
    return (
        Figure(
            "next_budget", label, COST_UNIT, FigureStatus.PROVEN, walk.at, walk.at, seconds=spent
        ),
        Figure("gain", gain_label, VALUE_UNIT, FigureStatus.PROVEN, gain, gain, seconds=spent),
        walk.here,
    )
