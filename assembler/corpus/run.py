"""Running strategies over the corpus and summarising them per strategy.

Input: ``Case`` values and strategy names.
Output: a ``CorpusReport``: one ``CaseOutcome`` per case and strategy (judged against the
frozen answer and by the independent verifier) and one ``StrategySummary`` per
strategy. Strategies run through ``assemble``, so importing this never loads OR-Tools;
the (case, strategy) pairs run on an engine (this process by default, or a local pool
or a Dask cluster: ``assembler corpus run --engine dask``).

A cache case (``Case.is_cache``) is judged by the cache-aware order: a legal bundle's
price (``hunt.cachejudge.price_of``) against the frozen exact answer's, whether it lies
in the feasible set the exact answer was held to (its record's value floor and rewrite
budget), and its value against the exact answer's; the section 6 columns (value lost,
dearer) leave cache cases out, since the exact answer may give up value for price.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import assemble
from ..engines import Engine, SerialEngine
from ..hunt.cachejudge import price_of
from ..model.errors import AssemblerError
from ..model.types import Result, Status
from ..strategies import EXACT_STRATEGIES, STRATEGIES
from ..verifiers.bundle import ViolationKind, verify
from .cases import Case, CorpusError, load_corpus

__all__ = [
    "DEFAULT_STRATEGIES",
    "EXACT_STRATEGIES",
    "ILLEGAL_KINDS",
    "CaseOutcome",
    "CorpusReport",
    "StrategySummary",
    "run_case",
    "run_corpus",
]

DEFAULT_STRATEGIES = ("exact", "enumerate", "greedy", "top-k", "weighted", "dump")
# The verifier's kinds that make a bundle illegal, in table order.
ILLEGAL_KINDS = (
    ViolationKind.GATE,
    ViolationKind.DEPENDENCY,
    ViolationKind.GROUP,
    ViolationKind.DUPLICATE_IDENTITY,
    ViolationKind.BUDGET,
    ViolationKind.REQUIRED,
)
DISTRACTOR = "distractor"
HARMFUL = "harmful"


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """One strategy on one case, judged against the frozen answer and the verifier."""

    case: str
    strategy: str
    status: str  # the result's status, or "error" when the strategy raised
    selected: tuple[str, ...]
    refusal_code: str | None
    value: int
    cost: int
    status_match: bool
    frozen_match: bool  # status and selected (bundle) or status and refusal code
    exact_match: bool  # frozen_match and every other frozen field (value, cost, refusal)
    illegal: tuple[str, ...]  # verifier kinds that make the bundle illegal, sorted
    notes: tuple[str, ...]  # the verifier's other findings (record, refusal)
    false_refusal: bool
    value_lost: int | None  # None unless both are bundles and this one is legal
    dearer: bool  # legal, optimal value, higher cost than the frozen bundle
    distractors: int
    harmful: int
    seconds: float
    error: str | None = None
    # a cache case's legal bundle: its price (millionths of a base-price token), how much
    # dearer than the frozen exact answer (negative: cheaper), and whether it lies outside
    # the feasible set the exact answer was held to; None elsewhere
    price_micro: int | None = None
    price_over_micro: int | None = None
    outside_tolerance: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "status": self.status,
            "selected": list(self.selected),
            "refusal": self.refusal_code,
            "value": self.value,
            "cost": self.cost,
            "status_match": self.status_match,
            "frozen_match": self.frozen_match,
            "exact_match": self.exact_match,
            "illegal": list(self.illegal),
            "notes": list(self.notes),
            "false_refusal": self.false_refusal,
            "value_lost": self.value_lost,
            "dearer": self.dearer,
            "distractors": self.distractors,
            "harmful": self.harmful,
            "seconds": round(self.seconds, 6),
            "error": self.error,
            "price_micro": self.price_micro,
            "price_over_micro": self.price_over_micro,
            "outside_tolerance": self.outside_tolerance,
        }


@dataclass(frozen=True, slots=True)
class StrategySummary:
    """One row of the table: a strategy over the whole corpus."""

    strategy: str
    cases: int
    status_matches: int
    frozen_matches: int
    exact_matches: int
    illegal: int
    illegal_by_kind: tuple[tuple[str, int], ...]
    false_refusals: int
    value_lost: int
    value_lost_cases: int
    dearer_cases: int
    distractors: int
    harmful: int
    errors: int
    seconds: float
    # over the cache cases: how many, the legal bundles priced, those priced higher than
    # the exact answer and by how much in all (millionths), those outside its tolerance,
    # the exact answers' price over the same cases, and the value lost against them
    cache_cases: int = 0
    cache_bundles: int = 0
    priced_higher: int = 0
    price_lost_micro: int = 0
    outside_tolerance: int = 0
    exact_price_micro: int = 0
    cache_value_lost: int = 0
    cache_value_lost_cases: int = 0

    def kind(self, kind: str) -> int:
        return dict(self.illegal_by_kind).get(kind, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "status_matches": self.status_matches,
            "frozen_matches": self.frozen_matches,
            "exact_matches": self.exact_matches,
            "illegal": self.illegal,
            "illegal_by_kind": dict(self.illegal_by_kind),
            "false_refusals": self.false_refusals,
            "value_lost": self.value_lost,
            "value_lost_cases": self.value_lost_cases,
            "dearer_cases": self.dearer_cases,
            "distractors": self.distractors,
            "harmful": self.harmful,
            "errors": self.errors,
            "seconds": round(self.seconds, 6),
            "cache": {
                "cases": self.cache_cases,
                "bundles": self.cache_bundles,
                "priced_higher": self.priced_higher,
                "price_lost_micro": self.price_lost_micro,
                "outside_tolerance": self.outside_tolerance,
                "exact_price_micro": self.exact_price_micro,
                "value_lost": self.cache_value_lost,
                "value_lost_cases": self.cache_value_lost_cases,
            },
        }


@dataclass(frozen=True, slots=True)
class CorpusReport:
    """The whole run: cases in corpus order, strategies in the order asked."""

    corpus: tuple[Case, ...]
    strategies: tuple[StrategySummary, ...]
    outcomes: tuple[CaseOutcome, ...]

    def summary(self, strategy: str) -> StrategySummary:
        for row in self.strategies:
            if row.strategy == strategy:
                return row
        raise KeyError(strategy)

    def outcome(self, case: str, strategy: str) -> CaseOutcome:
        for row in self.outcomes:
            if row.case == case and row.strategy == strategy:
                return row
        raise KeyError((case, strategy))

    @property
    def disagreements(self) -> tuple[CaseOutcome, ...]:
        """Outcomes of an exact strategy that differ from the frozen answer."""
        return tuple(
            row for row in self.outcomes if row.strategy in EXACT_STRATEGIES and not row.exact_match
        )

    def to_dict(self) -> dict[str, Any]:
        by_case: dict[str, list[dict[str, Any]]] = {case.name: [] for case in self.corpus}
        for row in self.outcomes:
            by_case[row.case].append(row.to_dict())
        return {
            "strategies": {row.strategy: row.to_dict() for row in self.strategies},
            "cases": [
                {
                    "name": case.name,
                    "family": case.family,
                    "budget_class": case.budget_class,
                    "description": case.description,
                    "expected": dict(case.expected),
                    "results": by_case[case.name],
                }
                for case in self.corpus
            ],
        }


def run_case(case: Case, strategy: str, *, time_limit: float | None = None) -> CaseOutcome:
    """Run one strategy on one case and judge its answer."""
    started = time.perf_counter()
    try:
        result = assemble(case.request, strategy=strategy, time_limit=time_limit)
    except AssemblerError as exc:
        return CaseOutcome(
            case=case.name,
            strategy=strategy,
            status="error",
            selected=(),
            refusal_code=None,
            value=0,
            cost=0,
            status_match=False,
            frozen_match=False,
            exact_match=False,
            illegal=(),
            notes=(),
            false_refusal=False,
            value_lost=None,
            dearer=False,
            distractors=0,
            harmful=0,
            seconds=time.perf_counter() - started,
            error=str(exc),
        )
    seconds = time.perf_counter() - started
    return _judge(case, strategy, result, seconds)


def _judge(case: Case, strategy: str, result: Result, seconds: float) -> CaseOutcome:
    violations = verify(case.request, result)
    is_bundle = result.status is Status.BUNDLE
    illegal = tuple(sorted({v.kind for v in violations if v.kind in ILLEGAL_KINDS}))
    notes = tuple(f"{v.kind}: {v.detail}" for v in violations if v.kind not in ILLEGAL_KINDS)
    code = None if result.refusal is None else result.refusal.code.value
    status_match = result.status.value == case.expected_status
    if not status_match:
        frozen_match = False
    elif is_bundle:
        frozen_match = tuple(result.selected) == case.expected_selected
    else:
        frozen_match = code == case.expected_code
    exact_match = frozen_match and _fields_match(case, result)
    expects_bundle = case.expected_status == Status.BUNDLE.value
    value_lost: int | None = None
    dearer = False
    if expects_bundle and is_bundle and not illegal:
        value_lost = int(case.expected["value"]) - result.value
        dearer = value_lost == 0 and result.cost > int(case.expected["cost"])
    labels = _labels(case.request)
    admitted = result.selected if is_bundle else ()
    price = over = None
    outside = False
    if case.is_cache and value_lost is not None:
        price, over, outside = _priced(case, result)
    return CaseOutcome(
        case=case.name,
        strategy=strategy,
        status=result.status.value,
        selected=tuple(result.selected),
        refusal_code=code,
        value=result.value,
        cost=result.cost,
        status_match=status_match,
        frozen_match=frozen_match,
        exact_match=exact_match,
        illegal=illegal if is_bundle else (),
        notes=notes,
        false_refusal=result.status is Status.REFUSED and expects_bundle,
        value_lost=value_lost,
        dearer=dearer,
        distractors=sum(DISTRACTOR in labels.get(form, ()) for form in admitted),
        harmful=sum(HARMFUL in labels.get(form, ()) for form in admitted),
        seconds=seconds,
        price_micro=price,
        price_over_micro=over,
        outside_tolerance=outside,
    )


def _priced(case: Case, result: Result) -> tuple[int | None, int | None, bool]:
    """A legal bundle of a cache case against the frozen exact answer: its price, how
    much dearer, and whether it is outside the exact answer's feasible set."""
    priced = price_of(case.request, tuple(result.selected))
    record = case.expected.get("cache")
    if priced is None or not isinstance(record, Mapping):
        return None, None, False
    appends = priced.appended and record.get("append_floor") is not None
    within = result.value >= int(record["rewrite_floor"]) and (
        appends or result.cost <= int(record["rewrite_budget"])
    )
    return priced.price, priced.price - int(record["price_micro"]), not within


