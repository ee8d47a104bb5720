"""``assembler compile REQUEST.json``: assemble the bundle for one request.

Input: the arguments after ``compile``. Output: the result as JSON (or the text
table with ``--format text``; the rendered model input with ``--render FORMAT``, or
its manifest with ``--manifest``) on stdout and an exit code: 0 bundle, 1 refused,
3 undecided, 2 invalid input or usage (one line on stderr naming the field and the
candidate; never a traceback), or a ledger that cannot be opened or written, 4 a
failure of the assembler itself (``cli.main``).

``--ledger PATH`` records the compilation (``assembler.Ledger``): the request before
solving, then its outcome (with the rendered bytes and manifest under ``--render``);
an invalid request is recorded as ``failed``.

The request is read no further than ``--max-request-bytes``: a larger file or stream
is refused before it is held in memory, let alone parsed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING

from ..model.arguments import MAX_WORKERS
from ..model.errors import AssemblerError, InternalError, RequestTooLarge, SolverError
from ..model.exits import EXIT, EXIT_INVALID
from ..model.limits import DEFAULT_LIMITS, Limits
from ..strategies import STRATEGIES

if TYPE_CHECKING:
    from ..render.counters import Counter

__all__ = ["compile_command"]

# the size limits as options: --max-candidates N fills Limits.max_candidates
_LIMIT_OPTIONS = {
    "max_request_bytes": "bytes of request JSON, checked before it is parsed",
    "max_candidates": "candidates in the request",
    "max_name_length": "characters of any id or other name",
    "max_depth": "nesting of JSON arrays and objects",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)


def _compile_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="assembler compile",
        description="Assemble the bundle for a request.",
        epilog="exit codes: 0 bundle, 1 refused, 2 invalid input or usage, 3 undecided,"
        " 4 internal error (a bug: please report it)",
    )
    parser.add_argument("request", help="request JSON file, or - for standard input")
    parser.add_argument("--strategy", default="cpsat", choices=sorted(STRATEGIES))
    parser.add_argument("--time-limit", type=_positive_float, default=None, metavar="SEC")
    parser.add_argument("--workers", type=_bounded_int(1, MAX_WORKERS), default=None, metavar="N")
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
    parser.add_argument(
        "--counter",
        metavar="NAME",
        help="with --render: count costs with this counter (utf8-bytes, o200k_base,"
        " cl100k_base, tiktoken:PATH, tokenizers:PATH); real encodings are read from local"
        " files only",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="with --render: count costs as this model bills them (its tokenizer, or a"
        " calibrated estimate) and refuse a budget above its input window",
    )
    parser.add_argument("--ledger", metavar="PATH", help="record the compilation in this ledger")
    parser.add_argument("--session", metavar="KEY", help="the ledger session (default: task id)")
    add_limit_options(parser, "size limits (defaults in parentheses)")
    return parser


def add_limit_options(parser: argparse.ArgumentParser, title: str) -> None:
    """``--max-request-bytes N`` and the other size limits, as a group of options."""
    limits = parser.add_argument_group(title)
    for field, meaning in _LIMIT_OPTIONS.items():
        default = getattr(DEFAULT_LIMITS, field)
        limits.add_argument(
            "--" + field.replace("_", "-"),
            dest=field,
            type=_bounded_int(1, None),
            default=default,
            metavar="N",
            help=f"{meaning} ({default})",
        )


def limits_of(args: argparse.Namespace) -> Limits:
    """The ``Limits`` the options of ``add_limit_options`` ask for."""
    return Limits(**{field: getattr(args, field) for field in _LIMIT_OPTIONS})


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _bounded_int(low: int, high: int | None) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high`` (``None``: no maximum)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text[:40]!r}") from None
        if value < low or (high is not None and value > high):
            span = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"must be {span}: {text[:40]!r}")
        return value

    return parse


# (assembler explain shares these options)
_positive_int = _bounded_int(1, None)


def _read(path: str, max_bytes: int = DEFAULT_LIMITS.max_request_bytes) -> bytes:
    """The request's bytes, reading at most one byte past the limit."""
    try:
        if path == "-":
            return _bounded(sys.stdin.buffer, max_bytes)
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                _too_large(size, max_bytes)
            return _bounded(handle, max_bytes)
    except OSError as exc:
        raise _UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def _bounded(stream: IO[bytes], max_bytes: int) -> bytes:
    # In chunks: read(n) allocates n bytes at once, and the limit may be far larger
    # than the request (or than memory).
    chunks: list[bytes] = []
    total = 0
    while chunk := stream.read(_CHUNK):
        total += len(chunk)
        if total > max_bytes:
            _too_large(None, max_bytes)
        chunks.append(chunk)
    return b"".join(chunks)


