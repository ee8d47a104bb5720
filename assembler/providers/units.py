"""Units: the pieces of a caller's list the solver chooses among, as every room cuts them.

Input: what a room reads of a caller's list: a message, a tool definition or a tool
result, and the function that prices a piece.
Output: ``Unit`` values (one per message, tool definition or tool result, each with its
``Form`` values and their exact token counts), and the helpers every room shares:
``first_and_last_user`` (the turns every fitting keeps) and ``tool_result_forms``.

Long tool results get generated alternative forms (``tool_result_forms``): the full
result; its head and tail around an elision marker at several sizes (fractions of the
room the budget leaves, ``Elision.room``, and halvings of the result), each valued by
the share of the result it keeps; and a placeholder that keeps the call/result pair (as
a provider's context editing clears a result). Each form is a complete, valid piece for
the provider, priced exactly by the caller's meter, so the exact choice can use the
room the budget has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..model.types import Kind

__all__ = [
    "ELIDE_ABOVE",
    "FORM_WEIGHT",
    "Elision",
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


# the shares of the room a shortened result is sized to, and the most sizes one gets
_ROOM_SHARES = (0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)
_MOST_SIZES = 24


@dataclass(frozen=True, slots=True)
class Elision:
    """How long tool results are shortened: above ``above`` tokens they get shorter
    forms, sized to shares of ``room`` (the tokens the budget leaves, when known) and
    to halvings of the result."""

    above: int = ELIDE_ABOVE
    room: int | None = None


@dataclass(frozen=True, slots=True)
class Form:
    """One way of sending a unit: ``payload`` is the provider-native piece (a message,
    a block or a tool definition) and ``tokens`` its exact count as billed; ``weight``
    the share of the unit's relevance it keeps (None: ``FORM_WEIGHT`` of its name) and
    ``key`` what tells apart forms of one name (the sizes of a shortened result)."""

    name: str
    payload: Any
    tokens: int
    weight: float | None = None
    key: str = ""

    @property
    def share(self) -> float:
        return FORM_WEIGHT[self.name] if self.weight is None else self.weight


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
    """The head and tail of a long text (``keep`` characters each) around a marker
    saying what was left out."""
    share = max(1, min(keep, (len(text) - 1) // 2))
    head, tail = text[:share], text[-share:]
    return (
        f"{head}\n[... {len(text) - 2 * share} characters (of ~{tokens} tokens) elided ...]\n{tail}"
    )


def placeholder_text(call_id: str, tokens: int) -> str:
    return f"[tool result for call {call_id} cleared to save context: ~{tokens} tokens]"


def _sizes(tokens: int, elision: Elision) -> list[int]:
    """The token sizes a result of ``tokens`` is shortened to, largest first."""
    wanted = {tokens >> k for k in range(1, 20) if tokens >> k >= elision.above // 2}
    if elision.room:
        wanted |= {int(elision.room * share) for share in _ROOM_SHARES}
        # a form larger than the whole room could never be chosen: not priced at all
        wanted = {w for w in wanted if w <= elision.room}
    sizes: list[int] = []
    for size in sorted((w for w in wanted if 64 <= w < tokens * 0.97), reverse=True):
        if not sizes or size < sizes[-1] * 0.97:
            sizes.append(size)
    return sizes[:_MOST_SIZES]


def tool_result_forms(
    text: str,
    call_id: str,
    make: Callable[[str], Any],
    price: Callable[[Any], int],
    elide_above: Elision | int = ELIDE_ABOVE,
    whole: Any = None,
) -> tuple[Form, ...]:
    """The forms of one tool result whose text is ``text``: ``whole``, the native piece
    as given (sent byte for byte when kept whole; None: ``make(text)``), ``make(text)``
    builds the piece with a shorter text, ``price(piece)`` counts it."""
    elision = elide_above if isinstance(elide_above, Elision) else Elision(elide_above)
    full = make(text) if whole is None else whole
    tokens = price(full)
    forms = [Form("full", full, tokens)]
    if tokens > elision.above and text:
        per_token = len(text) / tokens
        seen: set[int] = set()
        for size in _sizes(tokens, elision):
            keep = int(size * per_token / 2)
            if keep < 1 or 2 * keep >= len(text):
                continue
            trimmed = make(elided_text(text, tokens, keep))
            trimmed_tokens = price(trimmed)
            # the next, smaller size is aimed with the characters per token just measured
            per_token = 2 * keep / max(1, trimmed_tokens)
            if trimmed_tokens < tokens and trimmed_tokens not in seen:
                seen.add(trimmed_tokens)
                # a shortened result is worth the share of the result it keeps
                weight = round(0.1 + 0.8 * trimmed_tokens / tokens, 3)
                key = f"trimmed{len(forms)}"
                forms.append(Form("trimmed", trimmed, trimmed_tokens, weight, key))
        placeholder = make(placeholder_text(call_id, tokens))
        forms.append(Form("placeholder", placeholder, price(placeholder)))
    return tuple(forms)


def short(value: Any) -> str:
    """A caller's value in a shape fault's message: its repr, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
