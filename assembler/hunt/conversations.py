"""Render-rule hunts' examples: small conversations whose selection decides what a format can send.

Input: a seed, an example index and a candidate cap (or a ``random.Random``).
Output: ``conversation``: a request of a few conversation items (user and assistant
turns, some empty; tool calls with their results, some with arguments that are not a
JSON object or ids a format refuses; tool definitions, some malformed; evidence,
system items and memory) at turns drawn so that an assistant turn or a call often
comes first, a budget that often leaves only some of them, sometimes a query or an
instruction, sometimes a required item and sometimes a cache section whose previous
blocks are drawn in any order (the run a cached layout keeps first). ``render_example``
draws the format and the header style with it: example ``i`` of seed ``s`` draws from
``random.Random(f"{s}:render:{i}")``.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from ..facts import Provider
from ..model.rendering import Headers, RenderFormat

__all__ = ["conversation", "render_example"]

_KINDS = ("user_turn", "assistant_turn", "tool_call", "evidence", "system", "tool_definition",
          "memory")  # fmt: skip
_TOOL = json.dumps({"name": "read", "parameters": {"type": "object"}})


def render_example(seed: int, index: int, max_candidates: int) -> tuple[dict[str, Any], str, str]:
    """Example ``index`` of the render-rule hunt seeded ``seed``: a request, its format
    and its header style."""
    rng = random.Random(f"{seed}:render:{index}")
    fmt = rng.choice(list(RenderFormat)).value
    headers = rng.choice(list(Headers)).value
    return conversation(rng, max(2, max_candidates)), fmt, headers


def conversation(rng: random.Random, cap: int) -> dict[str, Any]:
    """A small conversation request of at most ``cap`` candidates (a tool call and its
    result count two)."""
    candidates: list[dict[str, Any]] = []
    while len(candidates) < cap and (not candidates or rng.random() < 0.8):
        kind = rng.choice(_KINDS)
        number = len(candidates)
        item: dict[str, Any] = {
            "id": f"{kind.split('_')[0]}-{number}",
            "kind": kind,
            "cost": rng.choice((0, 5, 10, 20, 40)),
            "relevance": rng.choice((0, 0.1, 0.3, 0.5, 0.9, 1)),
        }
        if kind in ("user_turn", "assistant_turn", "tool_call"):
            item["turn"] = rng.randint(0, 3)
        if kind == "system":
            item |= {"role": "instruction", "channel": "system", "content": "be brief"}
        elif kind in ("user_turn", "assistant_turn"):
            item["content"] = "" if rng.random() < 0.15 else f"said at {number}"
        elif kind == "tool_definition":
            item["content"] = _TOOL if rng.random() < 0.8 else '{"description": "no name"}'
        elif kind == "tool_call":
            if len(candidates) + 2 > cap:
                continue
            call = f"c{number}" if rng.random() < 0.85 else f"c.{number}"
            item |= {"tool_call_id": call, "tool_name": "read"}
            item["content"] = '{"q": 1}' if rng.random() < 0.85 else "[1, 2]"
            candidates.append(item)
            item = {"id": f"result-{number}", "kind": "tool_result", "tool_call_id": call,
                    "cost": rng.choice((0, 5, 10, 20)), "relevance": rng.choice((0, 0.4, 0.8)),
                    "content": f"output {number}"}  # fmt: skip
        else:
            item["content"] = f"{kind} {number}"
        candidates.append(item)
    if candidates and rng.random() < 0.25:
        rng.choice(candidates)["required"] = True
    total = sum(c["cost"] for c in candidates)
    task: dict[str, Any] = {"id": "talk", "budget": rng.randint(0, max(1, total))}
    if rng.random() < 0.5:
        task["query"] = "What next?"
    if rng.random() < 0.3:
        task["instruction"] = "Answer briefly."
    request: dict[str, Any] = {"task": task, "candidates": candidates}
    if candidates and rng.random() < 0.35:
        request["cache"] = _cache(rng, candidates, task.get("instruction"))
    return request


def _cache(
    rng: random.Random, candidates: list[dict[str, Any]], instruction: str | None
) -> dict[str, Any]:
    """A cache section whose previous blocks are some of the candidates, in any order
    (the instruction among them when the task has one)."""
    blocks: list[dict[str, Any]] = []
    for c in rng.sample(candidates, rng.randint(1, len(candidates))):
        blocks.append({"id": c["id"], "content_sha256": _sha(c["content"]), "tokens": c["cost"],
                       "breakpoint": rng.random() < 0.3})  # fmt: skip
    if instruction is not None and rng.random() < 0.7:
        blocks.insert(0, {"part": "instruction", "content_sha256": _sha(instruction), "tokens": 3})
    provider = rng.choice(list(Provider)).value
    return {"provider": provider, "min_prefix_tokens": rng.choice((1, 16)),
            "previous": {"blocks": blocks}}  # fmt: skip


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
