"""Events: their kinds, the stored record, and the hash chain that links them.

Input: an event's fields. Output: the ``Event`` value, the ``chain_hash`` that
``models/ledger.md`` defines, and the enums for event kinds and compilation outcomes.

The chain: every event's ``hash`` is

    sha256(canonical_json({"seq", "prev", "kind", "compilation", "session",
                           "recorded_at", "payload_sha256"}))

where ``prev`` is the hash of event ``seq - 1`` (``GENESIS`` for the first event) and
``payload_sha256`` is the sha256 of the payload exactly as stored (canonical JSON,
UTF-8). An edited payload, a changed field, a removed or reordered event all break
the recomputation at a precise sequence number.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from json.encoder import encode_basestring as _string  # a str as canonical JSON writes it
from typing import TYPE_CHECKING, Any

# the project's canonical JSON (models/README.md section 11), the one package_id uses
from ..stages.identities import canonical_json as canonical

if TYPE_CHECKING:
    from .sessions import SessionCommit

__all__ = [
    "GENESIS",
    "AbandonReason",
    "CompilationOutcome",
    "Entry",
    "Event",
    "EventKind",
    "canonical",
    "chain_hash",
    "sha256_hex",
]

GENESIS = "0" * 64


class EventKind(StrEnum):
    REQUESTED = "compilation_requested"
    COMPILED = "compiled"
    REFUSED = "refused"
    FAILED = "failed"
    # an answer its caller was not given (a server's reply said otherwise first, or
    # another call moved its session on): recorded, and it changed nothing
    ABANDONED = "abandoned"
    # a provider's billed usage for a sent body, against our count of it: numbered like
    # a request (its own compilation number), so it is never a compilation's outcome
    USAGE = "usage_reported"


class CompilationOutcome(StrEnum):
    """How a compilation ended, as read back: its outcome event, or none."""

    COMPILED = "compiled"
    REFUSED = "refused"
    FAILED = "failed"
    # an answer made but not given: it moved no session on (``EventKind.ABANDONED``)
    ABANDONED = "abandoned"
    # a request whose outcome never arrived (the process died): never a success
    INTERRUPTED = "interrupted"


class AbandonReason(StrEnum):
    """Why an answer was recorded ``abandoned`` (its payload's ``reason``)."""

    # its call had been answered otherwise when it came (a server's time-limit reply)
    ANSWERED = "answered-otherwise"
    # another call moved the session on first (a replica that lost a race for it)
    MOVED = "session-moved"


OUTCOME_OF = {
    EventKind.COMPILED: CompilationOutcome.COMPILED,
    EventKind.REFUSED: CompilationOutcome.REFUSED,
    EventKind.FAILED: CompilationOutcome.FAILED,
    EventKind.ABANDONED: CompilationOutcome.ABANDONED,
}


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def chain_hash(
    seq: int,
    prev: str,
    kind: str,
    compilation: int,
    session: str | None,
    recorded_at: str,
    payload: str,
) -> str:
    payload_sha256 = sha256_hex(payload.encode("utf-8"))
    if (
        type(seq) is int
        and type(compilation) is int
        and type(prev) is str
        and type(kind) is str
        and type(recorded_at) is str
        and (session is None or type(session) is str)
    ):
        # the canonical text written directly (keys in sorted order), as every append
        # has it, rather than encoding a dict; an event read back with odd column types
        # takes the general path
        text = (
            f'{{"compilation":{compilation},"kind":{_string(kind)},'
            f'"payload_sha256":"{payload_sha256}","prev":{_string(prev)},'
            f'"recorded_at":{_string(recorded_at)},"seq":{seq},'
            f'"session":{"null" if session is None else _string(session)}}}'
        )
    else:
        text = canonical(
            {
                "seq": seq,
                "prev": prev,
                "kind": kind,
                "compilation": compilation,
                "session": session,
                "recorded_at": recorded_at,
                "payload_sha256": payload_sha256,
            }
        )
    return sha256_hex(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Entry:
    """An event to append (``Store.append``): ``compilation`` None starts a compilation
    (its number is then the new event's seq); ``blobs`` maps sha256 to the artifacts it
    references, bytes (a compilation's documents, compressed when that pays) or text
    (offered content, stored as UTF-8); ``commit`` checks, and with ``compilation``
    given writes, a server session's entry in the same transaction."""

    kind: str
    compilation: int | None
    session: str | None
    payload: str
    blobs: Mapping[str, bytes | str]
    commit: SessionCommit | None = None


@dataclass(frozen=True, slots=True)
class Event:
    """One stored event. ``payload`` is the canonical JSON text exactly as stored."""

    seq: int
    kind: str
    compilation: int
    session: str | None
    recorded_at: str
    payload: str
    prev_hash: str
    hash: str

    def data(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.payload)
        return loaded

    def expected_hash(self) -> str:
        return chain_hash(
            self.seq,
            self.prev_hash,
            self.kind,
            self.compilation,
            self.session,
            self.recorded_at,
            self.payload,
        )

    def to_dict(self) -> dict[str, Any]:
        """The exported form (one JSON line of ``ledger export``)."""
        return {
            "type": "event",
            "seq": self.seq,
            "kind": self.kind,
            "compilation": self.compilation,
            "session": self.session,
            "recorded_at": self.recorded_at,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
            "payload": self.data(),
        }
