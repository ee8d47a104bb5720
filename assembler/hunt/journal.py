"""A hunt's journal on disk, so that a stopped hunt can be continued.

Input: a directory, the hunt's settings, and each batch as the hunt merges it.
Output: in the directory, ``hunt.json`` (the settings that decide the answer: strategy,
seed, example count or seconds, candidate cap, shrink count, output folder),
``batches.jsonl`` (one line per merged batch: its example range, how many were
skipped, its findings) and ``findings.json`` (the report so far, written when the hunt
ends, is interrupted or its engine fails). ``open_state`` reads them back: the
settings and the prefix of examples already judged, with their findings.

The hunt merges batches in example order, so the journal always holds a prefix
0..n-1 of the examples; a resumed hunt starts at n and repeats no merged batch. Each
line is flushed when written: a parent killed outright loses at most the line it was
writing, which ``open_state`` ignores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..errors import StateError
from .judge import Finding, FindingKind

__all__ = ["CONFIG", "FINDINGS", "JOURNAL", "HuntState", "Journal", "StateError", "open_state"]

CONFIG = "hunt.json"
JOURNAL = "batches.jsonl"
FINDINGS = "findings.json"
FORMAT = 1


@dataclass(frozen=True, slots=True)
class Journal:
    """What a state directory says was done: examples 0..done-1."""

    settings: Mapping[str, Any]
    done: int
    skipped: int
    findings: tuple[Finding, ...]


class HuntState:
    """An open journal: ``record`` each merged batch, ``finish`` with the report."""

    def __init__(self, path: Path, stream: TextIO) -> None:
        self.path = path
        self._stream = stream

    @classmethod
    def create(cls, path: Path, settings: Mapping[str, Any]) -> HuntState:
        """Start a fresh journal in ``path`` (created if needed; an old one is replaced)."""
        if path.exists() and not path.is_dir():
            raise StateError(f"{path} exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        (path / FINDINGS).unlink(missing_ok=True)
        _write_json(path / CONFIG, {"format": FORMAT, **settings})
        return cls(path, (path / JOURNAL).open("w", encoding="utf-8"))

    @classmethod
    def append_to(cls, path: Path) -> HuntState:
        """Continue the journal in ``path`` (read it first with ``open_state``)."""
        (path / FINDINGS).unlink(missing_ok=True)
        return cls(path, (path / JOURNAL).open("a", encoding="utf-8"))

    def record(self, start: int, stop: int, skipped: int, findings: Sequence[Finding]) -> None:
        line = {
            "start": start,
            "stop": stop,
            "skipped": skipped,
            "findings": [[f.example, f.kind.value, f.explanation, f.candidates] for f in findings],
        }
        self._stream.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._stream.flush()

    def finish(self, report: Mapping[str, Any]) -> Path:
        """Write ``findings.json`` and close the journal; returns the file's path."""
        self._stream.close()
        target = self.path / FINDINGS
        _write_json(target, report)
        return target


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    # write-then-rename: a reader never sees half a file
    partial = path.with_suffix(".part")
    partial.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(partial, path)


def open_state(path: Path) -> Journal:
    """Read a state directory. Raises ``StateError`` with a one-line reason."""
    if not path.is_dir():
        raise StateError(f"{path} is not a hunt state directory (no such directory)")
    try:
        settings = json.loads((path / CONFIG).read_text(encoding="utf-8"))
    except OSError:
        raise StateError(f"{path} is not a hunt state directory (no {CONFIG})") from None
    except json.JSONDecodeError as error:
        raise StateError(f"{path / CONFIG} is not JSON: {error}") from None
    if not isinstance(settings, dict) or settings.get("format") != FORMAT:
        raise StateError(f"{path / CONFIG} is not a hunt state this version can read")
    try:
        lines = (path / JOURNAL).read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    done = skipped = 0
    findings: list[Finding] = []
    kinds = {kind.value: kind for kind in FindingKind}
    for number, text in enumerate(lines, 1):
        try:
            line = json.loads(text)
            start, stop = int(line["start"]), int(line["stop"])
            batch = [
                Finding(int(ex), kinds[kind], str(why), int(n))
                for ex, kind, why, n in line["findings"]
            ]
            lost = int(line["skipped"])
        except (ValueError, KeyError, TypeError):
            if number == len(lines):
                break  # the line being written when the parent was killed
            raise StateError(f"{path / JOURNAL}: line {number} is damaged") from None
        if start != done or stop < start:
            raise StateError(
                f"{path / JOURNAL}: line {number} covers {start}..{stop - 1}, expected to"
                f" start at {done}"
            )
        done, skipped = stop, skipped + lost
        findings.extend(batch)
    return Journal(settings, done, skipped, tuple(findings))
