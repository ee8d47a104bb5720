"""``assembler corpus run``: the comparison table of every strategy on the corpus.

Input: ``[--strategies S,S,...] [--json] [--corpus DIR]`` and the engine options
(``--engine local|dask``, ``--workers W``, ``--scheduler ADDRESS``).
Output: the table (or ``{"strategies": {...}, "cases": [...]}`` with ``--json``) and
the exit code: 0; 1 when ``exact`` or ``enumerate`` disagrees with a frozen output
or fails; 2 on a usage error or an unreadable corpus; 5 when the engine failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..corpus.cases import CorpusError
from ..corpus.run import (
    DEFAULT_STRATEGIES,
    ILLEGAL_KINDS,
    CaseOutcome,
    CorpusReport,
    StrategySummary,
    run_corpus,
)
from ..engines import EngineError, open_engine
from ..exits import EXIT_ENGINE, EXIT_INVALID, EXIT_OK, EXIT_PROBLEM
from ..hunt.cachejudge import tokens
from ..model.types import Status
from .engines import add_engine_arguments, engine_spec

__all__ = ["main", "render_table"]



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


_CACHE_COLUMNS = (
    ("strategy", "<"),
    ("cache cases", ">"),
    ("legal bundles", ">"),
    ("priced-higher", ">"),
    ("price lost", ">"),
    ("outside-tol", ">"),
    ("value-lost (cases)", ">"),
)


def _cache_row(summary: StrategySummary) -> tuple[str, ...]:
    exact = summary.exact_price_micro
    share = f" ({100 * summary.price_lost_micro / exact:.0f}%)" if exact else ""
    return (
        summary.strategy,
        str(summary.cache_cases),
        str(summary.cache_bundles),
        str(summary.priced_higher),
        tokens(summary.price_lost_micro) + share,
        str(summary.outside_tolerance),
        f"{summary.cache_value_lost} ({summary.cache_value_lost_cases})",
    )


def _grid(columns: Sequence[tuple[str, str]], body: Sequence[tuple[str, ...]]) -> list[str]:
    """A header, its rule and ``body``, aligned (Markdown-compatible pipes)."""
    header = tuple(name for name, _ in columns)
    rows = [header, *body]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(width) if align == "<" else cell.rjust(width)
            for cell, width, (_, align) in zip(cells, widths, columns, strict=True)
        ]
        return "| " + " | ".join(parts) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (width + 1) + (":" if align == ">" else "-")
            for width, (_, align) in zip(widths, columns, strict=True)
        )
        + "|"
    )
    return [line(header), rule, *(line(row) for row in body)]


def render_table(report: CorpusReport) -> str:
    """The comparison table as aligned plain text (Markdown-compatible pipes), and for
    a corpus with cache cases the table of their prices."""
    cases = len(report.corpus)
    cached = sum(case.is_cache for case in report.corpus)
    legend = (
        f"{cases} cases. status/frozen: expected status / frozen output (selection or refusal"
        " code) matched; illegal: bundles breaking a rule, judged by assembler.verify, by kind"
        " (gate, dependency, group, two forms of one identity, budget, required); false-ref:"
        " refused where a bundle exists; value-lost: optimum minus value over legal bundles"
        " (cases losing value); dearer: legal optimal-value bundles costing more;"
        " distract/harmful: labelled items admitted."
        + (f" Value-lost and dearer leave out the {cached} cache cases." if cached else "")
    )
    lines = [*_grid(_COLUMNS, [_row(s) for s in report.strategies]), "", legend]
    if cached:
        lines += [
            "",
            *_grid(_CACHE_COLUMNS, [_cache_row(s) for s in report.strategies]),
            "",
            f"{cached} cache cases (models/README.md 6b), each legal bundle priced by the"
            " provider's rules against the frozen exact answer. priced-higher: bundles"
            " sent at a higher price; price lost: their excess, in tokens at the base input"
            " price (share of the exact answers' price over the same bundles);"
            " outside-tol: bundles outside the feasible set the exact answer was held to"
            " (under its value floor, or a rewrite past its rewrite budget); value-lost:"
            " the exact answer's value minus theirs, where positive (cases).",
        ]
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)


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
            "Run the strategies over every corpus case; exit 1 when exact or enumerate"
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
    add_engine_arguments(run, default_workers=1)
    return parser


def main(argv: list[str]) -> int:
    """``assembler corpus run [--strategies S,S,...] [--json] [--corpus DIR]``."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command != "run":
        parser.print_usage(sys.stderr)
        print("error: expected the sub-command 'run'", file=sys.stderr)
        return EXIT_INVALID
    strategies = [name.strip() for name in args.strategies.split(",") if name.strip()]
    if not strategies:
        print("error: --strategies names no strategy", file=sys.stderr)
        return EXIT_INVALID
    try:
        spec = engine_spec(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        with open_engine(spec) as engine:
            report = run_corpus(args.corpus, strategies, engine=engine)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except EngineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ENGINE
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
        return EXIT_PROBLEM
    return EXIT_OK
