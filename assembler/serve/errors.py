"""The server's own errors, and every error as the reply a client reads.

Input: an exception raised while answering one message.
Output: ``ErrorReply``: the exit code of ``assembler compile`` for the same outcome
(2 invalid input, 3 no answer within the time limit, 4 a bug), the HTTP status, and
the JSON object ``{"code", "type", "message", ...}`` with the exception's structured
fields (``field``, ``candidate``; ``limit``, ``maximum``, ``actual``; ``rule``,
``items``), so that a client in any language can act on it without parsing text.

A bug never ends the server: it is one ``internal-error`` reply (exit 4), and with
``ASSEMBLER_TRACEBACK=1`` its traceback goes to stderr.
"""

from __future__ import annotations

import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any

from ..exits import EXIT_INTERNAL, EXIT_INVALID, EXIT_UNDECIDED
from ..ledger import LedgerError, LedgerUnavailable
from ..model.errors import (
    AssemblerError,
    InternalError,
    InvalidRequest,
    RenderError,
    RequestTooLarge,
)

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


class ServeError(AssemblerError):
    """An outcome of the server itself (not of the request): ``code`` names it."""

    code = "server-error"
    exit = EXIT_UNDECIDED
    http = 503


class SessionUnknown(ServeError, ValueError):
    """No session has this key (open it first, with its request)."""

    code = "session-unknown"
    exit = EXIT_INVALID
    http = 404

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"no session {key!r}: open it with its request first")


class SessionExpired(ServeError, ValueError):
    """The session was dropped (idle too long, or evicted to keep the limit on
    sessions); the client opens it again with the whole request."""

    code = "session-expired"
    exit = EXIT_INVALID
    http = 410

    def __init__(self, key: str, why: str) -> None:
        self.key = key
        self.why = why
        super().__init__(f"session {key!r} expired ({why}): open it again with its request")


class VersionConflict(ServeError, ValueError):
    """A delta named the version it was made for, and the session is at another (not
    the one the same delta already made): its client is behind or ahead of the
    session. ``version`` is the session's now (None: it was closed meanwhile)."""

    code = "session-conflict"
    exit = EXIT_INVALID
    http = 409

    def __init__(self, key: str, version: int | None, given: int) -> None:
        self.key = key
        self.version = version
        at = "was closed" if version is None else f"is at version {version}"
        super().__init__(f"session {key!r} {at}, not {given}: the delta was not applied")


class TimeLimitReached(ServeError):
    """No answer within the request's time limit (waiting for the session or for a
    solver slot, or a solve that overran); a delta was not applied."""

    code = "time-limit"

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        super().__init__(f"no answer within the time limit of {seconds:g} s: {what}")


class Overdue(AssemblerError):
    """Inside the server: a call's deadline passed while it waited for ``what`` (its
    session's previous call, a solver thread, memory, its solve); the service answers
    it ``TimeLimitReached`` with the call's time limit."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(what)


class ServerBusy(ServeError):
    """The server cannot take this call now (calls, memory, connections or sessions at
    their limits, or it is shutting down); ``retry_after``, when known, is the seconds
    after which a retry is expected to find room (HTTP: also ``Retry-After``)."""

    code = "server-busy"

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class ReadTimeout(ServeError, ValueError):
    """A client too slow to send its call: its headers did not all arrive within
    ``header_timeout``, or its body within ``body_timeout`` of them. The connection is
    closed; the server's other clients lose nothing to it."""

    code = "read-timeout"
    exit = EXIT_INVALID
    http = 408

    def __init__(self, timeout: str, seconds: float, received: int | None) -> None:
        self.timeout = timeout
        self.seconds = seconds
        self.received = received
        what = "its headers" if timeout == "header_timeout" else "its body"
        got = "" if received is None else f" ({received} bytes of it had come)"
        option = "--" + timeout.replace("_", "-")
        super().__init__(
            f"the call did not send {what} within {seconds:g} s ({option}){got};"
            " the connection is closed"
        )


class WriteTimeout(ServeError, ValueError):
    """A client that did not take its reply within ``write_timeout``: its connection is
    cut and the reply's bytes given back. Nobody reads this error; ``/healthz`` counts
    it."""

    code = "write-timeout"
    exit = EXIT_INVALID
    http = 408

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(
            f"the client did not take its reply within {seconds:g} s (--write-timeout);"
            " the connection was cut"
        )


class ClientDisconnected(ServeError, ValueError):
    """The client went away before its call's body had all arrived (nobody reads this
    reply; it is counted in ``/healthz``)."""

    code = "client-disconnected"
    exit = EXIT_INVALID
    http = 400

    def __init__(self) -> None:
        super().__init__("the client disconnected before its body had all arrived")


class Unauthorized(ServeError, ValueError):
    """A call without the server's shared secret (``Authorization: Bearer <token>``),
    which a server reachable beyond loopback requires."""

    code = "unauthorized"
    exit = EXIT_INVALID
    http = 401

    def __init__(self) -> None:
        super().__init__(
            "this server needs its token: send 'Authorization: Bearer <token>'"
            " (the secret in its --token-file)"
        )


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
