"""``assembler serve``: the warm server, on stdin/stdout or on a loopback HTTP port.

Input: the arguments after ``serve``. Output: replies on stdout (JSON lines), or an
HTTP server (its address announced as one JSON line on stdout); the exit code: 0
after the end of input or SIGTERM (every call in flight answered first), 130 after
SIGINT, 2 for bad options or a ledger that cannot be opened.

The protocol is in ``models/session.md``; the README's "Sessions and the server"
shows it running.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.util import find_spec

from ..exits import EXIT_INVALID
from .arguments import CommandParser, add_limit_options, bounded_int, limits_of, positive_float

__all__ = ["serve_command"]


def _serve_parser() -> argparse.ArgumentParser:
    from ..model.arguments import DEFAULT_TIME_LIMIT

    parser = CommandParser(
        prog="assembler serve",
        description="Answer requests and session deltas: JSON lines on stdin/stdout, or"
        " HTTP with --port.",
        epilog="exit codes: 0 after end of input or SIGTERM (calls in flight answered first),"
        " 130 after SIGINT, 2 bad options or ledger",
    )
    parser.add_argument(
        "--port",
        type=bounded_int(0, 65535),
        default=None,
        help="serve HTTP on this port (0: any free one; the address is printed as JSON)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (127.0.0.1)")
    parser.add_argument(
        "--time-limit",
        type=positive_float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SEC",
        help=f"the most any call may take, and its default ({DEFAULT_TIME_LIMIT:g})",
    )
    parser.add_argument(
        "--concurrency",
        type=bounded_int(1, 256),
        default=2,
        metavar="N",
        help="solves at once, each on a thread of its own (2)",
    )
    parser.add_argument(
        "--max-pending",
        type=bounded_int(1, 100_000),
        default=64,
        metavar="N",
        help="calls held at once: lines read ahead, or HTTP requests in flight (64)",
    )
    parser.add_argument(
        "--max-sessions",
        type=bounded_int(1, 10_000_000),
        default=1000,
        metavar="N",
        help="sessions kept; beyond, the least recently used idle one is evicted (1000)",
    )
    parser.add_argument(
        "--session-idle",
        type=positive_float,
        default=3600.0,
        metavar="SEC",
        help="a session unused this long expires (3600)",
    )
    parser.add_argument("--ledger", metavar="PATH", help="record every compilation here")
    add_limit_options(parser, "size limits of each call (defaults in parentheses)")
    return parser


def serve_command(argv: Sequence[str]) -> int:
    args = _serve_parser().parse_args(argv)
    # after the options: --help and a bad option do not load the server
    from ..ledger import LedgerError
    from ..serve.service import Service, Settings

    settings = Settings(
        time_limit=args.time_limit,
        concurrency=args.concurrency,
        max_sessions=args.max_sessions,
        idle_seconds=args.session_idle,
        max_pending=args.max_pending,
        limits=limits_of(args),
        ledger=args.ledger,
    )
    try:
        service = Service(settings)
    except LedgerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.port is None:
        from ..serve.stdio import serve_stdio

        return serve_stdio(service)
    missing = [name for name in ("starlette", "uvicorn") if find_spec(name) is None]
    if missing:
        print(
            f"error: HTTP needs the 'serve' extra ({', '.join(missing)} missing):"
            " python -m pip install 'assembler[serve]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    from ..serve.http import serve_http

    try:
        return serve_http(service, args.host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
