"""The providers' figures' value types: formats, providers, cache rules, model profiles.

Input: nothing. Output: ``RenderFormat`` (a rendering's format: the text, or one
provider API's body) and ``Provider``; ``CacheMode``, ``Source``, ``TtlRule`` and
``CacheRules`` (one cache family's rules, each figure with its source);
``ModelProfile`` (what one model bills); ``Framing`` and ``FormatFacts`` (a format's
framing figures); ``UsageFields`` (where a usage report says what was billed); and
``ProviderFacts``, everything one data file says. Frozen values; ``read`` fills them
from the data files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from ..errors import UnknownCacheModel

__all__ = [
    "CacheMode",
    "CacheRules",
    "FormatFacts",
    "Framing",
    "ModelProfile",
    "Provider",
    "ProviderFacts",
    "RenderFormat",
    "SelectionFacts",
    "Source",
    "Tier",
    "TtlRule",
    "UsageFields",
]


class RenderFormat(StrEnum):
    """A rendering's format: the text itself, or one provider API's body (its room)."""

    TEXT = "text"
    OPENAI_CHAT = "openai-chat"
    ANTHROPIC_MESSAGES = "anthropic-messages"
    OPENAI_RESPONSES = "openai-responses"
    GEMINI = "gemini"


class Provider(StrEnum):
    """A provider: whose models, caches and prices (one data file each)."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    GEMINI = "gemini"


class CacheMode(StrEnum):
    # entries are written only at the request's breakpoints; a read looks back from each
    BREAKPOINTS = "breakpoints"
    # the provider caches the prompt's prefix by itself; a read is the longest live prefix
    AUTOMATIC = "automatic"
    # the prompt is matched against the latest entries written at breakpoints, with no
    # lookback in blocks; each request writes a few (OpenAI GPT-5.6 and later)
    ENTRIES = "entries"
    # whole prefix units are read: persisted at each request's end, at the end of its
    # output, at prefixes two requests shared, and at fixed intervals (DeepSeek)
    UNITS = "units"


@dataclass(frozen=True, slots=True)
class Source:
    """Where a figure comes from: the page, the day it was read, and what to know."""

    url: str
    read: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class Tier:
    """A long-context rate: a request of at least ``tokens`` input tokens is billed
    whole at ``input`` times the input, read and write rates and ``output`` times the
    output rate."""

    tokens: int
    input: float
    output: float


@dataclass(frozen=True, slots=True)
class TtlRule:
    """One lifetime an entry can have and what writing such an entry costs."""

    name: str
    seconds: int
    # multiple of the base input price per token written (1.0: no write premium)
    write: float


