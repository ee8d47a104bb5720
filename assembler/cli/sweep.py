"""``assembler sweep ...``: the grid's table, as text or JSON.

Input: the arguments after ``sweep``: ``--shapes``, ``--budgets``, ``--strategies``
(comma-separated), ``--examples`` per (shape, budget) cell, ``--seed``, ``--batch``,
the engine options (``--engine local|dask``, ``--workers``, ``--scheduler``),
``--progress S`` and ``--json``.
Output: one row per (shape, budget, strategy) on stdout (``COLUMNS`` documents each,
and ``--json`` prints them with the documentation), progress on stderr, and the exit
code: 0; 1 an exact strategy was wrong on some request (crash or
exact-disagreement: a bug, hunt it with ``assembler hunt``); 2 bad arguments; 5 the
engine failed; 130 stopped by Ctrl-C (the table of the examples judged so far is
printed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence

from ..engines import EngineError, open_engine
from ..exits import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, EXIT_PROBLEM
from ..strategies import STRATEGIES
from ..sweep.grid import parse_budget, parse_shape
from ..sweep.run import SweepConfig, SweepReport, sweep
from .arguments import ExitRequest, Parser, UsageError
from .engines import add_engine_arguments, engine_spec
from .progress import ProgressPrinter, choose_mode
from .stopping import StopOnInterrupt

__all__ = ["COLUMNS", "main", "render_table"]

DEFAULT_SHAPES = "small-10"
DEFAULT_BUDGETS = "mixed"
DEFAULT_STRATEGIES = "greedy,top-k,weighted,dump"
DEFAULT_EXAMPLES = 200

# (JSON field, table heading, what it counts); the JSON carries the same text
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("shape", "shape", "generator shape: small-M (hunts: up to M candidates, every trap)"
     " or scale-N (benchmarks: N forms shaped like real requests)"),
    ("budget", "budget", "budget as a fraction of the request's total cost, or mixed (the"
     " shape's own range)"),
    ("strategy", "strategy", "the strategy judged against the exact answer"),
    ("examples", "examples", "requests judged in this cell (examples 0..n-1 of the seed)"),
    ("skipped", "skip", "requests with no verdict: exact proved nothing in its time limit,"
     " or the strategy answered undecided or cannot run at this size"),
    ("false_refusals", "false-ref", "refusals where the exact answer is a bundle"),
    ("illegal", "illegal", "bundles the independent verifier rejects (any rule broken)"),
    ("value_lost", "value-lost", "over legal bundles, the optimum's value minus theirs, summed"),
    ("value_lost_cases", "(cases)", "legal bundles worth less than the optimum"),
    ("value_lost_percent", "lost %", "value_lost as a percentage of the optimal value summed"
     " over the same requests (null when that is 0)"),
    ("dearer", "dearer", "legal bundles of the optimal value at a higher cost"),
    ("exact_problems", "exact-bugs", "requests where an exact strategy crashed or exact and"
     " enumerate disagreed: must be 0"),
    ("latency_p50_ms", "p50 ms", "the strategy's median wall time per request, in ms"
     " (measured on the worker: depends on the engine and its load)"),
    ("latency_p95_ms", "p95 ms", "its 95th percentile, in ms"),
    ("exact_p50_ms", "exact p50 ms", "exact's median wall time on the same requests, in ms"),
)  # fmt: skip


def _parser() -> Parser:
    parser = Parser(
        prog="assembler sweep",
        description="Judge strategies against the exact answer over a grid of request"
        " shapes and budgets; print value loss, false refusals, illegal bundles and latency"
        " per cell.",
    )
    parser.add_argument(
        "--shapes",
        default=DEFAULT_SHAPES,
        metavar="S,S,...",
        help=f"small-M and scale-N shapes (default {DEFAULT_SHAPES})",
    )
    parser.add_argument(
        "--budgets",
        default=DEFAULT_BUDGETS,
        metavar="B,B,...",
        help="fractions of the total cost, or mixed (default mixed)",
    )
    parser.add_argument(
        "--strategies",
        default=DEFAULT_STRATEGIES,
        metavar="S,S,...",
        help=f"strategies to judge (default {DEFAULT_STRATEGIES})",
    )
    parser.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        metavar="K",
        help=f"requests per (shape, budget) cell (default {DEFAULT_EXAMPLES})",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument(
        "--batch",
        type=int,
        metavar="N",
        help="requests per batch sent to a worker (default 8 local, 64 dask)",
    )
    add_engine_arguments(parser, default_workers=1)
    parser.add_argument(
        "--progress",
        type=float,
        metavar="S",
        help="a progress line on stderr every S seconds (default: a live line on a terminal)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print {config, columns, cells} as JSON"
    )
    return parser  # fmt: skip


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _config(args: argparse.Namespace) -> SweepConfig:
    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.batch is not None and args.batch < 1:
        raise UsageError("--batch must be at least 1")
    if args.progress is not None and not 0 <= args.progress < float("inf"):
        raise UsageError("--progress must be 0 or more seconds")
    strategies = _names(args.strategies)
    unknown = [name for name in strategies if name not in STRATEGIES]
    if unknown or not strategies:
        raise UsageError(
            f"unknown strategies {unknown}; expected some of {', '.join(STRATEGIES)}"
            if unknown
            else "--strategies names no strategy"
        )
    try:
        shapes = tuple(dict.fromkeys(parse_shape(text) for text in _names(args.shapes)))
        budgets = tuple(dict.fromkeys(parse_budget(text) for text in _names(args.budgets)))
    except ValueError as error:
        raise UsageError(str(error)) from None
    if not shapes or not budgets:
        raise UsageError("--shapes and --budgets need at least one value each")
    return SweepConfig(
        seed=args.seed,
        examples=args.examples,
        shapes=shapes,
        budgets=budgets,
        strategies=tuple(dict.fromkeys(strategies)),
        batch=args.batch,
    )


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def render_table(report: SweepReport) -> str:
    """The table as aligned Markdown-compatible text, then a legend of its columns."""
    header = [heading for _, heading, _ in COLUMNS]
    rows = [[_cell(value) for value in cell.to_dict().values()] for cell in report.cells]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            cell.ljust(width) if i < 3 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(parts) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ("-" if i < 3 else ":") for i, w in enumerate(widths))
    legend = [f"  {heading:<12} {text}" for _, heading, text in COLUMNS[3:]]
    config = report.config
    lines = [
        line(header),
        rule + "|",
        *(line(row) for row in rows),
        "",
        f"seed {config.seed}, {report.examples:,} requests in {report.seconds:.1f} s on"
        f" {report.engine}{'' if report.complete else ' (INTERRUPTED: a prefix of each cell)'}.",
        *legend,
    ]
    return "\n".join(lines) + "\n"


def _json(report: SweepReport) -> str:
    config = report.config
    return json.dumps(
        {
            "seed": config.seed,
            "examples_per_cell": config.examples,
            "shapes": [shape.name for shape in config.shapes],
            "budgets": [budget.name for budget in config.budgets],
            "strategies": list(config.strategies),
            "engine": report.engine,
            "seconds": round(report.seconds, 3),
            "complete": report.complete,
            "columns": {name: text for name, _, text in COLUMNS},
            "cells": [cell.to_dict() for cell in report.cells],
        },
        indent=2,
    )


def main(argv: Iterable[str]) -> int:
    """``assembler sweep ...``. Input: the arguments after ``sweep``. Output: the exit code."""
    args_list = list(argv)
    if args_list[:1] == ["sweep"]:
        args_list = args_list[1:]
    try:
        args = _parser().parse_args(args_list)
        config = _config(args)
        try:
            spec = engine_spec(args)
        except ValueError as error:
            raise UsageError(str(error)) from None
    except UsageError as error:
        sys.stderr.write(f"assembler sweep: error: {error}\n")
        return EXIT_INVALID
    except ExitRequest as done:
        return done.code
    printer = ProgressPrinter(sys.stderr, choose_mode(sys.stderr, args.progress, args.json),
                              args.progress or 0.0)  # fmt: skip

    def show(done: int, total: int, elapsed: float) -> None:
        rate = done / elapsed if elapsed > 0 else 0.0
        printer.show(f"sweep: {done:,}/{total:,} requests, {rate:.0f}/s, {elapsed:.0f} s")

    try:
        with open_engine(spec, in_process=False) as engine, StopOnInterrupt() as interrupts:
            report = sweep(config, engine, show, interrupts.requested)
    except EngineError as error:
        printer.done()
        sys.stderr.write(f"assembler sweep: error: {error}\n")
        return EXIT_ENGINE
    printer.done()
    sys.stdout.write(_json(report) + "\n" if args.json else render_table(report))
    if not report.complete:
        sys.stderr.write(
            f"assembler sweep: interrupted after {report.examples:,} requests; the table"
            " covers the examples judged so far\n"
        )
        return EXIT_INTERRUPTED
    return EXIT_PROBLEM if report.exact_is_wrong else EXIT_OK
