"""Every error as the reply a client reads; the server's own errors handed on.

Input: an exception raised while answering one message.
Output: ``ErrorReply``: the exit code of ``assembler compile`` for the same outcome
(2 invalid input, 3 no answer within the time limit, 4 a bug), the HTTP status, and
the JSON object ``{"code", "type", "message", ...}`` with the exception's structured
fields (``field``, ``candidate``; ``limit``, ``maximum``, ``actual``; ``rule``,
``items``), so that a client in any language can act on it without parsing text.

A bug never ends the server: it is one ``internal-error`` reply (exit 4), and with
``ASSEMBLER_TRACEBACK=1`` its traceback goes to stderr. The server's own errors
(``ServeError`` and its kinds, each with its ``code``, ``exit`` and ``http``) are
defined in ``assembler/errors.py`` with every other, and handed on here.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any

from ..errors import (
    AssemblerError,
    ClientDisconnected,
    InternalError,
    InvalidRequest,
    LedgerError,
    LedgerUnavailable,
    Overdue,
    ReadTimeout,
    RenderError,
    RequestTooLarge,
    ServeError,
    ServerBusy,
    SessionExpired,
    SessionUnknown,
    TimeLimitReached,
    Unauthorized,
    VersionConflict,
    WriteTimeout,
)
from ..exits import EXIT_INTERNAL, EXIT_INVALID

# a call told its ledger's store is unavailable retries after this long
LEDGER_RETRY = 1.0

__all__ = [
    "LEDGER_RETRY",
    "ClientDisconnected",
    "ErrorReply",
    "Overdue",
    "ReadTimeout",
    "ServeError",
    "ServerBusy",
    "SessionExpired",
    "SessionUnknown",
    "TimeLimitReached",
    "Unauthorized",
    "VersionConflict",
    "WriteTimeout",
    "error_reply",
]


@dataclass(frozen=True, slots=True)
class ErrorReply:
    exit: int
    http: int
    body: dict[str, Any]


def error_reply(exc: BaseException) -> ErrorReply:
    """What the client is told about ``exc``."""
    # "code" first: it is what a client branches on
    body: dict[str, Any] = {"code": None, "type": type(exc).__name__, "message": _one_line(exc)}
    if isinstance(exc, ServeError):
        body["code"] = exc.code
        if isinstance(exc, SessionUnknown | SessionExpired | VersionConflict):
            body["session"] = exc.key
        if isinstance(exc, VersionConflict):
            body["version"] = exc.version
        if isinstance(exc, TimeLimitReached):
            body["time_limit"] = exc.seconds
        if isinstance(exc, ReadTimeout):
            body.update(timeout=exc.timeout, seconds=exc.seconds, received=exc.received)
        if isinstance(exc, ServerBusy) and exc.retry_after is not None:
            body["retry_after"] = round(exc.retry_after, 3)
        return ErrorReply(exc.exit, exc.http, body)
    if isinstance(exc, RenderError):
        body.update(code="render-error", render_code=exc.code, rule=exc.rule, items=list(exc.items))
        return ErrorReply(EXIT_INVALID, 400, body)
    if isinstance(exc, InvalidRequest):
        body.update(field=exc.field, candidate=exc.candidate)
        if isinstance(exc, RequestTooLarge):
            body.update(code="request-too-large", limit=exc.limit, maximum=exc.maximum)
            body["actual"] = exc.actual
            return ErrorReply(EXIT_INVALID, 413, body)
        body["code"] = "invalid-request"
        return ErrorReply(EXIT_INVALID, 400, body)
    if isinstance(exc, LedgerError):
        # the README's rule: a ledger that cannot be written is exit 2, not a bug; the
        # client is told why without the server's file path, the operator sees it whole
        print(f"assembler serve: {_one_line(exc)}", file=sys.stderr, flush=True)
        reason = _one_line_of(exc.reason.replace(exc.path, "<ledger>"))
        body.update(code="ledger-error", message=f"the server's ledger: {reason}")
        if isinstance(exc, LedgerUnavailable):
            # the store did not answer in time: nothing was applied or recorded, and the
            # same call may succeed in a moment
            body.update(retryable=True, retry_after=LEDGER_RETRY)
            return ErrorReply(EXIT_INVALID, 503, body)
        body["retryable"] = False
        return ErrorReply(EXIT_INVALID, 500, body)
    if isinstance(exc, AssemblerError) and isinstance(exc, ValueError):
        # UnknownStrategy, EnumerationTooLarge: the call's input
        body["code"] = "invalid-request"
        return ErrorReply(EXIT_INVALID, 400, body)
    cause = exc.cause if isinstance(exc, InternalError) else exc
    if os.environ.get("ASSEMBLER_TRACEBACK") == "1":
        traceback.print_exception(cause, file=sys.stderr)
    body.update(
        code="internal-error",
        type=type(cause).__name__,
        message=f"{_one_line(cause)} -- a bug in the assembler, not a problem with the request;"
        " please report it with the request and this line",
    )
    return ErrorReply(EXIT_INTERNAL, 500, body)


def _one_line_of(text: str) -> str:
    return " ".join(text.split())[:2000]


def _one_line(exc: BaseException) -> str:
    try:
        text = " ".join(str(exc).split())
    except Exception:
        text = ""
    return text[:2000] or type(exc).__name__
