"""The providers' figures as typed values, read from their data files.

Input: ``assembler/providers/data/<provider>.json``, one file per provider, shipped in
the package: every figure the assembler knows of a provider, each with its source.
Output: the formats (``RenderFormat``) and providers (``Provider``); each model's
``ModelProfile`` (context window, output limit, tokenizer, image prices, tool-use
prompt, estimate factor); each cache family's ``CacheRules`` (mode, minimum prefix and
step, read and write multipliers per lifetime, breakpoints, lookback, prices); each
format's framing figures (``framing``); the image figures and the usage fields
(``facts``); and the one model-name rule by which a name finds its profile or family
(``model_key``, ``find_family``). An unknown model is ``InvalidRequest`` naming
``model`` (a profile), ``UnknownCacheProvider`` or ``UnknownCacheModel`` (cache rules),
each naming the known names.

The model-name rule: a name is trimmed and lowered, a trailing snapshot date is dropped
(``-20250929``, ``-2025-09-29``, or OpenAI's older ``-0613``), and what is left must be
one of a family's names exactly. A longer name is never taken for a shorter one
(``claude-opus-4-7`` is not ``claude-opus-4``): a newer model's window, tokenizer and
cache minimum are its own, so a table lists every name it answers for.

This is the providers' ground floor: below the stated model (a request's cache section
takes its defaults from here, a rendering names its format from here), importing only
the exception hierarchy. Each provider's room (``assembler.providers.<name>``) builds,
checks and counts its bodies from these figures; ``models/cache-providers.md`` shows the
cache figures as a table for people.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from ..model.errors import InvalidRequest, UnknownCacheModel, UnknownCacheProvider

__all__ = [
    "CacheMode",
    "CacheRules",
    "FormatFacts",
    "Framing",
    "ModelProfile",
    "Provider",
    "ProviderFacts",
    "RenderFormat",
    "Source",
    "Tier",
    "TtlRule",
    "UsageFields",
    "cache_rules",
    "compatible",
    "compatible_profile",
    "facts",
    "find_family",
    "format_caching_by",
    "format_facts",
    "formats_of",
    "framing",
    "model_key",
    "model_profile",
    "profiles",
    "provider_of",
    "providers_listed",
]

_DATA = Path(__file__).resolve().parent / "data"
T = TypeVar("T")


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
    # the other model names billed as this profile
    also: tuple[str, ...] = ()

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
class FormatFacts:
    """One format's figures: its framing, and the content blocks a tool call with a
    header made in ``render_version`` 2 (what a cache lookback counts)."""

    format: RenderFormat
    framing: Mapping[str, Framing]
    call_blocks: int = 1


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


# --- the model-name rule ------------------------------------------------------------

_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$")


def model_key(name: str) -> str:
    """``name`` as the tables list it: trimmed, lowered, without a snapshot date."""
    return _SNAPSHOT.sub("", name.strip().lower())


def find_family(name: str, families: Iterable[tuple[T, Iterable[str]]]) -> T | None:
    """The family whose names hold ``name`` by the rule above (``families``: each
    family with the names it answers for), or None."""
    key = model_key(name)
    for family, names in families:
        if key in names:
            return family
    return None


# --- reading the data files ---------------------------------------------------------


@cache
def facts(provider: Provider) -> ProviderFacts:
    """The figures of ``provider``, read once from its data file."""
    data: dict[str, Any] = json.loads((_DATA / f"{provider.value}.json").read_text("utf-8"))
    read = str(data["read"])
    pages: dict[str, str] = data["pages"]

    def source(raw: Mapping[str, str]) -> Source:
        return Source(pages[raw["page"]], read, raw.get("note", ""))

    formats = tuple(
        FormatFacts(
            RenderFormat(name),
            {k: Framing(f["tokens"], f["kind"], f["source"]) for k, f in raw["framing"].items()},
            int(raw.get("call_blocks", {}).get("blocks", 1)),
        )
        for name, raw in data["formats"].items()
    )
    models = tuple(_profile(provider, m) for m in data["models"]["profiles"])
    rules: dict[str, Any] = data["cache"]["rules"]
    families = tuple(
        (_rules(provider, rules, family, source), tuple(family["names"]))
        for family in data["cache"]["families"]
    )
    images = {k: v for k, v in data["images"].items() if k != "source"}
    usage = tuple(
        UsageFields(
            tuple(u["when"]),
            tuple(u["input"]),
            tuple(u["read"]),
            tuple(u["written"]),
            bool(u.get("cache_apart", False)),
            u["source"],
        )
        for u in data["usage"]
    )
    return ProviderFacts(
        provider=provider,
        formats=formats,
        models=models,
        model_sources={k: source(v) for k, v in data["models"]["sources"].items()},
        compatible=(
            (data["models"]["compatible"]["like"], data["models"]["compatible"]["called"])
            if "compatible" in data["models"]
            else None
        ),
        families=families,
        default_model=data["cache"]["default_model"],
        images=images,
        image_source=source(data["images"]["source"]),
        usage=usage,
    )


def _profile(provider: Provider, m: Mapping[str, Any]) -> ModelProfile:
    return ModelProfile(
        name=m["name"],
        provider=provider,
        context_window=m["context_window"],
        max_output=m["max_output"],
        encoding=m["encoding"],
        image_base=m.get("image_base", 0),
        image_tile=m.get("image_tile", 0),
        image_patches=m.get("image_patches"),
        tool_prompt=m.get("tool_prompt", 0),
        estimate_factor=m.get("estimate_factor", 1.0),
        also=tuple(m["also"]),
    )


def _rules(
    provider: Provider,
    shared: Mapping[str, Any],
    family: Mapping[str, Any],
    source: Callable[[Mapping[str, str]], Source],
) -> CacheRules:
    """A family's rules: the provider's shared rules, the family's own figures over them."""
    merged = {**shared, **family}
    sources = {**shared.get("sources", {}), **family.get("sources", {})}
    return CacheRules(
        provider=provider,
        family=merged["family"],
        mode=CacheMode(merged["mode"]),
        min_prefix_tokens=merged["min_prefix_tokens"],
        step_tokens=merged["step_tokens"],
        read=merged["read"],
        ttls=tuple(TtlRule(t["name"], t["seconds"], t["write"]) for t in merged["ttls"]),
        refresh_on_hit=merged["refresh_on_hit"],
        bills_writes=merged["bills_writes"],
        breakpoints=merged["breakpoints"],
        lookback=merged["lookback"],
        input_usd_per_mtok=merged["input_usd_per_mtok"],
        storage_usd_per_mtok_hour=merged.get("storage_usd_per_mtok_hour"),
        sources=tuple((name, source(raw)) for name, raw in sources.items()),
        recent_entries=merged.get("recent_entries"),
        implicit_breakpoint=merged.get("implicit_breakpoint", False),
        explicit_caches=merged.get("explicit_caches", False),
        tiers=tuple(
            Tier(t["tokens"], t["input"], t["output"])
            for t in sorted(merged.get("tiers", ()), key=lambda t: t["tokens"])
        ),
        output=merged.get("output"),
        unit_tokens=merged.get("unit_tokens"),
    )


