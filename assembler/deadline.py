"""The deadline of one call: the one clock every stage reads.

Input: a number of seconds (``Deadline.after``), counted from now or from an instant
on ``time.monotonic()`` (a served call's arrival). Output: a ``Deadline``, a frozen
instant on ``time.monotonic()``, that says what is left and hands out shares of it: a
stage that must leave time for a later one is given ``deadline.less(seconds)``, a
figure that may spend at most ``s`` seconds ``deadline.within(s)``, and a solver that
takes a number of seconds is told ``deadline.limit()``, never less than ``LEAST`` (a
call already late answers what it can, quickly). ``NEVER`` is the deadline of work
that has none (a test's, an oracle's).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["LEAST", "NEVER", "Deadline", "Stopwatch"]

# the least time limit handed to a solver: past the deadline it answers what it has
LEAST = 0.001

_now = time.monotonic


@dataclass(frozen=True, slots=True)
class Deadline:
    """An instant on ``time.monotonic()`` by which an answer is due."""

    at: float

    @classmethod
    def after(cls, seconds: float, since: float | None = None) -> Deadline:
        """``seconds`` after ``since`` (an instant on ``time.monotonic()``; None: now)."""
        return cls((_now() if since is None else since) + seconds)

    def left(self) -> float:
        """Seconds until the deadline (0 once it has passed)."""
        return max(0.0, self.at - _now())

    @property
    def passed(self) -> bool:
        return _now() >= self.at

    def limit(self) -> float:
        """What is left, as a time limit for a solver (at least ``LEAST``)."""
        return max(LEAST, self.at - _now())

    def less(self, seconds: float) -> Deadline:
        """This deadline, ``seconds`` earlier: what a stage may use while it leaves
        ``seconds`` for the stages after it."""
        return Deadline(self.at - seconds)

    def later(self, seconds: float) -> Deadline:
        """This deadline, ``seconds`` later: time the call did not own (a recorder's
        write) is given back."""
        return Deadline(self.at + seconds)

    def within(self, seconds: float) -> Deadline:
        """The earlier of this deadline and ``seconds`` from now: a share of it."""
        return Deadline(min(self.at, _now() + seconds))

    def share(self, fraction: float) -> Deadline:
        """The first ``fraction`` of what is left: a stage that must not starve the
        ones after it (an LP leaving room for the work on its answer)."""
        now = _now()
        return Deadline(now + fraction * max(0.0, self.at - now))


# the deadline of work that has none: every share of it is unbounded too
NEVER = Deadline(math.inf)


class Stopwatch:
    """The wall time of each stage of a call, lap by lap (diagnostic only)."""

    __slots__ = ("_excluded", "_last", "_started", "laps")

    def __init__(self) -> None:
        self._last = self._started = time.perf_counter()
        self._excluded = 0.0
        self.laps: list[tuple[str, float]] = []

    def elapsed(self) -> float:
        """Seconds since the stopwatch started."""
        return time.perf_counter() - self._started

    def lap(self, stage: str) -> float:
        """Record the time since the last lap as ``stage``'s; return it."""
        now = time.perf_counter()
        spent = now - self._last
        self.laps.append((stage, spent))
        self._last = now
        return spent

    def mark(self, stage: str, seconds: float) -> None:
        """Record ``seconds`` for ``stage`` (a stage timed elsewhere, or skipped)."""
        self.laps.append((stage, seconds))

    def skip(self) -> float:
        """Leave the time since the last lap out of every stage and of the total (it
        belonged to no stage of the call, e.g. a recorder's write); return it."""
        now = time.perf_counter()
        spent = now - self._last
        self._last = now
        self._excluded += spent
        return spent

    def extend(self, laps: Iterable[tuple[str, float]]) -> None:
        """Stages timed elsewhere (a strategy's), ending now."""
        self.laps.extend(laps)
        self._last = time.perf_counter()

    def total(self) -> float:
        """Seconds since the start, less what was skipped."""
        return time.perf_counter() - self._started - self._excluded

    @property
    def timings(self) -> tuple[tuple[str, float], ...]:
        return tuple(self.laps)
