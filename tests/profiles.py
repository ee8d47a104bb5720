"""The Hypothesis settings profiles, and the example counts the property tests draw.

Input: ``--hypothesis-profile dev|ci|long`` (Hypothesis's own pytest option; ``ci``
when none is given, which is what ``python -m pytest -q`` and CI run). Output: the
registered profiles, and ``examples(n)``: a test's example count for ``ci`` scaled to
the profile loaded (``dev`` a fifth, for a quick run while developing; ``long`` a
hundred times, for a long fuzzing run).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

__all__ = ["examples"]

# a profile's max_examples over the ci profile's is the factor every test's count takes
_CI_EXAMPLES = 100
_SHARED = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

settings.register_profile("ci", max_examples=_CI_EXAMPLES, print_blob=True, **_SHARED)
settings.register_profile("dev", max_examples=_CI_EXAMPLES // 5, **_SHARED)
settings.register_profile("long", max_examples=_CI_EXAMPLES * 100, **_SHARED)
settings.load_profile("ci")


def examples(n: int) -> int:
    """``n`` examples under the ci profile, scaled to the profile loaded (at least 1)."""
    return max(1, round(n * settings.default.max_examples / _CI_EXAMPLES))
