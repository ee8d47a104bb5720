"""``assembler compile REQUEST.json``: assemble the bundle for one request.

Input: the arguments after ``compile``. Output: the result as JSON (or the text
table with ``--format text``; the rendered model input with ``--render FORMAT``, or
its manifest with ``--manifest``) on stdout and an exit code: 0 bundle, 1 refused,
3 undecided, 2 invalid input or usage (one line on stderr naming the field and the
candidate; never a traceback), or a ledger that cannot be opened or written.

``--ledger PATH`` records the compilation (``assembler.Ledger``): the request before
solving, then its outcome (with the rendered bytes and manifest under ``--render``);
an invalid request is recorded as ``failed``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..model.errors import AssemblerError
from ..model.recorder import Run
from ..strategies import STRATEGIES
from .exits import EXIT, EXIT_INVALID

__all__ = ["compile_command"]


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
    parser.add_argument(
        "--render",
        choices=("text", "openai-chat", "anthropic-messages"),
        default=None,
        help="print the rendered model input instead of the result",
    )
    parser.add_argument(
        "--manifest", action="store_true", help="with --render: print the manifest instead"
    )
    parser.add_argument("--ledger", metavar="PATH", help="record the compilation in this ledger")
    parser.add_argument("--session", metavar="KEY", help="the ledger session (default: task id)")
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


def _text(data: str | bytes) -> str:
    # what the ledger keeps of a request that is not JSON: the text itself
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def compile_command(argv: Sequence[str]) -> int:
    from ..api import assemble
    from ..model.parse import request_from_json
    from ..stages.trace import render_text

    args = _compile_parser().parse_args(argv)
    ledger = None
    try:
        if args.manifest and args.render is None:
            raise _UsageError("--manifest needs --render FORMAT")
        if args.ledger is not None:
            from ..ledger import Ledger

            ledger = Ledger(args.ledger, session=args.session)
        text = _read(args.request)
        try:
            request = request_from_json(text)
        except AssemblerError as exc:
            if ledger is not None:
                run = Run(args.strategy, args.time_limit, args.workers, args.render)
                ledger.invalid(_text(text), run, exc)
            raise
        result = assemble(
            request,
            strategy=args.strategy,
            time_limit=args.time_limit,
            workers=args.workers,
            render=args.render,
            ledger=ledger,
        )
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except AssemblerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        if ledger is not None:
            ledger.close()
    if args.render is not None and result.rendering is not None:
        rendering = result.rendering
        if args.manifest:
            out = json.dumps(rendering.manifest.to_dict(), indent=2, ensure_ascii=False) + "\n"
        elif args.render == "text":
            out = rendering.text
        else:
            out = json.dumps(rendering.body, indent=2, ensure_ascii=False) + "\n"
        sys.stdout.write(out)
    elif args.render is not None:
        # refused or undecided: nothing was rendered, the result says why
        sys.stderr.write(render_text(result))
    elif args.format == "text":
        sys.stdout.write(render_text(result))
    else:
        sys.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return EXIT[result.status]
