"""The objective's arithmetic: form values and the canonical tie-break.

Input: a candidate's relevance and id, the task's threshold.
Output: exact integers. Every strategy, the oracle and the verifier use these
definitions, so "value" means the same thing everywhere.

The lexicographic order of bundles (``models/README.md``): higher total value V,
then lower total cost C, then lower tie-break weight H, then, walking forms in
canonical order (sorted by id), the bundle without the first differing form.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

__all__ = ["bundle_key", "form_value", "tiebreak_weight", "tiebreak_weights"]

_THOUSAND = Decimal(1000)


@lru_cache(maxsize=8192)
def form_value(relevance: float, min_relevance: float) -> int:
    """round_half_up(relevance x 1000), or 0 below the task's threshold.

    Computed in decimal from the shortest representation of the float, so that
    0.0005 is worth 1 and 0.1235 is worth 124, as a reader of the JSON expects
    (binary floating point would give 0.12349999... and round down).
    """
    if relevance < min_relevance:
        return 0
    exact = Decimal(repr(relevance)) * _THOUSAND
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def tiebreak_weight(form_id: str) -> int:
    """1 + the first four bytes of sha256(id): positive, so filler is never preferred."""
    digest = hashlib.sha256(form_id.encode("utf-8")).digest()
    return 1 + int.from_bytes(digest[:4], "big")


def tiebreak_weights(form_ids: Iterable[str]) -> list[int]:
    """``tiebreak_weight`` of each id: each made once per process and kept (``_KEPT``:
    an agent's calls offer mostly the ids of the call before), the missing ones in one
    loop (a call per form cost a third of building a 100k-form problem)."""
    ids = form_ids if isinstance(form_ids, list | tuple) else list(form_ids)
    kept = _KEPT
    weights: list[int | None] = list(map(kept.get, ids))
    if None not in weights:
        return weights  # type: ignore[return-value]  # no None in it
    sha256, from_bytes = hashlib.sha256, int.from_bytes
    if len(kept) + len(ids) > _KEEP:
        kept.clear()  # bounded: the ids of the calls before are hashed again if offered
    keep = len(ids) <= _KEEP
    for k, (i, w) in enumerate(zip(ids, weights, strict=True)):
        if w is None:
            w = weights[k] = 1 + from_bytes(sha256(i.encode("utf-8")).digest()[:4], "big")
            if keep:
                kept[i] = w
    return weights  # type: ignore[return-value]  # every None replaced


# the ids whose weights are kept at most (a few MB of names at most)
_KEEP = 1 << 16
_KEPT: dict[str, int] = {}


def bundle_key(
    value: int, cost: int, weight: int, members: tuple[bool, ...]
) -> tuple[int, int, int, tuple[bool, ...]]:
    """Sort key: the smallest key is the preferred bundle.

    ``members`` flags each eligible form, in canonical order, as in the bundle or
    not; False sorts first, so the bundle without the first differing form wins.
    """
    return (-value, cost, weight, members)
