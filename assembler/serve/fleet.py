"""Sessions any replica can answer for: a server session rebuilt from a shared ledger.

Input: the server's ledger store, a session key, the server's limits; a delta's
decoded value. Output: ``rebuilt(store, key, limits)``: the session at its ledger entry
(``ledger.sessions``), whose next answer is the one the replica that gave the last
would give, or None when the ledger holds no such session; ``Held`` (the entry a session stands
at, and the recorder of each call's answer); ``digest(delta)``, the
sha256 a commit names a delta by; ``replayed(...)``, the recorded answer of a delta
already applied, as its reply's parts.

Every compilation of a server session is recorded under its key with a
``SessionCommit``, so the ledger's entry names the compilation whose request is the
session's state: its request as solved (contents, cache section at that answer's time)
and its rendering give the state (``Session.resumed``), its run the settings it was
opened with. What a replica keeps in memory is only a cache of that: an evicted or idle
session is rebuilt on its next call, and a replica holding a stale copy (another
answered since) is told so by its next commit (``SessionMoved``) and rebuilds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..explain.load import rendering_from_dict
from ..ledger import CompilationOutcome, Ledger
from ..ledger.documents import storable
from ..ledger.events import canonical, sha256_hex
from ..ledger.sessions import SessionCommit, SessionEntry
from ..ledger.store import Store
from ..model.limits import Limits
from ..model.rendering import Headers
from ..session import Session
from ..settings import Settings

__all__ = ["Held", "digest", "rebuilt", "replayed"]


@dataclass(slots=True)
class Held:
    """What a replica keeps beside a session it holds: ``entry``, the ledger entry the
    session's state is, and ``ledger``, the session's recorder (its memo of what it
    recorded), from which each call gets its own (``recorder``)."""

    entry: SessionEntry
    ledger: Ledger = field(repr=False)

    @classmethod
    def opened(cls, key: str, ledger: Ledger) -> Held:
        """Once ``ledger`` recorded the answer that opened session ``key``."""
        assert ledger.last_answer is not None
        number = ledger.last_answer
        return cls(SessionEntry(key, number, 0, number, None), ledger)

    def recorder(self, delta: str, claim: Callable[[], bool]) -> Ledger:
        """The recorder of the call whose answer moves the session on from this entry,
        by ``delta``, if ``claim`` says its reply will state it."""
        entry = self.entry
        commit = SessionCommit(entry.key, entry.opened, entry.version, delta)
        return self.ledger.but(commit=commit, claim=claim)

    def moved(self, recorder: Ledger) -> None:
        """The answer ``recorder`` just recorded moved the session on (as the ledger's
        entry did)."""
        commit, number = recorder.commit, recorder.last_answer
        assert commit is not None and commit.base is not None and number is not None
        entry = self.entry
        self.entry = SessionEntry(entry.key, entry.opened, commit.base + 1, number, commit.delta)


def digest(delta: Any) -> str:
    """The sha256 of a delta's canonical JSON (a lone surrogate escaped, as the ledger
    stores it): how a commit names the delta."""
    return sha256_hex(storable(canonical(delta)).encode("utf-8"))


def ledger_for(store: Store, key: str) -> Ledger:
    return Ledger(store.path, session=key, store=store)


def rebuilt(store: Store, key: str, limits: Limits) -> tuple[Session, Held] | None:
    """Session ``key`` as the ledger holds it, or None when it holds none (never
    opened with this ledger, or closed)."""
    entry = store.session_entry(key)
    if entry is None:
        return None
    ledger = ledger_for(store, key)
    # the request and its rendering, not the result: the state is the request
    record = Ledger(store.path, store=store).compilation_at(entry.compilation, result=False)
    answered = record.outcome in (CompilationOutcome.COMPILED, CompilationOutcome.REFUSED)
    if record.request is None or not answered:
        return None  # not an answer: no commit points at one
    run = record.run
    settings = Settings(
        strategy=run["strategy"],
        render=run["render"],
        headers=Headers(run.get("headers", Headers.PROVENANCE.value)),
        limits=limits,
        ledger=ledger,
    )
    # what the provider holds matters to a cache-aware session only
    recorded = record.rendering if record.request.get("cache") is not None else None
    rendering = None if recorded is None else rendering_from_dict(recorded.to_dict())
    session = Session.resumed(record.request, settings, version=entry.version, rendering=rendering)
    return session, Held(entry, ledger)


def replayed(store: Store, entry: SessionEntry) -> tuple[Any, str]:
    """The recorded answer of the compilation ``entry`` points at: the result's
    ``Result.to_dict()`` as it was recorded, encoded as a reply carries it, and the
    number of candidates its request offered."""
    import json

    record = Ledger(store.path, store=store).compilation_at(entry.compilation)
    assert record.result is not None and record.request is not None
    encoded = json.dumps(record.result, ensure_ascii=False, separators=(",", ":"))
    return len(record.request["candidates"]), encoded
