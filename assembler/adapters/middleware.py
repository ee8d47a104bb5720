"""A LangChain agent middleware: the assembled context before every model call.

Input: the model request a ``langchain`` v1 agent (``create_agent``) is about to send:
its messages, system message and tools.
Output: the same request with its messages replaced by ``fit``'s selection for the
model (``wrap_model_call``, the documented hook that wraps each model call); the
agent's state keeps the whole history, so a later call chooses again from all of it.

``AssemblerMiddleware(budget=8000)``: the budget covers the whole body (system
message, tools and messages); the model is the request's own (its chat model's
``model_name`` or ``model``) unless ``model=`` names it. ``ledger=`` records each fit
and calibrates the count from the usage the model reports (the ``usage_metadata`` of
its reply). When the history's required material does not fit, the newest turn alone
is sent and the agent goes on (``on_refused="raise"``: ``FitRefused`` stops it). Needs
``pip install 'assembler[langchain]'``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from .fallback import fitted_or_newest
from .fitting import Fitted, Relevance

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["AssemblerMiddleware"]


class AssemblerMiddleware(AgentMiddleware):
    """Replaces a LangChain agent's messages, before each model call, with the most
    valuable selection that fits ``model`` within ``budget`` tokens."""

    def __init__(
        self,
        *,
        model: str | None = None,
        budget: int | None = None,
        relevance: Relevance | None = None,
        elide_above: int | None = None,
        ledger: Ledger | None = None,
        counter: Any = None,
        window: int | None = None,
        on_refused: str = "newest",
    ) -> None:
        super().__init__()
        self.model_name = model
        self.counter = counter
        self.window = window
        self.on_refused = on_refused
        self.budget = budget
        self.relevance = relevance
        self.elide_above = elide_above
        self.ledger = ledger
        # the last fit, for a caller that wants to see what was sent
        self.last: Fitted | None = None

    def _fitted(self, request: ModelRequest) -> ModelRequest:
        options: dict[str, Any] = {}
        if self.elide_above is not None:
            options["elide_above"] = self.elide_above
        fitted = fitted_or_newest(
            list(request.messages), _opens_turn, self.on_refused,
            model=self.model_name or _model_name(request.model), tools=list(request.tools or []),
            system=request.system_message, budget=self.budget, relevance=self.relevance,
            ledger=self.ledger, counter=self.counter, window=self.window, **options,
        )  # fmt: skip
        self.last = fitted
        return request.override(messages=fitted.messages)

    def _calibrate(self, response: Any) -> None:
        if self.ledger is None or self.last is None:
            return
        # a handler answers a ModelResponse, an AIMessage, or an extended response
        inner = getattr(response, "model_response", response)
        messages = getattr(inner, "result", None) or [inner]
        usage = next(
            (m.usage_metadata for m in messages if getattr(m, "usage_metadata", None)), None
        )
        if usage:
            self.last.record_usage(self.ledger, usage)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        response = handler(self._fitted(request))
        self._calibrate(response)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(self._fitted(request))
        self._calibrate(response)
        return response


def _model_name(model: Any) -> str | None:
    """A LangChain chat model's name (``ChatOpenAI.model_name``, ``ChatAnthropic.model``)."""
    for attribute in ("model_name", "model", "model_id"):
        named = getattr(model, attribute, None)
        if isinstance(named, str) and named:
            return named
    return None


def _opens_turn(message: Any) -> bool:
    return getattr(message, "type", None) == "human"
