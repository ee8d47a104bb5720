"""Cache hunts' examples: a request, its rendering, and the next call that caches on it.

Input: a seed, an example index and a candidate cap.
Output: ``session_example``: a request with a ``cache`` section (``models/README.md``
6b) whose ``previous.blocks`` are what the exact answer to the call before sent,
rendered in a drawn format and header style (``Manifest.cache_blocks``).

The call before is a small agent transcript: a required system prompt and user turn,
sometimes a tool definition, evidence (sometimes also offered compact) and a task
instruction, then turns of an assistant message and a tool call with its result
(sometimes offered compact too); every form has content, so it renders. The next call
is one to three steps from it: a new turn, a re-scoring, a dropped item, a new
budget, an edited content, a new tool definition, a seal, a changed instruction, or
the time passing beyond the entries' lifetime. The cache section draws the provider
(the providers the data files define; those caching by breakpoints twice as often), a
small minimum
prefix (so that small requests read), the tolerance and the headroom.

Example ``i`` of seed ``s`` draws from ``random.Random(f"{s}:cache:{i}")`` and the
first call's answer is the unique optimum, so every process draws the same request.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

from ..api import assemble
from ..facts import CacheMode, Provider, cache_rules, format_caching_by
from ..model.rendering import Headers, RenderFormat

__all__ = ["session_example", "turn"]

def _by_breakpoints(provider: str) -> bool:
    return cache_rules(provider).mode is CacheMode.BREAKPOINTS


# in the order the draws take them: a body that marks breakpoints, one that marks none,
# the text
_FORMATS = (
    format_caching_by(CacheMode.BREAKPOINTS),
    format_caching_by(CacheMode.AUTOMATIC),
    RenderFormat.TEXT,
)
# the providers drawn, those caching by breakpoints twice
_PROVIDERS = tuple(
    p.value for p in Provider for _ in range(2 if _by_breakpoints(p) else 1)
)
_HEADERS = (Headers.NONE, Headers.MINIMAL, Headers.PROVENANCE)
_TOOL = json.dumps({"name": "read", "parameters": {"type": "object"}})
_STEPS = ("turn", "rescore", "drop", "budget", "edit", "tool", "seal", "instruction", "later")


def session_example(seed: int, index: int, max_candidates: int) -> dict[str, Any]:
    """Example ``index`` of the cache hunt seeded ``seed`` (at most ``max_candidates``
    candidates in the call judged)."""
    rng = random.Random(f"{seed}:cache:{index}")
    cap = max(2, max_candidates)
    first = _transcript(rng, cap)
    rendering = assemble(first, render=rng.choice(_FORMATS), headers=rng.choice(_HEADERS)).rendering
    blocks = [] if rendering is None else rendering.manifest.cache_blocks(rendering.text)
    section = _cache_section(rng)
    following = copy.deepcopy(first)
    for _ in range(rng.randint(1, 3)):
        _step(rng, following, section, cap)
    previous: dict[str, Any] = {"blocks": blocks}
    if "now" in section:
        previous["at"] = section.pop("at")
    following["cache"] = {**section, "previous": previous}
    return following


def _cost(rng: random.Random) -> int:
    return rng.randint(1, 60)


def _relevance(rng: random.Random) -> float:
    return rng.randint(0, 10) / 10


def _transcript(rng: random.Random, cap: int) -> dict[str, Any]:
    candidates: list[dict[str, Any]] = [
        {"id": "sys", "kind": "system", "cost": _cost(rng), "relevance": 1.0, "required": True,
         "channel": "system", "content": "be brief"},
        {"id": "user", "kind": "user_turn", "turn": 0, "cost": _cost(rng), "relevance": 1.0,
         "required": True, "content": "fix it"},
    ]  # fmt: skip
    if rng.random() < 0.4:
        candidates.append({"id": "tool", "kind": "tool_definition", "cost": _cost(rng),
                           "relevance": _relevance(rng), "content": _TOOL})  # fmt: skip
    for d in range(rng.randint(0, 2)):
        candidates += _document(rng, d, compact=rng.random() < 0.4)
    for t in range(rng.randint(0, 3)):
        if len(candidates) + 4 > cap:
            break
        candidates += _turn(rng, t, compact=rng.random() < 0.4)
    del candidates[cap:]
    # a tool call kept without its result (or the reverse) breaks the request's rules
    _pair_tool_calls(candidates)
    task: dict[str, Any] = {"id": "t", "budget": 0}
    if rng.random() < 0.25:
        task["instruction"] = "answer in English"
    total = sum(c["cost"] for c in candidates)
    task["budget"] = rng.randint(total // 3, total + 10)
    return {"task": task, "candidates": candidates}


def _document(rng: random.Random, d: int, *, compact: bool) -> list[dict[str, Any]]:
    cost = _cost(rng)
    out = [{"id": f"doc{d}", "identity": f"doc{d}", "kind": "evidence", "cost": cost,
            "relevance": _relevance(rng), "content": f"document {d}"}]  # fmt: skip
    if compact:
        out.append({"id": f"doc{d}-short", "identity": f"doc{d}", "form": "compact",
                    "kind": "evidence", "cost": max(1, cost // 4),
                    "relevance": _relevance(rng) / 2, "content": f"doc {d}"})  # fmt: skip
    return out


def _turn(rng: random.Random, t: int, *, compact: bool) -> list[dict[str, Any]]:
    relevance, result = _relevance(rng), _cost(rng)
    return turn(t, _cost(rng), result, relevance, compact)


def turn(t: int, cost: int, result_cost: int, relevance: float, compact: bool) -> list[Any]:
    """Turn ``t`` of a transcript: an assistant message, a tool call and its result
    (``compact``: the result also offered as a compact form); the property tests'
    transcripts share it."""
    call = f"call{t}"
    out: list[dict[str, Any]] = [
        {"id": f"a{t}", "kind": "assistant_turn", "turn": 3 * t + 1, "cost": cost,
         "relevance": relevance, "content": f"step {t}"},
        {"id": f"c{t}", "kind": "tool_call", "turn": 3 * t + 2, "tool_call_id": call,
         "tool_name": "read", "cost": 5, "relevance": relevance, "content": '{"path": "x"}'},
        {"id": f"r{t}", "identity": f"result{t}", "kind": "tool_result", "turn": 3 * t + 3,
         "tool_call_id": call, "cost": result_cost, "relevance": relevance,
         "content": f"output {t}"},
    ]  # fmt: skip
    if compact:
        out.append({"id": f"r{t}-short", "identity": f"result{t}", "form": "compact",
                    "kind": "tool_result", "turn": 3 * t + 3, "tool_call_id": call,
                    "cost": max(1, result_cost // 4), "relevance": relevance / 2,
                    "content": f"out {t}"})  # fmt: skip
    return out


def _pair_tool_calls(candidates: list[dict[str, Any]]) -> None:
    kinds: dict[str, set[str]] = {}
    for c in candidates:
        if "tool_call_id" in c:
            kinds.setdefault(c["tool_call_id"], set()).add(c["kind"])
    alone = {call for call, seen in kinds.items() if len(seen) < 2}
    candidates[:] = [c for c in candidates if c.get("tool_call_id") not in alone]


def _cache_section(rng: random.Random) -> dict[str, Any]:
    provider = rng.choice(_PROVIDERS)
    section: dict[str, Any] = {
        "provider": provider,
        "min_prefix_tokens": rng.randint(1, 80),
        "tolerance": rng.choice((0.0, 0.05, 0.2, 0.5)),
        "headroom": rng.choice((0.0, 0.25, 0.5)),
    }
    if not _by_breakpoints(provider):
        section["step_tokens"] = rng.choice((1, 16))
    return section


def _step(rng: random.Random, request: dict[str, Any], section: dict[str, Any], cap: int) -> None:
    """One change between the two calls, applied to ``request`` (and the times of
    ``section``)."""
    candidates = request["candidates"]
    task = request["task"]
    step = rng.choice(_STEPS)
    loose = [c for c in candidates if not c.get("required")]
    if step == "turn" and len(candidates) + 3 <= cap:
        t = 10 + sum(c["kind"] == "tool_call" for c in candidates)
        candidates += _turn(rng, t, compact=False)
    elif step == "rescore":
        for c in loose:
            c["relevance"] = _relevance(rng)
    elif step == "drop" and loose:
        gone = rng.choice(loose)
        pair = gone.get("tool_call_id")
        candidates[:] = [
            c
            for c in candidates
            if c is not gone and (pair is None or c.get("tool_call_id") != pair)
        ]
    elif step == "budget":
        task["budget"] = rng.randint(0, sum(c["cost"] for c in candidates) + 10)
    elif step == "edit":
        # a tool definition's content is its JSON Schema: edit the others
        editable = [c for c in candidates if c["kind"] != "tool_definition"]
        rng.choice(editable)["content"] += " (edited)"
    elif step == "tool" and len(candidates) < cap:
        candidates.append({"id": "tool-new", "kind": "tool_definition", "cost": _cost(rng),
                           "relevance": _relevance(rng), "content": _TOOL})  # fmt: skip
    elif step == "seal" and loose:
        task["seal"] = sorted({*task.get("seal", []), rng.choice(loose)["id"]})
    elif step == "instruction":
        task["instruction"] = rng.choice(("answer in English", "answer in French"))
    elif step == "later":
        section["at"] = 1000.0
        section["now"] = 1000.0 + rng.choice((10.0, 299.0, 301.0, 4000.0))
    _unique(candidates)


def _unique(candidates: list[dict[str, Any]]) -> None:
    # a second "tool-new" (two tool steps) would repeat an id: the first is kept
    first: dict[str, dict[str, Any]] = {}
    for c in candidates:
        first.setdefault(c["id"], c)
    candidates[:] = list(first.values())
