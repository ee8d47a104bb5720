"""A Pydantic AI history processor: the assembled context before every model request.

Input: the message history a ``pydantic_ai.Agent`` is about to send (its
``history_processors`` hook, with the run's context, whose model names itself).
Output: the same kind of list, fitted: the most valuable messages (and parts) that fit
the model's budget, every tool call kept with its returns and every answer with its
question (``fit``; the list's room is ``pydantic_ai.py`` in ``providers/``).

``Agent(model, capabilities=[fitted_capability(budget=20_000)])`` (Pydantic AI's
``ProcessHistory`` capability), or ``history_processors=[fitted_history(...)]`` where
the installed version still takes history processors that way. The model is the
run's (``ctx.model.model_name``) unless ``model=`` names it; a name the tables do not
know needs ``counter=`` and ``window=``. When the history's required material does not
fit, the newest turn alone is sent (``on_refused="raise"`` raises ``FitRefused``).
Needs ``pip install 'assembler[pydantic-ai]'``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .fallback import fitted_or_newest
from .fitting import Fitted, Relevance

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["fitted_capability", "fitted_history"]


def fitted_history(
    *,
    model: str | None = None,
    budget: int | None = None,
    relevance: Relevance | None = None,
    counter: Any = None,
    window: int | None = None,
    ledger: Ledger | None = None,
    on_refused: str = "newest",
    seen: Callable[[Fitted], None] | None = None,
) -> Callable[[Any, list[Any]], list[Any]]:
    """A history processor (``RunContext`` and messages in, messages out) fitting each
    request's history to ``budget`` tokens of ``model``; ``seen(fitted)`` is called
    with each fit (to log what was sent)."""

    def processor(ctx: Any, messages: list[Any]) -> list[Any]:
        name = model or getattr(getattr(ctx, "model", None), "model_name", None)
        fitted = fitted_or_newest(
            messages, _opens_turn, on_refused, model=name, budget=budget, relevance=relevance,
            counter=counter, window=window, ledger=ledger,
        )  # fmt: skip
        if seen is not None:
            seen(fitted)
        return fitted.messages

    from pydantic_ai import RunContext

    # Pydantic AI hands the run's context to a processor whose first parameter says so
    processor.__annotations__ = {"ctx": RunContext, "messages": list, "return": list}
    return processor


def fitted_capability(**options: Any) -> Any:
    """Pydantic AI's ``ProcessHistory`` capability running ``fitted_history(**options)``."""
    from pydantic_ai.capabilities import ProcessHistory

    return ProcessHistory(fitted_history(**options))


def _opens_turn(message: Any) -> bool:
    return message.kind == "request" and any(
        part.part_kind == "user-prompt" for part in message.parts
    )