@dataclass(frozen=True, slots=True)
class CacheRules:
    """One provider family's caching rules (``models/cache-providers.md``)."""

    provider: Provider
    family: str
    mode: CacheMode
    min_prefix_tokens: int
    # a cached length is min_prefix_tokens + k * step_tokens (1: any length)
    step_tokens: int
    # multiple of the base input price per token read from the cache
    read: float
    # the first is the default lifetime
    ttls: tuple[TtlRule, ...]
    refresh_on_hit: bool
    # writes billed at a TTL's write rate (False: new material is billed as plain input)
    bills_writes: bool
    # explicit breakpoints one request may set (0: none, caching is automatic)
    breakpoints: int
    # block boundaries checked per breakpoint, the breakpoint itself first (None: no limit)
    lookback: int | None
    input_usd_per_mtok: float | None
    # explicit (stored) caches: dollars per million tokens per hour held
    storage_usd_per_mtok_hour: float | None
    # figure name -> where it comes from
    sources: tuple[tuple[str, Source], ...]
    # ENTRIES: the latest entries of the conversation a read is matched against
    recent_entries: int | None = None
    # ENTRIES: the provider adds one breakpoint of its own at the prompt's end (it
    # counts against ``breakpoints``, the writes one request may make)
    implicit_breakpoint: bool = False
    # AUTOMATIC: a breakpoint asks for an explicit (stored) cache of the prefix it ends
    explicit_caches: bool = False
    # long-context rates, the lowest line first (a request is billed at the last it reaches)
    tiers: tuple[Tier, ...] = ()
    # multiple of the base input price per output token (None: not known)
    output: float | None = None
    # UNITS: tokens between the units carved from a long input (None: not stated)
    unit_tokens: int | None = None

    def tier(self, tokens: int) -> Tier | None:
        """The long-context rate a request of ``tokens`` input tokens is billed at."""
        reached = [t for t in self.tiers if tokens >= t.tokens]
        return reached[-1] if reached else None

    @property
    def default_ttl(self) -> TtlRule:
        return self.ttls[0]

    def ttl(self, seconds: int | None) -> TtlRule:
        """The lifetime of ``seconds`` (None: the default), or a ValueError naming it."""
        if seconds is None:
            return self.ttls[0]
        for rule in self.ttls:
            if rule.seconds == seconds:
                return rule
        known = ", ".join(str(rule.seconds) for rule in self.ttls)
        raise UnknownCacheModel(
            self.provider.value,
            f"{self.family} ttl {seconds}",
            f"{self.provider.value} {self.family} has no {seconds}-second cache entries"
            f" (it has: {known})",
        )

    def usd_per_mtok(self, multiplier: float) -> float | None:
        """Dollars per million tokens at ``multiplier`` times the base input price."""
        return None if self.input_usd_per_mtok is None else self.input_usd_per_mtok * multiplier

    def source(self, figure: str) -> Source:
        return dict(self.sources)[figure]

    @property
    def storage(self) -> float | None:
        """An explicit cache's storage per token and hour, in units of the base input
        price (None: not known, or the provider has no such caches)."""
        if self.storage_usd_per_mtok_hour is None or not self.input_usd_per_mtok:
            return None
        return self.storage_usd_per_mtok_hour / self.input_usd_per_mtok


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What one model family bills. ``input_window`` is the context window less the
    output reservation: the most a request body may count."""

    name: str
    provider: Provider
    context_window: int
    max_output: int
    # tiktoken encoding (OpenAI), or the encoding an estimate scales (Anthropic, Gemini)
    encoding: str
    # image pricing: base and per-tile tokens, or a patch multiplier (OpenAI's models)
    image_base: int = 0
    image_tile: int = 0
    image_patches: float | None = None
    # the tool-use system prompt's tokens (Anthropic's models)
    tool_prompt: int = 0
    # text = encoding x factor: an estimate where the tokenizer is not published (1.0: exact)
    estimate_factor: float = 1.0
    # and per ASCII word and per non-ASCII character (Claude's tokenizers split words
    # that o200k_base keeps whole: the measured estimate's further terms)
    estimate_per_word: float = 0.0
    estimate_per_non_ascii: float = 0.0
    # the other model names billed as this profile
    also: tuple[str, ...] = ()
    # Claude's tokenizer generation (the ``ctok`` version that counts it: "3.0", "4.7", "4.8")
    tokenizer: str = ""
    # where this profile's window and output limit come from (None: the file's default)
    source: Source | None = None

    @property
    def input_window(self) -> int:
        return self.context_window - self.max_output


@dataclass(frozen=True, slots=True)
class Framing:
    """One framing figure: the tokens a body pays beside its texts (an integer, or
    where the figure lives when it is not one), published or estimated, and its source."""

    tokens: int | str
    kind: str
    source: str


@dataclass(frozen=True, slots=True)
class SelectionFacts:
    """A format's rules that a selection of forms can break (``models/README.md`` section
    14; ``model/sendable.py`` makes them constraints of the decision): whether a tool
    call's arguments and a tool definition's content are checked, the rule that the body
    holds a message (None: only that it holds something), whether a turn of empty
    content sends a block, the rule on how the conversation opens (its name, the kinds
    that may open it and those that may not), and the tool call ids taken."""

    tools: bool
    messages: str | None
    empty_turns_sent: bool
    lead: tuple[str, tuple[str, ...], tuple[str, ...]] | None
    tool_id_pattern: str | None
    source: str


@dataclass(frozen=True, slots=True)
class FormatFacts:
    """One format's figures: its framing, the content blocks a tool call with a
    header made in ``render_version`` 2 (what a cache lookback counts), and its rules
    on a selection."""

    format: RenderFormat
    framing: Mapping[str, Framing]
    call_blocks: int = 1
    selection: SelectionFacts | None = None


@dataclass(frozen=True, slots=True)
class UsageFields:
    """Where a provider's billed usage says what it billed: the fields whose presence
    tells this shape (``when``), and the input, read and written tokens (dotted paths,
    the first present wins); ``cache_apart``: reads and writes are billed beside the
    input field, not inside it."""

    when: tuple[str, ...]
    input: tuple[str, ...]
    read: tuple[str, ...]
    written: tuple[str, ...]
    cache_apart: bool
    source: str


@dataclass(frozen=True, slots=True)
class ProviderFacts:
    """Everything one data file says: the provider's formats, models, cache families
    (each with the model names it answers for), the family used without a model, the
    image figures and the usage fields."""

    provider: Provider
    formats: tuple[FormatFacts, ...]
    models: tuple[ModelProfile, ...]
    model_sources: Mapping[str, Source]
    # the model an unknown model compatible with this provider's API is priced like,
    # and what such a model is called
    compatible: tuple[str, str] | None
    families: tuple[tuple[CacheRules, tuple[str, ...]], ...]
    default_model: str
    images: Mapping[str, float]
    image_source: Source
    usage: tuple[UsageFields, ...]
