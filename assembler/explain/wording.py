"""The words both renderings use, so the terminal and the page say the same thing.

Input: counterfactuals and figures. Output: headings, one-line verdicts and figure
phrases (units always named, status always shown).
"""

from __future__ import annotations

from dataclasses import dataclass

from .counterfactuals import Counterfactuals
from .figures import Counterfactual, CounterfactualKind, Figure, FigureStatus

__all__ = ["KIND_TITLES", "Group", "figure_phrase", "grouped", "verdict"]

KIND_TITLES: dict[CounterfactualKind, tuple[str, str]] = {
    CounterfactualKind.BUDGET: (
        "More budget",
        "the least budget above this one at which the optimal bundle gains value, and what"
        " it gains",
    ),
    CounterfactualKind.LEFT_OUT: (
        "Left out",
        "each eligible identity the bundle leaves out, forced in at this budget; and the"
        " smallest budget whose optimal bundle admits it",
    ),
    CounterfactualKind.ADMITTED: (
        "Admitted",
        "each admitted identity, taken out and the request re-solved",
    ),
    CounterfactualKind.CONFLICT: (
        "Refusal",
        "each identity the refusal names: no longer required, or kept only in its cheapest"
        " form; what that saves and whether the request would then fit",
    ),
    CounterfactualKind.GATED: ("Gated", "a gated candidate at any budget"),
}


@dataclass(frozen=True, slots=True)
class Group:
    """The counterfactuals of one kind, with how many more were not evaluated."""

    kind: CounterfactualKind
    title: str
    about: str
    items: tuple[Counterfactual, ...]
    skipped: int


def grouped(answers: Counterfactuals) -> list[Group]:
    """The kinds that have counterfactuals, in the order of ``KIND_TITLES``."""
    skipped = dict(answers.skipped)
    groups = []
    for kind, (title, about) in KIND_TITLES.items():
        items = tuple(i for i in answers.items if i.kind is kind)
        if items:
            groups.append(Group(kind, title, about, items, skipped.get(kind, 0)))
    return groups


def verdict(item: Counterfactual, budget: int) -> str:
    """Whether the derived request has a legal bundle at the budget, in the question's words."""
    if item.feasible is None:
        return ""
    if item.kind is CounterfactualKind.BUDGET:
        return ""
    if item.kind is CounterfactualKind.LEFT_OUT:
        return "admits it" if item.feasible else f"cannot admit it within budget {budget}"
    if item.kind is CounterfactualKind.ADMITTED:
        return "re-solved" if item.feasible else "refused without it"
    if item.kind is CounterfactualKind.CONFLICT:
        return f"then fits budget {budget}" if item.feasible else f"still over budget {budget}"
    return "no budget admits it"


def figure_phrase(figure: Figure) -> str:
    """``label: shown [status]``, with the note when there is one."""
    text = f"{figure.label}: {figure.shown()}"
    if (
        figure.status is not FigureStatus.NOT_EVALUATED
        and figure.status is not FigureStatus.TIMED_OUT
    ):
        text += f" [{figure.status.value}]"
    if figure.note:
        text += f" ({figure.note})"
    return text
