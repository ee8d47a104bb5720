"""Hypothesis strategies shared by the property tests.

Input: an optional ``assembler.tooling.generate.Shape``. Output: strategies drawing request
dicts (stated-model JSON) from the same generator the hunts and the benchmarks use,
so the property tests and the hunts explore the same space.

Every choice of the generator is drawn through Hypothesis' own random
(``use_true_random=False``), so a failing example shrinks: the generator writes its
coin flips so that Hypothesis' shrink direction (towards 0) turns optional traps
and structures off.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from assembler.tooling.generate import Shape, generate

__all__ = ["requests"]


def requests(shape: Shape | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """Request dicts drawn from ``generate`` with ``shape`` (default ``Shape.small()``)."""
    chosen = shape or Shape.small()
    return st.randoms(use_true_random=False, note_method_calls=False).map(
        lambda rng: generate(rng, chosen)
    )
