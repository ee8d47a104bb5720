"""When the required material of a whole history does not fit: the newest turn alone.

Input: a history (any list ``fit`` takes), which of its entries opens a turn (a user's
question), ``fit``'s options, and the ``FitRefused`` the whole history was answered
with.
Output: ``newest``: the fit of the history from its last question on (the question,
and what the agent did since), which a framework's agent can go on with; or the
refusal again, when even that does not fit (nothing smaller is a conversation).

The framework integrations (LangChain's middleware, the Agents SDK's input filter,
Pydantic AI's history processor) fall back to it by default, so that an agent
whose history has outgrown the budget keeps running instead of stopping on the
refusal (``on_refused="raise"`` keeps the old behaviour).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .fitting import FitRefused, Fitted, fit

__all__ = ["ON_REFUSED", "fitted_or_newest"]

# what an integration does when the whole history's required material does not fit
ON_REFUSED = ("newest", "raise")


def fitted_or_newest(
    history: Sequence[Any],
    opens_turn: Callable[[Any], bool],
    on_refused: str,
    **options: Any,
) -> Fitted:
    """``fit(history, **options)``; refused, the fit of its last turn alone."""
    if on_refused not in ON_REFUSED:
        from ..model.errors import InvalidRequest

        raise InvalidRequest(
            "on_refused", f"must be one of {', '.join(ON_REFUSED)}, not {on_refused!r:.40}"
        )
    try:
        return fit(list(history), **options)
    except FitRefused:
        if on_refused == "raise":
            raise
        start = next((i for i in range(len(history) - 1, -1, -1) if opens_turn(history[i])), 0)
        if start == 0:
            raise
        return fit(list(history[start:]), **options)
