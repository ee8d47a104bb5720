"""The strategies, by name: the exact one and the baselines it is measured against.

Input: a strategy name. Output: the strategy function
``(request, gates, deadline, workers, *, kept=None, keep=False, render=None) -> Choice``.

Every strategy takes the validated ``Request``, its ``GateReport``, the call's
``Deadline`` and a worker count, and returns a ``Choice`` that the trace turns into the
``Result`` (``kept``/``keep``: what a strategy keeps between a session's calls; only
the exact one keeps anything; ``render``: the format the bundle will be sent in, whose
rules the exact strategies keep and the baselines may ignore). Their bundles are judged
by ``assembler.verifiers``, never by their own claim. ``STRATEGIES`` maps each name to
``"module:function"``, imported only when asked for, so that a baseline never loads
OR-Tools. A new strategy is a
module here and one line in ``STRATEGIES``.

``exact`` is the exact strategy (an LP-based reduction, a knapsack program, a small
branch and bound, and CP-SAT on what is left); a result names the strategy that
answered it.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from ..deadline import Deadline
from ..model.errors import UnknownStrategy
from ..model.rendering import RenderFormat
from ..model.types import Request
from ..stages.choice import Choice
from ..stages.gates import GateReport

__all__ = [
    "EXACT_STRATEGIES",
    "STRATEGIES",
    "Strategy",
    "load_strategy",
]


class Strategy(Protocol):
    def __call__(
        self,
        request: Request,
        gates: GateReport,
        deadline: Deadline,
        workers: int,
        *,
        kept: Any = None,
        keep: bool = False,
        render: RenderFormat | None = None,
    ) -> Choice: ...


# name -> "module:function"; a test or a plug-in may register more
STRATEGIES: dict[str, str] = {
    "exact": "assembler.exact.solve:exact_strategy",
    "enumerate": "assembler.strategies.bruteforce:enumerate_strategy",
    "greedy": "assembler.strategies.greedy:greedy_strategy",
    "top-k": "assembler.strategies.baselines:top_k_strategy",
    "weighted": "assembler.strategies.baselines:weighted_strategy",
    "dump": "assembler.strategies.baselines:dump_strategy",
}
# the strategies that prove their answer optimal: only they may answer a
# counterfactual, and every frozen output and second opinion must match theirs exactly
EXACT_STRATEGIES = ("exact", "enumerate")


def load_strategy(name: str) -> Strategy:
    """The strategy function registered under ``name``."""
    target = STRATEGIES.get(name)
    if target is None:
        raise UnknownStrategy(name, tuple(STRATEGIES))
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    found: Strategy = getattr(module, function)
    return found
