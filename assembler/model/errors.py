"""The exception hierarchy.

Input: nothing. Output: the exception types every stage raises.

Every exception the package raises on purpose derives from ``AssemblerError``.
Errors caused by the caller's input also derive from ``ValueError`` so that code
written against the standard library's conventions catches them too. A bug (any
other exception escaping from inside) reaches the caller as ``InternalError``, which
is deliberately not a ``ValueError``, so that no caller mistakes it for bad input.
Each exception carries its facts as attributes, not only in its message, and its
message is one line.
"""

from __future__ import annotations

__all__ = [
    "AssemblerError",
    "EnumerationTooLarge",
    "InternalError",
    "InvalidRequest",
    "RenderError",
    "RequestTooLarge",
    "SolverError",
    "UnknownStrategy",
]


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
