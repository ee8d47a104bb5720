"""Units: the pieces of a transcript the solver chooses among, and the request they make.

Input: ``Unit`` values built by a provider adapter (one per message, tool definition
or tool result, each with its forms and their exact token counts), a relevance for
each, and the token budget left for them.
Output: an assembler request (``request_of``: one candidate per form, identities per
unit, tool calls coupled with their results by a group, the system prompt, tools and
the current turn required) and, from a result, the chosen form of each unit
(``chosen_forms``).

Long tool results get generated alternative forms (``tool_result_forms``): the full
result; its head and tail around an elision marker; and a placeholder that keeps the
call/result pair (as Anthropic's context editing clears a result). Each form is a
complete, valid piece for the provider, priced by the caller's meter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.types import Kind, Result

__all__ = [
    "ELIDE_ABOVE",
    "Form",
    "Unit",
    "chosen_forms",
    "elided_text",
    "first_and_last_user",
    "placeholder_text",
    "recency",
    "request_of",
    "tool_result_forms",
]

# tool results longer than this many tokens get the shorter forms as alternatives
ELIDE_ABOVE = 200
# what share of a unit's relevance each generated form keeps
_FORM_WEIGHT = {"full": 1.0, "trimmed": 0.5, "placeholder": 0.05}


@dataclass(frozen=True, slots=True)
class Form:
    """One way of sending a unit: ``payload`` is the provider-native piece (a message,
    a block or a tool definition) and ``tokens`` its exact count as billed."""

    name: str
    payload: Any
    tokens: int


@dataclass(frozen=True, slots=True)
class Unit:
    """One thing to keep or drop: its forms are alternatives (at most one is sent).
    ``message`` and ``part`` give its place in the native list (tools: message -1)."""

    key: str
    message: int
    part: int
    kind: Kind
    forms: tuple[Form, ...]
    required: bool = False
    # units sharing a group are sent all together or not at all (a call turn and
    # every result that answers it)
    group: str | None = None
    depends_on: tuple[str, ...] = ()
    # the unit's text, for a relevance function and for the ledger's content
    text: str = ""


def first_and_last_user(messages: Sequence[Any]) -> set[int]:
    """The indices of a transcript's first and last user messages: the task and the
    question, which every fitting keeps."""
    users = [
        i for i, m in enumerate(messages) if isinstance(m, Mapping) and m.get("role") == "user"
    ]
    return {users[0], users[-1]} if users else set()


def recency(index: int, count: int) -> float:
    """The default relevance: from 0.1 for the oldest message to 1.0 for the newest."""
    if count <= 1:
        return 1.0
    return round(0.1 + 0.9 * index / (count - 1), 3)


def elided_text(text: str, tokens: int, keep: int = 600) -> str:
    """The head and tail of a long text around a marker saying what was left out."""
    share = max(1, min(keep, len(text) // 4))
    head, tail = text[:share], text[-share:]
    return (
        f"{head}\n[... {len(text) - 2 * share} characters (of ~{tokens} tokens) elided ...]\n{tail}"
    )


def placeholder_text(call_id: str, tokens: int) -> str:
    return f"[tool result for call {call_id} cleared to save context: ~{tokens} tokens]"


def tool_result_forms(
    text: str,
    call_id: str,
    make: Callable[[str], Any],
    price: Callable[[Any], int],
    elide_above: int = ELIDE_ABOVE,
) -> tuple[Form, ...]:
    """The forms of one tool result whose text is ``text``: ``make(text)`` builds the
    native piece with that text, ``price(piece)`` counts it."""
    full = make(text)
    tokens = price(full)
    forms = [Form("full", full, tokens)]
    if tokens > elide_above and text:
        trimmed = make(elided_text(text, tokens))
        trimmed_tokens = price(trimmed)
        if trimmed_tokens < tokens:
            forms.append(Form("trimmed", trimmed, trimmed_tokens))
        placeholder = make(placeholder_text(call_id, tokens))
        forms.append(Form("placeholder", placeholder, price(placeholder)))
    return tuple(forms)


def _form_id(unit: Unit, form: Form) -> str:
    return unit.key if len(unit.forms) == 1 else f"{unit.key}:{form.name}"


def request_of(
    units: Sequence[Unit], budget: int, relevance: Sequence[float], task_id: str = "fit"
) -> dict[str, Any]:
    """The request whose optimal bundle is the best selection of ``units`` within
    ``budget`` tokens (``relevance[i]`` is unit i's, in [0, 1])."""
    candidates: list[dict[str, Any]] = []
    for unit, weight in zip(units, relevance, strict=True):
        for form in unit.forms:
            candidate: dict[str, Any] = {
                "id": _form_id(unit, form),
                "identity": unit.key,
                "form": form.name,
                "cost": form.tokens,
                "relevance": round(min(1.0, max(0.0, weight)) * _FORM_WEIGHT[form.name], 3),
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
