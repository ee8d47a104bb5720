"""Refusals in the caller's words: which of their messages did not fit, and why.

Input: the assembler's non-bundle ``Result`` of a fit, its units, the caller's budget,
the framing taken off it (named), the re-solve margin, the meter and the list's name.
Output: one sentence naming the caller's own indices (``messages[0]``, ``tools[1]``,
``system``), never the request's internal ids, the tokens they need, and how the
budget given became the budget they had to fit in.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model.types import Result
from ..providers.meter import Meter
from ..providers.units import Unit

__all__ = ["label_of", "refusal_message"]


def label_of(unit: Unit, where: str) -> str:
    """The caller's name for a unit: ``messages[3]``, ``tools[0]`` or ``system``."""
    if unit.message == -1:
        return f"tools[{unit.part}]"
    if unit.message == -2:
        return "system"
    return f"{where}[{unit.message}]"


def _labels(units: Sequence[Unit], identities: set[str], where: str) -> list[str]:
    seen: list[str] = []
    for unit in units:
        label = label_of(unit, where)
        if unit.key in identities and label not in seen:
            seen.append(label)
    return seen


def _listed(labels: list[str]) -> str:
    if len(labels) > 8:
        labels = [*labels[:7], f"{len(labels) - 7} more"]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def refusal_message(
    result: Result,
    units: Sequence[Unit],
    budget: int,
    overheads: Sequence[tuple[str, int]],
    reserve: int,
    meter: Meter,
    where: str,
) -> str:
    refusal = result.refusal
    if refusal is None:
        return (
            f"no selection of the {where} was found for {meter.profile.name} within the time"
            f" limit (budget {budget} tokens)"
        )
    # the cheapest closure of the required material, or that material when unpriced
    identities = {form.split(":")[0] for form in refusal.forms} or {
        unit.key for unit in units if unit.required
    }
    required = _labels(units, identities, where)
    taken = [(name, tokens) for name, tokens in overheads if tokens] + (
        [("a margin measured when the parts, counted together, came out longer", reserve)]
        if reserve
        else []
    )
    left = budget - sum(tokens for _, tokens in taken)
    less = "".join(f" less {tokens} for {name}" for name, tokens in taken)
    need = refusal.mandatory_cost
    if need is None:
        need_text = f"at least {refusal.mandatory_cost_lower} tokens"
        over = ""
    else:
        need_text = f"{need} tokens"
        over = f": {need - left} over"
    return (
        f"the {where} that must be kept ({_listed(required)}: the system prompt, the tools,"
        f" the first and last user messages and the newest one with its tool results)"
        f" need {need_text} as {meter.profile.name} bills them; the budget {budget}{less}"
        f" leaves {left}{over}"
    )
