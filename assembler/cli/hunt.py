"""``assembler hunt ...``: the command line of the hunt.

Input: the arguments after ``hunt``. Output: a summary (text, or JSON with
``--json``) on stdout, progress on stderr, and the exit code: 0 hunt finished; 1 an
exact strategy is wrong (an exact-disagreement or crash, or any finding against
``exact`` / ``enumerate``), or a replayed case did not reproduce; 2 bad arguments;
5 the engine failed (no scheduler at the address, a batch lost or failing after its
retries: the findings so far are written and ``--resume`` continues); 130 stopped by
Ctrl-C (the findings so far are written, with how far the hunt got).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..engines import EngineError, open_engine
from ..exits import EXIT_ENGINE, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, EXIT_PROBLEM
from ..hunt.journal import CONFIG, FINDINGS, StateError, open_state
from ..hunt.judge import FindingKind
from ..hunt.run import (
    DEFAULT_EXAMPLES,
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_OUT,
    DEFAULT_SHRINK_PER_KIND,
    HuntConfig,
    HuntReport,
    Progress,
    hunt,
    load_case,
    replay,
)
from ..model.errors import InvalidRequest
from ..strategies import STRATEGIES
from .arguments import ExitRequest, Parser, UsageError
from .engines import add_engine_arguments, engine_spec
from .progress import ProgressPrinter, choose_mode
from .stopping import StopOnInterrupt

__all__ = ["main"]


def _parser() -> Parser:
    parser = Parser(
        prog="assembler hunt",
        description="Search random requests for answers where a strategy disagrees with the"
        " exact solver; shrink each finding and save it as a reproducible case.",
    )
    parser.add_argument("--against", metavar="STRATEGY", help=f"one of {', '.join(STRATEGIES)}")
    parser.add_argument("--seed", type=int, default=None, help="hunt seed (default 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, metavar="S", help="search for S seconds")
    budget.add_argument(
        "--examples", type=int, metavar="K", help=f"try K examples (default {DEFAULT_EXAMPLES})"
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=None,
        metavar="M",
        help=f"at most M candidates per request (default {DEFAULT_MAX_CANDIDATES})",
    )
    add_engine_arguments(parser, default_workers=None)
    parser.add_argument(
        "--batch",
        type=int,
        metavar="N",
        help="examples per batch sent to a worker (default 8 local, 64 dask); never"
        " changes the answer",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"where shrunk cases are written (default ./{DEFAULT_OUT}/, created when a"
        " finding is saved)",
    )
    parser.add_argument(
        "--shrink",
        type=int,
        default=None,
        metavar="N",
        help=f"shrink and save the first N findings of each kind (default"
        f" {DEFAULT_SHRINK_PER_KIND}; 0 saves none)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        metavar="DIR",
        help="keep the hunt's journal and findings.json in DIR (default: a temporary"
        " folder, removed when the hunt finishes, kept when it is stopped)",
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help="continue the stopped hunt whose state is in DIR (its strategy, seed,"
        " settings and --workers; --examples or --seconds and the engine options may be"
        " changed)",
    )
    parser.add_argument(
        "--progress",
        type=float,
        metavar="S",
        help="print a progress line to stderr every S seconds (for logs; 0: none);"
        " default: a live line on a terminal",
    )
    parser.add_argument(
        "--cache",
        action="store_true",
        default=None,
        help="draw sessions instead: a call, its rendering and the next call with"
        " cache.previous from it, judged by the cache-aware order (price, then value)",
    )
    parser.add_argument(
        "--render",
        action="store_true",
        default=None,
        help="draw conversations instead (turns that may open one, calls with bad"
        " arguments, a cache section in any order), judged in every format under its"
        " rules: a bundle a format cannot send is a false bundle",
    )
    parser.add_argument(
        "--session",
        action="store_true",
        default=None,
        help="draw the cache hunt's sessions, judged as a Session's answers after deltas"
        " (an empty one, re-scorings) against fresh calls of the same requests",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="re-run a saved case: exit 0 if its kind reproduces, 1 if not",
    )
    return parser


def _check_counts(args: argparse.Namespace) -> None:
    if args.seconds is not None and not 0 < args.seconds < float("inf"):
        raise UsageError("--seconds must be a positive number")
    if args.examples is not None and args.examples < 1:
        raise UsageError("--examples must be at least 1")
    if args.max_candidates is not None and args.max_candidates < 1:
        raise UsageError("--max-candidates must be at least 1")
    if args.shrink is not None and args.shrink < 0:
        raise UsageError("--shrink must be 0 or more")
    if args.batch is not None and args.batch < 1:
        raise UsageError("--batch must be at least 1")
    if args.progress is not None and not 0 <= args.progress < float("inf"):
        raise UsageError("--progress must be 0 or more seconds")
    for name in ("out", "state"):
        path = getattr(args, name)
        if path is not None and path.exists() and not path.is_dir():
            raise UsageError(f"--{name} {path} exists and is not a directory")


def _config(args: argparse.Namespace) -> HuntConfig:
    if args.against is None:
        raise UsageError("--against STRATEGY is required (or --replay FILE, --resume DIR)")
    if args.against not in STRATEGIES:
        raise UsageError(
            f"unknown strategy {args.against!r}; expected one of {', '.join(STRATEGIES)}"
        )
    examples = args.examples
    if examples is None and args.seconds is None:
        examples = DEFAULT_EXAMPLES
    return HuntConfig(
        strategy=args.against,
        seed=0 if args.seed is None else args.seed,
        examples=examples,
        seconds=args.seconds,
        max_candidates=DEFAULT_MAX_CANDIDATES
        if args.max_candidates is None
        else args.max_candidates,
        workers=1 if args.workers is None else args.workers,
        out=DEFAULT_OUT if args.out is None else args.out,
        shrink_per_kind=DEFAULT_SHRINK_PER_KIND if args.shrink is None else args.shrink,
        batch=args.batch,
        cache=bool(args.cache),
        shape=_shape_of(args),
    )


def _shape_of(args: argparse.Namespace) -> str:
    chosen = [name for name in ("cache", "render", "session") if getattr(args, name)]
    if len(chosen) > 1:
        raise UsageError(f"--{chosen[0]} and --{chosen[1]} are two hunts: choose one")
    return "" if chosen in ([], ["cache"]) else chosen[0]


# what a resumed hunt takes from its state directory, never from the command line
_SAVED = ("against", "seed", "max_candidates", "shrink", "out", "batch", "state", "cache",
          "render", "session")  # fmt: skip


def _resumed_config(args: argparse.Namespace, saved: Mapping[str, Any]) -> HuntConfig:
    given = [name for name in _SAVED if getattr(args, name) is not None]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(f"--resume takes the hunt's settings from its state; drop {flags}")
    examples, seconds = saved.get("examples"), saved.get("seconds")
    if args.examples is not None or args.seconds is not None:
        examples, seconds = args.examples, args.seconds
    try:
        if saved.get("strategy") not in STRATEGIES:
            raise ValueError(f"unknown strategy {saved.get('strategy')!r}")
        out = saved.get("out")
        return HuntConfig(
            strategy=str(saved["strategy"]),
            seed=int(saved["seed"]),
            examples=None if examples is None else int(examples),
            seconds=None if seconds is None else float(seconds),
            max_candidates=int(saved["max_candidates"]),
            workers=1 if args.workers is None else args.workers,
            out=None if out is None else Path(out),
            shrink_per_kind=int(saved["shrink_per_kind"]),
            batch=None if saved.get("batch") is None else int(saved["batch"]),
            cache=bool(saved.get("cache", False)),
            shape=str(saved.get("shape", "")),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise UsageError(f"{args.resume}: the saved settings are not usable: {error}") from None


def _unfinished(path: Path) -> bool:
    """Whether ``path`` holds a hunt that was stopped and could still be resumed."""
    if not (path / CONFIG).exists():
        return False
    try:
        report = json.loads((path / FINDINGS).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return True
    return not (isinstance(report, dict) and report.get("complete") is True)


def _progress_text(progress: Progress) -> str:
    found = " ".join(
        f"{kind.value} {n} ({1000 * n / progress.examples:.1f}/1000)"
        for kind, n in sorted(progress.counts.items(), key=lambda kv: _KIND_ORDER[kv[0]])
        if n
    )
    of = "" if progress.target is None else f"/{progress.target:,}"
    return (
        f"hunt: {progress.examples:,}{of} examples, {progress.rate:.0f}/s,"
        f" {progress.elapsed:.0f} s | {found or 'no findings'}"
    )


_KIND_ORDER = {kind: index for index, kind in enumerate(FindingKind)}


def _title(report: HuntReport) -> str:
    if report.cache:
        return "cache hunt"
    return {"render": "render-rule hunt", "session": "session hunt"}.get(report.shape, "hunt")


def _summary(report: HuntReport) -> str:
    lines = [
        f"{_title(report)} against {report.strategy}, seed"
        f" {report.seed}: {report.examples} examples in"
        f" {report.seconds:.1f} s ({report.rate:.1f}/s), {report.skipped} skipped;"
        + (
            f" shrinking took {report.shrink_seconds:.1f} s"
            if report.complete
            else " stopped before shrinking"
        ),
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
    rerun = (
        f"; {report.rerun_batches} batch(es) re-run after a worker was lost"
        if report.rerun_batches
        else ""
    )
    resumed = f"; resumed at example {report.resumed_from}" if report.resumed_from else ""
    lines.append(f"  engine: {report.engine}{rerun}{resumed}")
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
        raise UsageError(str(error)) from None
    try:
        result = replay(case)
    except InvalidRequest as error:
        raise UsageError(f"{path}: the saved request is not valid: {error}") from None
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
    return EXIT_OK if result.reproduced else EXIT_PROBLEM


def _interrupted(report: HuntReport, state: Path | None) -> str:
    target = "" if report.target is None else f" of {report.target:,}"
    found = ", ".join(f"{kind} {n}" for kind, n in report.counts().items() if n) or "none"
    judged = f"0..{report.examples - 1} judged" if report.examples else "none judged"
    text = (
        f"assembler hunt: interrupted after {report.examples:,}{target} examples ({judged},"
        f" {report.rate:.0f}/s); findings so far: {found}"
    )
    if state is not None:
        text += f"; written to {state / FINDINGS}; continue with: assembler hunt --resume {state}"
    return text


def _run(args: argparse.Namespace) -> int:
    _check_counts(args)
    journal = None
    if args.resume is not None:
        try:
            journal = open_state(args.resume)
        except StateError as error:
            raise UsageError(str(error)) from None
        if args.workers is None and isinstance(journal.settings.get("workers"), int):
            args.workers = journal.settings["workers"]  # the stopped hunt's, unless told
    try:
        spec = engine_spec(args)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if journal is not None:
        config, state, temporary = _resumed_config(args, journal.settings), args.resume, False
    else:
        config = _config(args)
        if args.state is not None and _unfinished(args.state):
            raise UsageError(
                f"--state {args.state} holds a stopped hunt; continue it with --resume"
                f" {args.state}, or choose another folder"
            )
        temporary = args.state is None
        state = Path(tempfile.mkdtemp(prefix="assembler-hunt-")) if temporary else args.state
    mode = choose_mode(sys.stderr, args.progress, args.json)
    printer = ProgressPrinter(sys.stderr, mode, args.progress or 0.0)
    try:
        engine = open_engine(spec, in_process=False)
    except EngineError as error:
        if temporary:
            shutil.rmtree(state, ignore_errors=True)
        sys.stderr.write(f"assembler hunt: error: {error}\n")
        return EXIT_ENGINE
    with engine, StopOnInterrupt() as interrupts:
        try:
            report = hunt(
                config,
                lambda p: printer.show(_progress_text(p)),
                engine=engine,
                stop=interrupts.requested,
                state=state,
                resume=journal,
            )
        except EngineError as error:
            printer.done()
            sys.stderr.write(
                f"assembler hunt: error: {error}; the findings so far are in"
                f" {state / FINDINGS}; continue with: assembler hunt --resume {state}\n"
            )
            return EXIT_ENGINE
    printer.done()
    print(json.dumps(report.to_dict(), indent=2) if args.json else _summary(report))
    if not report.complete:
        sys.stderr.write(_interrupted(report, state) + "\n")
        return EXIT_INTERRUPTED
    if temporary:
        shutil.rmtree(state, ignore_errors=True)
    return EXIT_PROBLEM if report.exact_is_wrong else EXIT_OK


def main(argv: Iterable[str]) -> int:
    """``assembler hunt ...``. Input: the arguments after ``hunt``. Output: the exit code."""
    args_list = list(argv)
    if args_list[:1] == ["hunt"]:
        args_list = args_list[1:]
    try:
        args = _parser().parse_args(args_list)
        if args.replay is not None:
            if args.against is not None or args.resume is not None:
                raise UsageError(
                    "--replay takes the strategy from the saved case; drop --against/--resume"
                )
            return _replay_main(args.replay, args.json)
        return _run(args)
    except UsageError as error:
        sys.stderr.write(f"assembler hunt: error: {error}\n")
        return EXIT_INVALID
    except ExitRequest as done:
        return done.code
    except KeyboardInterrupt:
        sys.stderr.write("\nassembler hunt: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
