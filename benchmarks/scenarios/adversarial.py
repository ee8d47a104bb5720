"""Adversarial request shapes: the structures that make a careless stage quadratic.

Input: an ``Adversary`` (which shape), a form count and a seed.
Output: a request dict in the stated model's JSON format (always valid input), and for
the budget shapes the exact minimum cost of the required material, known by
construction rather than by solving.

The shapes, each with exactly ``n_forms`` candidates:

* ``giant-group``: one coupled group holds every identity (1-3 forms each), so any
  admission drags in everything; the budget fits the cheapest forms of all of them
  and a part of the upgrades, so choosing forms still matters;
* ``chain``: identity ``i`` needs identity ``i + 1`` (every form of it), so admitting
  the head drags the whole tail; the budget fits a suffix; ``chain-reversed`` points
  the other way (``i`` needs ``i - 1``), so a stage that walks the candidates in order
  meets each dependency before or after its dependant, whichever it did not expect;
* ``dead-chain`` / ``dead-chain-reversed``: the same chains whose last link needs an
  identity nobody offers, so the dependency gate removes every form, one link after
  the other (a judge that re-derives the gates in rounds does one round per link);
* ``dense-shared``: every content form needs 3-5 of a few shared resolvers;
* ``tool-pairs``: the conversation of a long agent run: tool calls, each answered by
  its result (a coupled pair), with content, so that the layout, the renderer and the
  render verifier meet thousands of calls to match with their results;
* ``all-equal``: every form costs 100 and is worth 500: value and cost tie everywhere
  and only the tie-break decides;
* ``at-mandatory`` / ``below-mandatory``: a realistic request (alternatives,
  references to shared resolvers, pairs) where 5% of the identities are required and
  the budget is exactly the cheapest legal closure of the required material, or one
  below it (a refusal whose closure has to be priced).

Standard library only, like ``generate``, so that benchmark workers and tests import
it cheaply.
"""

from __future__ import annotations

import copy
import json
import math
import random
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from assembler.hunt.shapes import Shape

__all__ = ["Adversary", "Built", "build", "tangled", "with_content"]


class Adversary(StrEnum):
    GIANT_GROUP = "giant-group"
    CHAIN = "chain"
    CHAIN_REVERSED = "chain-reversed"
    DEAD_CHAIN = "dead-chain"
    DEAD_CHAIN_REVERSED = "dead-chain-reversed"
    DENSE_SHARED = "dense-shared"
    ALL_EQUAL = "all-equal"
    TOOL_PAIRS = "tool-pairs"
    AT_MANDATORY = "at-mandatory"
    BELOW_MANDATORY = "below-mandatory"


@dataclass(frozen=True, slots=True)
class Built:
    request: dict[str, Any]
    # the exact minimum cost of a selection admitting every required identity (C1-C5),
    # for the shapes built around it; None for the others
    mandatory_cost: int | None = None


def build(kind: Adversary, n_forms: int, seed: int = 0) -> Built:
    """The request of shape ``kind`` with exactly ``n_forms`` candidates."""
    if n_forms < 8:
        raise ValueError("adversarial shapes need at least 8 forms")
    rng = random.Random(f"{kind.value}/{n_forms}/{seed}")
    if kind is Adversary.GIANT_GROUP:
        return Built(_giant_group(rng, n_forms))
    if kind in _CHAINS:
        reversed_, dead = _CHAINS[kind]
        return Built(_chain(rng, n_forms, reversed_=reversed_, dead=dead))
    if kind is Adversary.DENSE_SHARED:
        return Built(_dense_shared(rng, n_forms))
    if kind is Adversary.ALL_EQUAL:
        return Built(_all_equal(rng, n_forms))
    if kind is Adversary.TOOL_PAIRS:
        return Built(_tool_pairs(rng, n_forms))
    return _mandatory(rng, n_forms, below=kind is Adversary.BELOW_MANDATORY)