def _fields_match(case: Case, result: Result) -> bool:
    """Every frozen field beyond status and selection/code: value, cost, refusal fields."""
    if result.status is Status.BUNDLE:
        frozen_value, frozen_cost = case.expected["value"], case.expected["cost"]
        frozen_cache = case.expected.get("cache")
        if frozen_cache is not None and result.to_dict()["cache"] != frozen_cache:
            return False
        return bool(result.value == frozen_value and result.cost == frozen_cost)
    frozen = case.expected.get("refusal")
    if result.refusal is None or not isinstance(frozen, Mapping):
        return False
    actual = result.refusal.to_dict()
    return all(actual.get(key) == value for key, value in frozen.items())


def _labels(request: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for candidate in request.get("candidates", ()):
        if isinstance(candidate, Mapping):
            found[str(candidate.get("id"))] = tuple(candidate.get("labels", ()))
    return found


def _summarise(
    strategy: str, rows: Sequence[CaseOutcome], cache: frozenset[str]
) -> StrategySummary:
    kinds = {kind: sum(kind in row.illegal for row in rows) for kind in ILLEGAL_KINDS}
    plain = [row for row in rows if row.case not in cache]
    cached = [row for row in rows if row.case in cache]
    priced = [row for row in cached if row.price_over_micro is not None]
    return StrategySummary(
        strategy=strategy,
        cases=len(rows),
        status_matches=sum(row.status_match for row in rows),
        frozen_matches=sum(row.frozen_match for row in rows),
        exact_matches=sum(row.exact_match for row in rows),
        illegal=sum(bool(row.illegal) for row in rows),
        illegal_by_kind=tuple(kinds.items()),
        false_refusals=sum(row.false_refusal for row in rows),
        value_lost=sum(row.value_lost or 0 for row in plain),
        value_lost_cases=sum((row.value_lost or 0) > 0 for row in plain),
        dearer_cases=sum(row.dearer for row in plain),
        distractors=sum(row.distractors for row in rows),
        harmful=sum(row.harmful for row in rows),
        errors=sum(row.error is not None for row in rows),
        seconds=sum(row.seconds for row in rows),
        cache_cases=len(cached),
        cache_bundles=len(priced),
        priced_higher=sum((row.price_over_micro or 0) > 0 for row in priced),
        price_lost_micro=sum(max(0, row.price_over_micro or 0) for row in priced),
        outside_tolerance=sum(row.outside_tolerance for row in priced),
        exact_price_micro=sum(
            (row.price_micro or 0) - (row.price_over_micro or 0) for row in priced
        ),
        cache_value_lost=sum(max(0, row.value_lost or 0) for row in priced),
        cache_value_lost_cases=sum((row.value_lost or 0) > 0 for row in priced),
    )


def _run_job(job: tuple[Case, str, float | None]) -> CaseOutcome:
    case, strategy, time_limit = job
    return run_case(case, strategy, time_limit=time_limit)


def run_corpus(
    directory: str | Path | None = None,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    *,
    time_limit: float | None = None,
    engine: Engine | None = None,
) -> CorpusReport:
    """Run every strategy on every case of the corpus and build the report; ``engine``
    (default: this process) runs the (case, strategy) pairs, results in order."""
    unknown = [name for name in strategies if name not in STRATEGIES]
    if unknown:
        raise CorpusError(f"unknown strategies {unknown}; expected some of {', '.join(STRATEGIES)}")
    corpus = load_corpus(directory)
    names = list(dict.fromkeys(strategies))
    jobs = [(case, strategy, time_limit) for strategy in names for case in corpus]
    cache = frozenset(case.name for case in corpus if case.is_cache)
    done = list((engine or SerialEngine()).map(_run_job, jobs))
    outcomes: list[CaseOutcome] = []
    summaries: list[StrategySummary] = []
    for strategy in names:
        rows = [row for row in done if row.strategy == strategy]
        outcomes.extend(rows)
        summaries.append(_summarise(strategy, rows, cache))
    order = {case.name: index for index, case in enumerate(corpus)}
    outcomes.sort(key=lambda row: order[row.case])
    return CorpusReport(corpus=corpus, strategies=tuple(summaries), outcomes=tuple(outcomes))
