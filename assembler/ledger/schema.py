"""The ledger's SQLite schema and its forward migrations.

Input: nothing. Output: ``MIGRATIONS`` (step ``i`` takes a database from schema
version ``i`` to ``i + 1``), ``SCHEMA_VERSION``, ``READABLE_FROM`` (the oldest version
read without migrating) and ``FORMAT`` (the ``meta`` entry that tells a ledger from
any other SQLite file).

The version lives in SQLite's ``user_version``; ``models/ledger.md`` documents every
table. A step is only ever appended: a ledger written by an older version is brought
forward in one transaction when it is opened for writing, and a ledger from a newer
version is refused rather than guessed at.
"""

from __future__ import annotations

__all__ = ["FORMAT", "MIGRATIONS", "READABLE_FROM", "SCHEMA_VERSION"]

FORMAT = "assembler-ledger"

_V1 = (
    """CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID""",
    f"INSERT INTO meta (key, value) VALUES ('format', '{FORMAT}')",
    # content-addressed artifacts: the request document, each candidate's content,
    # the result document, the rendered bytes; sha256 is over the decoded bytes. A rowid
    # table: rows of kilobytes waste a quarter of a WITHOUT ROWID table's pages
    """CREATE TABLE blobs (
        sha256 TEXT NOT NULL UNIQUE,
        size   INTEGER NOT NULL,
        codec  TEXT NOT NULL CHECK (codec IN ('raw', 'zlib')),
        data   BLOB NOT NULL
    )""",
    """CREATE TABLE events (
        seq         INTEGER PRIMARY KEY,
        kind        TEXT NOT NULL,
        compilation INTEGER NOT NULL,
        session     TEXT,
        recorded_at TEXT NOT NULL,
        payload     TEXT NOT NULL,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL
    )""",
    "CREATE INDEX events_by_compilation ON events (compilation, seq)",
    # at most one outcome per compilation, whatever the writers do
    """CREATE UNIQUE INDEX one_outcome ON events (compilation)
        WHERE kind != 'compilation_requested'""",
)

# version 2: artifacts may also be LZ4 frames (zlib was a tenth of recording's time;
# LZ4 a third of zlib's). SQLite cannot change a CHECK constraint in place, so the
# table is rebuilt with the same rows and rowids; zlib artifacts stay as they are.
_V2 = (
    """CREATE TABLE blobs_v2 (
        sha256 TEXT NOT NULL UNIQUE,
        size   INTEGER NOT NULL,
        codec  TEXT NOT NULL CHECK (codec IN ('raw', 'zlib', 'lz4')),
        data   BLOB NOT NULL
    )""",
    """INSERT INTO blobs_v2 (rowid, sha256, size, codec, data)
        SELECT rowid, sha256, size, codec, data FROM blobs ORDER BY rowid""",
    "DROP TABLE blobs",
    "ALTER TABLE blobs_v2 RENAME TO blobs",
)

# version 3: the server's sessions, by key: which compilation each one's state is
# (ledger/sessions.py); live state beside the chain, written with an answer's outcome
_V3 = (
    """CREATE TABLE sessions (
        key         TEXT PRIMARY KEY,
        opened      INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        compilation INTEGER NOT NULL,
        delta       TEXT
    ) WITHOUT ROWID""",
)

MIGRATIONS: tuple[tuple[str, ...], ...] = (_V1, _V2, _V3)
SCHEMA_VERSION = len(MIGRATIONS)
# The oldest version this code reads as it is, without migrating: a reader cannot
# migrate, and versions 2 and 3 only widened what may be written (version 1's zlib
# artifacts are still read; a ledger without the sessions table holds no session), so
# a ledger written before the upgrade stays readable.
READABLE_FROM = 1
