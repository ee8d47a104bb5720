"""The exception hierarchy.

Input: nothing. Output: the exception types every stage raises.

Every exception the package raises on purpose derives from ``AssemblerError``.
Errors caused by the caller's input also derive from ``ValueError`` so that code
written against the standard library's conventions catches them too. Each
exception carries its facts as attributes, not only in its message.
"""

from __future__ import annotations

__all__ = [
    "AssemblerError",
    "EnumerationTooLarge",
    "InvalidRequest",
    "RenderError",
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
        where = field if candidate is None else f"{field} (candidate {candidate!r})"
        super().__init__(f"{where}: {message}")


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
            " use the cpsat strategy for requests this size"
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
