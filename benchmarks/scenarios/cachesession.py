"""Sessions for the cache benchmark: an agent's calls, with times and re-scored relevance.

Input: a seed, the number of calls and a ``Scoring`` (``coding_session``), or a seed
and the number of calls (``retrieval_session``).
Output: a ``CacheSession``: the task, every candidate form it will ever offer (an
``OfferedItem``: the candidate's fields, its base relevance, the calls that offer it), the
time of each call, and how relevance is scored at each call; ``request(call)`` is the
whole request of that call (the stated model's JSON), ``relevance(item, call)`` one
form's relevance there.

* ``coding_session``: a required system prompt, four required tool definitions and the
  user's task; then one turn per call, each an assistant turn, a tool call and its
  result (a result of 600 tokens or more also offered as a compact form, a fifth of
  the cost at 0.6 of the relevance). ``Scoring.RECENCY`` halves a turn's relevance
  every ``half_life`` turns of age (re-scored every call); ``Scoring.STATIC`` keeps
  each form's own. The budget (16,000) binds from about the 15th turn.
* ``tiered_session``: a coding agent whose tool results are large (2,000-12,000
  tokens, static relevance), so that its whole history crosses a long-context line of
  272K tokens after about fifty calls; its budget is a 1M window. Each call's output is
  its assistant turn (``CacheSession.outputs``).
* ``small``: the first calls of a session with a smaller budget, and its calls
  brought within five minutes of each other (no pause): a session the exact program
  (``benchmarks/sessionoptimum.py``) solves.
* ``retrieval_session``: the same kind of head, 40 evidence documents, and per call a
  user turn and the assistant's answer to the one before; every ``refresh`` calls a
  quarter of the documents are replaced and all of them re-scored
  (``Scoring.REFRESH``); conversation turns are scored by recency.

Calls come 10-40 s apart with an occasional pause of 6-15 minutes (past a 5-minute
cache entry). Costs are declared tokens; content is short unique text (the benchmark
prices declared tokens, so content only has to name its bytes). The same seed and
sizes always give the same session (standard library only).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "CacheSession",
    "OfferedItem",
    "Scoring",
    "coding_session",
    "retrieval_session",
    "small",
    "tiered_session",
]

BUDGET_CODING = 16_000
BUDGET_RETRIEVAL = 9_000
COMPACT_FROM = 600
_TOOLS = ("read_file", "run_tests", "grep", "edit_file")


class Scoring(StrEnum):
    RECENCY = "recency"
    STATIC = "static"
    REFRESH = "refresh"


@dataclass(frozen=True, slots=True)
class OfferedItem:
    """One candidate form and the calls that offer it (``born`` <= call < ``gone``)."""

    fields: tuple[tuple[str, Any], ...]
    relevance: float
    born: int
    gone: int | None
    # the turn whose age recency scoring reads (None: not scored by age)
    turn: int | None

    @property
    def id(self) -> str:
        return str(dict(self.fields)["id"])

    def candidate(self, relevance: float) -> dict[str, Any]:
        return {**dict(self.fields), "relevance": relevance}


@dataclass(frozen=True, slots=True)
class CacheSession:
    name: str
    task: tuple[tuple[str, Any], ...]
    items: tuple[OfferedItem, ...]
    # seconds, one per call
    times: tuple[float, ...]
    scoring: Scoring
    half_life: float
    # REFRESH: documents are re-scored every `refresh` calls, by this seed
    refresh: int = 0
    seed: int = 0
    # per call, the tokens the model answers (empty: not modelled)
    outputs: tuple[int, ...] = ()

    @property
    def calls(self) -> int:
        return len(self.times)

    @property
    def budget(self) -> int:
        return int(dict(self.task)["budget"])

    def offered(self, call: int) -> list[OfferedItem]:
        return [i for i in self.items if i.born <= call and (i.gone is None or call < i.gone)]

    def relevance(self, item: OfferedItem, call: int) -> float:
        if item.turn is None:
            if self.scoring is Scoring.REFRESH and dict(item.fields).get("kind") == "evidence":
                epoch = call // self.refresh
                factor = random.Random(f"{self.seed}:{item.id}:{epoch}").uniform(0.5, 1.25)
                return round(min(1.0, item.relevance * factor), 3)
            return item.relevance
        if self.scoring is Scoring.STATIC:
            return item.relevance
        age = max(0, call - item.turn)
        decay: float = 0.5 ** (age / self.half_life)
        return round(item.relevance * decay, 3)

    def request(self, call: int) -> dict[str, Any]:
        """The whole request of ``call``: what a caller without a session sends."""
        return {
            "task": dict(self.task),
            "candidates": [i.candidate(self.relevance(i, call)) for i in self.offered(call)],
        }


def _cost(rng: random.Random, low: int, high: int) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def _times(rng: random.Random, calls: int, gap: float) -> tuple[float, ...]:
    at, out = 0.0, []
    for _ in range(calls):
        out.append(round(at, 3))
        at += rng.uniform(360, 900) if rng.random() < 0.03 else rng.uniform(gap / 2, gap * 2)
    return tuple(out)


def _text(rng: random.Random, name: str) -> str:
    return f"{name}: " + " ".join(f"{rng.getrandbits(32):08x}" for _ in range(6))


def _head(rng: random.Random, system: int, tool: int, task: int) -> list[OfferedItem]:
    def fixed(**fields: Any) -> OfferedItem:
        fields.setdefault("scope", "shared")
        fields.setdefault("required", True)
        fields["content"] = _text(rng, fields["id"])
        return OfferedItem(tuple(fields.items()), 1.0, 0, None, None)

    head = [fixed(id="system-prompt", role="instruction", channel="system", cost=system)]
    for name in _TOOLS:
        item = fixed(id=f"tool-{name}", kind="tool_definition", cost=tool)
        # a tool definition's content is its JSON Schema (the bodies put it in `tools`)
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        described = {
            "name": name,
            "description": dict(item.fields)["content"],
            "parameters": schema,
        }
        fields = {**dict(item.fields), "content": json.dumps(described)}
        head.append(
            OfferedItem(tuple(fields.items()), item.relevance, item.born, item.gone, item.turn)
        )
    head.append(fixed(id="user-task", kind="user_turn", channel="user", turn=0, cost=task))
    return head


def coding_session(
    seed: int = 0, calls: int = 1000, scoring: Scoring = Scoring.RECENCY, half_life: float = 8.0
) -> CacheSession:
    """``calls`` turns of a coding agent; call ``t`` offers turns 1..t+1."""
    rng = random.Random(f"cache-coding:{seed}")
    items = _head(rng, 1500, 300, 200)
    for turn in range(1, calls + 1):
        born = turn - 1
        rel = round(rng.uniform(0.5, 0.95), 3)
        call_id = f"call-{turn}"
        result_cost = _cost(rng, 100, 2500)
        said: dict[str, Any] = {"id": f"assistant-{turn}", "kind": "assistant_turn", "turn": turn,
                "cost": _cost(rng, 30, 400), "scope": "shared"}  # fmt: skip
        use: dict[str, Any] = {"id": f"{call_id}.use", "kind": "tool_call", "tool_call_id": call_id,
               "tool_name": rng.choice(_TOOLS), "turn": turn, "cost": _cost(rng, 20, 80),
               "scope": "shared"}  # fmt: skip
        result: dict[str, Any] = {"id": f"{call_id}.result", "identity": f"{call_id}.result",
                  "kind": "tool_result", "tool_call_id": call_id, "turn": turn,
                  "cost": result_cost, "scope": "shared"}  # fmt: skip
        forms = [(said, round(rng.uniform(0.3, 0.8), 3)), (use, rel), (result, rel)]
        if result_cost >= COMPACT_FROM:
            compact = result | {"id": f"{call_id}.compact", "form": "compact",
                                "cost": max(1, result_cost // 5)}  # fmt: skip
            forms.append((compact, round(rel * 0.6, 3)))
        for fields, relevance in forms:
            text = _text(rng, str(fields["id"]))
            fields["content"] = f'{{"path": "{text}"}}' if fields["kind"] == "tool_call" else text
            items.append(OfferedItem(tuple(fields.items()), relevance, born, None, turn))
    task = {"id": f"coding-{scoring.value}-{seed}", "budget": BUDGET_CODING}
    return CacheSession(
        f"coding-{scoring.value}", tuple(task.items()), tuple(items), _times(rng, calls, 20.0),
        scoring, half_life,
    )  # fmt: skip


def retrieval_session(
    seed: int = 0, calls: int = 300, refresh: int = 5, half_life: float = 6.0
) -> CacheSession:
    """A question-answering session over evidence replaced and re-scored every few calls."""
    rng = random.Random(f"cache-retrieval:{seed}")
    items = _head(rng, 800, 250, 150)
    documents: list[int] = []
    serial = 0

    def document(born: int) -> None:
        nonlocal serial
        serial += 1
        fields = {"id": f"doc-{serial}", "kind": "evidence", "cost": _cost(rng, 200, 1500),
                  "scope": "shared", "content": _text(rng, f"doc-{serial}")}  # fmt: skip
        items.append(
            OfferedItem(tuple(fields.items()), round(rng.uniform(0.2, 0.95), 3), born, None, None)
        )
        documents.append(len(items) - 1)

    for _ in range(40):
        document(0)
    for call in range(1, calls):
        if call % refresh == 0:
            for index in rng.sample(documents, len(documents) // 4):
                documents.remove(index)
                old = items[index]
                items[index] = OfferedItem(old.fields, old.relevance, old.born, call, None)
                document(call)
        for kind, low, high in (("assistant_turn", 80, 400), ("user_turn", 30, 120)):
            fields = {"id": f"{kind.split('_')[0]}-{call}", "kind": kind, "turn": call,
                      "cost": _cost(rng, low, high), "scope": "shared"}  # fmt: skip
            if kind == "user_turn":
                fields["channel"] = "user"
            fields["content"] = _text(rng, str(fields["id"]))
            items.append(
                OfferedItem(
                    tuple(fields.items()), round(rng.uniform(0.4, 0.9), 3), call, None, call
                )
            )
    task = {"id": f"retrieval-{seed}", "budget": BUDGET_RETRIEVAL}
    return CacheSession(
        "retrieval-refresh", tuple(task.items()), tuple(items), _times(rng, calls, 40.0),
        Scoring.REFRESH, half_life, refresh, seed,
    )  # fmt: skip


def tiered_session(seed: int = 0, calls: int = 160) -> CacheSession:
    """A coding agent with large tool results whose history crosses 272K tokens."""
    rng = random.Random(f"cache-tiered:{seed}")
    items = _head(rng, 3000, 600, 300)
    outputs: list[int] = []
    for turn in range(1, calls + 1):
        said: dict[str, Any] = {"id": f"assistant-{turn}", "kind": "assistant_turn", "turn": turn,
                "cost": _cost(rng, 200, 800), "scope": "shared"}  # fmt: skip
        use: dict[str, Any] = {"id": f"call-{turn}.use", "kind": "tool_call",
               "tool_call_id": f"call-{turn}", "tool_name": rng.choice(_TOOLS), "turn": turn,
               "cost": 50, "scope": "shared"}  # fmt: skip
        result: dict[str, Any] = {"id": f"call-{turn}.result", "kind": "tool_result",
                  "tool_call_id": f"call-{turn}", "turn": turn,
                  "cost": _cost(rng, 2000, 12000), "scope": "shared"}  # fmt: skip
        rel = round(rng.uniform(0.5, 0.95), 3)
        forms = ((said, round(rng.uniform(0.3, 0.8), 3)), (use, rel), (result, rel))
        for fields, relevance in forms:
            text = _text(rng, str(fields["id"]))
            fields["content"] = f'{{"path": "{text}"}}' if fields["kind"] == "tool_call" else text
            items.append(OfferedItem(tuple(fields.items()), relevance, turn - 1, None, turn))
        outputs.append(int(said["cost"]))
    task = {"id": f"tiered-{seed}", "budget": 1_000_000}
    return CacheSession(
        "coding-tiered", tuple(task.items()), tuple(items), _times(rng, calls, 40.0),
        Scoring.STATIC, 8.0, outputs=tuple(outputs),
    )  # fmt: skip


def small(session: CacheSession, calls: int, budget: int) -> CacheSession:
    """The first ``calls`` calls of ``session`` within ``budget``, each gap at most 30 s
    (so that every entry written lives through the session)."""
    times = [0.0]
    for before, after in zip(session.times, session.times[1 : calls], strict=False):
        times.append(round(times[-1] + min(30.0, after - before), 3))
    task = {**dict(session.task), "budget": budget}
    kept = tuple(i for i in session.items if i.born < calls)
    return CacheSession(
        f"{session.name}-small", tuple(task.items()), kept, tuple(times), session.scoring,
        session.half_life, session.refresh, session.seed, session.outputs[:calls],
    )  # fmt: skip
