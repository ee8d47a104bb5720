"""``assemble``: request in, result out, for every strategy.

Input: a request (a mapping of parsed JSON, or a typed ``Request``), a strategy
name, a time limit and a worker count.
Output: a ``Result``.

The chain every strategy shares: parse -> gates -> the named strategy (from
``assembler.strategies``). The time limit covers the whole call.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .model.errors import InvalidRequest
from .model.parse import parse_request
from .model.types import Request, Result
from .stages.gates import apply_gates
from .strategies import load_strategy

__all__ = ["DEFAULT_TIME_LIMIT", "assemble"]

# Seconds. At the limit a caller gets the best legal bundle found with its bound and
# gap (optimal=false), or "undecided": never a false refusal, never an illegal bundle.
DEFAULT_TIME_LIMIT = 10.0

_TRACE_SECONDS_PER_CANDIDATE = 1e-5


def assemble(
    request: Mapping[str, Any] | Request,
    *,
    strategy: str = "cpsat",
    time_limit: float | None = None,
    workers: int | None = None,
) -> Result:
    """Assemble the bundle for one request with the named strategy."""
    limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
        raise InvalidRequest("time_limit", f"must be a finite number of seconds, not {limit!r}")
    if limit <= 0:
        raise InvalidRequest("time_limit", f"must be positive, not {limit!r}")
    count = 1 if workers is None else workers
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InvalidRequest("workers", f"must be a positive integer, not {count!r}")
    run = load_strategy(strategy)
    started = time.perf_counter()
    parsed = parse_request(request)
    parsed_at = time.perf_counter()
    gates = apply_gates(parsed)
    gated_at = time.perf_counter()
    # The limit covers the whole call: parsing a huge request eats into it, and the
    # trace that follows the solve is set aside (measured ~8 us per candidate).
    reserve = _TRACE_SECONDS_PER_CANDIDATE * len(parsed.candidates)
    remaining = max(0.001, float(limit) - (gated_at - started) - reserve)
    result = run(parsed, gates, remaining, count)
    timings = (
        ("parse", parsed_at - started),
        ("gates", gated_at - parsed_at),
        *result.timings,
        ("total", time.perf_counter() - started),
    )
    return replace(result, timings=timings)
