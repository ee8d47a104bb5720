"""Provider prompt caches: what a previous call left in one, and what a session costs.

The rules themselves are the providers' figures (``assembler/facts/``, read
by ``assembler.facts``; ``models/cache-providers.md`` shows them as a table).
``prefix`` maps a previous rendering onto the forms of a request: the blocks a
selection keeps, in the provider's order, and their price (the cache-aware decision,
the renderer, the ledger and the hunts read it; ``assembler.exact.cached`` optimises
over it). ``simulator`` prices a session of calls under the rules, independently of
that objective, so that each checks the other. The cache feature's map of files:
``docs/explanation/cache.md``.
"""

from __future__ import annotations

from ..facts import CacheMode, CacheRules, Provider, Source, TtlRule, cache_rules
from ..model.errors import UnknownCacheModel, UnknownCacheProvider
from .simulator import (
    CacheBlock,
    CacheSimulator,
    Call,
    CallCost,
    SessionCost,
    SessionError,
    blocks_of_rendering,
    simulate,
)

__all__ = [
    "CacheBlock",
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
