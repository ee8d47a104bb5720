"""The axes of a sweep: generator shapes, budgets and strategies, and their examples.

Input: specs as a command line writes them: shapes ``small-M`` (the hunts' shape, at
most M candidates) or ``scale-N`` (the benchmarks' shape, exactly N forms); budgets
``mixed`` (the shape's own range of budget fractions) or a fraction of the request's
total cost such as ``0.3``; strategy names.
Output: ``ShapeSpec`` and ``BudgetSpec`` values (``parse_shape``, ``parse_budget``
raise ``ValueError`` with a one-line message) and ``example_request``: example ``i``
of a (shape, budget) cell is ``seeded_example(seed, i, shape)``, i.e.
``generate(random.Random(f"{seed}:{i}"), shape)``.

The same random stream for every cell on purpose: requests of one index differ only
by the knob the cell changes (common random numbers), so a difference between cells
is the knob's, not the draw's; and cell (``small-M``, ``mixed``) is the hunt's
example sequence, so a sweep and a hunt count the same findings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..hunt.generate import Shape, seeded_example

__all__ = ["BudgetSpec", "ShapeSpec", "example_request", "parse_budget", "parse_shape"]

# a 100k-form request takes seconds per exact answer: a sweep is for many small ones
MAX_SCALE_FORMS = 20_000


@dataclass(frozen=True, slots=True)
class ShapeSpec:
    """A named generator shape: ``small-M`` or ``scale-N``."""

    family: str
    size: int

    @property
    def name(self) -> str:
        return f"{self.family}-{self.size}"

    def shape(self) -> Shape:
        return Shape.small(self.size) if self.family == "small" else Shape.scale(self.size)


@dataclass(frozen=True, slots=True)
class BudgetSpec:
    """``fraction`` of the request's total cost, or None: the shape's own range."""

    fraction: float | None

    @property
    def name(self) -> str:
        return "mixed" if self.fraction is None else f"{self.fraction:g}"

    def apply(self, shape: Shape) -> Shape:
        if self.fraction is None:
            return shape
        return replace(shape, budget_fraction=(self.fraction, self.fraction))


def parse_shape(text: str) -> ShapeSpec:
    family, _, size = text.strip().partition("-")
    if family not in ("small", "scale") or not size.isdigit():
        raise ValueError(f"unknown shape {text!r}; expected small-M or scale-N, e.g. small-10")
    n = int(size)
    if n < 1:
        raise ValueError(f"shape {text!r}: the size must be at least 1")
    if family == "scale" and n > MAX_SCALE_FORMS:
        raise ValueError(f"shape {text!r}: at most scale-{MAX_SCALE_FORMS} in a sweep")
    return ShapeSpec(family, n)


def parse_budget(text: str) -> BudgetSpec:
    if text.strip() == "mixed":
        return BudgetSpec(None)
    try:
        fraction = float(text)
    except ValueError:
        raise ValueError(
            f"unknown budget {text!r}; expected mixed or a fraction of the total cost, e.g. 0.3"
        ) from None
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"budget {text!r}: a fraction of the total cost is in [0, 1]")
    return BudgetSpec(fraction)


def example_request(seed: int, index: int, shape: ShapeSpec, budget: BudgetSpec) -> dict[str, Any]:
    """Example ``index`` of the cell (``shape``, ``budget``): the same in every process."""
    return seeded_example(seed, index, budget.apply(shape.shape()))
