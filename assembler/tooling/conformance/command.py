"""``assembler corpus run``: the comparison table of every strategy on the corpus.

Input: ``[--strategies S,S,...] [--json] [--corpus DIR]`` and the engine options
(``--engine local|dask``, ``--workers W``, ``--scheduler ADDRESS``).
Output: the table (or ``{"strategies": {...}, "cases": [...]}`` with ``--json``) and
the exit code: 0; 1 when ``exact`` or ``enumerate`` disagrees with a frozen output
or fails; 2 on a usage error or an unreadable corpus; 4 when the engine failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import NoReturn

from ...model.types import Status
from ..engine import EngineError, add_engine_arguments, engine_spec, open_engine
from .cases import CorpusError
from .run import (
    DEFAULT_STRATEGIES,
    ILLEGAL_KINDS,
    CaseOutcome,
    CorpusReport,
    StrategySummary,
    run_corpus,
)

__all__ = ["main", "render_table"]

EXIT_OK = 0
EXIT_DISAGREEMENT = 1
EXIT_USAGE = 2
EXIT_ENGINE = 4


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


def render_table(report: CorpusReport) -> str:
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
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
        return EXIT_USAGE
    strategies = [name.strip() for name in args.strategies.split(",") if name.strip()]
    if not strategies:
        print("error: --strategies names no strategy", file=sys.stderr)
        return EXIT_USAGE
    try:
        spec = engine_spec(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with open_engine(spec) as engine:
            report = run_corpus(args.corpus, strategies, engine=engine)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
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
        return EXIT_DISAGREEMENT
    return EXIT_OK
