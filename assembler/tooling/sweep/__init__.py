"""Sweeps: one table of how each strategy fares across a grid of request shapes and
budgets.

``grid``: the axes and the seeded examples of each cell; ``run``: the grid judged on
an engine (the hunt's judge, one exact answer per request), summed per cell;
``command``: ``assembler sweep``, the table as text or JSON, every column documented.
"""

from __future__ import annotations

from .command import COLUMNS, main
from .grid import BudgetSpec, ShapeSpec, parse_budget, parse_shape
from .run import CellSummary, SweepConfig, SweepReport, sweep

__all__ = [
    "COLUMNS",
    "BudgetSpec",
    "CellSummary",
    "ShapeSpec",
    "SweepConfig",
    "SweepReport",
    "main",
    "parse_budget",
    "parse_shape",
    "sweep",
]
