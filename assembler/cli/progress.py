"""Progress of a long run on stderr: a live line on a terminal, periodic lines in a log.

Input: a stream, a mode, an interval, then one text per update (``show``).
Output: on a terminal (``LIVE``), one line rewritten in place at most five times a
second and cleared by ``done()``; in a log (``LINES``), one whole line every
``interval`` seconds, so that CI logs show how a run went; ``OFF`` prints nothing.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import TextIO

__all__ = ["ProgressMode", "ProgressPrinter", "choose_mode"]

LIVE_INTERVAL = 0.2


class ProgressMode(StrEnum):
    LIVE = "live"
    LINES = "lines"
    OFF = "off"


def choose_mode(stream: TextIO, every: float | None, quiet: bool) -> ProgressMode:
    """``--progress S`` asks for lines; otherwise a live line on a terminal unless the
    command prints JSON (``quiet``), and nothing in a pipe."""
    if every is not None:
        return ProgressMode.LINES if every > 0 else ProgressMode.OFF
    return ProgressMode.LIVE if stream.isatty() and not quiet else ProgressMode.OFF


class ProgressPrinter:
    """Rate-limited progress updates; ``show`` is cheap enough to call per batch."""

    def __init__(self, stream: TextIO, mode: ProgressMode, interval: float = 10.0) -> None:
        self.stream = stream
        self.mode = mode
        self.interval = LIVE_INTERVAL if mode is ProgressMode.LIVE else interval
        self._last = time.monotonic()
        self._shown = False

    def show(self, text: str, *, force: bool = False) -> None:
        if self.mode is ProgressMode.OFF:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        if self.mode is ProgressMode.LIVE:
            self.stream.write(f"\r\x1b[K{text}")
            self._shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        """Clear the live line before the summary is printed."""
        if self.mode is ProgressMode.LIVE and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
