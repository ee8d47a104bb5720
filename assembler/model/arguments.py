"""The arguments of one call, besides the request.

Input: ``strategy``, ``time_limit`` and ``workers`` as a caller passed them to
``assemble`` (``None`` for a default).
Output: the same three, checked and defaulted, or ``InvalidRequest`` naming the
argument. Each is judged before any work starts, whatever the request's size, so
that a bad value is never first met deep inside a solver.
"""

from __future__ import annotations

import math
from typing import Any

from .errors import InvalidRequest
from .rules import kind, shown

__all__ = ["DEFAULT_TIME_LIMIT", "MAX_WORKERS", "call_arguments"]

# Seconds. At the limit a caller gets the best legal bundle found with its bound and
# gap (optimal=false), or "undecided": never a false refusal, never an illegal bundle.
DEFAULT_TIME_LIMIT = 10.0
# CP-SAT's search workers; beyond a few per core they only compete for the machine
MAX_WORKERS = 256


def call_arguments(strategy: Any, time_limit: Any, workers: Any) -> tuple[str, float, int]:
    """``(strategy, time_limit, workers)`` checked, with the defaults filled in."""
    if not isinstance(strategy, str):
        raise InvalidRequest(
            "strategy", f"must be a strategy name (a string), not {kind(strategy)}"
        )
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    if isinstance(limit, bool) or not isinstance(limit, int | float):
        raise InvalidRequest("time_limit", f"must be a number of seconds, not {kind(limit)}")
    try:
        seconds = float(limit)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        raise InvalidRequest(
            "time_limit", f"must be a finite number of seconds, not {shown(limit)}"
        )
    if seconds <= 0:
        raise InvalidRequest("time_limit", f"must be positive, not {shown(limit)}")
    count = 1 if workers is None else workers
    if isinstance(count, bool) or not isinstance(count, int):
        raise InvalidRequest("workers", f"must be a positive integer, not {kind(count)}")
    if not 1 <= count <= MAX_WORKERS:
        raise InvalidRequest("workers", f"must be between 1 and {MAX_WORKERS}, not {shown(count)}")
    return strategy, seconds, count
