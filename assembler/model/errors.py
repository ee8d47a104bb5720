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
