"""The LangChain adapter and agent middleware, on the real langchain packages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

import assembler
from assembler.adapters import AssemblerMiddleware


@tool
def lookup(order: str) -> str:
    """Look up an order by number."""
    return "row " * 400


# each message list the chat model below was called with
SEEN: list[list[Any]] = []


class _Recording(GenericFakeChatModel):
    """A chat model that answers from a script and keeps each message list it got."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        SEEN.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kw)


def _history(rounds: int) -> list[Any]:
    history: list[Any] = [HumanMessage("Find what happened to order 4471.")]
    for k in range(rounds):
        call = {"id": f"c{k}", "name": "lookup", "args": {"order": str(k)}}
        history += [
            AIMessage(content="", tool_calls=[call]),
            ToolMessage(f"order {k}: " + "data " * 300, tool_call_id=f"c{k}"),
        ]
    return [*history, HumanMessage("What should we tell the customer?")]


def test_fit_returns_the_callers_own_message_objects() -> None:
    history = [SystemMessage("You are an agent."), *_history(15)]
    fitted = assembler.fit(history, tools=[lookup], model="gpt-4o", budget=2500)
    assert fitted.format == "langchain" and fitted.tokens <= 2500
    kept_ids = {id(m) for m in fitted.messages}
    for index, message in enumerate(history):
        if index not in fitted.dropped and index not in fitted.shortened:
            assert id(message) in kept_ids
    for index in fitted.shortened:
        (copy,) = [
            m
            for m in fitted.messages
            if getattr(m, "tool_call_id", None) == history[index].tool_call_id
        ]
        assert isinstance(copy, ToolMessage) and copy.content != history[index].content
    # each kept call keeps its results, and no result is kept without its call
    calls = {c["id"] for m in fitted.messages if isinstance(m, AIMessage) for c in m.tool_calls}
    results = {m.tool_call_id for m in fitted.messages if isinstance(m, ToolMessage)}
    assert calls == results
    assert fitted.body()["tools"][0]["function"]["name"] == "lookup"


def test_middleware_replaces_the_messages_of_each_model_call(tmp_path: Path) -> None:
    SEEN.clear()
    model = _Recording(
        messages=iter(
            [
                AIMessage(
                    content="",
                    tool_calls=[{"id": "c99", "name": "lookup", "args": {"order": "4471"}}],
                ),
                AIMessage(
                    content="done",
                    usage_metadata={"input_tokens": 3500, "output_tokens": 3, "total_tokens": 3503},
                ),
            ]
        )
    )
    with assembler.Ledger(tmp_path / "agent.db") as ledger:
        middleware = AssemblerMiddleware(model="gpt-4o", budget=3000, ledger=ledger)
        agent = create_agent(
            model, tools=[lookup], system_prompt="You are an agent.", middleware=[middleware]
        )
        history = _history(20)
        out = agent.invoke({"messages": history})
        # the state keeps the whole history; each model call saw a fitted list
        assert len(out["messages"]) == len(history) + 3
        assert len(SEEN) == 2
        for seen in SEEN:
            assert isinstance(seen[0], SystemMessage)
            assert sum(len(str(m.content)) for m in seen) < sum(
                len(str(m.content)) for m in out["messages"]
            )
        assert middleware.last is not None and middleware.last.tokens <= 3000
        # the reply's billed usage against the last fit's count; never scaled below 1
        expected = 3500 / middleware.last.counted
        assert ledger.calibration("gpt-4o", middleware.last.counter) == pytest.approx(expected)


def test_trim_messages_peer_runs_on_the_same_list() -> None:
    from langchain_core.messages import trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    history = _history(10)
    trimmed = trim_messages(
        history,
        max_tokens=2000,
        token_counter=count_tokens_approximately,
        strategy="last",
        start_on="human",
        include_system=True,
    )
    assert trimmed and isinstance(trimmed[0], HumanMessage)
