"""``assembler hunt ...``: the command line of the hunt.

Input: the arguments after ``hunt``. Output: a summary (text, or JSON with
``--json``) on stdout and the exit code: 0 hunt finished; 1 an exact strategy is
wrong (an exact-disagreement or crash, or any finding against ``cpsat`` /
``enumerate``), or a replayed case did not reproduce; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NoReturn, TextIO

from ...model.errors import InvalidRequest
from ...strategies import STRATEGIES
from .judge import FindingKind
from .run import (
    DEFAULT_EXAMPLES,
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_OUT,
    DEFAULT_SHRINK_PER_KIND,
    HuntConfig,
    HuntReport,
    hunt,
    load_case,
    replay,
)

__all__ = ["main"]


class _UsageError(Exception):
    pass


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _Parser(argparse.ArgumentParser):
    # argparse exits the interpreter on a bad argument; main() must return instead
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


def _parser() -> _Parser:
    parser = _Parser(
        prog="assembler hunt",
        description="Search random requests for answers where a strategy disagrees with the"
        " exact solver; shrink each finding and save it as a reproducible case.",
    )
    parser.add_argument("--against", metavar="STRATEGY", help=f"one of {', '.join(STRATEGIES)}")
    parser.add_argument("--seed", type=int, default=0, help="hunt seed (default 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, metavar="S", help="search for S seconds")
    budget.add_argument(
        "--examples", type=int, metavar="K", help=f"try K examples (default {DEFAULT_EXAMPLES})"
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=DEFAULT_MAX_CANDIDATES,
        metavar="M",
        help=f"at most M candidates per request (default {DEFAULT_MAX_CANDIDATES})",
    )
    parser.add_argument("--workers", type=int, default=1, metavar="W", help="processes (default 1)")
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where shrunk cases are written (default {DEFAULT_OUT}/)",
    )
    parser.add_argument(
        "--shrink",
        type=int,
        default=DEFAULT_SHRINK_PER_KIND,
        metavar="N",
        help=f"shrink and save the first N findings of each kind (default"
        f" {DEFAULT_SHRINK_PER_KIND}; 0 saves none)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="re-run a saved case: exit 0 if its kind reproduces, 1 if not",
    )
    return parser


def _config(args: argparse.Namespace) -> HuntConfig:
    if args.against is None:
        raise _UsageError("--against STRATEGY is required (or --replay FILE)")
    if args.against not in STRATEGIES:
        raise _UsageError(
            f"unknown strategy {args.against!r}; expected one of {', '.join(STRATEGIES)}"
        )
    if args.seconds is not None and not 0 < args.seconds < float("inf"):
        raise _UsageError("--seconds must be a positive number")
    if args.examples is not None and args.examples < 1:
        raise _UsageError("--examples must be at least 1")
    if args.max_candidates < 1:
        raise _UsageError("--max-candidates must be at least 1")
    if args.workers < 1:
        raise _UsageError("--workers must be at least 1")
    if args.shrink < 0:
        raise _UsageError("--shrink must be 0 or more")
    if args.out.exists() and not args.out.is_dir():
        raise _UsageError(f"--out {args.out} exists and is not a directory")
    examples = args.examples
    if examples is None and args.seconds is None:
        examples = DEFAULT_EXAMPLES
    return HuntConfig(
        strategy=args.against,
        seed=args.seed,
        examples=examples,
        seconds=args.seconds,
        max_candidates=args.max_candidates,
        workers=args.workers,
        out=args.out,
        shrink_per_kind=args.shrink,
    )


def _progress_line(stream: TextIO) -> Callable[[int, Counter[FindingKind], float], None]:
    last = [0.0]

    def show(examples: int, counts: Counter[FindingKind], elapsed: float) -> None:
        if elapsed - last[0] < 0.2:
            return
        last[0] = elapsed
        found = " ".join(
            f"{kind.value} {n} ({1000 * n / examples:.1f}/1000)"
            for kind, n in sorted(counts.items(), key=lambda kv: list(FindingKind).index(kv[0]))
        )
        rate = examples / elapsed if elapsed > 0 else 0.0
        stream.write(f"\r\x1b[K{examples} examples, {rate:.0f}/s | {found or 'no findings'}")
        stream.flush()

    return show


def _summary(report: HuntReport) -> str:
    lines = [
        f"hunt against {report.strategy}, seed {report.seed}: {report.examples} examples in"
        f" {report.seconds:.1f} s ({report.rate:.1f}/s), {report.skipped} skipped;"
        f" shrinking took {report.shrink_seconds:.1f} s",
    ]
    counts = report.counts()
    for kind, n in counts.items():
        if n:
            per_1000 = 1000 * n / report.examples
            first = next(f for f in report.findings if f.kind.value == kind)
            lines.append(
                f"  {kind:<20} {n:>6}  ({per_1000:.1f} per 1,000)  first: example {first.example}"
            )
    if not any(counts.values()):
        lines.append("  no findings")
    if report.exact_is_wrong:
        lines.append(
            "  !! an exact strategy is wrong (exact-disagreement or crash): this is a bug in"
            " the project, see the saved cases"
        )
    for path, case in zip(report.paths, report.cases, strict=True):
        lines.append(
            f"  saved {path}: {case['kind']}, {len(case['request']['candidates'])} candidates"
            f" (from {case['shrunk_from']}) — {case['explanation']}"
        )
    return "\n".join(lines)


def _replay_main(path: Path, as_json: bool) -> int:
    try:
        case = load_case(path)
    except ValueError as error:
        raise _UsageError(str(error)) from None
    try:
        result = replay(case)
    except InvalidRequest as error:
        raise _UsageError(f"{path}: the saved request is not valid: {error}") from None
    got = result.judgement.kind
    if as_json:
        print(
            json.dumps(
                {
                    "path": str(path),
                    "expected": result.expected.value,
                    "got": None if got is None else got.value,
                    "reproduced": result.reproduced,
                    "explanation": result.judgement.explanation,
                },
                indent=2,
            )
        )
    elif result.reproduced:
        print(f"reproduced {result.expected.value}: {result.judgement.explanation}")
    else:
        print(
            f"did not reproduce {result.expected.value}: got"
            f" {'no finding' if got is None else got.value} ({result.judgement.explanation})"
        )
    return 0 if result.reproduced else 1


def main(argv: Iterable[str]) -> int:
    """``assembler hunt ...``. Input: the arguments after ``hunt``. Output: the exit code."""
    args_list = list(argv)
    if args_list[:1] == ["hunt"]:
        args_list = args_list[1:]
    try:
        args = _parser().parse_args(args_list)
        if args.replay is not None:
            if args.against is not None:
                raise _UsageError("--replay takes the strategy from the saved case; drop --against")
            return _replay_main(args.replay, args.json)
        config = _config(args)
        progress = _progress_line(sys.stderr) if sys.stderr.isatty() and not args.json else None
        report = hunt(config, progress)
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        else:
            print(_summary(report))
        return 1 if report.exact_is_wrong else 0
    except _UsageError as error:
        sys.stderr.write(f"assembler hunt: error: {error}\n")
        return 2
    except _Exit as done:
        return done.code
    except KeyboardInterrupt:
        sys.stderr.write("\nassembler hunt: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
