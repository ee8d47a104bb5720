"""A ledger in a PostgreSQL database: the ``Store`` interface over psycopg 3 and a pool.

Input: a ``postgresql://`` (or ``postgres://``) URL, whether to open it read-only, and
how appends take the chain's head (``LOCK_MODES``). Output: a ``PostgresStore``, the
same ``Store`` as ``store.SqliteStore``: the same events, hashes and artifacts (the
shared encoders of ``artifacts``), so that replay, diff, verify and export read either
store the same, byte for byte. Errors are ``LedgerError`` with a one-line reason; the
password never appears in one (``path`` is the URL without it).

The tables are ``meta``, ``blobs``, ``events`` and ``sessions`` of ``models/ledger.md``
(``pgschema``) in the connection's current schema (the URL may choose one:
``options=-csearch_path%3DNAME``), created on the first writable open. psycopg is
imported when a PostgreSQL ledger is opened (the ``postgres`` extra), never by
``import assembler``.

``append`` holds a transaction-scoped advisory lock while it reads the head and writes
the event (``advisory``, the default), or runs a serialisable transaction retried on a
conflict (``serializable``); benchmarks/results/LEDGER.md measures both. Either way the
sequence number and the previous hash are assigned atomically across every process and
host writing to the database, and a writer killed mid-transaction leaves nothing: the
server rolls back a transaction whose connection is gone. An append is one call of the
server-side function ``assembler_append`` (the lock, the head, the hash, the event, a
session's entry), after the new artifacts in the same pipeline: one round trip per
event, and a single statement in autocommit when there is no new artifact.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring as _string  # a str as canonical JSON writes it
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from . import artifacts
from .artifacts import BUSY_TIMEOUT_SECONDS
from .errors import LedgerError, LedgerUnavailable
from .events import GENESIS, Entry, Event, sha256_hex
from .pgschema import DDL, INDEXES, SCHEMA_VERSION
from .schema import FORMAT
from .sessions import SessionCommit, SessionEntry, SessionMoved

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

__all__ = ["LOCK_MODES", "SCHEMES", "PostgresStore", "redacted"]

_COLUMNS = artifacts.COLUMNS

SCHEMES = ("postgresql", "postgres")
LOCK_MODES = ("advisory", "serializable")
# connections per store: a server's solver threads, and a reader beside them
POOL_SIZE = 4
# a serialisable append retried at most this often before it reports the ledger busy
_RETRIES = 200
# a pool that found no connection within the wait is replaced at most this often
_RENEW_SECONDS = 2.0

T = TypeVar("T")

_HEAD = "SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1"
_INSERT_BLOB = (
    "INSERT INTO blobs (sha256, size, codec, data) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (sha256) DO NOTHING"
)
_CALL_APPEND = "SELECT * FROM assembler_append(" + ", ".join(["%s"] * 14) + ")"
_INSERT_EVENT = f"INSERT INTO events ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"


def redacted(url: str) -> str:
    """``url`` without its password (in the address or as a ``password`` parameter)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _lock_key(schema: str) -> int:
    """The advisory lock of one ledger: its database (advisory locks are per database)
    and its schema, as a signed 64-bit integer."""
    digest = hashlib.sha256(f"{FORMAT}:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresStore(artifacts.SharedReads):
    """A ledger in a PostgreSQL database (the ``meta``, ``blobs``, ``events`` and
    ``sessions`` tables)."""

    MARK = "%s"

    def __init__(
        self,
        url: str,
        *,
        readonly: bool = False,
        lock: str = "advisory",
        pool_size: int = POOL_SIZE,
        wait: float = BUSY_TIMEOUT_SECONDS,
    ) -> None:
        if lock not in LOCK_MODES:
            raise ValueError(f"lock must be one of {', '.join(LOCK_MODES)}, not {lock!r}")
        self.url = url
        self.path = redacted(url)
        self.readonly = readonly
        self.lock = lock
        self.pool_size = pool_size
        # the longest wait for a connection of the pool (the database down: a new one)
        self.wait = wait
        # serialisable appends that had to start again (the benchmark reads it)
        self.retries = 0
        self._guard = threading.Lock()
        # when the pool was last replaced for want of a connection (time.monotonic())
        self._renewed = -math.inf
        self._pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] | None = None
        self._pid = -1
        self._key = 0
        # artifacts this object knows are committed: appends skip them (never deleted)
        self._known: set[str] = set()
        self._connection_pool()

    # -- connections ------------------------------------------------------------

    def _connection_pool(self) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
        # a connection must not cross fork(): a child opens its own
        with self._guard:
            if self._pool is None or self._pid != os.getpid():
                self._pool = self._open()
                self._pid = os.getpid()
                self._known = set()
            return self._pool

    def _open(self) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
        try:
            import psycopg
            import psycopg_pool  # noqa: F401  (the pool is made by _new_pool)
        except ImportError:
            raise LedgerError(
                self.path,
                "a PostgreSQL ledger needs psycopg 3 and its pool: pip install"
                " 'assembler[postgres]'",
            ) from None
        # one connection first, for a clear error and the schema, before the pool
        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
                self._configure(conn)
                schema = conn.execute("SELECT current_schema()").fetchone()
                if schema is None or schema[0] is None:
                    raise LedgerError(self.path, "cannot open: the connection has no schema"
                                      " to keep the ledger's tables in (search_path)")  # fmt: skip
                self._key = _lock_key(str(schema[0]))
                if not self.readonly:
                    self._migrate(conn)
                self._check_format(conn)
        except psycopg.Error as exc:
            raise self._error(exc, "cannot open") from None
        return self._new_pool()

    def _new_pool(self) -> ConnectionPool[psycopg.Connection[tuple[Any, ...]]]:
        from psycopg_pool import ConnectionPool

        pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
            self.url,
            min_size=1,
            max_size=self.pool_size,
            kwargs={"autocommit": True, "connect_timeout": 10},
            configure=self._configure,
            timeout=self.wait,
            open=False,
            name="assembler-ledger",
        )
        pool.open(wait=False)
        return pool

    def _renew(self) -> None:
        """No connection came within the wait (the database down): a new pool, whose
        first connection is tried at once, takes the place of this one, whose retries
        back off (1, 2, 4, ... s) and would keep a database that is back unused for as
        long; at most one every ``_RENEW_SECONDS``."""
        with self._guard:
            now = time.monotonic()
            fresh = now - self._renewed < _RENEW_SECONDS
            if self._pool is None or self._pid != os.getpid() or fresh:
                return
            self._renewed = now
            old, self._pool = self._pool, self._new_pool()
        old.close(timeout=0)

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        # a writer waits for another's lock as long as SQLite's busy timeout, no longer
        conn.execute(f"SET lock_timeout = '{int(BUSY_TIMEOUT_SECONDS * 1000)}ms'")
        # the SQLite store's durability (a commit survives the writer's death and the
        # server's, a crash of the machine may lose the last ones), unless the database
        # is configured otherwise (postgresql.conf, ALTER DATABASE or ROLE, the URL)
        source = conn.execute(
            "SELECT source FROM pg_settings WHERE name = 'synchronous_commit'"
        ).fetchone()
        if source is not None and source[0] == "default":
            conn.execute("SET synchronous_commit = off")
        if self.readonly:
            conn.execute("SET default_transaction_read_only = on")
        if self.lock == "serializable":
            conn.execute("SET default_transaction_isolation = 'serializable'")

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        with conn.transaction():
            # one process creates the tables; the others wait here and find them made
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._key ^ 1,))
            found = conn.execute("SELECT to_regclass('meta'), to_regclass('events')").fetchone()
            assert found is not None
            if found[0] is None and found[1] is None:
                for statement in DDL:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('format', %s), ('schema', %s)",
                    (FORMAT, str(SCHEMA_VERSION)),
                )

    def _check_format(self, conn: psycopg.Connection[Any]) -> None:
        tables = conn.execute("SELECT to_regclass('meta'), to_regclass('events')").fetchone()
        assert tables is not None
        if tables[0] is None or tables[1] is None:
            what = "holds no ledger" if tables[0] is None and tables[1] is None else (
                "is a PostgreSQL database but not a ledger"
            )  # fmt: skip
            raise LedgerError(self.path, what)
        rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        if rows.get("format") != FORMAT:
            raise LedgerError(self.path, "is a PostgreSQL database but not a ledger")
        version = int(rows.get("schema", "0"))
        if version > SCHEMA_VERSION:
            raise LedgerError(
                self.path,
                f"was written with schema version {version}; this assembler reads up to"
                f" {SCHEMA_VERSION}: upgrade assembler to read it",
            )

    def _error(self, exc: Exception, doing: str) -> LedgerError:
        from psycopg import errors

        if isinstance(exc, errors.ReadOnlySqlTransaction):
            reason = "the database is read-only (a standby, or default_transaction_read_only)"
        elif isinstance(exc, errors.DiskFull):
            reason = "the database server's disk is full"
        elif isinstance(exc, errors.InsufficientPrivilege):
            reason = f"permission denied ({_one_line(exc)})"
        elif isinstance(exc, errors.LockNotAvailable | errors.SerializationFailure):
            reason = f"another process held the ledger for more than {BUSY_TIMEOUT_SECONDS:g} s"
        elif isinstance(exc, errors.UndefinedTable):
            reason = "its tables are gone (dropped while it was open)"
        else:
            reason = _one_line(exc) or type(exc).__name__
        return LedgerError(self.path, f"{doing}: {reason}")

    def close(self) -> None:
        with self._guard:
            if self._pool is not None and self._pid == os.getpid():
                self._pool.close()
            self._pool = None

    # -- writing ----------------------------------------------------------------

    def append(self, entry: Entry) -> Event:
        """Append one event and the artifacts it references, atomically (``Entry``, as
        ``SqliteStore.append``)."""
        kind, compilation, session = entry.kind, entry.compilation, entry.session
        payload, blobs, commit = entry.payload, entry.blobs, entry.commit
        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        pool = self._connection_pool()
        with self._guard:
            fresh = sorted(sha for sha in blobs if sha not in self._known)
        # compressed before the transaction, so that the lock is held briefly; in key
        # order, so that two writers inserting the same artifacts never deadlock
        rows = [artifacts.blob_row(sha, blobs[sha]) for sha in fresh]
        at = artifacts.now()
        arguments = (
            self._key if self.lock == "advisory" else None,
            kind, compilation, session, at, payload,
            _string(kind), "null" if session is None else _string(session), _string(at),
            sha256_hex(payload.encode("utf-8")),
            None if commit is None else commit.key,
            None if commit is None else commit.opened,
            None if commit is None else commit.base,
            None if commit is None else commit.delta,
        )  # fmt: skip

        def write(conn: psycopg.Connection[Any]) -> Event:
            if rows:
                # one round trip: the artifacts, then the event, in one transaction
                with conn.cursor() as cursor:
                    with conn.pipeline(), conn.transaction():
                        cursor.executemany(_INSERT_BLOB, rows)
                        cursor.execute(_CALL_APPEND, arguments)
                    head = cursor.fetchone()
            else:
                # one statement in autocommit: its own transaction
                head = conn.execute(_CALL_APPEND, arguments).fetchone()
            assert head is not None
            seq, prev, digest = int(head[0]), str(head[1]), str(head[2])
            number = seq if compilation is None else compilation
            return Event(seq, kind, number, session, at, payload, prev, digest)

        event = self._transaction(pool, write, compilation, commit)
        with self._guard:
            if len(self._known) + len(fresh) > artifacts.KNOWN_ARTIFACTS:
                self._known.clear()  # a cache only (blobs are inserted ON CONFLICT): bounded
            self._known.update(fresh)
        return event

    def restore(self, batch: Sequence[tuple[Event, Mapping[str, bytes]]]) -> None:
        """Write events exactly as they are (``ledger copy``), each with the artifacts
        it references, in one transaction; the first must follow this ledger's head."""
        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        if not batch:
            return
        pool = self._connection_pool()
        rows = sorted({sha: artifacts.blob_row(sha, data) for _, blobs in batch
                       for sha, data in blobs.items()}.values())  # fmt: skip

        def write(conn: psycopg.Connection[Any]) -> None:
            head = self._head(conn, rows)
            at_seq, at_hash = (int(head[0]), str(head[1])) if head else (0, GENESIS)
            first = batch[0][0]
            if first.seq != at_seq + 1 or first.prev_hash != at_hash:
                raise LedgerError(
                    self.path,
                    f"event {first.seq} does not follow this ledger's head (event {at_seq})",
                )
            with conn.cursor() as cursor:
                cursor.executemany(
                    _INSERT_EVENT,
                    [(e.seq, e.kind, e.compilation, e.session, e.recorded_at, e.payload,
                      e.prev_hash, e.hash) for e, _ in batch],
                )  # fmt: skip

        def transaction(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction():
                write(conn)

        self._transaction(pool, transaction, None, None)

    def _head(self, conn: psycopg.Connection[Any], rows: list[tuple[str, int, str, bytes]]) -> Any:
        """Inside the transaction: the artifacts written and the chain's head taken
        (under the advisory lock, or read by the serialisable transaction); the head
        row, or None for an empty ledger."""
        with conn.cursor() as cursor:
            if rows:
                cursor.executemany(_INSERT_BLOB, rows)
            if self.lock == "advisory":
                # READ COMMITTED: the head is read by a statement that starts once the
                # lock is held, so it sees every event committed before
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", (self._key,))
            cursor.execute(_HEAD)
            return cursor.fetchone()

    def _transaction(
        self,
        pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]],
        write: Callable[[psycopg.Connection[Any]], T],
        compilation: int | None,
        commit: SessionCommit | None,
    ) -> T:
        import psycopg
        from psycopg import errors
        from psycopg_pool import PoolTimeout

        for attempt in range(_RETRIES):
            try:
                with pool.connection() as conn:
                    return write(conn)
            except errors.SerializationFailure:
                if attempt + 1 == _RETRIES:
                    raise LedgerError(
                        self.path,
                        f"nothing was recorded: {_RETRIES} serialisable attempts conflicted",
                    ) from None
                self.retries += 1
                time.sleep(random.uniform(0, 0.0005 * min(attempt + 1, 20)))
            except errors.UniqueViolation as exc:
                if exc.diag.constraint_name == "one_outcome":
                    raise LedgerError(
                        self.path, f"compilation {compilation} already has an outcome"
                    ) from None
                if exc.diag.constraint_name != "events_pkey" or self.lock != "serializable":
                    raise self._error(exc, "nothing was recorded") from None
                self.retries += 1  # another serialisable writer took the same seq
            except PoolTimeout:
                self._renew()
                raise LedgerUnavailable(
                    self.path,
                    f"nothing was recorded: no connection to the database within"
                    f" {self.wait:g} s",
                ) from None
            except psycopg.Error as exc:
                if commit is not None and exc.sqlstate == "AS001":
                    raise SessionMoved(self.path, _found(commit.key, exc), commit) from None
                if isinstance(exc, psycopg.OperationalError):
                    # the connection broke: the commit may or may not have reached it
                    raise LedgerUnavailable(
                        self.path, self._error(exc, "the event may not have been recorded").reason
                    ) from None
                raise self._error(exc, "nothing was recorded") from None
        raise AssertionError("unreachable")

    # -- reading ----------------------------------------------------------------

    def _read(
        self, sql: str, args: tuple[object, ...] = (), *, binary: bool = False
    ) -> list[tuple[Any, ...]]:
        """Rows of ``sql``; ``binary``: in PostgreSQL's binary format (artifacts' bytes
        as they are, not as hex text to decode)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        pool = self._connection_pool()
        for attempt in (1, 2):
            try:
                with pool.connection() as conn, conn.cursor(binary=binary) as cursor:
                    return cursor.execute(sql, args).fetchall()
            except PoolTimeout:
                self._renew()
                raise LedgerUnavailable(
                    self.path, f"cannot read: no connection to the database within {self.wait:g} s"
                ) from None
            except psycopg.OperationalError as exc:
                # a connection the server closed (a restart) is replaced, once
                if attempt == 2:
                    reason = self._error(exc, "cannot read").reason
                    raise LedgerUnavailable(self.path, reason) from None
            except psycopg.Error as exc:
                raise self._error(exc, "cannot read") from None
        raise AssertionError("unreachable")

    def blob(self, sha256: str) -> bytes | None:
        rows = self._read("SELECT codec, data FROM blobs WHERE sha256 = %s", (sha256,), binary=True)
        if not rows:
            return None
        codec, data = rows[0]
        try:
            return artifacts.decode(codec, bytes(data))
        except ValueError as exc:
            raise LedgerError(self.path, f"artifact {sha256} cannot be decoded: {exc}") from None

    def blobs(self, keys: Sequence[str]) -> dict[str, bytes]:
        """The artifacts of ``keys`` that are stored, decoded, in one query."""
        rows = self._read(
            "SELECT sha256, codec, data FROM blobs WHERE sha256 = ANY(%s)",
            (list(keys),),
            binary=True,
        )
        found = {}
        for sha, codec, data in rows:
            try:
                found[str(sha)] = artifacts.decode(codec, bytes(data))
            except ValueError as exc:
                raise LedgerError(self.path, f"artifact {sha} cannot be decoded: {exc}") from None
        return found

    def session_entry(self, key: str) -> SessionEntry | None:
        rows = self._read(
            "SELECT opened, version, compilation, delta FROM sessions WHERE key = %s", (key,)
        )
        if not rows:
            return None
        opened, version, compilation, delta = rows[0]
        return SessionEntry(key, int(opened), int(version), int(compilation), delta)

    def close_session(self, key: str) -> bool:
        """Remove session ``key``'s entry; whether there was one."""
        if self.readonly:
            raise LedgerError(self.path, "cannot write: opened read-only")
        rows = self._read("DELETE FROM sessions WHERE key = %s RETURNING key", (key,))
        return bool(rows)

    def structure_problems(self) -> list[str]:
        """The database's own view of the ledger's tables: each index there and valid,
        and, where the amcheck extension is installed, its check of each index."""
        rows = self._read(
            "SELECT c.relname, t.relname, i.indisvalid FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid"
            " WHERE t.oid IN (to_regclass('meta'), to_regclass('blobs'), to_regclass('events'),"
            " to_regclass('sessions'))"
        )
        found = {str(name): (str(table), bool(valid)) for name, table, valid in rows}
        problems = []
        for name, table in INDEXES.items():
            if name not in found or found[name][0] != table:
                problems.append(f"index {name} of table {table} is missing")
            elif not found[name][1]:
                problems.append(f"index {name} of table {table} is not valid")
        amcheck = self._read("SELECT 1 FROM pg_extension WHERE extname = 'amcheck'")
        if amcheck and not problems:
            for name in INDEXES:
                try:
                    self._read("SELECT bt_index_check(to_regclass(%s))", (name,))
                except LedgerError as exc:
                    problems.append(f"index {name}: {exc.reason}")
        return problems


def _found(key: str, exc: Exception) -> SessionEntry | None:
    """Where a session that moved is, from the detail of the function's AS001 error."""
    detail = getattr(getattr(exc, "diag", None), "message_detail", None) or ""
    opened, _, version = detail.partition(" ")
    if not opened:
        return None
    return SessionEntry(key, int(opened), int(version), -1, None)


def _one_line(exc: Exception) -> str:
    """A psycopg error's message on one line (libpq's have several, and a prefix)."""
    text = " ".join(str(exc).split())
    return text.removeprefix("connection failed: ")
