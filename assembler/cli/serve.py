"""``assembler serve``: the warm server, on stdin/stdout or on a loopback HTTP port.

Input: the arguments after ``serve``. Output: replies on stdout (JSON lines), or an
HTTP server (its address announced as one JSON line on stdout); the exit code: 0
after the end of input or SIGTERM (every call in flight answered first), 130 after
SIGINT, 2 for bad options, a ledger that cannot be opened, or an address beyond
loopback without ``--allow-remote`` and a token.

The protocol is in ``models/session.md``; the README's "Sessions and the server"
shows it running.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import shlex
import socket
import stat
import sys
from collections.abc import Sequence
from importlib.util import find_spec

from ..exits import EXIT_INVALID
from .arguments import CommandParser, add_limit_options, bounded_int, limits_of, positive_float

__all__ = ["serve_command"]


def _serve_parser() -> argparse.ArgumentParser:
    from ..model.arguments import DEFAULT_TIME_LIMIT
    from ..serve.service import (
        DEFAULT_BODY_TIMEOUT,
        DEFAULT_HEADER_TIMEOUT,
        DEFAULT_LEDGER_WAIT,
        DEFAULT_MAX_BODY_MEMORY,
        DEFAULT_MAX_CONNECTIONS,
        DEFAULT_MAX_SESSION_MEMORY,
        DEFAULT_WRITE_TIMEOUT,
    )

    parser = CommandParser(
        prog="assembler serve",
        description="Answer requests and session deltas: JSON lines on stdin/stdout, or"
        " HTTP with --port.",
        epilog="exit codes: 0 after end of input or SIGTERM (calls in flight answered first),"
        " 130 after SIGINT, 2 bad options, ledger or address",
    )
    parser.add_argument(
        "--port",
        type=bounded_int(0, 65535),
        default=None,
        help="serve HTTP on this port (0: any free one; the address is printed as JSON)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="HTTP address (127.0.0.1); one beyond loopback needs --allow-remote and a token",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --host be an address other machines reach (every call then needs the token)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        help="a file readable by its owner only, holding the shared secret every HTTP call"
        " but /healthz must send as 'Authorization: Bearer <token>' (at least 16 characters"
        " of visible ASCII)",
    )
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
        help="calls held at once: lines read ahead, or HTTP calls read and not yet answered (64)",
    )
    parser.add_argument(
        "--max-sessions",
        type=bounded_int(1, 10_000_000),
        default=1000,
        metavar="N",
        help="sessions kept; beyond, the least recently used idle one is evicted (1000)",
    )
    parser.add_argument(
        "--max-session-memory",
        type=bounded_int(1, None),
        default=DEFAULT_MAX_SESSION_MEMORY,
        metavar="BYTES",
        help="the sessions' estimated memory together; beyond, the least recently used idle"
        f" ones are evicted ({DEFAULT_MAX_SESSION_MEMORY})",
    )
    parser.add_argument(
        "--session-idle",
        type=positive_float,
        default=3600.0,
        metavar="SEC",
        help="a session unused this long expires (3600)",
    )
    parser.add_argument(
        "--max-body-memory",
        type=bounded_int(1, None),
        default=None,
        metavar="BYTES",
        help="bytes of lines and bodies held at once by calls not yet answered; at least"
        f" --max-request-bytes (its default: {DEFAULT_MAX_BODY_MEMORY})",
    )
    parser.add_argument(
        "--header-timeout",
        type=positive_float,
        default=DEFAULT_HEADER_TIMEOUT,
        metavar="SEC",
        help="HTTP: a request's headers must arrive within this long of the connection or"
        f" of the previous reply ({DEFAULT_HEADER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--body-timeout",
        type=positive_float,
        default=DEFAULT_BODY_TIMEOUT,
        metavar="SEC",
        help=f"HTTP: its body within this long of its headers ({DEFAULT_BODY_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=bounded_int(1, 1_000_000),
        default=DEFAULT_MAX_CONNECTIONS,
        metavar="N",
        help="HTTP: open connections; a call beyond is told server-busy"
        f" ({DEFAULT_MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--write-timeout",
        type=positive_float,
        default=DEFAULT_WRITE_TIMEOUT,
        metavar="SEC",
        help="HTTP: a client must take its whole reply within this long, or its connection"
        f" is cut ({DEFAULT_WRITE_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-client-connections",
        type=bounded_int(1, 1_000_000),
        default=None,
        metavar="N",
        help="HTTP: open connections of one client (its address); beyond, its longest idle"
        " one is closed, or the new one refused (half of --max-connections)",
    )
    parser.add_argument(
        "--max-queue",
        type=bounded_int(1, 1_000_000),
        default=None,
        metavar="N",
        help="HTTP: calls waiting for one of the --max-pending places, served client by"
        " client; beyond, a call is told server-busy with Retry-After (--max-connections)",
    )
    parser.add_argument(
        "--ledger",
        metavar="PATH",
        help="record every compilation here (a file, or postgresql://... shared by replicas)",
    )
    parser.add_argument(
        "--ledger-wait",
        type=positive_float,
        default=DEFAULT_LEDGER_WAIT,
        metavar="SEC",
        help="the longest wait for the ledger (a database connection, a writer's lock);"
        f" beyond, a call is told ledger-error, retryable, having changed nothing"
        f" ({DEFAULT_LEDGER_WAIT:g})",
    )
    add_limit_options(parser, "size limits of each call (defaults in parentheses)")
    return parser


def serve_command(argv: Sequence[str]) -> int:
    args = _serve_parser().parse_args(argv)
    # after the options: --help and a bad option do not load the server
    from ..ledger import LedgerError
    from ..serve.service import ServerConfig, Service

    limits = limits_of(args)
    body_memory = limits.max_request_bytes if args.max_body_memory is None else args.max_body_memory
    if body_memory < limits.max_request_bytes:
        return _refuse(
            f"--max-body-memory {body_memory} is below --max-request-bytes"
            f" {limits.max_request_bytes}: a call of the largest size could never be held"
        )
    token = None
    if args.token_file is not None:
        token = _token(args.token_file)
        if token is None:
            return EXIT_INVALID
    if args.port is not None and not _loopback(args.host):
        if not args.allow_remote or token is None:
            return _refuse(
                f"--host {args.host} is reachable beyond this machine and the server has no"
                " other authentication: give --allow-remote and --token-file PATH (every call"
                " then needs 'Authorization: Bearer <token>'), or serve on 127.0.0.1"
            )
        print(
            f"assembler serve: listening beyond loopback on {args.host}; every call but"
            " /healthz needs the token of --token-file (the traffic itself is not encrypted:"
            " put TLS in front of it)",
            file=sys.stderr,
            flush=True,
        )
    config = ServerConfig(
        time_limit=args.time_limit,
        concurrency=args.concurrency,
        max_sessions=args.max_sessions,
        idle_seconds=args.session_idle,
        max_pending=args.max_pending,
        limits=limits,
        ledger=args.ledger,
        max_body_memory=body_memory,
        max_session_memory=args.max_session_memory,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
        max_client_connections=(
            max(1, args.max_connections // 2)
            if args.max_client_connections is None
            else args.max_client_connections
        ),
        max_queue=args.max_connections if args.max_queue is None else args.max_queue,
        write_timeout=args.write_timeout,
        token=token,
        ledger_wait=args.ledger_wait,
    )
    try:
        service = Service(config)
    except LedgerError as exc:
        return _refuse(str(exc))
    if args.port is None:
        from ..serve.stdio import serve_stdio

        return serve_stdio(service)
    missing = [name for name in ("starlette", "uvicorn") if find_spec(name) is None]
    if missing:
        return _refuse(
            f"HTTP needs the 'serve' extra ({', '.join(missing)} missing):"
            " python -m pip install 'assembler[serve]'"
        )
    from ..serve.http import serve_http

    try:
        return serve_http(service, args.host, args.port)
    except OSError as exc:
        return _refuse(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")


def _refuse(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INVALID


def _token(path: str) -> str | None:
    """The shared secret in ``path`` (surrounding whitespace dropped), or None after
    saying why it cannot be used: a file others may read, or text that is not a token
    (``model.keys.token``: at least 16 characters of visible ASCII)."""
    from ..model.keys import token as token_rule

    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            text = handle.read().decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        _refuse(f"--token-file {path}: {getattr(exc, 'strerror', None) or exc}")
        return None
    if mode & 0o077:
        _refuse(
            f"--token-file {path}: the file is readable or writable by others (mode"
            f" {stat.S_IMODE(mode):04o}): a shared secret must be its owner's alone;"
            f" chmod 600 {shlex.quote(path)}"
        )
        return None
    checked = token_rule(text)
    if isinstance(checked, str):
        _refuse(f"--token-file {path}: {checked}")
        return None
    return text


def _loopback(host: str) -> bool:
    """Whether ``host`` names only this machine's loopback addresses."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False  # cannot tell: treat it as reachable from elsewhere
    return bool(found) and all(
        ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in found
    )
