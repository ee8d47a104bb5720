"""Meters: a counter by name, and a model's meter (its text counter and calibration).

Input: a counter name (``o200k_base``, ``cl100k_base``, ``utf8-bytes``, ``tiktoken:FILE``,
``tokenizers:FILE``), or a model name (with or without its snapshot date) or its
``ModelProfile``, and optionally a counter.
Output: a ``Counter`` (``counter_named``), or the model's ``Meter``
(``providers/meter.py``: ``meter_for``), whose text counter is the model's encoding
(the real one, shipped in the package: ``encodings.load_encoding``) or, where the
provider publishes no tokenizer, an estimate scaled from it (``ScaledCounter``, the
profile's ``estimate_factor``); its ``counter.name`` says which. An unknown name is an
``InvalidRequest`` naming ``model`` or ``counter`` and the known names.

A model's profile, and every figure its provider's room counts a body with, are the
data of ``assembler/facts/`` (``assembler.facts``); each room's ``tokens``
counts its bodies with the meter. Nothing is downloaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidRequest
from ..facts import ModelProfile, model_profile
from ..providers.meter import Meter
from .counters import Counter, TiktokenCounter, TokenizersCounter, Utf8Bytes
from .encodings import ENCODINGS, load_encoding

__all__ = ["ScaledCounter", "counter_named", "meter_for", "model_counter"]


@dataclass(frozen=True, slots=True)
class ScaledCounter:
    """Another counter's count times a factor, rounded up: a calibrated estimate."""

    base: Counter
    factor: float

    @property
    def name(self) -> str:
        return f"estimate:{self.base.name}x{self.factor:g}"

    @property
    def version(self) -> str:
        return self.base.version

    def count(self, text: str) -> int:
        return math.ceil(self.base.count(text) * self.factor)


def counter_named(name: str) -> Counter:
    """A counter by name: ``utf8-bytes``, ``o200k_base``, ``cl100k_base`` (the real
    encodings, shipped in the package), ``tiktoken:PATH`` (a ranks file, cl100k's
    pattern) or ``tokenizers:PATH`` (a ``tokenizer.json``)."""
    if name == "utf8-bytes":
        return Utf8Bytes()
    if name in ENCODINGS:
        counter = load_encoding(name)
        assert counter is not None  # every encoding named there is shipped
        return counter
    kind, _, path = name.partition(":")
    if kind in ("tiktoken", "tokenizers") and path:
        if not Path(path).is_file():
            raise InvalidRequest("counter", f"no file {path!r}")
        if kind == "tokenizers":
            return TokenizersCounter.from_file(path)
        return TiktokenCounter.from_file(
            path, name=Path(path).stem, pat_str=ENCODINGS["cl100k_base"][2]
        )
    known = "utf8-bytes, " + ", ".join(ENCODINGS) + ", tiktoken:PATH, tokenizers:PATH"
    raise InvalidRequest("counter", f"unknown counter {name!r}; known: {known}")


def model_counter(model: str | ModelProfile) -> Counter:
    """A model's text counter: its encoding, or the estimate scaled from it."""
    profile = model if isinstance(model, ModelProfile) else model_profile(model)
    real = load_encoding(profile.encoding)
    assert real is not None  # every profile's encoding is shipped
    if profile.estimate_factor == 1.0:
        return real
    return ScaledCounter(real, profile.estimate_factor)


def meter_for(model: str | ModelProfile, counter: Counter | None = None) -> Meter:
    """The meter of a model: its text counter (``counter`` overrides it)."""
    profile = model if isinstance(model, ModelProfile) else model_profile(model)
    return Meter(profile, counter if counter is not None else model_counter(profile))
