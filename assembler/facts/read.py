"""The providers' data files read as typed values, and the lookups every floor asks.

Input: ``assembler/facts/<provider>.json``, one file per provider, shipped in the
package: every figure the assembler knows of a provider, each with its source.
Output: ``provider_facts`` (a ``ProviderFacts``: the provider's formats with their
framing figures, models, cache families, image figures and usage fields), read once;
``model_profile`` and ``profiles`` (each model's ``ModelProfile``), ``cache_rules``
(a family's ``CacheRules``), ``framing`` (a format's framing figure), ``format_facts``,
``formats_of``, ``provider_of``, ``format_caching_by``, ``providers_listed``,
``compatible`` and ``compatible_profile`` (an unknown model, fitted as compatible);
and the one model-name rule by which a name finds its profile or family (``model_key``,
``find_family``). An unknown model is ``InvalidRequest`` naming ``model`` (a profile),
``UnknownCacheProvider`` or ``UnknownCacheModel`` (cache rules), each naming the known
names.

The model-name rule (``name_keys``, its patterns in ``names.json``): a name is
trimmed and lowered, a framework's, route's or cloud's prefix is taken off
(``openai:``, ``openai/``, ``models/``, Bedrock's ``us.anthropic.``), then it is looked
up as it is and in each spelling (``4.5`` / ``4-5``), and while it is none of a table's
names, one known suffix comes off and the lookup is tried again (a Bedrock version
``-v1:0``, a Vertex snapshot ``@20250929``, ``-latest``, a snapshot date, a preview's
``-06-05``, ``-001``, ``-preview``). A longer name is never taken for a shorter one
(``claude-opus-4-9`` is not ``claude-opus-4``): a newer model's window, tokenizer and
cache minimum are its own, so a table lists every name it answers for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, TypeVar

from ..errors import InvalidRequest, UnknownCacheModel, UnknownCacheProvider
from .values import (
    CacheMode,
    CacheRules,
    FormatFacts,
    Framing,
    ModelProfile,
    Provider,
    ProviderFacts,
    RenderFormat,
    SelectionFacts,
    Source,
    Tier,
    TtlRule,
    UsageFields,
)

__all__ = [
    "cache_rules",
    "compatible",
    "compatible_profile",
    "find_family",
    "format_caching_by",
    "format_facts",
    "formats_of",
    "framing",
    "model_key",
    "model_profile",
    "name_keys",
    "profiles",
    "provider_facts",
    "provider_of",
    "providers_listed",
]

_DATA = Path(__file__).resolve().parent
T = TypeVar("T")


# --- the model-name rule ------------------------------------------------------------

@cache
def _name_rules() -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...],
                           tuple[tuple[re.Pattern[str], str], ...]]:  # fmt: skip
    data = json.loads((_DATA / "names.json").read_text("utf-8"))
    return (
        tuple(re.compile(r["pattern"]) for r in data["prefixes"]),
        tuple(re.compile(r["pattern"]) for r in data["suffixes"]),
        tuple((re.compile(r["pattern"]), r["replace"]) for r in data["spellings"]),
    )


def _stages(name: str) -> list[str]:
    """``name`` trimmed, lowered and without its prefixes, then without each suffix in turn."""
    prefixes, suffixes, _ = _name_rules()
    key = name.strip().lower()
    for prefix in prefixes:
        key = prefix.sub("", key, count=1)
    stages = [key]
    while True:
        shorter = next((s.sub("", key, count=1) for s in suffixes if s.search(key)), key)
        if shorter == key or not shorter:
            return stages
        key = shorter
        stages.append(key)


def name_keys(name: str) -> tuple[str, ...]:
    """The keys ``name`` is looked up by, in order (the rule above): each stage of
    taking suffixes off, as it is and in each spelling."""
    spellings = _name_rules()[2]
    keys = [
        k for stage in _stages(name) for k in (stage, *(p.sub(to, stage) for p, to in spellings))
    ]
    return tuple(dict.fromkeys(keys))


def model_key(name: str) -> str:
    """``name`` without its prefixes and every known suffix (its last lookup stage)."""
    return _stages(name)[-1]


def find_family(name: str, families: Iterable[tuple[T, Iterable[str]]]) -> T | None:
    """The family whose names hold ``name`` by the rule above (``families``: each
    family with the names it answers for), or None."""
    listed = [(family, frozenset(names)) for family, names in families]
    for key in name_keys(name):
        for family, names in listed:
            if key in names:
                return family
    return None


# --- reading the data files ---------------------------------------------------------


@cache
def provider_facts(provider: Provider) -> ProviderFacts:
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
            None if "selection" not in raw else _selection(raw["selection"]),
        )
        for name, raw in data["formats"].items()
    )
    models = tuple(_profile(provider, m, source) for m in data["models"]["profiles"])
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


def _selection(raw: Mapping[str, Any]) -> SelectionFacts:
    lead = raw.get("lead")
    return SelectionFacts(
        tools=bool(raw["tools"]),
        messages=raw["messages"],
        empty_turns_sent=raw["empty_turns"] == "sent",
        lead=None if lead is None else (lead["rule"], tuple(lead["opens"]), tuple(lead["closes"])),
        tool_id_pattern=raw.get("tool_id_pattern"),
        source=raw["source"],
    )


def _profile(
    provider: Provider, m: Mapping[str, Any], source: Callable[[Mapping[str, str]], Source]
) -> ModelProfile:
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
        estimate_per_word=m.get("estimate_per_word", 0.0),
        estimate_per_non_ascii=m.get("estimate_per_non_ascii", 0.0),
        also=tuple(m["also"]),
        tokenizer=m.get("tokenizer", ""),
        source=None if "source" not in m else source(m["source"]),
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
    return tuple(profile for provider in Provider for profile in provider_facts(provider).models)


def model_profile(name: str) -> ModelProfile:
    """The profile of ``name``, by the one model-name rule."""
    if not isinstance(name, str) or not name:
        raise InvalidRequest("model", f"must be a model name, not {name!r}")
    return _profile_named(name)


# a name's lookup reads every family's names: once per name, not once per call
@lru_cache(maxsize=1024)
def _profile_named(name: str) -> ModelProfile:
    found = find_family(name, ((p, (p.name, *p.also)) for p in profiles()))
    if found is None:
        known = ", ".join(sorted(n for p in profiles() for n in (p.name, *p.also)))
        raise InvalidRequest("model", f"unknown model {name!r}; known models: {known}")
    return found


def compatible() -> tuple[str, str]:
    """The model an unknown one is priced like, and what such a model is called (the
    ``compatible`` entry of the one provider's data that names it)."""
    return next(c for p in Provider if (c := provider_facts(p).compatible) is not None)


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
    if model is not None and not isinstance(model, str):
        raise InvalidRequest("model", f"must be a model name, not {model!r:.40}")
    return _rules_named(key, model)


@lru_cache(maxsize=1024)
def _rules_named(key: str, model: str | None) -> CacheRules:
    found = provider_facts(Provider(key))
    name = found.default_model if model is None else model
    rules = find_family(name, found.families)
    if rules is None:
        known = tuple(sorted(n for _rules, names in found.families for n in names))
        raise UnknownCacheModel(key, name, known=known)
    return rules


@cache
def _formats() -> dict[RenderFormat, tuple[Provider, FormatFacts]]:
    return {f.format: (p, f) for p in Provider for f in provider_facts(p).formats}


def providers_listed() -> str:
    """The providers' names as a message lists them: ``a, b or c``."""
    names = [p.value for p in Provider]
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def formats_of(provider: Provider | str) -> tuple[RenderFormat, ...]:
    """The formats of ``provider``'s APIs, its own (the one its caching is described
    for) first."""
    return tuple(f.format for f in provider_facts(Provider(provider)).formats)


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
