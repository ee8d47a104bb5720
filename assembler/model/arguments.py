"""The arguments of one call, besides the request.

Input: ``strategy``, ``time_limit`` and ``workers`` as a caller passed them to
``assemble`` (``None`` for a default).
Output: nothing when they are in range, else ``InvalidRequest`` naming the argument.
Each is judged before any work starts, whatever the request's size, so that a bad
value is never first met deep inside a solver. The defaults are filled in once, by
``Settings`` (``Settings.seconds``, ``Settings.worker_count``).
"""

from __future__ import annotations

import math
from typing import Any

from .errors import InvalidRequest
from .numbers import is_number, is_whole
from .rules import kind, shown

__all__ = ["DEFAULT_TIME_LIMIT", "MAX_WORKERS", "check_arguments"]

# Seconds. At the limit a caller gets the best legal bundle found with its bound and
# gap (optimal=false), or "undecided": never a false refusal, never an illegal bundle.
DEFAULT_TIME_LIMIT = 10.0
# CP-SAT's search workers; beyond a few per core they only compete for the machine
MAX_WORKERS = 256


def check_arguments(strategy: Any, time_limit: Any, workers: Any) -> None:
    """``strategy``, ``time_limit`` and ``workers`` as given (None: the default), checked."""
    if not isinstance(strategy, str):
        raise InvalidRequest(
            "strategy", f"must be a strategy name (a string), not {kind(strategy)}"
        )
    if time_limit is not None:
        if not is_number(time_limit):
            raise InvalidRequest(
                "time_limit", f"must be a number of seconds, not {kind(time_limit)}"
            )
        try:
            seconds = float(time_limit)
        except OverflowError:
            seconds = math.inf
        if not math.isfinite(seconds):
            raise InvalidRequest(
                "time_limit", f"must be a finite number of seconds, not {shown(time_limit)}"
            )
        if seconds <= 0:
            raise InvalidRequest("time_limit", f"must be positive, not {shown(time_limit)}")
    if workers is not None:
        if not is_whole(workers):
            raise InvalidRequest("workers", f"must be a positive integer, not {kind(workers)}")
        if not 1 <= workers <= MAX_WORKERS:
            raise InvalidRequest(
                "workers", f"must be between 1 and {MAX_WORKERS}, not {shown(workers)}"
            )
