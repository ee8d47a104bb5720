"""The exception hierarchy: every error class of the package, here and nowhere else.

Input: nothing. Output: the exception types every stage raises (``PUBLIC``: those
``import assembler`` hands on by name; a feature's package hands on its own, the ledger
its ``LedgerError``, the server its ``ServeError`` and the rest).

Every exception the package raises on purpose derives from ``AssemblerError``.
Errors caused by the caller's input also derive from ``ValueError`` so that code
written against the standard library's conventions catches them too. A bug (any
other exception escaping from inside) reaches the caller as ``InternalError``, which
is deliberately not a ``ValueError``, so that no caller mistakes it for bad input.
Each exception carries its facts as attributes, not only in its message, and its
message is one line.
"""

from __future__ import annotations

from typing import Any

from .exits import EXIT_INVALID, EXIT_UNDECIDED

__all__ = [
    "PUBLIC",
    "AssemblerError",
    "ClientDisconnected",
    "CorpusError",
    "EngineError",
    "EnumerationTooLarge",
    "FitRefused",
    "InternalError",
    "InvalidRequest",
    "InvalidResult",
    "LedgerError",
    "LedgerUnavailable",
    "Overdue",
    "PlanTooLarge",
    "ReadTimeout",
    "RenderError",
    "RequestTooLarge",
    "ServeError",
    "ServerBusy",
    "SessionConflict",
    "SessionError",
    "SessionExpired",
    "SessionMoved",
    "SessionUnknown",
    "SolverError",
    "StateError",
    "TimeLimitReached",
    "Unauthorized",
    "UnknownCacheModel",
    "UnknownCacheProvider",
    "UnknownCompilation",
    "UnknownStrategy",
    "VersionConflict",
    "WriteTimeout",
]

# the classes ``import assembler`` hands on by name (the others: from their feature's
# package, or from here)
PUBLIC = (
    "AssemblerError",
    "EnumerationTooLarge",
    "InternalError",
    "InvalidRequest",
    "LedgerError",
    "RenderError",
    "RequestTooLarge",
    "SolverError",
    "UnknownStrategy",
)


class AssemblerError(Exception):
    """Root of every error raised on purpose by the assembler."""


class InvalidRequest(AssemblerError, ValueError):
    """The request does not follow the stated model.

    ``field`` is a JSON path such as ``candidates[3].cost``; ``candidate`` is the
    id of the offending candidate when the problem belongs to one.
    """

    def __init__(self, field: str, message: str, *, candidate: str | None = None) -> None:
        self.field = field
        self.candidate = candidate
        self.reason = message
        where = field if candidate is None else f"{field} (candidate {_short(candidate)})"
        super().__init__(f"{where}: {message}")


def _short(text: str) -> str:
    # an id may be thousands of characters long; the message stays one modest line
    # (repr escapes every unprintable character, so it is one line too)
    return repr(text) if len(text) <= 80 else f"{text[:80]!r}... ({len(text)} characters)"


class RequestTooLarge(InvalidRequest):
    """The request exceeds one of the configured size limits (``assembler.Limits``).

    ``limit`` names the ``Limits`` field (``max_candidates``, ...), ``maximum`` is its
    configured value and ``actual`` what the request has (``None`` when it was refused
    before the exact figure was known).
    """

    def __init__(
        self,
        field: str,
        message: str,
        *,
        limit: str,
        maximum: int,
        actual: int | None = None,
        candidate: str | None = None,
    ) -> None:
        self.limit = limit
        self.maximum = maximum
        self.actual = actual
        flag = "--" + limit.replace("_", "-")
        super().__init__(
            field,
            f"{message}, above the limit of {maximum} ({limit}; raise it with"
            f" Limits({limit}=...) or {flag})",
            candidate=candidate,
        )


class UnknownStrategy(AssemblerError, ValueError):
    """The strategy name is not one of the registered strategies."""

    def __init__(self, name: str, known: tuple[str, ...]) -> None:
        self.name = name
        self.known = known
        super().__init__(f"unknown strategy {name!r}; expected one of {', '.join(known)}")


class EnumerationTooLarge(AssemblerError, ValueError):
    """The brute-force enumerator was asked to search more combinations than it allows."""

    def __init__(self, combinations: int, limit: int) -> None:
        self.combinations = combinations
        self.limit = limit
        super().__init__(
            f"enumerate would search {combinations} combinations, above its limit of {limit};"
            " use the exact strategy for requests this size"
        )


class SolverError(AssemblerError):
    """The exact backend answered something the assembler cannot interpret."""


class RenderError(AssemblerError, ValueError):
    """A rendering cannot be prepared; nothing is returned, not even a partial manifest.

    ``code`` is one of ``RENDER_MISSING_CONTENT`` (a selected form has no content),
    ``RENDER_NOT_A_BUNDLE`` (only a bundle renders), ``RENDER_RESULT_MISMATCH`` (the
    result was not assembled from this request), ``RENDER_PROVIDER_RULE`` (the provider
    would reject the body: ``rule`` names the rule) and ``RENDER_ENVELOPE_OVER_BUDGET``
    (the task's instruction and query alone exceed the budget); ``items`` names the
    forms concerned, sorted.
    """

    def __init__(
        self, code: str, message: str, *, items: tuple[str, ...] = (), rule: str | None = None
    ) -> None:
        self.code = code
        self.items = tuple(sorted(items))
        self.rule = rule
        self.reason = message
        where = code if rule is None else f"{code} ({rule})"
        named = f" [{', '.join(self.items)}]" if self.items else ""
        super().__init__(f"{where}: {message}{named}")


