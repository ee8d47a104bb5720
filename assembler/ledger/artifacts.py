"""The stored form both stores share: the clock events are stamped with, the codecs
of artifacts, an artifact's row and an event's columns, how long a writer waits.

Input: bytes or text to store, or a stored codec and bytes. Output: rows
(``blob_row``: sha256, decoded size, codec, stored bytes), decoded bytes (``decode``,
ValueError for a damaged frame), the time (``now``). The stores call these through
this module, so that a test can fix the clock or the codec for both at once.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from typing import Any

from .events import Event

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "COLUMNS",
    "COMPRESS_FROM",
    "KNOWN_ARTIFACTS",
    "SharedReads",
    "blob_row",
    "decode",
    "encode",
    "now",
]

# the artifact digests one store object remembers as committed, at most (~10 MB)
KNOWN_ARTIFACTS = 65_536
# artifacts at least this large are compressed when that saves a tenth or more
COMPRESS_FROM = 256

COLUMNS = "seq, kind, compilation, session, recorded_at, payload, prev_hash, hash"

# a writer waits this long for another process's transaction before giving up
BUSY_TIMEOUT_SECONDS = 60.0

# the last whole second and its text: every event of a compilation is stamped, and
# formatting a time on caches a solve has just emptied is dear beside the rest
_second: tuple[int, str] = (-1, "")


def now() -> str:
    """The time in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    global _second
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    second, prefix = _second
    if seconds != second:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        _second = (seconds, prefix)
    return f"{prefix}.{nanoseconds // 1000:06d}Z"


def encode(data: bytes) -> tuple[str, bytes]:
    if len(data) >= COMPRESS_FROM:
        # imported when first needed: opening a ledger, or reading one, does not load it
        import lz4.frame

        # an LZ4 frame (the format the lz4 tool reads): every compilation compresses on
        # the caller's thread, so speed counts for more than the last bytes. Its content
        # checksum makes a damaged artifact an error on read, not other bytes
        packed = lz4.frame.compress(data, content_checksum=True)
        if len(packed) * 10 <= len(data) * 9:
            return "lz4", packed
    return "raw", data


def decode(codec: object, data: bytes) -> bytes:
    """An artifact's bytes from its stored form: raw, lz4 (an LZ4 frame) or zlib (as
    schema version 1 wrote them). A damaged frame raises ValueError."""
    if codec == "raw":
        return data
    try:
        if codec == "lz4":
            import lz4.frame

            decoded: bytes = lz4.frame.decompress(data)
            return decoded
        if codec == "zlib":
            return zlib.decompress(data)
    except (zlib.error, RuntimeError) as exc:  # lz4 reports a damaged frame as RuntimeError
        raise ValueError(str(exc)) from None
    raise ValueError(f"unknown codec {codec!r}")


def blob_row(sha: str, data: bytes | str) -> tuple[str, int, str, bytes]:
    if isinstance(data, str):
        # offered content: stored once and found again across compilations, so it is
        # kept as it is (compressing every new one would cost more than the solve)
        raw = data.encode("utf-8")
        return sha, len(raw), "raw", raw
    return (sha, len(data), *encode(data))


class SharedReads:
    """The reads both stores make the same way, over each one's ``_read`` (rows of a
    query); ``MARK`` is its driver's parameter mark."""

    MARK = "?"

    def _read(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def events(self, after: int = 0) -> Iterator[Event]:
        """Every event after ``after``, in sequence order, read in pages."""
        while True:
            rows = self._read(
                f"SELECT {COLUMNS} FROM events WHERE seq > {self.MARK} ORDER BY seq LIMIT 2000",
                (after,),
            )
            if not rows:
                return
            for row in rows:
                yield Event(*row)
            after = int(rows[-1][0])

    def compilation_events(self, compilation: int) -> list[Event]:
        rows = self._read(
            f"SELECT {COLUMNS} FROM events WHERE compilation = {self.MARK} ORDER BY seq",
            (compilation,),
        )
        return [Event(*row) for row in rows]

    def requested_seqs(self) -> list[int]:
        """The ``seq`` of every ``compilation_requested`` event, in order: compilation
        ``n`` (its number as the reading commands give it) is the n-th."""
        rows = self._read(
            "SELECT seq FROM events WHERE kind = 'compilation_requested' ORDER BY seq"
        )
        return [int(row[0]) for row in rows]

    def blob_index(self) -> Iterator[tuple[str, int]]:
        """Every stored artifact's key and decoded size, in key order, read in pages."""
        after = ""
        while True:
            rows = self._read(
                f"SELECT sha256, size FROM blobs WHERE sha256 > {self.MARK} ORDER BY sha256"
                " LIMIT 5000",
                (after,),
            )
            if not rows:
                return
            for key, size in rows:
                yield str(key), int(size)
            after = str(rows[-1][0])
