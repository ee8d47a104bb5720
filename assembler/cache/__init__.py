"""Provider prompt caches: a simulator that replays a session under a provider's rules.

The rules themselves are part of the stated model (``assembler.model.providers``, each
figure with its source: ``models/cache-providers.md``); ``simulator`` prices a session
of calls under them, independently of the cache-aware objective that the exact
strategy solves (``assembler.exact.cached``), so that each checks the other.
"""

from __future__ import annotations

from ..model.providers import (
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
