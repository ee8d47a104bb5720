"""``explain``: one compilation, inspected.

Input: a request (a mapping of parsed JSON or a typed ``Request``), optionally the
result that answers it (a ``Result`` or its JSON dict; compiled here with the limits'
exact strategy when absent), and ``ExplainLimits`` for the counterfactuals.
Output: an ``Explanation``: the scene, the verifiers' findings, the diagnostics, the
counterfactuals, the cache view of a request with a cache section (``CacheView``: what
it kept of the previous call, read and wrote, its price against the cache-blind
optimum's, the first divergence), and, for a recorded compilation, the comparison that
``recorded`` adds.

The chain is visible: parse -> pair the result with its request -> gates -> verify
(and the rendering, when there is one) -> counterfactuals -> scene -> diagnostics.
Showing it is ``text`` and ``html``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import assemble
from ..ledger.cacheview import CacheView, cache_view
from ..ledger.diff import Diff
from ..ledger.usage import UsageRow
from ..model.parse import parse_request
from ..model.rendering import RenderFormat
from ..model.types import Request, Result, Violation
from ..stages.gates import apply_gates
from ..verifiers.bundle import verify
from ..verifiers.rendering import verify_rendering
from .counterfactuals import Counterfactuals, counterfactuals
from .diagnostics import Diagnostic, diagnose
from .limits import ExplainLimits
from .load import paired
from .scene import Scene, build_scene

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Explanation:
    request: Request
    result: Result
    scene: Scene
    violations: tuple[Violation, ...]
    # the render verifier's findings, when the result carries a rendering
    render_violations: tuple[Violation, ...]
    diagnostics: tuple[Diagnostic, ...]
    counterfactuals: Counterfactuals
    # for a recorded compilation (``recorded``): where it was read from, and what
    # changed since another compilation of its session (None: the first of its session)
    recorded: str | None = None
    comparison: Diff | None = None
    # a request with a cache section: what the provider held and this call kept of it
    cache: CacheView | None = None
    # a recorded compilation whose body's usage was reported: what the provider billed
    billed: UsageRow | None = None


def explain(
    request: Mapping[str, Any] | Request,
    result: Result | Mapping[str, Any] | None = None,
    *,
    limits: ExplainLimits | None = None,
    render: str | RenderFormat | None = None,
) -> Explanation:
    """Inspect ``result`` (or a fresh compilation of ``request``, rendered in ``render``
    when given) with counterfactuals."""
    chosen = ExplainLimits() if limits is None else limits
    parsed = parse_request(request)
    if result is None:
        result = assemble(parsed, chosen.settings, render=render)
    answer = paired(parsed, result)
    rendering = answer.rendering
    gates = apply_gates(parsed, require_content=rendering is not None)
    violations = verify(parsed, answer)
    unfaithful = [] if rendering is None else verify_rendering(parsed, answer, rendering)
    answers = counterfactuals(parsed, answer, gates, chosen)
    return Explanation(
        request=parsed,
        result=answer,
        scene=build_scene(parsed, answer),
        violations=tuple(violations),
        render_violations=tuple(unfaithful),
        diagnostics=diagnose(parsed, gates, answer, violations, unfaithful, answers),
        counterfactuals=answers,
        cache=cache_view(parsed, answer.to_dict()),
    )
