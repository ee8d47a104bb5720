"""The strategies, by name: the exact one and the baselines it is measured against.

Input: a strategy name (a registered name or an alias). Output: the strategy function
``(request, gates, deadline, workers, *, kept=None, keep=False) -> Choice``, or the
registered name an alias stands for (``canonical_strategy``).

Every strategy takes the validated ``Request``, its ``GateReport``, the call's
``Deadline`` and a worker count, and returns a ``Choice`` that the trace turns into the
``Result`` (``kept``/``keep``: what a strategy keeps between a session's calls; only
the exact one keeps anything). Their bundles are judged by ``assembler.verifiers``,
never by their own claim. ``STRATEGIES`` maps each name to ``"module:function"``, imported
only when asked for, so that a baseline never loads OR-Tools. A new strategy is a
module here and one line in ``STRATEGIES``.

``exact`` is the exact strategy (an LP-based reduction, a knapsack program, a small
branch and bound, and CP-SAT on what is left); ``cpsat`` is its former name, kept as an
alias: it is accepted wherever a strategy name is, and reads as ``exact`` (``"cpsat" in
STRATEGIES``, ``STRATEGIES["cpsat"]``), while listing ``STRATEGIES`` gives each strategy
once, by its registered name. A result names the strategy that answered it by that
name: ``assemble(request, strategy="cpsat").strategy == "exact"``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any, Protocol

from ..deadline import Deadline
from ..model.errors import UnknownStrategy
from ..model.types import Request
from ..stages.choice import Choice
from ..stages.gates import GateReport

__all__ = [
    "EXACT_STRATEGIES",
    "STRATEGIES",
    "STRATEGY_ALIASES",
    "Strategy",
    "StrategyRegistry",
    "canonical_strategy",
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
    ) -> Choice: ...


# an alias -> the registered name it stands for
STRATEGY_ALIASES: Mapping[str, str] = {"cpsat": "exact"}


class StrategyRegistry(MutableMapping[str, str]):
    """Strategy name -> ``"module:function"``, where an alias reads, and is written, as
    the strategy it stands for; iterating gives the registered names only."""

    def __init__(self, targets: Mapping[str, str], aliases: Mapping[str, str]) -> None:
        self._targets = dict(targets)
        self._aliases = aliases

    def canonical(self, name: str) -> str:
        return self._aliases.get(name, name)

    def __getitem__(self, name: str) -> str:
        return self._targets[self.canonical(name)]

    def __setitem__(self, name: str, target: str) -> None:
        self._targets[self.canonical(name)] = target

    def __delitem__(self, name: str) -> None:
        del self._targets[self.canonical(name)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._targets)

    def __len__(self) -> int:
        return len(self._targets)

    def __repr__(self) -> str:
        return f"StrategyRegistry({self._targets!r}, aliases={dict(self._aliases)!r})"


STRATEGIES = StrategyRegistry(
    {
        "exact": "assembler.exact.solve:exact_strategy",
        "enumerate": "assembler.strategies.bruteforce:enumerate_strategy",
        "greedy": "assembler.strategies.greedy:greedy_strategy",
        "top-k": "assembler.strategies.baselines:top_k_strategy",
        "weighted": "assembler.strategies.baselines:weighted_strategy",
        "dump": "assembler.strategies.baselines:dump_strategy",
    },
    STRATEGY_ALIASES,
)
# the strategies that prove their answer optimal: only they may answer a
# counterfactual, and every frozen output and second opinion must match theirs exactly
# (compare a name given by a caller or a record through ``canonical_strategy``)
EXACT_STRATEGIES = ("exact", "enumerate")


def canonical_strategy(name: str) -> str:
    """The registered name ``name`` stands for: an alias's strategy, any other name as
    it is (whether registered or not)."""
    return STRATEGIES.canonical(name)


def load_strategy(name: str) -> Strategy:
    """The strategy function registered under ``name`` (or the one it is an alias of)."""
    target = STRATEGIES.get(name)
    if target is None:
        raise UnknownStrategy(name, tuple(STRATEGIES))
    module_name, function = target.split(":")
    module = importlib.import_module(module_name)
    found: Strategy = getattr(module, function)
    return found
