"""The ledger's errors, as the ledger's modules and users import them.

Input: nothing. Output: ``LedgerError`` (the ledger cannot be opened, read or written:
a missing or foreign file, a newer schema, a read-only or full disk, a damaged
database), ``LedgerUnavailable`` (a ``LedgerError`` that may pass: the store did not
answer in time) and ``UnknownCompilation`` (an id the ledger does not hold; also a
``ValueError``, since it is the caller's input), each defined once in
``assembler/errors.py`` and handed on here.
"""

from __future__ import annotations

from ..errors import LedgerError, LedgerUnavailable, UnknownCompilation

__all__ = ["LedgerError", "LedgerUnavailable", "UnknownCompilation"]
