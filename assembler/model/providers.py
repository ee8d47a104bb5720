"""Provider prompt-cache rules as data, each figure with the page it comes from.

Input: a provider name (``anthropic``, ``openai``, ``gemini``), optionally a model
name and a TTL in seconds.
Output: ``CacheRules``, a frozen value: how the provider caches (explicit breakpoints
with a lookback, or automatic prefix caching), the minimum cacheable prefix and its
step, the read multiplier and the write multiplier per TTL (multiples of the base
input price), whether an entry's lifetime is refreshed by a hit, the breakpoint limit
and the lookback, the base input price in dollars per million tokens when known, and
the ``Source`` of every figure. ``models/cache-providers.md`` is the same table for
people.

Lookup (``cache_rules``): by the one model-name rule (``model/modelnames.py``: the name
lowered, a trailing snapshot date dropped, then one of a family's names exactly, so
``claude-opus-4-7`` is not taken for ``claude-opus-4``). Without a model the
provider's documented default family is used (``DEFAULT_MODEL``). An
unknown provider or model is ``UnknownCacheProvider`` / ``UnknownCacheModel`` (input
errors: ``AssemblerError`` and ``ValueError``) naming it and the known names.

Every figure was read on 2026-12-01 from the stored copies of the provider pages the
``Source`` names; where only a third-party copy or quotation of the provider's text
could be read, the source says so, and where copies of one page disagree, the note
says which copy the figure follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .errors import AssemblerError
from .modelnames import find_family
from .newersources import OPENAI_56_NOTES

__all__ = [
    "DEFAULT_MODEL",
    "FAMILIES",
    "CacheMode",
    "CacheRules",
    "Provider",
    "Source",
    "TtlRule",
    "UnknownCacheModel",
    "UnknownCacheProvider",
    "cache_rules",
]

READ_ON = "2026-12-01"


class Provider(StrEnum):
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


@dataclass(frozen=True, slots=True)
class Source:
    """Where a figure comes from: the page, the day it was read, and what to know."""

    url: str
    read: str = READ_ON
    note: str = ""


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


class UnknownCacheProvider(AssemblerError, ValueError):
    """A provider the table does not know; ``provider`` names it, ``known`` the others."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.known = tuple(p.value for p in Provider)
        super().__init__(f"unknown cache provider {provider!r} (known: {', '.join(self.known)})")


class UnknownCacheModel(AssemblerError, ValueError):
    """A model (or a TTL of it) the table does not know for its provider."""

    def __init__(self, provider: str, model: str, message: str | None = None) -> None:
        self.provider = provider
        self.model = model
        self.known = tuple(
            sorted(name for rules, names in FAMILIES.get(provider, ()) for name in names)
        )
        names = ", ".join(self.known)
        super().__init__(
            message
            or f"unknown {provider} model {model!r} for prompt caching (known: {names});"
            " pass the cache figures yourself for another model"
        )


# --- the pages ------------------------------------------------------------------

_CLAUDE_CACHING = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
_CLAUDE_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"
_CLAUDE_OPUS_5 = "https://platform.claude.com/docs/en/about-claude/models/whats-new-opus-5"
_OPENAI_CACHING = "https://developers.openai.com/api/docs/guides/prompt-caching"
_OPENAI_PRICING = "https://developers.openai.com/api/docs/pricing"
_OPENAI_COOKBOOK = (
    "https://raw.githubusercontent.com/openai/openai-cookbook/main/examples/"
    "Prompt_Caching_201.ipynb"
)
_GEMINI_CACHING = "https://ai.google.dev/gemini-api/docs/caching"
_GEMINI_PRICING = "https://ai.google.dev/gemini-api/docs/pricing"
_VERTEX_CACHING = (
    "https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/context-cache/"
    "context-cache-overview"
)

