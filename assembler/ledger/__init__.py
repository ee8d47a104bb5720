"""The ledger: a durable, replayable record of every compilation.

``Ledger(path)`` is an SQLite file (WAL mode) of hash-chained events and
content-addressed artifacts, ``Ledger.open("postgresql://...")`` the same in a
PostgreSQL database; hand it to ``assemble(..., ledger=...)`` to record a
compilation, or read it back with ``summaries()`` and ``compilation(n)``; the modules
``verify``, ``replay``, ``diff``, ``export`` and ``copy`` work on an open ledger.
Modules: ``events`` (kinds and the chain), ``schema`` (tables and migrations),
``store`` (the narrow store interface, its SQLite backend, an address's store),
``artifacts`` (the stored form both stores share), ``postgres`` and ``pgschema``
(the PostgreSQL backend), ``sessions`` (server sessions by key), ``documents`` (what
is stored, and back), ``ledger`` (recording and reading), ``verify``, ``replay``,
``diff``, ``export``, ``copy``. The format is documented in ``models/ledger.md``.
sqlite3 is imported when a ledger is opened, psycopg when a PostgreSQL one is.
"""

from __future__ import annotations

from .errors import LedgerError, LedgerUnavailable, UnknownCompilation
from .events import CompilationOutcome, Event, EventKind
from .ledger import Compilation, Ledger, RecordedRendering, Summary

__all__ = [
    "Compilation",
    "CompilationOutcome",
    "Event",
    "EventKind",
    "Ledger",
    "LedgerError",
    "LedgerUnavailable",
    "RecordedRendering",
    "Summary",
    "UnknownCompilation",
]
