"""The smallest budget at which the optimal bundle admits an identity.

Input: a request, an identity, the request's exact optimum (a proven bundle) and a
``Deadline``. Output: a ``Figure`` (key ``smallest_budget``, in cost units).

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
"""

from __future__ import annotations

from typing import Any

from ..model.types import Request, Result, Status, Verdict
from .derive import total_cost, with_budget
from .figures import COST_UNIT, Figure, FigureStatus
from .limits import Deadline

__all__ = ["smallest_budget"]

_KEY = "smallest_budget"
_LABEL = "smallest budget whose optimal bundle admits it"


def _admits(result: Result, identity: str) -> bool:
    return any(d.identity == identity and d.verdict is Verdict.ADMITTED for d in result.decisions)


def _proven(result: Result | None) -> bool:
    return result is not None and result.status is Status.BUNDLE and result.optimal


def _figure(status: FigureStatus, deadline: Deadline, **fields: Any) -> Figure:
    return Figure(_KEY, _LABEL, COST_UNIT, status, seconds=deadline.spent(), **fields)


def smallest_budget(
    request: Request, identity: str, reference: Result, deadline: Deadline
) -> Figure:
    if not _proven(reference):
        return _figure(
            FigureStatus.NOT_EVALUATED, deadline, note="the request's own optimum is not proven"
        )
    here, at = reference, request.task.budget
    top: Result | None = None
    while True:
        if _admits(here, identity):
            note = ""
            if top is not None and not _admits(top, identity):
                note = (
                    f"not monotone: at a budget of {top.cost} or more the optimal bundle"
                    " leaves it out again"
                )
            return _figure(FigureStatus.PROVEN, deadline, low=at, high=at, note=note)
        # every budget from the request's up to `clear` is proven to leave it out
        clear = at
        if top is None:
            ceiling = total_cost(request)
            top = here if at >= ceiling else deadline.solve(with_budget(request, ceiling))
            if top is None or not _proven(top):
                return _stopped(deadline, clear)
        # Only the unbounded optimum is worth as much as it: nothing changes past it.
        if here.value >= top.value:
            return _figure(
                FigureStatus.PROVEN,
                deadline,
                never=True,
                note=f"the optimal bundle at any budget of {top.cost} or more leaves it out",
            )
        # V*(low) == here.value < V*(high): bisect for the next rise of V*
        low, high, found = at, top.cost, top
        while high - low > 1:
            mid = (low + high) // 2
            probe = deadline.solve(with_budget(request, mid))
            if probe is None or not _proven(probe):
                return _stopped(deadline, clear)
            if probe.value > here.value:
                # a breakpoint at or below the cost of what it found
                high, found = probe.cost, probe
            else:
                low = clear = mid
        here, at = found, high


def _stopped(deadline: Deadline, clear: int) -> Figure:
    return _figure(
        FigureStatus.BOUND_ONLY,
        deadline,
        low=clear + 1,
        note=f"the time limit stopped the search; no budget up to {clear} admits it",
    )