_CLAUDE_TTLS = (TtlRule("5m", 300, 1.25), TtlRule("1h", 3600, 2.0))
_CLAUDE_SOURCES = (
    (
        "mode",
        Source(
            _CLAUDE_CACHING,
            note="explicit cache_control breakpoints; writes happen only at a breakpoint; tools -> "
            "system -> messages",
        ),
    ),
    ("breakpoints", Source(_CLAUDE_CACHING, note="up to 4 cache breakpoints per request")),
    (
        "lookback",
        Source(
            _CLAUDE_CACHING, note="at most 20 positions per breakpoint, the breakpoint itself first"
        ),
    ),
    (
        "ttls",
        Source(
            _CLAUDE_CACHING,
            note="5-minute default, 1-hour at 2x; 1h entries must come before 5m entries",
        ),
    ),
    (
        "refresh_on_hit",
        Source(
            _CLAUDE_CACHING,
            note="the 5-minute lifetime is refreshed at no cost each time the entry is used",
        ),
    ),
    ("write", Source(_CLAUDE_PRICING, note="5m writes 1.25x, 1h writes 2x the base input price")),
    ("read", Source(_CLAUDE_PRICING, note="cache hits and refreshes 0.1x the base input price")),
    (
        "min_prefix_tokens",
        Source(
            _CLAUDE_CACHING,
            note="'Cache limitations'; the stored copy lists the 3.x and 4.x models only",
        ),
    ),
    ("input_usd_per_mtok", Source(_CLAUDE_PRICING, note="'Base input tokens' column")),
)


def _claude(
    family: str, minimum: int, usd: float, *, min_source: Source | None = None
) -> CacheRules:
    sources: tuple[tuple[str, Source], ...] = _CLAUDE_SOURCES
    if min_source is not None:
        sources = (
            *(s for s in sources if s[0] != "min_prefix_tokens"),
            ("min_prefix_tokens", min_source),
        )
    return CacheRules(
        Provider.ANTHROPIC,
        family,
        CacheMode.BREAKPOINTS,
        minimum,
        1,
        0.1,
        _CLAUDE_TTLS,
        refresh_on_hit=True,
        bills_writes=True,
        breakpoints=4,
        lookback=20,
        input_usd_per_mtok=usd,
        storage_usd_per_mtok_hour=None,
        sources=sources,
    )


_OPENAI_LEGACY_TTLS = (TtlRule("in_memory", 300, 1.0), TtlRule("24h", 86_400, 1.0))


def _openai_legacy(family: str, read: float, usd: float, price_source: Source) -> CacheRules:
    return CacheRules(
        Provider.OPENAI,
        family,
        CacheMode.AUTOMATIC,
        1024,
        128,
        read,
        _OPENAI_LEGACY_TTLS,
        refresh_on_hit=True,
        bills_writes=False,
        breakpoints=0,
        lookback=None,
        input_usd_per_mtok=usd,
        storage_usd_per_mtok_hour=None,
        sources=(
            (
                "mode",
                Source(
                    _OPENAI_CACHING,
                    note="automatic on every request, exact prefix match, gpt-4o and newer",
                ),
            ),
            (
                "min_prefix_tokens",
                Source(
                    _OPENAI_CACHING,
                    note="'enabled automatically for prompts that are 1024 tokens or longer' (an "
                    "OpenAI text quoted on 2026-09-02 says 2,048 for models older than "
                    "GPT-5.6; this table keeps the page copy's 1,024)",
                ),
            ),
            (
                "step_tokens",
                Source(
                    _OPENAI_COOKBOOK,
                    note="OpenAI's cookbook: 'cache hits occurring in increments of 128 tokens' "
                    "(before GPT-5.6)",
                ),
            ),
            (
                "write",
                Source(
                    _OPENAI_CACHING,
                    note="'Cache writes have no additional fee on models before the GPT-5.6 "
                    "family'",
                ),
            ),
            (
                "ttls",
                Source(
                    _OPENAI_CACHING,
                    note="in_memory: typically 5-10 minutes of inactivity, up to one hour "
                    "(modelled as 300 s refreshed on use); 24h extended retention",
                ),
            ),
            (
                "refresh_on_hit",
                Source(_OPENAI_CACHING, note="inactivity clears an entry, so a use keeps it"),
            ),
            ("read", price_source),
            ("input_usd_per_mtok", price_source),
        ),
    )