class UnknownCacheProvider(AssemblerError, ValueError):
    """A provider the cache rules do not know; ``provider`` names it, ``known`` the others."""

    def __init__(self, provider: str, known: tuple[str, ...] = ()) -> None:
        self.provider = provider
        self.known = known
        super().__init__(f"unknown cache provider {provider!r} (known: {', '.join(known)})")


class UnknownCacheModel(AssemblerError, ValueError):
    """A model (or a lifetime of it) the cache rules do not know for its provider;
    ``known`` lists the model names they do know."""

    def __init__(
        self, provider: str, model: str, message: str | None = None, known: tuple[str, ...] = ()
    ) -> None:
        self.provider = provider
        self.model = model
        self.known = known
        super().__init__(
            message
            or f"unknown {provider} model {model!r} for prompt caching (known:"
            f" {', '.join(known)}); pass the cache figures yourself for another model"
        )


class InternalError(AssemblerError):
    """A bug: an unexpected exception escaped from inside the assembler.

    Not a ``ValueError``: the request was not found wrong, the assembler failed on it.
    ``cause`` is the original exception (also ``__cause__``, with its traceback) and
    ``stage`` the public entry point it escaped from (``assemble``, ``parse_request``).
    """

    def __init__(self, cause: BaseException, *, stage: str) -> None:
        self.cause = cause
        self.stage = stage
        detail = " ".join(str(cause).split())[:200]
        described = f"{type(cause).__name__}: {detail}" if detail else type(cause).__name__
        super().__init__(
            f"internal error in {stage} (a bug in the assembler, not a problem with the"
            f" request): {described}"
        )


# -- the ledger's ---------------------------------------------------------------------


class LedgerError(AssemblerError):
    """The ledger at ``path`` cannot do what was asked; ``reason`` says why (a missing
    or foreign file, a newer schema, a read-only or full disk, a damaged database)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ledger {path}: {reason}")


class LedgerUnavailable(LedgerError):
    """The ledger's store did not answer in time (its database down or unreachable, no
    connection of its pool free, another writer holding its lock): nothing was done,
    and the same call may succeed later."""


class UnknownCompilation(LedgerError, ValueError):
    """The ledger holds no compilation with this id (the caller's input)."""

    def __init__(self, path: str, compilation: str, reason: str) -> None:
        self.compilation = compilation
        super().__init__(path, reason)


class SessionMoved(LedgerError):
    """The session is not at the version a commit was made from: another replica moved
    it on, opened it again or closed it. ``found`` is where it is (a
    ``ledger.sessions.SessionEntry``; None: closed, or never opened), ``commit`` the
    ``SessionCommit`` refused. The message never names the key."""

    def __init__(self, path: str, found: Any, commit: Any) -> None:
        self.found = found
        where = (
            "the session is closed"
            if found is None
            else f"the session is at version {found.version} of its opening by compilation"
            f" {found.opened}"
        )
        super().__init__(
            path,
            f"{where}, not at version {commit.base} of its opening by compilation"
            f" {commit.opened}: another call moved it on",
        )


# -- sessions, caches, results read back ----------------------------------------------


class SessionConflict(AssemblerError):
    """A proposal was committed to a session that had changed since it was made."""


class SessionError(AssemblerError, ValueError):
    """A call a cache's rules cannot take (the simulator's): ``call`` is its index,
    ``field`` what is wrong."""

    def __init__(self, call: int, field: str, message: str) -> None:
        self.call = call
        self.field = field
        super().__init__(f"calls[{call}].{field}: {message}")


class InvalidResult(AssemblerError, ValueError):
    """The result is not a result, or not a result of this request.

    ``field`` is the JSON path of the offending value (``decisions``, ``budget``...).
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.reason = message
        super().__init__(f"result {field}: {message}")


class FitRefused(AssemblerError):
    """The required material (system prompt, tools, the first and last user turns,
    the newest turn) does not fit the budget, or the search found nothing in time.
    ``result`` is the assembler's answer (a ``Result``), with its refusal."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


# -- the commands' -------------------------------------------------------------------


class CorpusError(AssemblerError, ValueError):
    """A corpus directory or case file does not follow the corpus format."""


class StateError(AssemblerError, ValueError):
    """A hunt's state directory that cannot be read or continued."""


class EngineError(AssemblerError):
    """The engine that runs batches failed: an unreachable scheduler, a batch failed
    after its retries (exit ``EXIT_ENGINE``)."""


class PlanTooLarge(AssemblerError):
    """A cache session has too many plans for the exact program (``assembler cache
    plan --exact``)."""


# -- the server's ---------------------------------------------------------------------


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
