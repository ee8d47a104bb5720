"""The agent frameworks, each in a real agent loop of its own package with that
package's test model: LangChain's ``create_agent`` with a scripted chat model, the
OpenAI Agents SDK's ``Runner`` with its ``ScriptedModel``, Pydantic AI's ``Agent`` with
its ``FunctionModel``. In each, every model call gets a history fitted to the budget
(counted as the body fit builds), tool calls with their results, the model named by
the framework itself (no name repeated), and a history whose required material has
outgrown the budget goes on with its newest turn instead of stopping the agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import assembler
from assembler.adapters import FitRefused

pytestmark = pytest.mark.unit

LOG = "shipped carrier delayed warehouse " * 500


# -- the OpenAI Agents SDK ------------------------------------------------------------


def _agents_loop(
    budget: int, questions: list[str], history: list[Any] | None = None, **options: Any
) -> tuple[Any, list[Any]]:
    agents = pytest.importorskip("agents")
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    from assembler.adapters.agents import FittedInput

    @agents.function_tool
    def read_log(order: str) -> str:
        """Read an order's log."""
        return LOG

    def respond(call: Any) -> Any:
        turn = len(model.calls)
        if call.input[-1].get("role") == "user":
            return [function_call("read_log", {"order": "4471"}, call_id=f"c{turn}")]
        return [assistant_message("It ships Friday.", item_id=f"m{turn}")]

    model = ScriptedModel([ModelStep.respond(respond) for _ in range(2 * len(questions))])
    agent = agents.Agent(name="support", instructions="You help.", model=model, tools=[read_log])
    fits: list[Any] = []
    config = agents.RunConfig(
        call_model_input_filter=FittedInput(budget=budget, seen=fits.append, **options),
        tracing_disabled=True,
    )
    history = list(history or [])
    for question in questions:
        turn = [*history, {"role": "user", "content": question}]
        history = asyncio.run(agents.Runner.run(agent, turn, run_config=config)).to_input_list()
    return model, fits


def test_the_agents_sdk_sends_each_call_a_fitted_history() -> None:
    model, fits = _agents_loop(1500, [f"Where is order {n}?" for n in range(4)], model="gpt-4o")
    assert len(model.calls) == 8 and len(fits) == 8
    for call, fitted in zip(model.calls, fits, strict=True):
        assert call.input == fitted.messages and fitted.tokens <= 1500
        calls = {i["call_id"] for i in call.input if i.get("type") == "function_call"}
        outputs = {i["call_id"] for i in call.input if i.get("type") == "function_call_output"}
        assert calls == outputs
    assert any(f.shortened for f in fits)  # the logs did not fit whole


def test_the_agents_sdk_goes_on_with_the_newest_turn_when_the_first_does_not_fit() -> None:
    earlier = [{"role": "user", "content": "context " * 2500},
               {"role": "assistant", "content": "Noted."}]  # fmt: skip
    model, _ = _agents_loop(1200, ["Where is order 1?"], earlier, model="gpt-4o")
    assert model.calls[0].input[0] == {"role": "user", "content": "Where is order 1?"}
    with pytest.raises(FitRefused):
        _agents_loop(1200, ["Where is order 1?"], earlier, model="gpt-4o", on_refused="raise")


def test_an_agents_sdk_session_gives_back_its_history_fitted(tmp_path: Any) -> None:
    agents = pytest.importorskip("agents")
    from agents.testing import ModelStep, ScriptedModel, assistant_message

    from assembler.adapters.agents import FittedSession

    inner = agents.SQLiteSession("user-42", str(tmp_path / "sessions.db"))
    session = FittedSession(inner, model="gpt-4o", budget=800)
    model = ScriptedModel([ModelStep(output=[assistant_message("noted " * 150)]) for _ in range(6)])
    agent = agents.Agent(name="support", instructions="You help.", model=model)
    config = agents.RunConfig(tracing_disabled=True)
    for n in range(6):
        asyncio.run(agents.Runner.run(agent, f"Question {n}?", session=session, run_config=config))
    whole = asyncio.run(inner.get_items())
    fitted = asyncio.run(session.get_items())
    assert len(whole) == 12 and 0 < len(fitted) < len(whole)
    assert assembler.fit(fitted, model="gpt-4o", budget=800).tokens <= 800
    assert fitted[-1] == whole[-1]  # the newest item stays


# -- Pydantic AI ------------------------------------------------------------------------


def test_pydantic_ai_fits_each_request_and_names_the_model_itself() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from assembler.adapters.pydantic_ai import fitted_capability

    seen: list[list[Any]] = []

    def answer(messages: list[Any], info: Any) -> ModelResponse:
        seen.append(messages)
        if messages[-1].parts[-1].part_kind == "user-prompt":
            call = ToolCallPart("read_log", {"order": "4471"}, tool_call_id=f"c{len(seen)}")
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart("It ships Friday.")])

    def read_log(order: str) -> str:
        return LOG

    fits: list[Any] = []
    agent = Agent(
        FunctionModel(answer, model_name="gpt-4o"), system_prompt="You help.", tools=[read_log],
        capabilities=[fitted_capability(budget=1500, seen=fits.append)],
    )  # fmt: skip
    history: list[Any] = []
    for n in range(4):
        history = agent.run_sync(f"Where is order {n}?", message_history=history).all_messages()
    assert len(seen) == 8 and all(f.model == "gpt-4o" and f.tokens <= 1500 for f in fits)
    for messages in seen:
        calls = {p.tool_call_id for m in messages for p in m.parts if p.part_kind == "tool-call"}
        returns = {
            p.tool_call_id for m in messages for p in m.parts if p.part_kind == "tool-return"
        }
        assert calls == returns
    assert any(f.shortened for f in fits)
    # the fitted history reads as chat messages fit built, within the budget
    assert assembler.fit(seen[-1], model="gpt-4o", budget=1500).tokens <= 1500


# -- LangChain --------------------------------------------------------------------------


def test_the_langchain_middleware_names_the_model_and_does_not_stop_the_agent() -> None:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage

    from assembler.adapters import AssemblerMiddleware

    calls: list[list[Any]] = []

    class Named(GenericFakeChatModel):
        model_name: str = "gpt-4o"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            calls.append(list(messages))
            return super()._generate(messages, stop, run_manager, **kw)

    history = [HumanMessage("context " * 2500), AIMessage("Noted."), HumanMessage("And now?")]
    middleware = AssemblerMiddleware(budget=1200)
    agent = create_agent(
        Named(messages=iter([AIMessage("Done.")])), tools=[], middleware=[middleware]
    )
    agent.invoke({"messages": history})
    assert middleware.last is not None and middleware.last.model == "gpt-4o"
    assert [m.content for m in calls[-1]] == ["And now?"]  # the newest turn alone
    strict = AssemblerMiddleware(budget=1200, on_refused="raise")
    agent = create_agent(Named(messages=iter([AIMessage("Done.")])), tools=[], middleware=[strict])
    with pytest.raises(FitRefused):
        agent.invoke({"messages": history})


@pytest.mark.parametrize("page", ["openai-agents.md", "pydantic-ai.md"])
def test_each_framework_guide_runs(page: str) -> None:
    pytest.importorskip("agents" if page == "openai-agents.md" else "pydantic_ai")
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "guides" / page).read_text("utf-8")
    (block,) = text.split("<!-- runnable -->\n```python\n")[1:]
    exec(compile(block[: block.index("```")], page, "exec"), {})
