"""The command line.

Input: ``argv``. Output: text or JSON on stdout and an exit code:
0 bundle, 1 refused, 3 undecided, 2 invalid input or usage (a one-line message on
stderr naming the field and the candidate; never a traceback).

Sub-commands: ``compile`` (this module), ``corpus run`` (``assembler.tooling.conformance``),
``hunt`` (``assembler.tooling.hunt``), ``bench`` (``benchmarks``). Each is imported only
when called.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .model.errors import AssemblerError
from .model.types import Status
from .strategies import STRATEGIES

__all__ = ["main"]

EXIT_BUNDLE = 0
EXIT_REFUSED = 1
EXIT_INVALID = 2
EXIT_UNDECIDED = 3

_EXIT = {Status.BUNDLE: EXIT_BUNDLE, Status.REFUSED: EXIT_REFUSED, Status.UNDECIDED: EXIT_UNDECIDED}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)


def _compile_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="assembler compile", description="Assemble the bundle for a request.")
    parser.add_argument("request", help="request JSON file, or - for standard input")
    parser.add_argument("--strategy", default="cpsat", choices=sorted(STRATEGIES))
    parser.add_argument("--time-limit", type=_positive_float, default=None, metavar="SEC")
    parser.add_argument("--workers", type=_positive_int, default=None, metavar="N")
    parser.add_argument("--format", choices=("json", "text"), default="json")
    return parser


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _read(path: str) -> str | bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise _UsageError(f"cannot read {path}: {exc.strerror}") from None


class _UsageError(Exception):
    pass


def compile_command(argv: Sequence[str]) -> int:
    from .api import assemble
    from .model.parse import request_from_json
    from .stages.trace import render_text

    args = _compile_parser().parse_args(argv)
    try:
        request = request_from_json(_read(args.request))
        result = assemble(
            request, strategy=args.strategy, time_limit=args.time_limit, workers=args.workers
        )
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except AssemblerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.format == "text":
        sys.stdout.write(render_text(result))
    else:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return _EXIT[result.status]


def _bench(argv: list[str]) -> int:
    """Run ``benchmarks`` from the source checkout this package was installed from."""
    import importlib
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[1]
    if not (checkout / "benchmarks" / "__main__.py").is_file():
        print(
            "error: the benchmarks live in the source checkout; run 'python -m benchmarks'"
            " from a clone of the repository",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    runner = importlib.import_module("benchmarks.__main__")
    return int(runner.main(argv))


_USAGE = """usage: assembler <command> [options]

commands:
  compile REQUEST.json   assemble the bundle for one request (- reads stdin)
  corpus run             run every strategy over the conformance corpus
  hunt                   search for requests where a strategy is wrong
  bench                  run the benchmarks

'assembler <command> --help' describes each command.
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return EXIT_BUNDLE if args else EXIT_INVALID
    command, rest = args[0], args[1:]
    try:
        if command == "compile":
            return compile_command(rest)
        if command == "corpus":
            from .tooling.conformance import main as corpus_main

            return int(corpus_main(rest))
        if command == "hunt":
            from .tooling.hunt import main as hunt_main

            return int(hunt_main(rest))
        if command == "bench":
            return _bench(rest)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_BUNDLE
    print(f"error: unknown command {command!r}\n", file=sys.stderr)
    sys.stderr.write(_USAGE)
    return EXIT_INVALID


if __name__ == "__main__":
    raise SystemExit(main())