def with_content(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` (a copy) with a short content for every candidate that has none and a
    query, so that every shape can be rendered (a provider body needs a message)."""
    request = copy.deepcopy(request)
    for candidate in request["candidates"]:
        candidate.setdefault("content", f"the text of {candidate['id']}")
    request["task"].setdefault("query", "what matters here?")
    return request


def _relevance(rng: random.Random) -> float:
    # skewed like real retrieval: most items weakly relevant, a few strongly
    x = rng.random()
    return round(x * x * math.sqrt(x), 3)


def _request(task_id: str, budget: int, candidates: list[dict[str, Any]]) -> dict[str, Any]:
    return {"task": {"id": task_id, "budget": budget}, "candidates": candidates}


def _alternatives(rng: random.Random, identity: str, count: int) -> list[dict[str, Any]]:
    """Up to three forms of one identity: full, compact, anchor (cheaper and less valuable)."""
    full = rng.randint(200, 4000)
    relevance = _relevance(rng)
    kinds = (("full", 1.0, 1.0), ("compact", 0.35, 0.75), ("anchor", 0.08, 0.3))
    return [
        {
            "id": f"{identity}.{kind}",
            "identity": identity,
            "form": kind,
            "cost": max(1, round(full * cost_ratio)),
            "relevance": round(relevance * value_ratio, 3),
        }
        for kind, cost_ratio, value_ratio in kinds[:count]
    ]


def _counts(rng: random.Random, n_forms: int, most: int) -> list[int]:
    """Forms per identity (1..most each), summing to exactly ``n_forms``."""
    counts: list[int] = []
    left = n_forms
    while left:
        k = min(rng.randint(1, most), left)
        counts.append(k)
        left -= k
    return counts


def _giant_group(rng: random.Random, n_forms: int) -> dict[str, Any]:
    candidates: list[dict[str, Any]] = []
    cheapest = 0
    for i, k in enumerate(_counts(rng, n_forms, 3)):
        forms = _alternatives(rng, f"doc-{i}", k)
        for form in forms:
            form["group"] = "everything"
        cheapest += min(form["cost"] for form in forms)
        candidates.extend(forms)
    total = sum(form["cost"] for form in candidates)
    budget = cheapest + (total - cheapest) // 4
    return _request("adversarial-giant-group", budget, candidates)


def _chain(rng: random.Random, n_forms: int, *, reversed_: bool, dead: bool) -> dict[str, Any]:
    counts = _counts(rng, n_forms, 2)
    last = len(counts) - 1
    candidates: list[dict[str, Any]] = []
    for i, k in enumerate(counts):
        forms = _alternatives(rng, f"link-{i}", k)
        step = i - 1 if reversed_ else i + 1
        needed = f"link-{step}" if 0 <= step <= last else ("nobody-offers-this" if dead else None)
        if needed is not None:
            for form in forms:
                form["depends_on"] = [needed]
        candidates.extend(forms)
    total = sum(form["cost"] for form in candidates)
    name = ("dead-" if dead else "") + "chain" + ("-reversed" if reversed_ else "")
    return _request(f"adversarial-{name}", total * 3 // 10, candidates)


# each chain shape: (the dependencies point back, the last link needs a missing identity)
_CHAINS = {
    Adversary.CHAIN: (False, False),
    Adversary.CHAIN_REVERSED: (True, False),
    Adversary.DEAD_CHAIN: (False, True),
    Adversary.DEAD_CHAIN_REVERSED: (True, True),
}


def _dense_shared(rng: random.Random, n_forms: int) -> dict[str, Any]:
    n_resolvers = max(8, n_forms // 500)
    resolvers = [f"resolver-{j}" for j in range(n_resolvers)]
    candidates: list[dict[str, Any]] = [
        {"id": name, "cost": rng.randint(300, 1500), "relevance": _relevance(rng) / 2}
        for name in resolvers
    ]
    for i, k in enumerate(_counts(rng, n_forms - n_resolvers, 3)):
        for form in _alternatives(rng, f"doc-{i}", k):
            form["depends_on"] = rng.sample(resolvers, rng.randint(3, 5))
            candidates.append(form)
    total = sum(form["cost"] for form in candidates)
    return _request("adversarial-dense-shared", total * 3 // 10, candidates)


def _all_equal(rng: random.Random, n_forms: int) -> dict[str, Any]:
    candidates: list[dict[str, Any]] = []
    for i, k in enumerate(_counts(rng, n_forms, 4)):
        candidates.extend(
            {"id": f"doc-{i}.{j}", "identity": f"doc-{i}", "cost": 100, "relevance": 0.5}
            for j in range(k)
        )
    return _request("adversarial-all-equal", 100 * len(candidates) * 3 // 10, candidates)


def _tool_pairs(rng: random.Random, n_forms: int) -> dict[str, Any]:
    # the user's turn opens the conversation (a provider body starts with it)
    ask = {"id": "ask", "kind": "user_turn", "turn": 0, "cost": 20, "relevance": 0.5}
    candidates: list[dict[str, Any]] = [{**ask, "content": "go"}]
    turn = 0
    while len(candidates) < n_forms:
        turn += 1
        if n_forms - len(candidates) == 1:
            candidates.append({"id": f"note-{turn}", "kind": "memory", "cost": 20,
                               "relevance": 0.1, "content": f"note {turn}"})  # fmt: skip
            break
        call = f"call-{turn}"
        arguments = json.dumps({"turn": turn})
        candidates.append({"id": f"{call}.use", "kind": "tool_call", "tool_call_id": call,
                           "tool_name": "lookup", "turn": turn, "cost": rng.randint(10, 40),
                           "relevance": _relevance(rng), "content": arguments})  # fmt: skip
        candidates.append({"id": f"{call}.result", "kind": "tool_result", "tool_call_id": call,
                           "turn": turn, "cost": rng.randint(30, 400),
                           "relevance": _relevance(rng), "content": f"result {turn}"})  # fmt: skip
    total = sum(form["cost"] for form in candidates)
    request = _request("adversarial-tool-pairs", total // 2, candidates)
    request["task"]["required"] = ["ask"]
    return request


def _mandatory(rng: random.Random, n_forms: int, *, below: bool) -> Built:
    """Required identities with a full, a compact and a reference form; the references
    of one cluster share a resolver only required material's references use. The
    cheapest closure of a cluster is therefore min(its compacts, resolver + its
    cheapest forms), and the mandatory cost is the sum over clusters."""
    candidates: list[dict[str, Any]] = []
    required: list[str] = []
    mandatory = 0
    n_required = max(1, n_forms // 60)  # 5% of ~1.7 forms per identity, 3 forms each
    cluster_size = 8
    for start in range(0, n_required, cluster_size):
        resolver = f"req-resolver-{start // cluster_size}"
        resolver_cost = rng.randint(100, 600)
        candidates.append({"id": resolver, "cost": resolver_cost, "relevance": 0.1})
        compacts = 0
        cheapest = 0
        for i in range(start, min(start + cluster_size, n_required)):
            identity = f"req-{i}"
            required.append(identity)
            forms = _alternatives(rng, identity, 2)
            reference = {
                "id": f"{identity}.ref",
                "identity": identity,
                "form": "reference",
                "cost": rng.randint(10, 40),
                "relevance": forms[0]["relevance"],
                "depends_on": [resolver],
            }
            candidates.extend([*forms, reference])
            compacts += forms[1]["cost"]
            cheapest += min(forms[1]["cost"], reference["cost"])
        mandatory += min(compacts, resolver_cost + cheapest)
    n_optional_resolvers = max(1, n_forms // 200)
    for j in range(n_optional_resolvers):
        candidates.append(
            {"id": f"resolver-{j}", "cost": rng.randint(300, 1500), "relevance": 0.05}
        )
    i = 0
    previous: list[dict[str, Any]] = []
    while len(candidates) < n_forms:
        forms = _alternatives(rng, f"doc-{i}", min(rng.randint(1, 3), n_forms - len(candidates)))
        if len(forms) > 1 and rng.random() < 0.15:
            forms[-1]["depends_on"] = [f"resolver-{rng.randrange(n_optional_resolvers)}"]
        if previous and rng.random() < 0.05:
            # couple this identity with the one before it
            for form in (*previous, *forms):
                form["group"] = f"pair-{i}"
        candidates.extend(forms)
        previous = [] if "group" in forms[0] else forms
        i += 1
    budget = mandatory - 1 if below else mandatory
    name = "below" if below else "at"
    request = _request(f"adversarial-{name}-mandatory", budget, candidates)
    request["task"]["required"] = required
    return Built(request, mandatory)


def tangled(n_forms: int) -> Shape:
    """The generator's ``scale`` shape with dependency chains, cycles and coupled groups
    of two or three turned up (half of the content identities need another, a quarter
    sit in a mutual dependency, 15% in a group).

    At 650-1,000 forms these cores are small but hard to prove: the multi-worker CP-SAT
    portfolio stalled on some that one worker proved."""
    return replace(
        Shape.scale(n_forms), p_chain=0.5, p_cycle=0.25, p_group=0.15, group_size=(2, 3)
    )
