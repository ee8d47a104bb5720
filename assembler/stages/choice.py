"""What a strategy decided: the decision stage's output, the trace stage's input.

Input: nothing. Output: ``Choice``, a frozen value: a selection of form ids with what
was proven about it (``optimal``, ``bound``), or no bundle (a refusal, or undecided
when the time limit came first), with the stages' timings and, for a strategy that
keeps something between the calls of a session, what it kept (``kept``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.cache import CacheOutcome
from ..model.types import Refusal, Status

__all__ = ["Choice", "Timings"]

Timings = tuple[tuple[str, float], ...]


@dataclass(frozen=True, slots=True)
class Choice:
    status: Status
    # the selected form ids (any order) when status is BUNDLE
    selected: tuple[str, ...] = ()
    optimal: bool = False
    # proven upper bound on the value (None when none is known)
    bound: int | None = None
    refusal: Refusal | None = None
    timings: Timings = ()
    # what a cache-aware decision priced (a request with a cache section)
    cache: CacheOutcome | None = None
    # what the strategy keeps for the next call of a session (opaque to the chain)
    kept: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def bundle(
        cls, selected: tuple[str, ...], *, optimal: bool, bound: int | None, **rest: Any
    ) -> Choice:
        return cls(Status.BUNDLE, selected, optimal, bound, **rest)

    @classmethod
    def refused(cls, refusal: Refusal, **rest: Any) -> Choice:
        return cls(Status.REFUSED, refusal=refusal, **rest)

    @classmethod
    def undecided(cls, bound: int | None = None, **rest: Any) -> Choice:
        return cls(Status.UNDECIDED, bound=bound, **rest)