def _gemini(
    family: str, minimum: int, usd: float, storage: float | None, min_note: str, price: Source
) -> CacheRules:
    return CacheRules(
        Provider.GEMINI,
        family,
        CacheMode.AUTOMATIC,
        minimum,
        1,
        0.1,
        (TtlRule("implicit", 300, 1.0),),
        refresh_on_hit=True,
        bills_writes=False,
        breakpoints=0,
        lookback=None,
        input_usd_per_mtok=usd,
        storage_usd_per_mtok_hour=storage,
        sources=(
            (
                "mode",
                Source(
                    _GEMINI_CACHING,
                    note="implicit caching on by default for Gemini 2.5 and newer; an explicit "
                    "cache (cachedContents) holds a prefix for its TTL, 1 hour when not set",
                ),
            ),
            ("min_prefix_tokens", Source(_GEMINI_CACHING, note=min_note)),
            (
                "read",
                Source(
                    _VERTEX_CACHING,
                    note="'Implicit caching provides a 90% discount on cached tokens'; the API's "
                    "cached price is 0.1x input for 2.5 Pro and Flash",
                ),
            ),
            (
                "write",
                Source(
                    _VERTEX_CACHING,
                    note="the input tokens that create a cache are billed at the standard input "
                    "price; no write premium",
                ),
            ),
            (
                "ttls",
                Source(
                    _GEMINI_CACHING,
                    note="assumed: the page gives no lifetime for implicit entries ('send requests "
                    "with similar prefix in a short amount of time'); 300 s is this table's "
                    "choice",
                ),
            ),
            ("refresh_on_hit", Source(_GEMINI_CACHING, note="assumed, as for the lifetime")),
            ("input_usd_per_mtok", price),
            ("storage_usd_per_mtok_hour", price),
        ),
    )


_THIRD_PARTY_OPENAI = (
    "a third-party copy of OpenAI's price table (the stored copy of the pricing page could"
    " not be read)"
)
_GEMINI_PRICE = Source(
    _GEMINI_PRICING,
    note="as quoted from the pricing page on discuss.ai.google.dev (2.5 Pro: $1.25 input,"
    " $0.125 cached, $4.50 per 1M tokens per hour stored, prompts <= 200k tokens)",
)

