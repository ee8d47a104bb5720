"""The agent-loop scenario: one agent's model calls as a first request and its deltas.

Input: a seed, the size of the first request (``forms``), the number of calls and
whether every candidate carries content (for rendering).
Output: an ``AgentLoop``: the first request (a dict in the stated model's JSON) and
one delta per call (``models/session.md``), each adding 2-5 candidates: a tool call
and its result (a coupled pair), and sometimes a compact form of the result, a
memory and the assistant's turn. ``requests()`` gives the whole request before each
call, for a fresh ``assemble()`` of the same thing.

The first request is the benchmarks' realistic shape (``Shape.scale``) plus what an
agent always offers: a system prompt, tool definitions and the user's turn. The same
seed and sizes always give the same scenario (standard library only, like
``generate``), so a benchmark and an optimisation measured against it see the same
calls.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from assembler.hunt.generate import Shape, generate

__all__ = ["AgentLoop", "agent_loop", "words"]

_TOOLS = ("search_orders", "read_file", "run_query", "fetch_page")
_WORDS = ("order", "refund", "invoice", "status", "customer", "shipped", "the", "a", "of",
          "to", "and", "is", "table", "row", "page", "result")  # fmt: skip


@dataclass(frozen=True, slots=True)
class AgentLoop:
    """A first request and the delta of each model call after it."""

    first: dict[str, Any]
    deltas: tuple[dict[str, Any], ...]

    def requests(self) -> Iterator[dict[str, Any]]:
        """The whole request after each delta (not the first one): what a caller
        without a session sends for the same call."""
        request = copy.deepcopy(self.first)
        for delta in self.deltas:
            request["candidates"].extend(copy.deepcopy(delta.get("add", [])))
            yield copy.deepcopy(request)


def words(rng: random.Random, size: int, vocabulary: tuple[str, ...] = _WORDS) -> str:
    """About ``size`` characters of words drawn from ``vocabulary``: content of a size."""
    drawn: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(vocabulary)
        drawn.append(word)
        total += len(word) + 1
    return " ".join(drawn)


def _cost(rng: random.Random, low: int, high: int) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def agent_loop(
    seed: int = 0, forms: int = 5000, calls: int = 50, *, content: bool = False
) -> AgentLoop:
    """The scenario for ``seed``: a first request of ``forms`` forms and ``calls`` deltas."""
    rng = random.Random(f"agent-loop:{seed}")
    fixed = 2 + len(_TOOLS)
    first = generate(random.Random(seed), Shape.scale(max(1, forms - fixed)))
    first["task"]["id"] = f"agent-{seed}"
    first["task"]["instruction"] = "Resolve the customer's request using the tools."
    first["task"]["query"] = "What happened to order 4471?"
    candidates: list[dict[str, Any]] = first["candidates"]
    candidates += [
        {"id": "system-prompt", "cost": 400, "relevance": 1, "required": True,
         "role": "instruction", "channel": "system", "scope": "shared"},
        {"id": "user-turn-0", "kind": "user_turn", "cost": 60, "relevance": 1,
         "required": True, "scope": "shared", "channel": "user"},
    ]  # fmt: skip
    candidates += [
        {"id": f"tool-{name}", "kind": "tool_definition", "cost": 150, "relevance": 0.6,
         "scope": "shared"}
        for name in _TOOLS
    ]  # fmt: skip
    if content:
        for candidate in candidates:
            text = words(rng, 4 * candidate["cost"])
            if candidate.get("kind") == "tool_definition":
                # a tool definition renders into the body's tools field: a JSON Schema
                name = candidate["id"].removeprefix("tool-")
                schema = {"type": "object", "properties": {"query": {"type": "string"}}}
                text = json.dumps({"name": name, "description": text, "parameters": schema})
            candidate.setdefault("content", text)
    deltas = tuple(_call(rng, number, content) for number in range(1, calls + 1))
    return AgentLoop(first, deltas)


def _call(rng: random.Random, number: int, content: bool) -> dict[str, Any]:
    """Model call ``number``'s delta: the tool call it made and what came back."""
    call_id = f"call-{number}"
    tool = rng.choice(_TOOLS)
    relevance = round(rng.uniform(0.4, 0.95), 3)
    added: list[dict[str, Any]] = [
        {"id": f"{call_id}.use", "identity": f"{call_id}.use", "kind": "tool_call",
         "tool_call_id": call_id, "tool_name": tool, "turn": number,
         "cost": _cost(rng, 20, 80), "relevance": relevance, "scope": "shared",
         "content": f'{{"q": "{words(rng, 12)}"}}'},
        {"id": f"{call_id}.result", "identity": f"{call_id}.result", "kind": "tool_result",
         "tool_call_id": call_id, "turn": number, "cost": _cost(rng, 100, 2500),
         "relevance": relevance, "scope": "shared"},
    ]  # fmt: skip
    if rng.random() < 0.4:
        # a long result also offered as a summary: the solver picks one form
        full = added[1]
        added.append(full | {"id": f"{call_id}.summary", "form": "compact",
                             "cost": max(1, full["cost"] // 5),
                             "relevance": round(relevance * 0.7, 3)})  # fmt: skip
    if rng.random() < 0.4:
        added.append({"id": f"memory-{number}", "kind": "memory", "cost": _cost(rng, 40, 300),
                      "relevance": round(rng.uniform(0.2, 0.8), 3), "scope": "shared"})  # fmt: skip
    if rng.random() < 0.3:
        added.append({"id": f"assistant-{number}", "kind": "assistant_turn", "turn": number,
                      "cost": _cost(rng, 30, 400), "relevance": round(rng.uniform(0.3, 0.9), 3),
                      "scope": "shared"})  # fmt: skip
    for candidate in added[1:]:
        if content or candidate["kind"] == "tool_result":
            candidate.setdefault("content", words(rng, 4 * candidate["cost"]))
    return {"add": added}
