"""The verdicts of a hunt: how an answer disagrees with the exact one, and the verdict on
one request, shared by the judges of every shape (``judge.py``, ``sessionjudge.py``).

Input: nothing. Output: ``FindingKind``, ``Finding`` and ``Judgement``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Finding", "FindingKind", "Judgement"]


class FindingKind(StrEnum):
    """How a strategy's answer disagrees with the exact answer."""

    CRASH = "crash"
    EXACT_DISAGREEMENT = "exact-disagreement"
    FALSE_BUNDLE = "false-bundle"
    FALSE_REFUSAL = "false-refusal"
    SUBOPTIMAL_VALUE = "suboptimal-value"
    SUBOPTIMAL_COST = "suboptimal-cost"
    # a cache request (models/README.md 6b): a bundle sent at a higher price than
    # exact's, or one outside the tolerance exact was held to (cheaper, or as cheap)
    PRICED_HIGHER = "priced-higher"
    OUTSIDE_TOLERANCE = "outside-tolerance"
    # a session's answer after a delta differs from a fresh call's of the same request
    SESSION_DISAGREEMENT = "session-disagreement"


@dataclass(frozen=True, slots=True)
class Finding:
    """One example where the strategy was wrong, before shrinking."""

    example: int
    kind: FindingKind
    explanation: str
    candidates: int


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one request: ``kind`` is None when the strategy is right.

    ``skipped`` is true when no verdict could be reached (the strategy answered
    ``undecided`` or cannot run at this size). ``answers`` maps a role (``tested``,
    ``exact``, ``oracle``) to that answer's ``Result.to_dict()`` without timings.
    ``value_lost`` and ``optimum`` are the numbers a sweep sums (one definition of
    value loss for hunts and sweeps).
    """

    kind: FindingKind | None
    explanation: str
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    skipped: bool = False
    # optimum minus the tested value when the tested bundle is legal and an optimum
    # exists; None otherwise (a refusal, an illegal bundle, no verdict)
    value_lost: int | None = None
    optimum: int | None = None
    # the tested strategy's wall time: measurement, not part of the verdict
    seconds: float = field(default=0.0, compare=False)
