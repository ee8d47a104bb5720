"""The values a counterfactual states, each with how far it is proven.

Input: nothing. Output: the value types of the counterfactuals: ``FigureStatus``,
``Figure`` (one number, its unit, its proven bounds and status), ``CounterfactualKind`` and
``Counterfactual`` (one question about one identity, with its figures).

A figure is never shown as more certain than it was computed: ``proven`` when every
solve behind it proved its optimum, ``bound only`` when a limit stopped a solve but
the solves still bound the number (``low``/``high``, either may be open), ``timed
out`` when a limit stopped it with nothing to bound it, ``not evaluated`` when it was
not attempted (beyond the top N, or the overall limit was already spent).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "COST_UNIT",
    "VALUE_UNIT",
    "Counterfactual",
    "CounterfactualKind",
    "Figure",
    "FigureStatus",
]

# The stated model puts budget and costs "in the request's cost unit" and never names
# it; the page says so instead of calling it tokens.
COST_UNIT = "cost units"
# v(f) = round_half_up(relevance x 1000)
VALUE_UNIT = "value points"


class FigureStatus(StrEnum):
    PROVEN = "proven"
    BOUND_ONLY = "bound only"
    TIMED_OUT = "timed out"
    NOT_EVALUATED = "not evaluated"


class CounterfactualKind(StrEnum):
    """Which question a counterfactual answers."""

    BUDGET = "budget"  # a bigger budget: where the optimum next gains value
    LEFT_OUT = "left out"  # an eligible identity the bundle leaves out: force it in
    ADMITTED = "admitted"  # an admitted identity: take it out
    CONFLICT = "refusal"  # an identity a refusal names: drop it, or its cheapest form
    GATED = "gated"  # a gated candidate: no budget admits it


@dataclass(frozen=True, slots=True)
class Figure:
    """One number with its unit and proof: ``low <= true value <= high``.

    ``never`` says, proven, that no finite number answers (no budget admits it).
    """

    key: str
    label: str
    unit: str
    status: FigureStatus
    low: int | None = None
    high: int | None = None
    never: bool = False
    seconds: float = 0.0
    note: str = ""

    @property
    def exact(self) -> int | None:
        """The number when it is proven, else None."""
        if self.status is FigureStatus.PROVEN and self.low is not None and self.low == self.high:
            return self.low
        return None

    def shown(self) -> str:
        """The figure as a reader sees it, unit included; never more than was proven."""
        if self.status is FigureStatus.PROVEN:
            if self.never:
                return "none"
            return f"{self.low} {self.unit}"
        if self.status is FigureStatus.BOUND_ONLY:
            if self.low is not None and self.high is not None:
                return f"between {self.low} and {self.high} {self.unit}"
            if self.low is not None:
                return f"at least {self.low} {self.unit}"
            if self.high is not None:
                return f"at most {self.high} {self.unit}"
        return self.status.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "status": self.status.value,
            "low": self.low,
            "high": self.high,
            "never": self.never,
            "shown": self.shown(),
            "seconds": round(self.seconds, 6),
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class Counterfactual:
    """One question about one identity, answered by exact solves of derived requests.

    ``feasible``: whether the derived request has a legal bundle at the request's
    budget (None when that is not known). ``entered``/``left``: forms the derived
    optimum admits that the reference optimum does not, and the reverse.
    """

    kind: CounterfactualKind
    identity: str
    question: str
    figures: tuple[Figure, ...]
    feasible: bool | None = None
    entered: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    note: str = ""
    # the one form the question is about (a gated form, a cheapest form), if any
    form: str | None = None

    def figure(self, key: str) -> Figure | None:
        for figure in self.figures:
            if figure.key == key:
                return figure
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "identity": self.identity,
            "question": self.question,
            "feasible": self.feasible,
            "figures": [f.to_dict() for f in self.figures],
            "entered": list(self.entered),
            "left": list(self.left),
            "note": self.note,
            "form": self.form,
        }
