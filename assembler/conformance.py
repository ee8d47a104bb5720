"""The conformance corpus and the comparison table of every strategy against it.

Input: a corpus directory (``corpus/`` of the repository by default) holding one JSON
file per case, ``<family>-<budget_class>.json``, with the keys ``name`` (the file
stem), ``family``, ``budget_class`` (``tight``, ``medium`` or ``roomy``),
``description``, ``request`` (a request of ``models/README.md``) and ``expected``
(the frozen exact answer: ``status``; for a bundle ``selected`` in render order,
``value`` and ``cost``; for a refusal ``refusal`` with at least ``code``), and a list
of strategy names (default: all of ``assembler.strategies.STRATEGIES``).

Output: a ``Report``: one ``CaseOutcome`` per case and strategy, and one
``StrategySummary`` per strategy with

* ``status_matches``: cases whose status equals the frozen status;
* ``frozen_matches``: status and ``selected`` equal (bundles), or status and
  refusal code equal (refusals);
* ``illegal`` and ``illegal_by_kind``: bundles that break a rule of their request, as
  judged by the independent verifier (``assembler.verify``), never by the strategy's
  own claim; a bundle is counted once under every kind it breaks (``gate``,
  ``dependency``, ``group``, ``duplicate-identity``, ``budget``, ``required``);
* ``false_refusals``: refusals where the exact answer is a bundle;
* ``value_lost`` / ``value_lost_cases``: over the cases where both the frozen answer
  and the strategy's answer are bundles and the strategy's bundle is legal, the
  frozen value minus the strategy's value, summed, and the number of cases where it
  is positive; ``dearer_cases`` counts legal bundles of the optimal value that cost
  more than the frozen bundle;
* ``distractors`` / ``harmful``: admitted candidates labelled ``distractor`` /
  ``harmful`` (the labels are read here only, never by a strategy);
* ``errors`` (a strategy raised) and ``seconds`` (wall-clock, all cases).

``main`` implements ``assembler corpus run [--strategies S,S,...] [--json]
[--corpus DIR]``: it prints the table (or ``{"strategies": {...}, "cases": [...]}``
with ``--json``) and exits 0, 1 when ``cpsat`` or ``enumerate`` disagrees with a
frozen output (status, selection, value, cost or any frozen refusal field) or fails,
and 2 on a usage error or an unreadable corpus.

Strategies are loaded lazily through ``assemble``: importing this module never
imports OR-Tools.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import assemble
from .model.errors import AssemblerError
from .model.types import Result, Status
from .strategies import STRATEGIES
from .verifiers.bundle import ViolationKind, verify

__all__ = [
    "BUDGET_CLASSES",
    "DEFAULT_STRATEGIES",
    "EXACT_STRATEGIES",
    "Case",
    "CaseOutcome",
    "CorpusError",
    "Report",
    "StrategySummary",
    "default_corpus_dir",
    "load_corpus",
    "main",
    "render_table",
    "run_case",
    "run_corpus",
]

BUDGET_CLASSES = ("tight", "medium", "roomy")
DEFAULT_STRATEGIES = ("cpsat", "enumerate", "greedy", "top-k", "weighted", "dump")
# Strategies that must reproduce every frozen output exactly.
EXACT_STRATEGIES = frozenset({"cpsat", "enumerate"})
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

_CASE_KEYS = ("name", "family", "budget_class", "description", "request", "expected")

EXIT_OK = 0
EXIT_DISAGREEMENT = 1
EXIT_USAGE = 2


class CorpusError(AssemblerError, ValueError):
    """A corpus directory or case file does not follow the corpus format."""


# ---------------------------------------------------------------------------
# Cases


@dataclass(frozen=True, slots=True)
class Case:
    """One corpus case as stored: the request and its frozen exact answer."""

    name: str
    family: str
    budget_class: str
    description: str
    request: Mapping[str, Any]
    expected: Mapping[str, Any]

    @property
    def expected_status(self) -> str:
        return str(self.expected["status"])

    @property
    def expected_selected(self) -> tuple[str, ...]:
        return tuple(self.expected.get("selected", ()))

    @property
    def expected_code(self) -> str | None:
        refusal = self.expected.get("refusal")
        return None if refusal is None else str(refusal["code"])


def default_corpus_dir() -> Path:
    """The repository's ``corpus/`` (next to the package), else ``./corpus``."""
    beside = Path(__file__).resolve().parent.parent / "corpus"
    return beside if beside.is_dir() else Path.cwd() / "corpus"


