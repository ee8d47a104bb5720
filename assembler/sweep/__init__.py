"""Sweeps: one table of how each strategy fares across a grid of request shapes and
budgets.

``grid``: the axes and the seeded examples of each cell; ``run``: the grid judged on
an engine (the hunt's judge, one exact answer per request), summed per cell. Its
command line, ``assembler sweep`` (the table as text or JSON, every column
documented), is ``assembler.cli.sweep``.
"""

from __future__ import annotations

from .grid import BudgetSpec, ShapeSpec, parse_budget, parse_shape
from .run import CellSummary, SweepConfig, SweepReport, sweep

__all__ = [
    "BudgetSpec",
    "CellSummary",
    "ShapeSpec",
    "SweepConfig",
    "SweepReport",
    "parse_budget",
    "parse_shape",
    "sweep",
]
