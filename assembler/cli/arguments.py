"""What every command of the command line shares to read its arguments and its input.

Input: a command's options (through ``CommandParser`` or ``Parser`` and the option
types here) and the path of a request file. Output: the parsed options (a usage error
prints the usage and one line, and exits 2; ``Parser``, for the commands whose
``main`` returns its code, raises ``UsageError`` or ``ExitRequest`` instead), the size
``Limits`` the limit options ask for, and the file's bytes, read no further than the
request limit allows.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import IO, NoReturn

from ..exits import EXIT_INVALID
from ..model.errors import RequestTooLarge
from ..model.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "CommandParser",
    "ExitRequest",
    "Parser",
    "UsageError",
    "add_limit_options",
    "bounded_int",
    "limits_of",
    "positive_float",
    "positive_int",
    "read_request",
]

# the size limits as options: --max-candidates N fills Limits.max_candidates
_LIMIT_OPTIONS = {
    "max_request_bytes": "bytes of request JSON, checked before it is parsed",
    "max_candidates": "candidates in the request",
    "max_name_length": "characters of any id or other name",
    "max_depth": "nesting of JSON arrays and objects",
}


class UsageError(Exception):
    """A bad argument; its message is the one line the user sees."""


class ExitRequest(Exception):
    """``--help`` asked a command to end with ``code`` (its help printed)."""

    def __init__(self, code: int) -> None:
        self.code = code


class Parser(argparse.ArgumentParser):
    """A parser for a command whose ``main(argv)`` returns its exit code: a bad argument
    is a ``UsageError`` (the command prints it and returns 2), ``--help`` an
    ``ExitRequest``, never an interpreter exit from inside a library call."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise ExitRequest(status)


class CommandParser(argparse.ArgumentParser):
    """A command's parser: a bad option prints the usage and one ``error:`` line, and
    exits 2 (the code of invalid input or usage)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_INVALID)


def add_limit_options(parser: argparse.ArgumentParser, title: str) -> None:
    """``--max-request-bytes N`` and the other size limits, as a group of options."""
    limits = parser.add_argument_group(title)
    for field, meaning in _LIMIT_OPTIONS.items():
        default = getattr(DEFAULT_LIMITS, field)
        limits.add_argument(
            "--" + field.replace("_", "-"),
            dest=field,
            type=bounded_int(1, None),
            default=default,
            metavar="N",
            help=f"{meaning} ({default})",
        )


def limits_of(args: argparse.Namespace) -> Limits:
    """The ``Limits`` the options of ``add_limit_options`` ask for."""
    return Limits(**{field: getattr(args, field) for field in _LIMIT_OPTIONS})


def positive_float(text: str) -> float:
    """An argparse type: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def bounded_int(low: int, high: int | None) -> Callable[[str], int]:
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


positive_int = bounded_int(1, None)


def read_request(path: str, max_bytes: int = DEFAULT_LIMITS.max_request_bytes) -> bytes:
    """The bytes of the file at ``path`` (``-``: standard input), reading at most one
    byte past ``max_bytes``: ``RequestTooLarge`` beyond it, ``UsageError`` when the file
    cannot be read."""
    try:
        if path == "-":
            return _bounded(sys.stdin.buffer, max_bytes)
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                _too_large(size, max_bytes)
            return _bounded(handle, max_bytes)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


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


def _too_large(size: int | None, max_bytes: int) -> NoReturn:
    what = "a request of more than" if size is None else "a request of"
    raise RequestTooLarge(
        "$",
        f"{what} {max_bytes if size is None else size} bytes",
        limit="max_request_bytes",
        maximum=max_bytes,
        actual=size,
    )
