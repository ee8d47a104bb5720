"""The ledger benchmarks' shared pieces: a seeded request with content, and a recorder
that times the ledger's calls inside ``assemble``.

Input: a form count and a seed (``instance``), or a ledger (``_Timed``). Output: the
request dict, and the recorder whose ``seconds`` and ``cpu_seconds`` are the ledger's
share of each call. ``benchmarks/ledger.py`` (SQLite) and ``benchmarks/ledger_pg.py``
(PostgreSQL beside SQLite) both measure with them.
"""

from __future__ import annotations

import random
import time
from typing import Any

import assembler
from assembler.hunt.generate import Shape, generate
from assembler.recorder import Recorded
from benchmarks.scenarios.agentloop import words

_VOCABULARY = ("lock", "table", "migration", "index", "backfill", "invoice", "deploy",
               "rollback", "query", "latency", "the", "a", "of", "to", "and", "is")  # fmt: skip


def _words(rng: random.Random, size: int) -> str:
    return words(rng, size, _VOCABULARY)


def instance(forms: int, seed: int) -> dict[str, Any]:
    request = generate(random.Random(seed), Shape.scale(forms))
    rng = random.Random(seed + 1)
    for candidate in request["candidates"]:
        candidate["content"] = _words(rng, 4 * candidate["cost"])
    return request


def _verified(request: Any, result: assembler.Result) -> None:
    problems = assembler.verify(request, result)
    if problems:
        raise SystemExit(f"verifier rejected a bundle: {problems[0]}")


def _answer(result: assembler.Result) -> dict[str, Any]:
    data = result.to_dict()
    del data["timings"]
    return data


class _Timed:
    """A recorder that times the ledger's calls inside assemble (the protocol's two
    calls: ``requested`` before the solve, the outcome after it)."""

    def __init__(self, ledger: assembler.Ledger) -> None:
        self.ledger = ledger
        self.seconds = 0.0
        self.cpu_seconds = 0.0

    def requested(self, request: Any, run: Recorded) -> Any:
        start, cpu = time.perf_counter(), time.process_time()
        recording = self.ledger.requested(request, run)
        self.seconds += time.perf_counter() - start
        self.cpu_seconds += time.process_time() - cpu
        return _TimedRecording(self, recording)

    def invalid(self, request: object, run: Any, error: Exception) -> None:
        self.ledger.invalid(request, run, error)


class _TimedRecording:
    def __init__(self, timer: _Timed, recording: Any) -> None:
        self.timer, self.recording = timer, recording

    def answered(self, result: assembler.Result) -> None:
        start, cpu = time.perf_counter(), time.process_time()
        self.recording.answered(result)
        self.timer.seconds += time.perf_counter() - start
        self.timer.cpu_seconds += time.process_time() - cpu

    def failed(self, error: Exception) -> None:
        self.recording.failed(error)