# provider -> ((rules, names of the family), ...); names are matched exactly
FAMILIES: dict[str, tuple[tuple[CacheRules, tuple[str, ...]], ...]] = {
    "anthropic": (
        (
            _claude(
                "claude-opus-5",
                512,
                5.0,
                min_source=Source(
                    _CLAUDE_OPUS_5, note="'The minimum cacheable prompt length is 512 tokens'"
                ),
            ),
            ("claude-opus-5",),
        ),
        (_claude("claude-opus-4.6", 4096, 5.0), ("claude-opus-4-6",)),
        (_claude("claude-opus-4.5", 4096, 5.0), ("claude-opus-4-5",)),
        (_claude("claude-opus-4.1", 1024, 15.0), ("claude-opus-4-1",)),
        (_claude("claude-opus-4", 1024, 15.0), ("claude-opus-4", "claude-opus-4-0")),
        (
            _claude(
                "claude-sonnet-4.6",
                2048,
                3.0,
                min_source=Source(
                    _CLAUDE_CACHING,
                    note="2048 in the stored copy of the page; another copy, quoted in "
                    "anthropics/anthropic-sdk-python#1194, says 1024",
                ),
            ),
            ("claude-sonnet-4-6",),
        ),
        (_claude("claude-sonnet-4.5", 1024, 3.0), ("claude-sonnet-4-5",)),
        (_claude("claude-sonnet-4", 1024, 3.0), ("claude-sonnet-4", "claude-sonnet-4-0")),
        (
            _claude("claude-sonnet-3.7", 1024, 3.0),
            ("claude-3-7-sonnet", "claude-3-7-sonnet-latest"),
        ),
        (_claude("claude-haiku-4.5", 4096, 1.0), ("claude-haiku-4-5",)),
        (_claude("claude-haiku-3.5", 2048, 0.8), ("claude-3-5-haiku", "claude-3-5-haiku-latest")),
        (_claude("claude-haiku-3", 2048, 0.25), ("claude-3-haiku",)),
    ),
    "openai": (
        (
            _openai_legacy(
                "gpt-5",
                0.1,
                1.25,
                Source(_OPENAI_PRICING, note=f"$1.25 input, $0.125 cached: {_THIRD_PARTY_OPENAI}"),
            ),
            ("gpt-5",),
        ),
        (
            _openai_legacy(
                "gpt-5-mini",
                0.1,
                0.25,
                Source(_OPENAI_PRICING, note=f"$0.25 input, $0.025 cached: {_THIRD_PARTY_OPENAI}"),
            ),
            ("gpt-5-mini",),
        ),
        (
            _openai_legacy(
                "gpt-4.1",
                0.25,
                2.0,
                Source(_OPENAI_PRICING, note=f"$2.00 input, $0.50 cached: {_THIRD_PARTY_OPENAI}"),
            ),
            ("gpt-4.1",),
        ),
        (
            _openai_legacy(
                "gpt-4o",
                0.5,
                2.5,
                Source(_OPENAI_PRICING, note=f"$2.50 input, $1.25 cached: {_THIRD_PARTY_OPENAI}"),
            ),
            ("gpt-4o",),
        ),
        (
            _openai_legacy(
                "gpt-4o-mini",
                0.5,
                0.15,
                Source(_OPENAI_PRICING, note=f"$0.15 input, $0.075 cached: {_THIRD_PARTY_OPENAI}"),
            ),
            ("gpt-4o-mini",),
        ),
        (
            CacheRules(
                Provider.OPENAI,
                "gpt-5.6",
                CacheMode.ENTRIES,
                1024,
                128,
                0.1,
                (TtlRule("30m", 1800, 1.25),),
                refresh_on_hit=True,
                bills_writes=True,
                breakpoints=4,
                lookback=None,
                input_usd_per_mtok=None,
                storage_usd_per_mtok_hour=None,
                sources=tuple((n, Source(_OPENAI_CACHING, note=t)) for n, t in OPENAI_56_NOTES),
                recent_entries=80,
                implicit_breakpoint=True,
            ),
            ("gpt-5.6", "gpt-5.6-sol", "gpt-5.6-luna"),
        ),
    ),
    "gemini": (
        (
            _gemini(
                "gemini-2.5-flash",
                2048,
                0.30,
                None,
                "2,048 in the newest stored copy (last updated 2026-10-13); an older copy "
                "says 1,024",
                Source(_GEMINI_PRICING, note="$0.30 input: third-party copies of the pricing page"),
            ),
            ("gemini-2.5-flash",),
        ),
        (
            _gemini(
                "gemini-2.5-pro",
                2048,
                1.25,
                4.50,
                "2,048 in the newest stored copy (last updated 2026-10-13); an older copy "
                "says 4,096",
                _GEMINI_PRICE,
            ),
            ("gemini-2.5-pro",),
        ),
    ),
}

DEFAULT_MODEL = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5", "gemini": "gemini-2.5-flash"}


def cache_rules(provider: str, model: str | None = None) -> CacheRules:
    """The rules of ``provider`` for ``model`` (None: the provider's default family)."""
    key = provider.strip().lower()
    families = FAMILIES.get(key)
    if families is None:
        raise UnknownCacheProvider(provider)
    name = DEFAULT_MODEL[key] if model is None else model
    rules = find_family(name, families)
    if rules is None:
        raise UnknownCacheModel(key, name)
    return rules
