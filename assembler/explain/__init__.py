"""The inspector: what a compilation selected, what it kept out and why, and what a
different request would have given (``models/explain.md``).

``explain(request, result=None, limits=ExplainLimits())`` returns an ``Explanation``;
``render_report`` prints it for a terminal and ``render_html`` makes the
self-contained page. Modules: ``load`` (a result read back and paired with its
request), ``scene`` (the facts a page shows), ``diagnostics`` (findings with their
labels), ``derive`` (the questions as requests), ``limits`` (a time limit per figure
and overall), ``budgets`` (budget breakpoints), ``figures`` and ``counterfactuals``
(exact answers with their proof status), ``wording``, ``text``, ``html`` and
``style``. Everything here drives ``assemble()``; nothing here solves.
"""

from __future__ import annotations

from .counterfactuals import Counterfactuals
from .diagnostics import Diagnostic, Label
from .explanation import Explanation, explain
from .figures import Counterfactual, CounterfactualKind, Figure, FigureStatus
from .html import render_html
from .limits import ExplainLimits
from .load import InvalidResult, result_from_dict
from .text import render_report

__all__ = [
    "Counterfactual",
    "CounterfactualKind",
    "Counterfactuals",
    "Diagnostic",
    "ExplainLimits",
    "Explanation",
    "Figure",
    "FigureStatus",
    "InvalidResult",
    "Label",
    "explain",
    "render_html",
    "render_report",
    "result_from_dict",
]
