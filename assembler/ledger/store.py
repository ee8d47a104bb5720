"""Where events and artifacts live: the narrow ``Store`` interface and its SQLite backend.

Input: a path (and whether to open it read-only). Output: a ``Store``: ``append``
(one event and the artifacts it references, in one transaction), reads of events and
artifacts by key, and the checks ``verify`` needs. Errors are ``LedgerError`` with a
one-line reason.

The ledger above knows only ``Store``; ``postgres.PostgresStore`` is the other one, and
``open_store`` picks one by the ledger's address.
A ledger holds every request's content: a new one is created readable by its owner
only (0600, whatever the umask), and SQLite gives its ``-wal`` and ``-shm`` files the
database file's mode.
``SqliteStore`` uses the standard library's sqlite3 in WAL mode (imported when a
ledger is opened, not when ``assembler`` is imported). ``append`` takes SQLite's write
lock first (``BEGIN IMMEDIATE``), then reads the chain's head, so that the sequence
number and the previous hash are assigned atomically across threads and processes.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from . import artifacts
from .artifacts import BUSY_TIMEOUT_SECONDS
from .errors import LedgerError, LedgerUnavailable
from .events import GENESIS, Entry, Event, chain_hash
from .schema import FORMAT, MIGRATIONS, READABLE_FROM, SCHEMA_VERSION
from .sessions import SessionEntry, check_commit

if TYPE_CHECKING:
    import sqlite3

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "PRIVATE_FILE_MODE",
    "SqliteStore",
    "Store",
    "create_private",
    "open_store",
]

_COLUMNS = artifacts.COLUMNS

# the mode of every file holding recorded content: ledgers, exports, inspector pages
PRIVATE_FILE_MODE = 0o600


class Store(Protocol):
    path: str

    def append(self, entry: Entry) -> Event: ...

    def restore(self, batch: Sequence[tuple[Event, Mapping[str, bytes]]]) -> None: ...

    def events(self, after: int = 0) -> Iterator[Event]: ...

    def compilation_events(self, compilation: int) -> list[Event]: ...

    def requested_seqs(self) -> list[int]: ...

    def blob(self, sha256: str) -> bytes | None: ...

    def blobs(self, keys: Sequence[str]) -> dict[str, bytes]: ...

    def session_entry(self, key: str) -> SessionEntry | None: ...

    def close_session(self, key: str) -> bool: ...

    def blob_index(self) -> Iterator[tuple[str, int]]: ...

    def structure_problems(self) -> list[str]: ...

    def close(self) -> None: ...


def open_store(
    address: str | os.PathLike[str], *, readonly: bool = False, wait: float | None = None
) -> Store:
    """The store at ``address``: a ``postgresql://`` (or ``postgres://``) URL, an
    ``sqlite:///PATH`` URL (``sqlite:////abs/path`` for an absolute path), or a path.
    ``wait``: the longest wait for the store (a pool's connection, another writer's
    lock) before a ``LedgerUnavailable`` (None: ``BUSY_TIMEOUT_SECONDS``)."""
    text = os.fspath(address)
    wait = BUSY_TIMEOUT_SECONDS if wait is None else wait
    scheme, sep, rest = text.partition("://")
    if sep and scheme.lower() in ("postgresql", "postgres"):
        from .postgres import PostgresStore

        return PostgresStore(text, readonly=readonly, wait=wait)
    if sep and scheme.lower() == "sqlite":
        if not rest.startswith("/") or rest == "/":
            raise LedgerError(text, "an SQLite address is sqlite:///PATH (three slashes)")
        return SqliteStore(rest[1:], readonly=readonly, wait=wait)
    return SqliteStore(text, readonly=readonly, wait=wait)


def _write_ahead(conn: sqlite3.Connection) -> None:
    """``PRAGMA journal_mode=WAL``. Two connections switching a fresh file's journal at
    once get SQLITE_BUSY at once, without SQLite's busy handler: retried here until
    the busy timeout, as any other lock is waited for."""
    import sqlite3

    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def create_private(path: str) -> None:
    """Create ``path`` empty and readable by its owner only, unless it exists (an
    existing file keeps the mode its owner gave it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


class SqliteStore(artifacts.SharedReads):
    """A ledger in one SQLite file (WAL mode)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        readonly: bool = False,
        wait: float = BUSY_TIMEOUT_SECONDS,
    ) -> None:
        self.path = os.fspath(path)
        self.readonly = readonly
        # the longest wait for another writer's lock
        self.wait = wait
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        # artifacts this object knows are committed: appends skip them (never deleted)
        self._known: set[str] = set()
        self._connection()

    # -- connection -------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        # a connection must not cross fork(): a child opens its own
        if self._conn is None or self._pid != os.getpid():
            self._conn = self._open()
            self._pid = os.getpid()
            self._known = set()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        import sqlite3

        if Path(self.path).is_dir():
            raise LedgerError(self.path, "is a directory, not a ledger file")
        if self.readonly and not Path(self.path).is_file():
            raise LedgerError(self.path, "no such ledger file")
        if not self.readonly:
            # a file that cannot be created here fails in SQLite too, with its reason
            with contextlib.suppress(OSError):
                create_private(self.path)
        try:
            conn, version = self._connect_reader() if self.readonly else self._connect("rwc")
        except sqlite3.Error as exc:
            if not (self.readonly and self._wal_is_empty()):
                raise self._error(exc, "cannot open") from None
            # A reader of a WAL database needs its shared-memory file, which a full or
            # read-only disk cannot hold; with no WAL content left, the main file is
            # the whole ledger and can be read as immutable
            try:
                conn, version = self._connect("ro", immutable=True)
            except sqlite3.Error:
                raise self._error(exc, "cannot open") from None
        try:
            if not self.readonly:
                _write_ahead(conn)
                # WAL with synchronous=NORMAL survives a killed process; models/ledger.md
                # says what a power cut can cost
                conn.execute("PRAGMA synchronous=NORMAL")
                if version != SCHEMA_VERSION:
                    self._migrate(conn)
            self._check_format(conn)
        except LedgerError:
            conn.close()
            raise
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc, "cannot open") from None
        return conn

    def _connect(self, mode: str, *, immutable: bool = False) -> tuple[sqlite3.Connection, int]:
        """A connection and the schema version it reads (SQLite opens the file lazily,
        so reading something is what shows whether it can be opened)."""
        import sqlite3

        uri = f"file:{quote(os.path.abspath(self.path))}?mode={mode}"
        if immutable:
            uri += "&immutable=1"
        conn = sqlite3.connect(
            uri,
            uri=True,
            timeout=self.wait,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            return conn, int(conn.execute("PRAGMA user_version").fetchone()[0])
        except BaseException:
            conn.close()
            raise

    def _connect_reader(self) -> tuple[sqlite3.Connection, int]:
        """A reader's connection. Only a writable connection removes the ``-wal`` and
        ``-shm`` files as the last one closes, so a reader opens the file writable
        where it may and forbids itself every write (``query_only``): reading leaves
        no file behind. Where the file cannot be written, it opens read-only."""
        import sqlite3

        try:
            conn, version = self._connect("rw")
            conn.execute("PRAGMA query_only = 1")
        except sqlite3.Error:
            return self._connect("ro")
        return conn, version

    def _wal_is_empty(self) -> bool:
        try:
            return os.path.getsize(self.path + "-wal") == 0
        except OSError:
            return not os.path.exists(self.path + "-wal")

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # read again under the write lock: another process may have migrated
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise LedgerError(self.path, "is an SQLite database but not a ledger")
            if version > SCHEMA_VERSION:
                raise self._newer(version)
            for step in MIGRATIONS[version:]:
                for statement in step:
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _check_format(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise self._newer(version)
        if version < SCHEMA_VERSION and not (self.readonly and version >= READABLE_FROM):
            if version == 0:
                raise LedgerError(self.path, "is not a ledger (empty, or another kind of file)")
            raise LedgerError(
                self.path,
                f"has schema version {version}; open it for writing once to migrate it"
                f" to {SCHEMA_VERSION}",
            )
        row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if row is None or row[0] != FORMAT:
            raise LedgerError(self.path, "is an SQLite database but not a ledger")

    def _newer(self, version: int) -> LedgerError:
        return LedgerError(
            self.path,
            f"was written with schema version {version}; this assembler reads up to"
            f" {SCHEMA_VERSION}: upgrade assembler to read it",
        )

    def _error(self, exc: Exception, doing: str) -> LedgerError:
        name = str(getattr(exc, "sqlite_errorname", ""))
        if self._statvfs_flag(os.ST_RDONLY):
            reason = "its file system is mounted read-only"
        elif name.startswith("SQLITE_READONLY"):
            reason = "the file or its file system is read-only"
        elif name == "SQLITE_FULL" or (name.startswith("SQLITE_IOERR") and self._disk_is_full()):
            full = self._disk_is_full()
            reason = "the disk is full" if full else "the database reached its size limit"
        elif name.startswith("SQLITE_BUSY") or name.startswith("SQLITE_LOCKED"):
            return LedgerUnavailable(
                self.path, f"{doing}: another process held the ledger for more than"
                f" {self.wait:g} s"
            )  # fmt: skip
        elif name == "SQLITE_NOTADB":
            reason = "is not a ledger (not an SQLite database)"
            return LedgerError(self.path, reason)
        elif name.startswith("SQLITE_CORRUPT"):
            reason = f"the database file is damaged ({exc}); run 'assembler ledger PATH verify'"
        elif name.startswith("SQLITE_CANTOPEN"):
            reason = "the file cannot be opened (missing folder, no permission or read-only)"
        else:
            reason = str(exc) or type(exc).__name__
        return LedgerError(self.path, f"{doing}: {reason}")

    def _disk_is_full(self) -> bool:
        try:
            return os.statvfs(os.path.dirname(os.path.abspath(self.path))).f_bavail == 0
        except OSError:
            return False

    def _statvfs_flag(self, flag: int) -> bool:
        try:
            return bool(os.statvfs(os.path.dirname(os.path.abspath(self.path))).f_flag & flag)
        except OSError:
            return False

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # -- writing ----------------------------------------------------------------

    def append(self, entry: Entry) -> Event:
        """Append one event and the artifacts it references, atomically (``Entry``);
        artifacts this store already holds are skipped without being encoded, and a
        session commit that finds the session moved raises ``SessionMoved``."""
        import sqlite3

        blobs, commit, compilation = entry.blobs, entry.commit, entry.compilation
        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        with self._lock:
            conn = self._connection()
            fresh = [sha for sha in blobs if sha not in self._known]
            # compressed before taking the lock, so the critical section stays short
            rows = [artifacts.blob_row(sha, blobs[sha]) for sha in fresh]
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if commit is not None:
                        check_commit(self.path, self._entry(conn, commit.key), commit)
                    event = self._append_locked(
                        conn, entry.kind, compilation, entry.session, entry.payload, rows
                    )
                    if commit is not None and compilation is not None:
                        opened = compilation if commit.opened is None else commit.opened
                        version = 0 if commit.base is None else commit.base + 1
                        conn.execute(
                            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?)",
                            (commit.key, opened, version, compilation, commit.delta),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.IntegrityError:
                raise LedgerError(
                    self.path, f"compilation {compilation} already has an outcome"
                ) from None
            except sqlite3.Error as exc:
                raise self._error(exc, "nothing was recorded") from None
            if len(self._known) + len(fresh) > artifacts.KNOWN_ARTIFACTS:
                self._known.clear()  # a cache only (blobs are inserted OR IGNORE): bounded
            self._known.update(fresh)
            return event

    def _append_locked(
        self,
        conn: sqlite3.Connection,
        kind: str,
        compilation: int | None,
        session: str | None,
        payload: str,
        rows: list[tuple[str, int, str, bytes]],
    ) -> Event:
        head = conn.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
        number = seq if compilation is None else compilation
        at = artifacts.now()
        if rows:
            conn.executemany(
                "INSERT OR IGNORE INTO blobs (sha256, size, codec, data) VALUES (?, ?, ?, ?)",
                rows,
            )
        digest = chain_hash(seq, prev, kind, number, session, at, payload)
        event = Event(seq, kind, number, session, at, payload, prev, digest)
        conn.execute(
            f"INSERT INTO events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, kind, number, session, at, payload, prev, digest),
        )
        return event

    def restore(self, batch: Sequence[tuple[Event, Mapping[str, bytes]]]) -> None:
        """Write events exactly as they are (``ledger copy``), each with the artifacts
        it references, in one transaction; the first must follow this ledger's head."""
        import sqlite3

        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        if not batch:
            return
        rows = [artifacts.blob_row(sha, data) for _, blobs in batch for sha, data in blobs.items()]
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    head = conn.execute(
                        "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
                    ).fetchone()
                    at_seq, at_hash = (head[0], head[1]) if head else (0, GENESIS)
                    first = batch[0][0]
                    if first.seq != at_seq + 1 or first.prev_hash != at_hash:
                        raise LedgerError(
                            self.path,
                            f"event {first.seq} does not follow this ledger's head"
                            f" (event {at_seq})",
                        )
                    conn.executemany(
                        "INSERT OR IGNORE INTO blobs (sha256, size, codec, data)"
                        " VALUES (?, ?, ?, ?)",
                        rows,
                    )
                    conn.executemany(
                        f"INSERT INTO events ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [(e.seq, e.kind, e.compilation, e.session, e.recorded_at, e.payload,
                          e.prev_hash, e.hash) for e, _ in batch],
                    )  # fmt: skip
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise self._error(exc, "nothing was copied") from None

    # -- reading ----------------------------------------------------------------

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        # sqlite3 rows are untyped: each reader knows its columns' types
        import sqlite3

        with self._lock:
            try:
                return list(self._connection().execute(sql, args))
            except sqlite3.Error as exc:
                raise self._error(exc, "cannot read") from None

    def blob(self, sha256: str) -> bytes | None:
        rows = self._read("SELECT codec, data FROM blobs WHERE sha256 = ?", (sha256,))
        if not rows:
            return None
        codec, data = rows[0]
        assert isinstance(data, bytes)
        try:
            return artifacts.decode(codec, data)
        except ValueError as exc:
            raise LedgerError(self.path, f"artifact {sha256} cannot be decoded: {exc}") from None

    def blobs(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The artifacts of ``keys`` that are stored, decoded."""
        found = {}
        for key in keys:
            data = self.blob(key)
            if data is not None:
                found[key] = data
        return found

    def _entry(self, conn: sqlite3.Connection, key: str) -> SessionEntry | None:
        row = conn.execute(
            "SELECT opened, version, compilation, delta FROM sessions WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else SessionEntry(key, *row)

    def session_entry(self, key: str) -> SessionEntry | None:
        import sqlite3

        with self._lock:
            try:
                return self._entry(self._connection(), key)
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    return None  # a ledger of schema version 2 or older, read as it is
                raise self._error(exc, "cannot read") from None

    def close_session(self, key: str) -> bool:
        """Remove session ``key``'s entry; whether there was one."""
        import sqlite3

        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        with self._lock:
            try:
                done = self._connection().execute("DELETE FROM sessions WHERE key = ?", (key,))
            except sqlite3.Error as exc:
                raise self._error(exc, "cannot write") from None
            return done.rowcount > 0

    def structure_problems(self) -> list[str]:
        """SQLite's own check of the file's pages and indexes ([] when sound)."""
        rows = self._read("PRAGMA quick_check")
        found = [str(row[0]) for row in rows]
        return [] if found == ["ok"] else found