def load_corpus(directory: str | Path | None = None) -> tuple[Case, ...]:
    """Every case of ``directory``, ordered by family, then tight, medium, roomy."""
    root = default_corpus_dir() if directory is None else Path(directory)
    if not root.is_dir():
        raise CorpusError(f"corpus directory not found: {root}")
    cases = [_load_case(path) for path in sorted(root.glob("*.json"))]
    if not cases:
        raise CorpusError(f"no case files (*.json) in {root}")
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise CorpusError("two case files share a name")
    return tuple(sorted(cases, key=lambda c: (c.family, BUDGET_CLASSES.index(c.budget_class))))


def _load_case(path: Path) -> Case:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: cannot read the case: {exc}") from None
    if not isinstance(data, dict):
        raise CorpusError(f"{path}: a case is a JSON object")
    missing = [key for key in _CASE_KEYS if key not in data]
    unknown = sorted(set(data) - set(_CASE_KEYS))
    if missing or unknown:
        raise CorpusError(f"{path}: missing keys {missing}, unknown keys {unknown}")
    for key in ("name", "family", "budget_class", "description"):
        if not isinstance(data[key], str) or not data[key]:
            raise CorpusError(f"{path}: {key} must be a non-empty string")
    if data["name"] != path.stem:
        raise CorpusError(f"{path}: name {data['name']!r} is not the file stem")
    if data["budget_class"] not in BUDGET_CLASSES:
        raise CorpusError(f"{path}: budget_class must be one of {', '.join(BUDGET_CLASSES)}")
    if data["name"] != f"{data['family']}-{data['budget_class']}":
        raise CorpusError(f"{path}: name must be <family>-<budget_class>")
    request, expected = data["request"], data["expected"]
    if not isinstance(request, dict) or not isinstance(expected, dict):
        raise CorpusError(f"{path}: request and expected must be objects")
    status = expected.get("status")
    if status == Status.BUNDLE.value:
        if not all(key in expected for key in ("selected", "value", "cost")):
            raise CorpusError(f"{path}: a bundle expects selected, value and cost")
    elif status == Status.REFUSED.value:
        refusal = expected.get("refusal")
        if not isinstance(refusal, dict) or "code" not in refusal:
            raise CorpusError(f"{path}: a refusal expects refusal.code")
    else:
        raise CorpusError(f"{path}: expected.status must be 'bundle' or 'refused'")
    return Case(
        name=data["name"],
        family=data["family"],
        budget_class=data["budget_class"],
        description=data["description"],
        request=request,
        expected=expected,
    )


# ---------------------------------------------------------------------------
# Report rows


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
        }


@dataclass(frozen=True, slots=True)
class Report:
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


# ---------------------------------------------------------------------------
# Running


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
    )


def _fields_match(case: Case, result: Result) -> bool:
    """Every frozen field beyond status and selection/code: value, cost, refusal fields."""
    if result.status is Status.BUNDLE:
        frozen_value, frozen_cost = case.expected["value"], case.expected["cost"]
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


def _summarise(strategy: str, rows: Sequence[CaseOutcome]) -> StrategySummary:
    kinds = {kind: sum(kind in row.illegal for row in rows) for kind in ILLEGAL_KINDS}
    return StrategySummary(
        strategy=strategy,
        cases=len(rows),
        status_matches=sum(row.status_match for row in rows),
        frozen_matches=sum(row.frozen_match for row in rows),
        exact_matches=sum(row.exact_match for row in rows),
        illegal=sum(bool(row.illegal) for row in rows),
        illegal_by_kind=tuple(kinds.items()),
        false_refusals=sum(row.false_refusal for row in rows),
        value_lost=sum(row.value_lost or 0 for row in rows),
        value_lost_cases=sum((row.value_lost or 0) > 0 for row in rows),
        dearer_cases=sum(row.dearer for row in rows),
        distractors=sum(row.distractors for row in rows),
        harmful=sum(row.harmful for row in rows),
        errors=sum(row.error is not None for row in rows),
        seconds=sum(row.seconds for row in rows),
    )


def run_corpus(
    directory: str | Path | None = None,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    *,
    time_limit: float | None = None,
) -> Report:
    """Run every strategy on every case of the corpus and build the report."""
    unknown = [name for name in strategies if name not in STRATEGIES]
    if unknown:
        raise CorpusError(f"unknown strategies {unknown}; expected some of {', '.join(STRATEGIES)}")
    corpus = load_corpus(directory)
    outcomes: list[CaseOutcome] = []
    summaries: list[StrategySummary] = []
    for strategy in dict.fromkeys(strategies):
        rows = [run_case(case, strategy, time_limit=time_limit) for case in corpus]
        outcomes.extend(rows)
        summaries.append(_summarise(strategy, rows))
    order = {case.name: index for index, case in enumerate(corpus)}
    outcomes.sort(key=lambda row: order[row.case])
    return Report(corpus=corpus, strategies=tuple(summaries), outcomes=tuple(outcomes))


