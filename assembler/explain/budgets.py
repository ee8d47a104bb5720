"""Budget questions: the smallest budget whose optimal bundle admits an identity, and
the next budget at which the optimum gains value.

Input: a request, an identity, the request's exact optimum (a proven bundle) and a
``FigureDeadline``. Output: ``Figure`` values (budgets in cost units, gains in value points).

Write O(b) for the unique optimal bundle of the request at budget b (``models/README.md``
section 6), V*(b) for its value, F(b) for the optimal bundle of the request with the
identity forced in (``derive.forced_in``) and W(b) for its value (-inf when it has
none). Both values are non-decreasing in b, and a bundle changes only where its value
rises (a bundle as valuable and better ranked would already have fitted at the smaller
budget). O(b) admits the identity exactly when O(b) = F(b).

**Smallest budget.** B_min = min { b integer, b >= B : O(b) admits the identity }, or
*none*. Inclusion is not monotone in b (a bigger budget can swap the identity out for a
better set), so it is not found by bisecting on inclusion. The walk keeps a budget b
with every budget in [B, b] proven to leave the identity out, and the target value the
forced bundle must reach to win: V*(b), or V*(b) + 1 when W(b) already equals V*(b)
(then F(b) lost on cost or tie-break, and F only changes when W rises, while O only
gets better). Below the least b' > b with W(b') >= target, F cannot beat O, so the walk
jumps there: a bisection on W, which is monotone (a solve at mid that reaches the target
proves a jump at or below the cost of what it found). At b' it solves O(b'): if O(b')
admits the identity, b' is B_min; otherwise the target rises strictly and the walk goes
on. When even the forced bundle at a budget no selection exceeds (the sum of all
costs) stays below the target, the answer is *none*. When the deadline stops the walk,
every budget up to the last one cleared is excluded: the figure is then a lower bound.

**Next breakpoint.** B_next = min { b > B : V*(b) > V*(B) }, by bisection on V*, with
the gain V*(B_next) - V*(B); *none* when O(B) is already the optimum at every budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.types import Request, Result, Status, Verdict
from .derive import forced_in, total_cost, with_budget
from .figures import COST_UNIT, VALUE_UNIT, Figure, FigureStatus
from .limits import FigureDeadline

__all__ = ["next_breakpoint", "smallest_budget"]

_KEY = "smallest_budget"
_LABEL = "smallest budget whose optimal bundle admits it"


def _admits(result: Result, identity: str) -> bool:
    return any(d.identity == identity and d.verdict is Verdict.ADMITTED for d in result.decisions)


def _proven(result: Result | None) -> bool:
    return result is not None and result.status is Status.BUNDLE and result.optimal


class _Stopped(Exception):
    """The deadline stopped a solve, or a solve did not prove its answer."""


@dataclass(slots=True)
class _Cleared:
    """The largest budget up to which every budget is proven to answer "not yet"."""

    budget: int


def _least(
    low: int,
    top: Result,
    reaches: Callable[[int], Result | None],
    cleared: _Cleared,
    step: int = 1,
) -> tuple[int, Result]:
    """The least budget in (low, top.cost] at which ``reaches`` answers a bundle (it does
    at top.cost, and not at low or below), with that bundle, which is also the answer at
    that budget. Budget breakpoints tend to be close together, so it gallops up from
    low (step, 2 step, 4 step... above it) before it bisects; a bundle found at mid
    proves the answer is at most that bundle's cost."""
    high, found = top.cost, top
    while high - low > 1:
        mid = min(low + step, (low + high) // 2)
        probe = reaches(mid)
        if probe is not None:
            high, found = probe.cost, probe
            step = high  # bracketed: bisect from here on
        else:
            low = cleared.budget = mid
            step *= 2
    return high, found


def _figure(status: FigureStatus, deadline: FigureDeadline, **fields: Any) -> Figure:
    return Figure(_KEY, _LABEL, COST_UNIT, status, seconds=deadline.spent(), **fields)


def smallest_budget(
    request: Request,
    identity: str,
    reference: Result,
    deadline: FigureDeadline,
    forced: Result | None = None,
) -> Figure:
    """``forced``, when given, is the answer of the request with the identity forced in
    at the request's own budget (the left-out question has just solved it)."""
    if not _proven(reference):
        return _figure(
            FigureStatus.NOT_EVALUATED, deadline, note="the request's own optimum is not proven"
        )
    with_it = forced_in(request, identity)

    def forced_at(budget: int) -> Result | None:
        return _reached(deadline.solve(with_budget(with_it, budget)))

    budget = request.task.budget
    here, at = reference, budget
    cleared = _Cleared(budget)
    top: Result | None = None
    stride = 1
    try:
        # F(at), the forced optimum at the current budget (None: nothing admits it there)
        reached = _reached(forced) if forced is not None else forced_at(budget)
        while not _admits(here, identity):
            cleared.budget = at
            # F(at) already as valuable as O(at) lost on cost or tie-break: it must gain
            beat = here.value + (reached is not None and reached.value >= here.value)
            if top is None:
                top = forced_at(total_cost(request))
            if top is None or top.value < beat:
                return _figure(
                    FigureStatus.PROVEN,
                    deadline,
                    never=True,
                    note="forced in, it never reaches the value of the optimum without it",
                )

            # W(low) < beat <= W(high): the least budget reaching it
            def reaches(mid: int, beat: int = beat) -> Result | None:
                probe = forced_at(mid)
                return probe if probe is not None and probe.value >= beat else None

            # successive jumps tend to be alike: gallop from half the last one
            jump, reached = _least(at, top, reaches, cleared, stride)
            stride, at = max(1, (jump - at) // 2), jump
            answer = deadline.solve(with_budget(request, at))
            if answer is None or not _proven(answer):
                raise _Stopped
            here = answer
    except _Stopped:
        return _figure(
            FigureStatus.BOUND_ONLY,
            deadline,
            low=cleared.budget + 1,
            note=f"the time limit stopped the search; no budget up to {cleared.budget} admits it",
        )
    note = _leaves_again(request, identity, at, deadline)
    return _figure(FigureStatus.PROVEN, deadline, low=at, high=at, note=note)


def _reached(answer: Result | None) -> Result | None:
    """The forced optimum, None when nothing admits the identity at that budget."""
    if answer is not None and answer.status is Status.REFUSED:
        return None
    if answer is None or not _proven(answer):
        raise _Stopped
    return answer


def _leaves_again(request: Request, identity: str, at: int, deadline: FigureDeadline) -> str:
    """A note when the optimum at an unbounded budget leaves the identity out again."""
    ceiling = total_cost(request)
    if at >= ceiling:
        return ""
    top = deadline.solve(with_budget(request, ceiling))
    if not _proven(top) or top is None or _admits(top, identity):
        return ""
    return f"not monotone: at a budget of {top.cost} or more the optimal bundle leaves it out again"


def _next(status: FigureStatus, deadline: FigureDeadline, **fields: Any) -> Figure:
    label = "next budget at which the optimum gains value"
    return Figure("next_budget", label, COST_UNIT, status, seconds=deadline.spent(), **fields)


def _gain(status: FigureStatus, deadline: FigureDeadline, **fields: Any) -> Figure:
    label = "value the optimum gains there"
    return Figure("gain", label, VALUE_UNIT, status, seconds=deadline.spent(), **fields)


def next_breakpoint(
    request: Request, reference: Result, deadline: FigureDeadline
) -> tuple[Figure, Figure, Result | None]:
    """The least budget above the request's at which the optimal value rises, how much
    it rises (value points), and the optimal bundle there."""
    if not _proven(reference):
        note = "the request's own optimum is not proven"
        return (
            _next(FigureStatus.NOT_EVALUATED, deadline, note=note),
            _gain(FigureStatus.NOT_EVALUATED, deadline, note=note),
            None,
        )
    budget = request.task.budget
    cleared = _Cleared(budget)
    try:
        ceiling = total_cost(request)
        top = reference if budget >= ceiling else deadline.solve(with_budget(request, ceiling))
        if top is None or not _proven(top):
            raise _Stopped
        if top.value <= reference.value:
            note = "the bundle is already the optimum at any budget: more budget buys nothing"
            return (
                _next(FigureStatus.PROVEN, deadline, never=True, note=note),
                _gain(FigureStatus.PROVEN, deadline, low=0, high=0),
                None,
            )

        def rises(mid: int) -> Result | None:
            probe = deadline.solve(with_budget(request, mid))
            if probe is None or not _proven(probe):
                raise _Stopped
            return probe if probe.value > reference.value else None

        high, found = _least(budget, top, rises, cleared)
    except _Stopped:
        note = f"the time limit stopped the search; none up to {cleared.budget}"
        return (
            _next(FigureStatus.BOUND_ONLY, deadline, low=cleared.budget + 1, note=note),
            _gain(FigureStatus.TIMED_OUT, deadline),
            None,
        )
    gain = found.value - reference.value
    return (
        _next(FigureStatus.PROVEN, deadline, low=high, high=high),
        _gain(FigureStatus.PROVEN, deadline, low=gain, high=gain),
        found,
    )
