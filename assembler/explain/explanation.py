"""``explain``: one compilation, inspected.

Input: a request (a mapping of parsed JSON or a typed ``Request``), optionally the
result that answers it (a ``Result`` or its JSON dict; compiled here with the limits'
exact strategy when absent), and ``Limits`` for the counterfactuals.
Output: an ``Explanation``: the scene, the verifier's findings, the diagnostics, the
counterfactuals and, when one is given, the comparison with another compilation.

The chain is visible: parse -> pair the result with its request -> gates -> verify
-> counterfactuals -> scene -> diagnostics. Rendering it is ``text`` and ``html``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import assemble
from ..model.parse import parse_request
from ..model.types import Request, Result, Violation
from ..stages.gates import apply_gates
from ..verifiers.bundle import verify
from .counterfactuals import Counterfactuals, counterfactuals
from .diagnostics import Diagnostic, diagnose
from .limits import Limits
from .load import paired
from .scene import Scene, build_scene

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True, slots=True)
class Explanation:
    request: Request
    result: Result
    scene: Scene
    violations: tuple[Violation, ...]
    diagnostics: tuple[Diagnostic, ...]
    counterfactuals: Counterfactuals


def explain(
    request: Mapping[str, Any] | Request,
    result: Result | Mapping[str, Any] | None = None,
    *,
    limits: Limits | None = None,
) -> Explanation:
    """Inspect ``result`` (or a fresh compilation of ``request``) with counterfactuals."""
    chosen = Limits() if limits is None else limits
    parsed = parse_request(request)
    if result is None:
        result = assemble(parsed, strategy=chosen.strategy, workers=chosen.workers)
    answer = paired(parsed, result)
    gates = apply_gates(parsed)
    violations = verify(parsed, answer)
    answers = counterfactuals(parsed, answer, gates, chosen)
    return Explanation(
        request=parsed,
        result=answer,
        scene=build_scene(parsed, answer),
        violations=tuple(violations),
        diagnostics=diagnose(parsed, gates, answer, violations, answers),
        counterfactuals=answers,
    )