# ---------------------------------------------------------------------------
# Rendering


_COLUMNS = (
    ("strategy", "<"),
    ("status", ">"),
    ("frozen", ">"),
    ("illegal", ">"),
    ("gate", ">"),
    ("dep", ">"),
    ("group", ">"),
    ("dup", ">"),
    ("budget", ">"),
    ("req", ">"),
    ("false-ref", ">"),
    ("value-lost (cases)", ">"),
    ("dearer", ">"),
    ("distract", ">"),
    ("harmful", ">"),
    ("time", ">"),
)


def _row(summary: StrategySummary) -> tuple[str, ...]:
    n = summary.cases
    return (
        summary.strategy,
        f"{summary.status_matches}/{n}",
        f"{summary.frozen_matches}/{n}",
        str(summary.illegal),
        *(str(summary.kind(kind)) for kind in ILLEGAL_KINDS),
        str(summary.false_refusals),
        f"{summary.value_lost} ({summary.value_lost_cases})",
        str(summary.dearer_cases),
        str(summary.distractors),
        str(summary.harmful),
        f"{summary.seconds:.2f}s",
    )


def render_table(report: Report) -> str:
    """The comparison table as aligned plain text (Markdown-compatible pipes)."""
    header = tuple(name for name, _ in _COLUMNS)
    rows = [header, *(_row(summary) for summary in report.strategies)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(width) if align == "<" else cell.rjust(width)
            for cell, width, (_, align) in zip(cells, widths, _COLUMNS, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (width + 1) + (":" if align == ">" else "-")
            for width, (_, align) in zip(widths, _COLUMNS, strict=True)
        )
        + "|"
    )
    cases = len(report.corpus)
    legend = (
        f"{cases} cases. status/frozen: expected status / frozen output (selection or refusal"
        " code) matched; illegal: bundles breaking a rule, judged by assembler.verify, by kind"
        " (gate, dependency, group, two forms of one identity, budget, required); false-ref:"
        " refused where a bundle exists; value-lost: optimum minus value over legal bundles"
        " (cases losing value); dearer: legal optimal-value bundles costing more;"
        " distract/harmful: labelled items admitted."
    )
    lines = [line(header), rule, *(line(row) for row in rows[1:]), "", legend]
    problems = report.disagreements
    if problems:
        lines.append("")
        lines.append("EXACT STRATEGY DISAGREES WITH THE FROZEN CORPUS:")
        lines.extend(
            f"  {row.strategy} on {row.case}: {row.error or _describe(row)}" for row in problems
        )
    return "\n".join(lines) + "\n"


def _describe(row: CaseOutcome) -> str:
    if row.status == Status.BUNDLE.value:
        return f"bundle {list(row.selected)} value {row.value} cost {row.cost}"
    return f"{row.status} {row.refusal_code or ''}".strip()


# ---------------------------------------------------------------------------
# Command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="assembler corpus",
        description="Run every strategy over the conformance corpus and print the table.",
    )
    commands = parser.add_subparsers(dest="command", metavar="run")
    run = commands.add_parser(
        "run",
        help="run the strategies over the corpus",
        description=(
            "Run the strategies over every corpus case; exit 1 when cpsat or enumerate"
            " disagrees with a frozen output."
        ),
    )
    run.add_argument(
        "--strategies",
        default=",".join(DEFAULT_STRATEGIES),
        metavar="S,S,...",
        help=f"comma-separated strategy names (default: {','.join(DEFAULT_STRATEGIES)})",
    )
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.add_argument("--corpus", default=None, metavar="DIR", help="corpus directory")
    return parser


def main(argv: list[str]) -> int:
    """``assembler corpus run [--strategies S,S,...] [--json] [--corpus DIR]``."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "run":
        parser.print_usage(sys.stderr)
        print("error: expected the sub-command 'run'", file=sys.stderr)
        return EXIT_USAGE
    strategies = [name.strip() for name in args.strategies.split(",") if name.strip()]
    if not strategies:
        print("error: --strategies names no strategy", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = run_corpus(args.corpus, strategies)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_table(report))
    if report.disagreements:
        for row in report.disagreements:
            print(
                f"error: {row.strategy} disagrees with the frozen output of {row.case}",
                file=sys.stderr,
            )
        return EXIT_DISAGREEMENT
    return EXIT_OK
