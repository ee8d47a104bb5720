"""Units: the pieces of a caller's list the solver chooses among, as every room cuts them.

Input: what a room reads of a caller's list: a message, a tool definition or a tool
result, and the function that prices a piece.
Output: ``Unit`` values (one per message, tool definition or tool result, each with its
``Form`` values and their exact token counts), and the helpers every room shares:
``first_and_last_user`` (the turns every fitting keeps) and ``tool_result_forms``.

Long tool results get generated alternative forms (``tool_result_forms``): the full
result; its head and tail around an elision marker; and a placeholder that keeps the
call/result pair (as a provider's context editing clears a result). Each form is a
complete, valid piece for the provider, priced by the caller's meter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.types import Kind

__all__ = [
    "ELIDE_ABOVE",
    "FORM_WEIGHT",
    "Form",
    "Unit",
    "elided_text",
    "first_and_last_user",
    "placeholder_text",
    "short",
    "tool_result_forms",
]

# tool results longer than this many tokens get the shorter forms as alternatives
ELIDE_ABOVE = 200
# what share of a unit's relevance each generated form keeps
FORM_WEIGHT = {"full": 1.0, "trimmed": 0.5, "placeholder": 0.05}


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


def short(value: Any) -> str:
    """A caller's value in a shape fault's message: its repr, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
