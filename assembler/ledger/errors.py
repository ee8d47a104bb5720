"""The ledger's errors, rooted in ``AssemblerError``.

Input: nothing. Output: ``LedgerError`` (the ledger cannot be opened, read or written:
a missing or foreign file, a newer schema, a read-only or full disk, a damaged
database), ``LedgerUnavailable`` (a ``LedgerError`` that may pass: the store did not
answer in time) and ``UnknownCompilation`` (an id the ledger does not hold; also a
``ValueError``, since it is the caller's input).

Each carries its facts as attributes: ``path`` and ``reason`` for every ledger error,
``compilation`` for an unknown id.
"""

from __future__ import annotations

from ..model.errors import AssemblerError

__all__ = ["LedgerError", "LedgerUnavailable", "UnknownCompilation"]


class LedgerError(AssemblerError):
    """The ledger at ``path`` cannot do what was asked; ``reason`` says why."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ledger {path}: {reason}")


class LedgerUnavailable(LedgerError):
    """The ledger's store did not answer in time (its database down or unreachable, no
    connection of its pool free, another writer holding its lock): nothing was done,
    and the same call may succeed later."""


class UnknownCompilation(LedgerError, ValueError):
    """The ledger holds no compilation with this id."""

    def __init__(self, path: str, compilation: str, reason: str) -> None:
        self.compilation = compilation
        super().__init__(path, reason)
