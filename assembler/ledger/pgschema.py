"""The PostgreSQL ledger's tables and its append function (``postgres.PostgresStore``).

Input: nothing. Output: ``DDL`` (the statements the first writable open runs, in one
transaction), ``INDEXES`` (what ``structure_problems`` expects, by table) and
``SCHEMA_VERSION`` (this store's own, in ``meta``; the SQLite file's is its
``user_version``, ``schema.py``). ``models/ledger.md`` documents every table.
"""

from __future__ import annotations

__all__ = ["APPEND", "DDL", "INDEXES", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

# One append in one statement: the lock (none when the transaction is serialisable),
# the head, the event's hash (the envelope of events.chain_hash, its strings already
# written as JSON by the caller) and the event; with a session commit, the session's
# entry checked (raising AS001 with where it is when it moved) and, for an outcome,
# written. Each statement of a PL/pgSQL function reads a fresh snapshot in READ
# COMMITTED, so the head read after the lock sees every event committed before it.
APPEND = """
CREATE FUNCTION assembler_append(
    lock_key BIGINT, p_kind TEXT, p_compilation BIGINT, p_session TEXT, p_at TEXT,
    p_payload TEXT, kind_json TEXT, session_json TEXT, at_json TEXT, payload_sha TEXT,
    c_key TEXT, c_opened BIGINT, c_base BIGINT, c_delta TEXT
) RETURNS TABLE (o_seq BIGINT, o_prev TEXT, o_hash TEXT) LANGUAGE plpgsql AS $$
DECLARE
    h_seq BIGINT; h_hash TEXT; s BIGINT; n BIGINT; digest TEXT;
    f_opened BIGINT; f_version BIGINT;
BEGIN
    IF lock_key IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock(lock_key);
    END IF;
    IF c_key IS NOT NULL AND c_opened IS NOT NULL THEN
        SELECT opened, version INTO f_opened, f_version FROM sessions WHERE key = c_key;
        IF f_opened IS DISTINCT FROM c_opened OR f_version IS DISTINCT FROM c_base THEN
            RAISE EXCEPTION 'the session moved on' USING ERRCODE = 'AS001',
                DETAIL = coalesce(f_opened || ' ' || f_version, '');
        END IF;
    END IF;
    SELECT e.seq, e.hash INTO h_seq, h_hash FROM events e ORDER BY e.seq DESC LIMIT 1;
    IF h_seq IS NULL THEN
        s := 1;
        h_hash := repeat('0', 64);
    ELSE
        s := h_seq + 1;
    END IF;
    n := coalesce(p_compilation, s);
    digest := encode(sha256(convert_to(
        '{"compilation":' || n || ',"kind":' || kind_json || ',"payload_sha256":"'
        || payload_sha || '","prev":"' || h_hash || '","recorded_at":' || at_json
        || ',"seq":' || s || ',"session":' || session_json || '}', 'UTF8')), 'hex');
    INSERT INTO events (seq, kind, compilation, session, recorded_at, payload, prev_hash,
                        hash)
        VALUES (s, p_kind, n, p_session, p_at, p_payload, h_hash, digest);
    IF c_key IS NOT NULL AND p_compilation IS NOT NULL THEN
        IF c_opened IS NULL THEN
            INSERT INTO sessions (key, opened, version, compilation, delta)
                VALUES (c_key, n, 0, n, NULL)
                ON CONFLICT (key) DO UPDATE SET opened = n, version = 0, compilation = n,
                    delta = NULL;
        ELSE
            UPDATE sessions SET version = c_base + 1, compilation = n, delta = c_delta
                WHERE key = c_key;
        END IF;
    END IF;
    RETURN QUERY SELECT s, h_hash, digest;
END $$
"""

DDL = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # artifacts are compressed here when that pays (store._row): PostgreSQL keeps
    # them out of line as they are instead of compressing them a second time
    """CREATE TABLE blobs (
        sha256 TEXT PRIMARY KEY,
        size   BIGINT NOT NULL,
        codec  TEXT NOT NULL CHECK (codec IN ('raw', 'zlib', 'lz4')),
        data   BYTEA NOT NULL
    )""",
    "ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL",
    """CREATE TABLE events (
        seq         BIGINT PRIMARY KEY,
        kind        TEXT NOT NULL,
        compilation BIGINT NOT NULL,
        session     TEXT,
        recorded_at TEXT NOT NULL,
        payload     TEXT NOT NULL,
        prev_hash   TEXT NOT NULL,
        hash        TEXT NOT NULL
    )""",
    "CREATE INDEX events_by_compilation ON events (compilation, seq)",
    # at most one outcome per compilation, whatever the writers do
    "CREATE UNIQUE INDEX one_outcome ON events (compilation) WHERE kind <> 'compilation_requested'",
    # the server's sessions: which compilation each one's state is (sessions.py)
    """CREATE TABLE sessions (
        key         TEXT PRIMARY KEY,
        opened      BIGINT NOT NULL,
        version     BIGINT NOT NULL,
        compilation BIGINT NOT NULL,
        delta       TEXT
    )""",
    APPEND,
)
# what structure_problems expects, and of which table
INDEXES = {
    "meta_pkey": "meta",
    "blobs_pkey": "blobs",
    "events_pkey": "events",
    "events_by_compilation": "events",
    "one_outcome": "events",
    "sessions_pkey": "sessions",
}
