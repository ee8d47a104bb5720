"""Running a sweep: every (shape, budget) cell's examples judged for every strategy.

Input: a ``SweepConfig`` (seed, examples per cell, shapes, budgets, strategies, batch
size) and an ``Engine``.
Output: a ``SweepReport``: one ``CellSummary`` per (shape, budget, strategy), in grid
order. Each request is judged by the hunt's judge (``judge_many_safely``: the exact
answer once, then each strategy against it), so a sweep and a hunt share one
definition of false refusal, illegal bundle and value loss. Everything but the
latencies is the same on any engine and worker count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engines import Engine
from ..engines.base import never
from ..hunt.judge import FindingKind, judge_many_safely
from .grid import BudgetSpec, ShapeSpec, example_request

__all__ = ["CellSummary", "SweepConfig", "SweepReport", "sweep"]

EXACT_PROBLEMS = (FindingKind.CRASH, FindingKind.EXACT_DISAGREEMENT)


@dataclass(frozen=True, slots=True)
class SweepConfig:
    seed: int
    examples: int
    shapes: tuple[ShapeSpec, ...]
    budgets: tuple[BudgetSpec, ...]
    strategies: tuple[str, ...]
    batch: int | None = None

    def __post_init__(self) -> None:
        if self.examples < 1:
            raise ValueError("a sweep needs at least one example per cell")
        if not (self.shapes and self.budgets and self.strategies):
            raise ValueError("a sweep needs at least one shape, budget and strategy")
        if self.batch is not None and self.batch < 1:
            raise ValueError("batch must be at least 1")


# one example's outcome per strategy: kind, skipped, value lost, optimum, seconds
_Row = tuple[str | None, bool, int | None, int | None, float]


@dataclass(frozen=True, slots=True)
class _Example:
    rows: tuple[_Row, ...]
    exact_seconds: float


def _run_batch(job: tuple[int, ShapeSpec, BudgetSpec, int, int, tuple[str, ...]]) -> list[_Example]:
    seed, shape, budget, start, stop, strategies = job
    out = []
    for index in range(start, stop):
        verdicts = judge_many_safely(example_request(seed, index, shape, budget), strategies)
        rows = tuple(
            (
                None if j.kind is None else j.kind.value,
                j.skipped,
                j.value_lost,
                j.optimum,
                j.seconds,
            )
            for j in verdicts.judgements
        )
        out.append(_Example(rows, verdicts.exact_seconds))
    return out


@dataclass(slots=True)
class _Tally:
    examples: int = 0
    skipped: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    value_lost: int = 0
    optimum: int = 0
    lost_cases: int = 0
    seconds: list[float] = field(default_factory=list)
    exact_seconds: list[float] = field(default_factory=list)

    def add(self, row: _Row, exact_seconds: float) -> None:
        kind, skipped, lost, optimum, seconds = row
        self.examples += 1
        self.skipped += skipped
        if kind is not None:
            self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if lost is not None and optimum is not None:
            self.value_lost += lost
            self.optimum += optimum
            self.lost_cases += lost > 0
        if seconds > 0:
            self.seconds.append(seconds)
        if exact_seconds > 0:
            self.exact_seconds.append(exact_seconds)


def _ms(values: Sequence[float], quantile: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(quantile * len(ordered)))], 3)


@dataclass(frozen=True, slots=True)
class CellSummary:
    """One row of the table (``command.COLUMNS`` documents each field)."""

    shape: str
    budget: str
    strategy: str
    examples: int
    skipped: int
    false_refusals: int
    illegal: int
    value_lost: int
    value_lost_cases: int
    value_lost_percent: float | None
    dearer: int
    exact_problems: int
    latency_p50_ms: float | None = field(compare=False)
    latency_p95_ms: float | None = field(compare=False)
    exact_p50_ms: float | None = field(compare=False)

    @classmethod
    def of(cls, shape: str, budget: str, strategy: str, tally: _Tally) -> CellSummary:
        kinds = tally.kinds
        return cls(
            shape=shape,
            budget=budget,
            strategy=strategy,
            examples=tally.examples,
            skipped=tally.skipped,
            false_refusals=kinds.get(FindingKind.FALSE_REFUSAL.value, 0),
            illegal=kinds.get(FindingKind.FALSE_BUNDLE.value, 0),
            value_lost=tally.value_lost,
            value_lost_cases=tally.lost_cases,
            value_lost_percent=round(100 * tally.value_lost / tally.optimum, 3)
            if tally.optimum
            else None,
            dearer=kinds.get(FindingKind.SUBOPTIMAL_COST.value, 0),
            exact_problems=sum(kinds.get(kind.value, 0) for kind in EXACT_PROBLEMS),
            latency_p50_ms=_ms(tally.seconds, 0.5),
            latency_p95_ms=_ms(tally.seconds, 0.95),
            exact_p50_ms=_ms(tally.exact_seconds, 0.5),
        )

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def answer(self) -> dict[str, Any]:
        """The fields that are the same on any engine (all but the latencies)."""
        data = self.to_dict()
        for name in ("latency_p50_ms", "latency_p95_ms", "exact_p50_ms"):
            data.pop(name)
        return data


@dataclass(frozen=True, slots=True)
class SweepReport:
    config: SweepConfig
    cells: tuple[CellSummary, ...]
    seconds: float
    engine: str
    complete: bool

    @property
    def examples(self) -> int:
        """Requests judged (each judged once for every strategy)."""
        strategies = len(self.config.strategies)
        return sum(cell.examples for cell in self.cells) // strategies

    @property
    def exact_is_wrong(self) -> bool:
        return any(cell.exact_problems for cell in self.cells)


def _jobs(
    config: SweepConfig, batch: int
) -> Iterator[tuple[int, ShapeSpec, BudgetSpec, int, int, tuple[str, ...]]]:
    for shape in config.shapes:
        for budget in config.budgets:
            for start in range(0, config.examples, batch):
                stop = min(start + batch, config.examples)
                yield (config.seed, shape, budget, start, stop, config.strategies)


def sweep(
    config: SweepConfig,
    engine: Engine,
    progress: Callable[[int, int, float], None] | None = None,
    stop: Callable[[], bool] = never,
) -> SweepReport:
    """Run the grid on ``engine``. ``progress(requests judged, requests in all,
    elapsed)`` after each batch; once ``stop()`` is true the report holds the examples
    judged so far (a prefix of each cell's) and ``complete`` is False."""
    started = time.monotonic()
    tallies: dict[tuple[str, str, str], _Tally] = {
        (shape.name, budget.name, strategy): _Tally()
        for shape in config.shapes
        for budget in config.budgets
        for strategy in config.strategies
    }
    total = len(config.shapes) * len(config.budgets) * config.examples
    done = 0
    batch = config.batch or engine.default_batch
    for job, examples in zip(
        _jobs(config, batch), engine.map(_run_batch, _jobs(config, batch), stop), strict=False
    ):
        _, shape, budget, _, _, strategies = job
        for example in examples:
            for strategy, row in zip(strategies, example.rows, strict=True):
                tallies[(shape.name, budget.name, strategy)].add(row, example.exact_seconds)
        done += len(examples)
        if progress is not None:
            progress(done, total, time.monotonic() - started)
    cells = tuple(CellSummary.of(*key, tally) for key, tally in tallies.items())
    return SweepReport(
        config, cells, time.monotonic() - started, engine.description, complete=done == total
    )
