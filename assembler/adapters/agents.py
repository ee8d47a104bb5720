"""The Agents SDK (the ``agents`` package): the assembled context before every model call.

Input: what an ``agents`` runner is about to send (``RunConfig.call_model_input_filter``:
the agent, its instructions and the Responses input items), or a ``Session``'s history.
Output: ``FittedInput``, the filter: the same input items fitted to the model's budget
(the most valuable items that fit, each function call with its output, a reasoning
item with what it produced, an answer with its question; the agent's function tools
and instructions counted too); ``FittedSession``, a ``Session`` whose history comes
back fitted.

``Runner.run(agent, text, run_config=RunConfig(call_model_input_filter=FittedInput(
budget=20_000)))``. The model is the agent's (a name, or a model object naming itself)
unless ``model=`` names it. When the history's required material does not fit, the
newest turn alone is sent (``on_refused="raise"`` raises ``FitRefused``). The items
are fitted in their own format (the API whose bodies hold an ``input`` list), whatever
the model: the SDK converts them for the model's provider itself. Needs the
``agents`` package (the extra named after it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..providers import registry
from .fallback import fitted_or_newest
from .fitting import Fitted, Relevance

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["FittedInput", "FittedSession"]


class FittedInput:
    """A ``call_model_input_filter``: each model call's input fitted to ``budget``
    tokens of ``model`` (see the module). ``last`` is the last fit; ``seen(fitted)``
    is called with each."""

    def __init__(
        self,
        *,
        model: str | None = None,
        budget: int | None = None,
        relevance: Relevance | None = None,
        counter: Any = None,
        window: int | None = None,
        ledger: Ledger | None = None,
        on_refused: str = "newest",
        seen: Callable[[Fitted], None] | None = None,
    ) -> None:
        self.model = model
        self.options: dict[str, Any] = {
            "budget": budget, "relevance": relevance, "counter": counter, "window": window,
            "ledger": ledger,
        }  # fmt: skip
        self.on_refused = on_refused
        self.seen = seen
        self.last: Fitted | None = None

    def __call__(self, data: Any) -> Any:
        from agents.run_config import ModelInputData

        agent = data.agent
        fitted = fitted_or_newest(
            list(data.model_data.input), _opens_turn, self.on_refused,
            model=self.model or model_name(agent.model), system=data.model_data.instructions,
            tools=tool_dicts(getattr(agent, "tools", [])), format=_items(), **self.options,
        )  # fmt: skip
        self.last = fitted
        if self.seen is not None:
            self.seen(fitted)
        return ModelInputData(input=fitted.messages, instructions=data.model_data.instructions)


class FittedSession:
    """A ``Session`` whose history comes back fitted to ``budget`` tokens of
    ``model``: the runner adds the new turn to it, so leave room for that in the
    budget. Every other call goes to ``session`` as it is."""

    def __init__(self, session: Any, *, model: str, budget: int, **options: Any) -> None:
        self.session = session
        self.session_id = session.session_id
        self.session_settings = getattr(session, "session_settings", None)
        self.model = model
        self.budget = budget
        self.options = options

    async def get_items(self, limit: int | None = None) -> list[Any]:
        items = await self.session.get_items()
        if not items:
            return []
        fitted = fitted_or_newest(
            items, _opens_turn, "newest", model=self.model, budget=self.budget, format=_items(),
            **self.options,
        )  # fmt: skip
        kept = list(fitted.messages)
        return kept if limit is None else kept[-limit:]

    async def add_items(self, items: list[Any]) -> None:
        await self.session.add_items(items)

    async def pop_item(self) -> Any:
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        await self.session.clear_session()


def model_name(model: Any) -> str | None:
    """The name of an agent's model: the name itself, or a model object's ``model``."""
    if model is None or isinstance(model, str):
        return model
    named = getattr(model, "model", None) or getattr(model, "model_name", None)
    return named if isinstance(named, str) else None


def tool_dicts(tools: list[Any]) -> list[dict[str, Any]]:
    """The agent's function tools as Responses tool definitions (what they cost); a
    hosted tool is sent by the SDK on its own and priced there."""
    out = []
    for tool in tools:
        schema = getattr(tool, "params_json_schema", None)
        if isinstance(schema, dict) and isinstance(getattr(tool, "name", None), str):
            out.append({"type": "function", "name": tool.name,
                        "description": getattr(tool, "description", "") or "",
                        "parameters": schema})  # fmt: skip
    return out


def _items() -> str:
    """The format of the SDK's input items: the API whose bodies hold an ``input`` list."""
    return registry.holding("input").NAME


def _opens_turn(item: Any) -> bool:
    return isinstance(item, dict) and item.get("role") == "user"
