"""Provider prompt caches: their rules as data and a simulator that replays a session.

``providers`` (the rules of Anthropic, OpenAI and Gemini, each figure with its
source: ``models/cache-providers.md``) and ``simulator`` (a session of calls priced
under those rules). The cache-aware objective's modules join this package later.
"""

from __future__ import annotations

from .providers import (
    DEFAULT_MODEL,
    CacheMode,
    CacheRules,
    Provider,
    Source,
    TtlRule,
    UnknownCacheModel,
    UnknownCacheProvider,
    cache_rules,
)
from .simulator import (
    Block,
    CacheSimulator,
    Call,
    CallCost,
    SessionCost,
    SessionError,
    blocks_of_rendering,
    simulate,
)

__all__ = [
    "DEFAULT_MODEL",
    "Block",
    "CacheMode",
    "CacheRules",
    "CacheSimulator",
    "Call",
    "CallCost",
    "Provider",
    "SessionCost",
    "SessionError",
    "Source",
    "TtlRule",
    "UnknownCacheModel",
    "UnknownCacheProvider",
    "blocks_of_rendering",
    "cache_rules",
    "simulate",
]
