"""The strategies, by name: the exact one and the baselines it is measured against.

Input: a strategy name. Output: the strategy function
``(request, gates, time_limit, workers) -> Result``.

Every strategy takes the validated ``Request`` and its ``GateReport`` and returns the
same ``Result`` type; their bundles are judged by ``assembler.verifiers``, never by
their own claim. ``STRATEGIES`` maps each name to ``"module:function"``, imported
only when asked for, so that a baseline never loads OR-Tools. A new strategy is a
module here and one line in ``STRATEGIES``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from ..model.errors import UnknownStrategy
from ..model.types import Request, Result
from ..stages.gates import GateReport

__all__ = ["EXACT_STRATEGIES", "STRATEGIES", "Strategy", "load_strategy"]

Strategy = Callable[[Request, GateReport, float, int], Result]

STRATEGIES: dict[str, str] = {
    "cpsat": "assembler.exact.solve:cpsat_strategy",
    "enumerate": "assembler.strategies.bruteforce:enumerate_strategy",
    "greedy": "assembler.strategies.greedy:greedy_strategy",
    "top-k": "assembler.strategies.baselines:top_k_strategy",
    "weighted": "assembler.strategies.baselines:weighted_strategy",
    "dump": "assembler.strategies.baselines:dump_strategy",
}
# the strategies that prove their answer optimal: only they may answer a
# counterfactual, and every frozen output and second opinion must match theirs exactly
EXACT_STRATEGIES = ("cpsat", "enumerate")


def load_strategy(name: str) -> Strategy:
    """The strategy function registered under ``name``."""
    target = STRATEGIES.get(name)
    if target is None:
        raise UnknownStrategy(name, tuple(STRATEGIES))
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    found: Strategy = getattr(module, function)
    return found
