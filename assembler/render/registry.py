"""The counter registry: what a model bills, by model name.

Input: a model name (``gpt-4o``, ``gpt-4o-2024-08-06``, ``claude-sonnet-4-5``, ...) or
a counter name (``o200k_base``, ``cl100k_base``, ``utf8-bytes``, ``tiktoken:FILE``,
``tokenizers:FILE``).
Output: a ``ModelProfile`` (context window, output reservation, tokenizer, image
pricing, message and tool framing) and a ``Meter`` that counts provider bodies as the
provider bills them; or a ``Counter`` for a counter name. An unknown name is an
``InvalidRequest`` naming ``model`` or ``counter`` and the known names.

A model name finds its profile (``providers.facts.model_profile``: the figures of
``assembler/providers/data/``) by the one model-name rule: lowered, its snapshot date
dropped (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``), then one of the names
a profile answers for, exactly.

Counting, per provider:

* OpenAI (the published counting recipe): 3 tokens per message, plus the tokens of
  each of its string values (role, content, name, tool_call_id), 1 more for a
  ``name``; each tool call its name and arguments plus 3; 3 tokens priming the reply;
  text parts counted with the model's encoding, images by ``images``; the tool
  definitions as the encoding's count of their JSON plus 7 per tool and 12 in all
  (an upper bound on the recipe's count of the same schema, which drops the JSON
  punctuation).
* Anthropic: no tokenizer is published, so text is a calibrated estimate: the
  ``o200k_base`` count times the model's ``estimate_factor``; 4 tokens per message;
  images by Anthropic's formula; the tool definitions as their JSON's estimate plus
  the model's published tool-use system prompt. A provider's reported ``usage``
  corrects the estimate (``Meter.calibrated``).
* Gemini: likewise an estimate (``o200k_base`` x ``estimate_factor``), counted by
  ``render.billing`` (4 per content, images by Google's tile rule).

Every figure is named, with its source, in ``models/framing.json``. Nothing is
downloaded: the real encodings are the ones the package ships
(``encodings.load_encoding``), so every meter counts real OpenAI tokens, and its
``counter.name`` says which counter (and which estimate) it used.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..model.errors import InvalidRequest
from ..providers.facts import ModelProfile, Provider, model_profile
from .counters import Counter, TiktokenCounter, TokenizersCounter, Utf8Bytes
from .encodings import ENCODINGS, load_encoding
from .images import anthropic_image_tokens, image_size, openai_image_tokens

__all__ = [
    "Meter",
    "ModelProfile",
    "ScaledCounter",
    "counter_named",
    "meter_for",
    "model_profile",
]


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


def _text_counter(profile: ModelProfile) -> Counter:
    real = load_encoding(profile.encoding)
    assert real is not None  # every profile's encoding is shipped
    if profile.provider is Provider.OPENAI:
        return real
    return ScaledCounter(real, profile.estimate_factor)


def meter_for(model: str | ModelProfile, counter: Counter | None = None) -> Meter:
    """The meter of a model: its text counter (``counter`` overrides it)."""
    profile = model if isinstance(model, ModelProfile) else model_profile(model)
    return Meter(profile, counter if counter is not None else _text_counter(profile))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True, slots=True)
class Meter:
    """Counts provider bodies as ``profile`` bills them, text by ``counter``.
    ``factor`` (>= 1 after calibration) scales every count up: ``calibrated``."""

    profile: ModelProfile
    counter: Counter
    factor: float = 1.0

    def calibrated(self, factor: float) -> Meter:
        """This meter with every count scaled by ``factor`` (billed / counted)."""
        return replace(self, factor=max(1.0, factor))

    def _scaled(self, tokens: int) -> int:
        return tokens if self.factor == 1.0 else math.ceil(tokens * self.factor)

    def text(self, text: str) -> int:
        return self.counter.count(text) if text else 0

    # -- OpenAI Chat Completions ----------------------------------------------------

    def openai_message(self, message: Mapping[str, Any]) -> int:
        tokens = 3
        for key, value in message.items():
            if isinstance(value, str):
                tokens += self.text(value) + (1 if key == "name" else 0)
            elif key == "content" and isinstance(value, list):
                tokens += sum(self._openai_part(part) for part in value)
            elif key == "tool_calls" and isinstance(value, list):
                for call in value:
                    function = call.get("function", {})
                    tokens += 3 + self.text(str(function.get("name", "")))
                    tokens += self.text(str(function.get("arguments", "")))
        return self._scaled(tokens)

    def _openai_part(self, part: Mapping[str, Any]) -> int:
        kind = part.get("type")
        if kind == "text" or kind == "refusal":
            return self.text(str(part.get(kind, "")))
        if kind == "image_url":
            image = part.get("image_url", {})
            url = str(image.get("url", ""))
            size = image_size(url) if url.startswith("data:") else None
            p = self.profile
            return openai_image_tokens(
                size,
                str(image.get("detail", "auto")),
                base=p.image_base,
                per_tile=p.image_tile,
                patch_multiplier=p.image_patches,
            )
        # audio, files and parts not priced here: their JSON, an over-estimate
        return self.text(_json(part))

    def openai_tools(self, tools: Iterable[Mapping[str, Any]]) -> int:
        tools = list(tools)
        if not tools:
            return 0
        return self._scaled(sum(7 + self.text(_json(t.get("function", t))) for t in tools) + 12)

    def openai_overhead(self) -> int:
        """Tokens every body pays beside its messages and tools: the reply priming."""
        return 3

    def openai_body(self, body: Mapping[str, Any]) -> int:
        """The whole body: ``{"messages", "tools"?}``."""
        messages = body.get("messages", [])
        return (
            sum(self.openai_message(m) for m in messages)
            + self.openai_tools(body.get("tools", []))
            + self.openai_overhead()
        )

    # -- Anthropic Messages ---------------------------------------------------------

    def anthropic_block(self, block: Mapping[str, Any]) -> int:
        kind = block.get("type")
        if kind == "text":
            tokens = self.text(str(block.get("text", "")))
        elif kind == "image":
            tokens = anthropic_image_tokens(_anthropic_image_size(block))
        elif kind == "thinking":
            tokens = self.text(str(block.get("thinking", "")))
        elif kind == "tool_use":
            tokens = 3 + self.text(str(block.get("name", ""))) + self.text(_json(block["input"]))
        elif kind == "tool_result":
            content = block.get("content", "")
            if isinstance(content, list):
                tokens = 3 + sum(self.anthropic_block(b) for b in content)
            else:
                tokens = 3 + self.text(str(content))
        else:
            # redacted thinking, documents and other blocks: their JSON, an over-estimate
            tokens = self.text(_json(block))
        return self._scaled(tokens)

    def anthropic_message(self, message: Mapping[str, Any]) -> int:
        content = message.get("content", "")
        if isinstance(content, str):
            return self._scaled(4 + self.text(content))
        return self._scaled(4) + sum(self.anthropic_block(b) for b in content)

    def anthropic_system(self, system: str | list[Mapping[str, Any]] | None) -> int:
        if not system:
            return 0
        if isinstance(system, str):
            return self._scaled(self.text(system))
        return sum(self.anthropic_block(b) for b in system)

    def anthropic_tools(self, tools: Iterable[Mapping[str, Any]]) -> int:
        tools = list(tools)
        if not tools:
            return 0
        return self._scaled(sum(self.text(_json(t)) for t in tools))

    def anthropic_overhead(self, with_tools: bool) -> int:
        """The tool-use system prompt Anthropic adds when the body has tools."""
        return self._scaled(self.profile.tool_prompt) if with_tools else 0

    def anthropic_body(self, body: Mapping[str, Any]) -> int:
        tools = body.get("tools", [])
        return (
            self.anthropic_system(body.get("system"))
            + sum(self.anthropic_message(m) for m in body.get("messages", []))
            + self.anthropic_tools(tools)
            + self.anthropic_overhead(bool(tools))
        )

    def body(self, body: Mapping[str, Any]) -> int:
        """A provider body's tokens as billed, by the profile's provider."""
        if self.profile.provider == "openai":
            return self.openai_body(body)
        return self.anthropic_body(body)


def _anthropic_image_size(block: Mapping[str, Any]) -> tuple[int, int] | None:
    source = block.get("source", {})
    if source.get("type") == "base64":
        return image_size(str(source.get("data", "")))
    return None
