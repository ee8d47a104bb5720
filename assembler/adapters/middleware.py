"""A LangChain agent middleware: the assembled context before every model call.

Input: the model request a ``langchain`` v1 agent (``create_agent``) is about to send:
its messages, system message and tools.
Output: the same request with its messages replaced by ``fit``'s selection for the
model (``wrap_model_call``, the documented hook that wraps each model call); the
agent's state keeps the whole history, so a later call chooses again from all of it.

``AssemblerMiddleware(model=MODEL, budget=8000)``: the budget covers the whole
body (system message, tools and messages); ``ledger=`` records each fit and
calibrates the count from the usage the model reports (the ``usage_metadata`` of its
reply). Needs ``pip install 'assembler[langchain]'``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from .fitting import Fitted, Relevance, fit

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["AssemblerMiddleware"]


class AssemblerMiddleware(AgentMiddleware):
    """Replaces a LangChain agent's messages, before each model call, with the most
    valuable selection that fits ``model`` within ``budget`` tokens."""

    def __init__(
        self,
        *,
        model: str,
        budget: int | None = None,
        relevance: Relevance | None = None,
        elide_above: int | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        super().__init__()
        self.model_name = model
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
        fitted = fit(
            list(request.messages),
            model=self.model_name,
            tools=list(request.tools or []),
            system=request.system_message,
            budget=self.budget,
            relevance=self.relevance,
            ledger=self.ledger,
            **options,
        )
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
