"""Server sessions in the ledger: which compilation each session's state is, by key.

Input: a session key and what an answer does to the session (``SessionCommit``), or a
key to look up. Output: ``SessionEntry`` (the session's opening compilation, its
version, the compilation whose request is its state now, and the delta that made it),
and ``SessionMoved`` when a commit finds the session elsewhere than it expected.

A store keeps one entry per key in its ``sessions`` table, beside the chain (live
state, not an event: ``export`` and ``copy`` leave it out). It is written in the same
transaction as the outcome event of the answer it records, and checked, without
writing, in the transaction of its request event: a session is moved on by exactly one
answer at a time, whichever replica gives it, and a replica holding a stale copy
learns so before it solves. Everything an entry names is in the chain: the request (its
content, its cache section) and the settings of the compilation it points to, from
which any replica rebuilds the session (``assembler.serve`` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SessionMoved

__all__ = ["SessionCommit", "SessionEntry", "SessionMoved", "check_commit"]


@dataclass(frozen=True, slots=True)
class SessionCommit:
    """What an answer does to session ``key``: ``opened`` None opens it (the answer's
    compilation is then its opening, version 0); otherwise the session was opened by
    compilation ``opened`` and is at version ``base``, and the answer, made by the delta
    whose canonical JSON has the sha256 ``delta``, takes it to ``base + 1``."""

    key: str
    opened: int | None = None
    base: int | None = None
    delta: str | None = None


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """Session ``key`` now: opened by compilation ``opened`` (its request event's
    ``seq``), at ``version`` (deltas applied since), its state the request of
    compilation ``compilation``, made by the delta with sha256 ``delta`` (None: the
    opening)."""

    key: str
    opened: int
    version: int
    compilation: int
    delta: str | None


def check_commit(path: str, found: SessionEntry | None, commit: SessionCommit) -> None:
    """Raise ``SessionMoved`` unless ``commit`` starts from ``found`` (an opening starts
    from anything)."""
    if commit.opened is None:
        return
    if found is None or (found.opened, found.version) != (commit.opened, commit.base):
        raise SessionMoved(path, found, commit)