# --- lookups ------------------------------------------------------------------------


@cache
def profiles() -> tuple[ModelProfile, ...]:
    """Every model profile, of every provider."""
    return tuple(profile for provider in Provider for profile in facts(provider).models)


def model_profile(name: str) -> ModelProfile:
    """The profile of ``name``, by the one model-name rule."""
    if not isinstance(name, str) or not name:
        raise InvalidRequest("model", f"must be a model name, not {name!r}")
    found = find_family(name, ((p, (p.name, *p.also)) for p in profiles()))
    if found is None:
        known = ", ".join(sorted(n for p in profiles() for n in (p.name, *p.also)))
        raise InvalidRequest("model", f"unknown model {name!r}; known models: {known}")
    return found


def compatible() -> tuple[str, str]:
    """The model an unknown one is priced like, and what such a model is called (the
    ``compatible`` entry of the one provider's data that names it)."""
    return next(c for p in Provider if (c := facts(p).compatible) is not None)


def compatible_profile(name: str, window: int) -> ModelProfile:
    """A model the tables do not know, fitted as compatible (``compatible``): priced
    like that model, its window ``window``, nothing reserved for output, its tokenizer
    the caller's."""
    return replace(
        model_profile(compatible()[0]), name=name, context_window=window, max_output=0,
        encoding="", also=(),
    )  # fmt: skip


def cache_rules(provider: str, model: str | None = None) -> CacheRules:
    """The cache rules of ``provider`` for ``model`` (None: the provider's default family)."""
    key = provider.strip().lower()
    if key not in {p.value for p in Provider}:
        raise UnknownCacheProvider(provider, tuple(p.value for p in Provider))
    found = facts(Provider(key))
    name = found.default_model if model is None else model
    rules = find_family(name, found.families)
    if rules is None:
        known = tuple(sorted(n for _rules, names in found.families for n in names))
        raise UnknownCacheModel(key, name, known=known)
    return rules


@cache
def _formats() -> dict[RenderFormat, tuple[Provider, FormatFacts]]:
    return {f.format: (p, f) for p in Provider for f in facts(p).formats}


def providers_listed() -> str:
    """The providers' names as a message lists them: ``a, b or c``."""
    names = [p.value for p in Provider]
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def formats_of(provider: Provider | str) -> tuple[RenderFormat, ...]:
    """The formats of ``provider``'s APIs, its own (the one its caching is described
    for) first."""
    return tuple(f.format for f in facts(Provider(provider)).formats)


def format_caching_by(mode: CacheMode) -> RenderFormat:
    """The own format of the first provider whose caching (its default family's) is by
    ``mode``: for ``BREAKPOINTS`` a body that marks them, for ``AUTOMATIC`` one that
    marks none (a KeyError when no provider caches so)."""
    for provider in Provider:
        if cache_rules(provider).mode is mode:
            return formats_of(provider)[0]
    raise KeyError(mode)


def provider_of(fmt: RenderFormat) -> Provider:
    """The provider whose API ``fmt`` is (not ``text``: a KeyError)."""
    return _formats()[fmt][0]


def format_facts(fmt: RenderFormat) -> FormatFacts | None:
    """``fmt``'s figures (None for ``text``)."""
    found = _formats().get(fmt)
    return None if found is None else found[1]


def framing(fmt: RenderFormat, figure: str) -> int:
    """The tokens of one of ``fmt``'s framing figures (an integer figure of its data)."""
    tokens = _formats()[fmt][1].framing[figure].tokens
    assert isinstance(tokens, int), (fmt, figure, tokens)
    return tokens
