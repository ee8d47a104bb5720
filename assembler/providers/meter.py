"""A meter: a model's text counter and calibration, which every room counts bodies with.

Input: a model's ``ModelProfile`` (``assembler.facts``), a text counter
(``render.counters``: a real encoding, or an estimate scaled from one) and a
calibration factor.
Output: ``Meter``: ``text`` (a text's tokens), ``scaled`` (a count times the
calibration, rounded up) and ``calibrated`` (the same meter, another factor). Each
room's ``tokens`` counts its bodies with it, framing figures from its data file.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..facts import ModelProfile

__all__ = ["Meter", "TextCounter", "json_text"]


class TextCounter(Protocol):
    """What a meter reads of a counter (``render.counters.Counter`` is one)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Meter:
    """Counts texts as ``profile`` bills them, by ``counter``; ``factor`` (>= 1 after
    calibration: billed / counted) scales a whole count up (``scaled``)."""

    profile: ModelProfile
    counter: TextCounter
    factor: float = 1.0

    def calibrated(self, factor: float) -> Meter:
        """This meter with every count scaled by ``factor`` (billed / counted)."""
        return replace(self, factor=max(1.0, factor))

    def scaled(self, tokens: int) -> int:
        return tokens if self.factor == 1.0 else math.ceil(tokens * self.factor)

    def text(self, text: str) -> int:
        return self.counter.count(text) if text else 0


def json_text(value: Any) -> str:
    """A value's JSON as the meters count it: compact, keys sorted, characters as they are."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
