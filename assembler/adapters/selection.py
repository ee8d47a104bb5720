"""Selection: the request a fit's units make, and the forms its result chose.

Input: ``Unit`` values (``providers/units.py``: each room cuts a caller's list into
them, every form priced), a relevance for each, and the token budget left for them.
Output: the typed ``Request`` the units make (``request_of``: one candidate per form,
identities per unit, tool calls coupled with their results by a group, the system
prompt, tools and the current turn required), made and validated once per fit;
``with_budget``, the same request with another budget, as each measuring round needs it
(an edit of a validated request that needs no second judging); from a result, the
chosen form of each unit (``chosen_forms``); ``recency``, the default relevance.

The candidates are written as the contract states them and parsed once
(``model.parse``): their defaults and derived fields have one home, the parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..model.limits import DEFAULT_LIMITS
from ..model.parse import parse_request, vouched
from ..model.types import Request, Result
from ..providers.units import FORM_WEIGHT, Form, Unit

__all__ = ["chosen_forms", "recency", "request_data", "request_of", "with_budget"]


def recency(index: int, count: int) -> float:
    """The default relevance: from 0.1 for the oldest message to 1.0 for the newest."""
    if count <= 1:
        return 1.0
    return round(0.1 + 0.9 * index / (count - 1), 3)


def _form_id(unit: Unit, form: Form) -> str:
    return unit.key if len(unit.forms) == 1 else f"{unit.key}:{form.name}"


def request_of(
    units: Sequence[Unit], budget: int, relevance: Sequence[float], task_id: str = "fit"
) -> Request:
    """The request whose optimal bundle is the best selection of ``units`` within
    ``budget`` tokens (``relevance[i]`` is unit i's, in [0, 1]), validated once."""
    return parse_request(request_data(units, budget, relevance, task_id))


def request_data(
    units: Sequence[Unit], budget: int, relevance: Sequence[float], task_id: str = "fit"
) -> dict[str, Any]:
    """``request_of``'s request as the contract writes it (JSON values)."""
    candidates: list[dict[str, Any]] = []
    for unit, weight in zip(units, relevance, strict=True):
        for form in unit.forms:
            candidate: dict[str, Any] = {
                "id": _form_id(unit, form),
                "identity": unit.key,
                "form": form.name,
                "cost": form.tokens,
                "relevance": round(min(1.0, max(0.0, weight)) * FORM_WEIGHT[form.name], 3),
                "kind": unit.kind.value,
                "turn": max(unit.message, 0),
                "content": unit.text if form.name == "full" else _text_of(form),
            }
            if unit.kind.is_instruction:
                candidate["channel"] = "system"
            if unit.required:
                candidate["required"] = True
            if unit.group is not None:
                candidate["group"] = unit.group
            if unit.depends_on:
                candidate["depends_on"] = list(unit.depends_on)
            candidates.append(candidate)
    return {"task": {"id": task_id, "budget": max(0, budget)}, "candidates": candidates}


def with_budget(request: Request, budget: int) -> Request:
    """``request`` (validated) with ``budget`` tokens (0 when negative): a whole number
    in range, so the edit stays valid under the limits it was judged by."""
    edited = replace(request, task=replace(request.task, budget=max(0, budget)))
    return vouched(edited, request.validated_under or DEFAULT_LIMITS)


def _text_of(form: Form) -> str:
    import json

    return json.dumps(form.payload, ensure_ascii=False, sort_keys=True, default=str)


def chosen_forms(units: Sequence[Unit], result: Result) -> dict[str, Form]:
    """unit key -> the form the bundle admitted (units left out are absent)."""
    selected = set(result.selected)
    out: dict[str, Form] = {}
    for unit in units:
        for form in unit.forms:
            if _form_id(unit, form) in selected:
                out[unit.key] = form
    return out
