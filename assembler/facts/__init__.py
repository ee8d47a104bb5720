"""Every figure the assembler knows of a provider, each with its source: the ground floor.

Input: nothing. Output: the names of ``values`` (the figures' types: ``RenderFormat``,
``Provider``, ``CacheRules``, ``ModelProfile``...) and ``read`` (the data files read,
and the lookups: ``provider_facts``, ``model_profile``, ``cache_rules``, ``framing``...).

Where a provider's fact lives: ``assembler/facts/<provider>.json`` (its models with their
windows, output limits, tokenizers and image prices; its formats' framing figures; its
image figures; its prompt-cache rules and prices; its usage fields), each figure with
its source. The stated model reads them (a request's cache section takes its defaults
here, a rendering names its format here); each provider API's room
(``assembler.providers.<name>``) builds, checks and counts its bodies from them.
``models/cache-providers.md`` shows the cache figures as a table for people.
"""

from __future__ import annotations

from .read import (
    cache_rules,
    compatible,
    compatible_profile,
    find_family,
    format_caching_by,
    format_facts,
    formats_of,
    framing,
    model_key,
    model_profile,
    name_keys,
    profiles,
    provider_facts,
    provider_of,
    providers_listed,
)
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