_CHUNK = 1 << 20


def _too_large(size: int | None, max_bytes: int) -> None:
    what = "a request of more than" if size is None else "a request of"
    raise RequestTooLarge(
        "$",
        f"{what} {max_bytes if size is None else size} bytes",
        limit="max_request_bytes",
        maximum=max_bytes,
        actual=size,
    )


class _UsageError(Exception):
    pass


def _text(data: str | bytes) -> str:
    # what the ledger keeps of a request that is not JSON: the text itself
    return data if isinstance(data, str) else data.decode("utf-8", errors="replace")


def compile_command(argv: Sequence[str]) -> int:
    from ..api import assemble
    from ..model.parse import request_from_json
    from ..settings import Settings
    from .table import render_text

    args = _compile_parser().parse_args(argv)
    limits = limits_of(args)
    ledger = None
    try:
        if args.manifest and args.render is None:
            raise _UsageError("--manifest needs --render FORMAT")
        if (args.counter or args.model) and args.render is None:
            raise _UsageError("--counter and --model count rendered text: give --render FORMAT")
        if args.ledger is not None:
            from ..ledger import Ledger

            ledger = Ledger(args.ledger, session=args.session)
        settings = Settings(
            strategy=args.strategy,
            time_limit=args.time_limit,
            workers=args.workers,
            render=args.render,
            counter=_counter(args),
            ledger=ledger,
            limits=limits,
        )
        text = _read(args.request, limits.max_request_bytes)
        try:
            request = request_from_json(text, limits=limits)
        except AssemblerError as exc:
            if ledger is not None and not isinstance(exc, InternalError):
                ledger.invalid(_text(text), settings.recorded(), exc)
            raise
        _check_window(args, request.task.budget)
        result = assemble(request, settings)
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except AssemblerError as exc:
        if isinstance(exc, InternalError | SolverError):
            raise  # not the input's fault: main() reports it as an internal error
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        if ledger is not None:
            ledger.close()
    if args.render is not None and result.rendering is not None:
        rendering = result.rendering
        if args.manifest:
            out = json.dumps(rendering.manifest.to_dict(), indent=2, ensure_ascii=not _utf8_out())
            _write(out + "\n")
        elif args.render == "text":
            _write(rendering.text)
        else:
            _write(json.dumps(rendering.body, indent=2, ensure_ascii=not _utf8_out()) + "\n")
    elif args.render is not None:
        # refused or undecided: nothing was rendered, the result says why
        sys.stderr.write(render_text(result))
    elif args.format == "text":
        _write(render_text(result))
    else:
        _write(json.dumps(result.to_dict(), indent=2, ensure_ascii=not _utf8_out()) + "\n")
    return EXIT[result.status]


def _counter(args: argparse.Namespace) -> Counter | None:
    """The counter ``--counter`` or ``--model`` names (``--counter`` wins)."""
    from ..render.registry import counter_named, meter_for

    if args.counter is not None:
        return counter_named(args.counter)
    return None if args.model is None else meter_for(args.model).counter


def _check_window(args: argparse.Namespace, budget: int) -> None:
    """With ``--model``, a budget above the model's input window is refused."""
    from ..model.errors import InvalidRequest
    from ..render.registry import model_profile

    if args.model is not None:
        profile = model_profile(args.model)
        if budget > profile.input_window:
            raise InvalidRequest(
                "task.budget",
                f"{budget} is above {profile.name}'s input window of {profile.input_window}"
                f" tokens (context {profile.context_window} less {profile.max_output} for output)",
            )


def _utf8_out() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or ""
    return encoding.lower().replace("-", "").replace("_", "") == "utf8"


def _write(text: str) -> None:
    # A terminal or pipe that is not UTF-8 still gets every character, escaped.
    if not _utf8_out():
        encoding = getattr(sys.stdout, "encoding", None) or "ascii"
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    sys.stdout.write(text)
