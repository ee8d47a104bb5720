"""Hunting proofs that explode: ``python -m benchmarks.proofhunt`` (``--help``).

Input: a seed range, the shapes to draw (agent loops, agent transcripts, generated
requests, knapsacks with tied values), how many selected forms to zero per request, a
time limit per solve.
Output: a line per request on stdout (its size, its solve and the slowest of its
variants), a line per variant that was slow or left unproven, and each such variant's
request written to ``--out`` (compressed JSON) for a test fixture; exit 0.

The issue-47 shape: a request of about 2,000 forms is solved, then one selected form's
relevance is set to 0 and it is solved again: its value level is easy, but its optimum
moves, and a cost or tie-break level of that new optimum can be much harder than the
first request's. Wall times on this shared machine are noisy: a variant is reported
from ``--slow`` seconds of solving (the call's ``solve`` timing), and the worst ones are
re-run alone before they are kept.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import gzip
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import assembler
from assembler.hunt.generate import Relevance, Shape, generate
from benchmarks.scenarios.agentloop import agent_loop

SHAPES = ("loop", "transcript", "generated", "grid", "knapsack", "follow")


def requests(shape: str, seed: int, forms: int) -> dict[str, Any]:
    """Request ``seed`` of ``shape``, of about ``forms`` forms."""
    rng = random.Random(f"proofhunt:{shape}:{seed}")
    if shape == "loop":
        loop = agent_loop(seed, forms=forms - 80, calls=rng.randint(15, 30))
        request: dict[str, Any] = list(loop.requests())[-1]
        if rng.random() < 0.5:
            _budget(request, rng)
        return request
    if shape == "transcript":
        from benchmarks.agentcases import transcript

        return transcript(max(3, forms // 4), seed=seed).request()
    if shape in ("generated", "grid"):
        relevance = Relevance.GRID if shape == "grid" else Relevance.MIXED
        drawn = dataclasses.replace(Shape.scale(forms), relevance=relevance)
        request = generate(random.Random(seed), drawn)
        _budget(request, rng)
        return request
    if shape == "follow":
        return _following(rng, forms)
    return _knapsack(rng, forms)


def _following(rng: random.Random, forms: int) -> dict[str, Any]:
    """One form per item whose cost follows its value (the value and a few units more):
    many selections of the optimal value and cost, told apart by the tie-break weight
    alone (``tests/cases/tiebreak-2082.json.gz`` is one, its form f1446 zeroed)."""
    noise = rng.choice((3, 5, 8, 20))
    candidates = []
    for i in range(forms):
        value = rng.randint(100, 1000)
        candidates.append({"id": f"f{i:04}", "cost": value + rng.randint(0, noise),
                           "relevance": value / 1000})  # fmt: skip
    request = {"task": {"id": "follow", "budget": 0}, "candidates": candidates}
    _budget(request, rng)
    return request


def _budget(request: dict[str, Any], rng: random.Random) -> None:
    total = sum(c["cost"] for c in request["candidates"])
    request["task"]["budget"] = int(total * rng.uniform(0.05, 0.6))


def _knapsack(rng: random.Random, forms: int) -> dict[str, Any]:
    """Forms in one to three sizes of each item, values in tenths (so they tie)."""
    candidates: list[dict[str, Any]] = []
    item = 0
    while len(candidates) < forms:
        item += 1
        cost, relevance = rng.randint(20, 900), rng.randint(1, 10) / 10
        for k, (share, worth) in enumerate(((1, 1), (0.4, 0.7), (0.1, 0.3))):
            if k and rng.random() < 0.5:
                break
            candidates.append({"id": f"i{item}-{k}", "identity": f"i{item}",
                               "cost": max(1, int(cost * share)),
                               "relevance": round(relevance * worth, 1)})  # fmt: skip
    request = {"task": {"id": "knapsack", "budget": 0}, "candidates": candidates}
    _budget(request, rng)
    return request


def variants(request: dict[str, Any], selected: tuple[str, ...], count: int, seed: int) -> Iterator[
    tuple[str, dict[str, Any]]
]:
    """The request with one selected, optional, valued form's relevance set to 0."""
    by_id = {c["id"]: c for c in request["candidates"]}
    chosen = [i for i in selected if not by_id[i].get("required") and by_id[i].get("relevance")]
    for form in random.Random(seed).sample(chosen, min(count, len(chosen))):
        other = copy.deepcopy(request)
        for c in other["candidates"]:
            if c["id"] == form:
                c["relevance"] = 0
        yield form, other


def _solve(request: dict[str, Any], limit: float) -> tuple[float, assembler.Result]:
    started = time.perf_counter()
    result = assembler.assemble(request, time_limit=limit)
    timings = dict(result.timings)
    return timings.get("solve", time.perf_counter() - started), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.proofhunt", description=__doc__)
    parser.add_argument("--seeds", type=int, nargs=2, default=(0, 20), metavar=("FROM", "TO"))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--forms", type=int, default=2082)
    parser.add_argument("--variants", type=int, default=6)
    parser.add_argument("--limit", type=float, default=10.0)
    parser.add_argument("--slow", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("proofhunt-findings"))
    args = parser.parse_args(argv)
    shapes = args.shapes.split(",")
    for seed in range(*args.seeds):
        for shape in shapes:
            request = requests(shape, seed, args.forms)
            took, first = _solve(request, args.limit)
            if first.status is not assembler.Status.BUNDLE:
                continue
            worst = (0.0, "")
            for form, other in variants(request, first.selected, args.variants, seed):
                spent, result = _solve(other, args.limit)
                worst = max(worst, (spent, form))
                if spent >= args.slow or not result.optimal:
                    again, result = _solve(other, args.limit)  # once more, alone
                    if again < args.slow and result.optimal:
                        continue
                    args.out.mkdir(parents=True, exist_ok=True)
                    path = args.out / f"{shape}-{seed}-{form}.json.gz"
                    path.write_bytes(gzip.compress(json.dumps(other).encode()))
                    print(f"SLOW {shape} {seed} {form}: {again:.2f} s, optimal {result.optimal}"
                          f" (first request {took:.2f} s) -> {path}", flush=True)  # fmt: skip
            print(f"{shape} {seed}: {len(request['candidates'])} forms, {took:.2f} s;"
                  f" slowest variant {worst[0]:.2f} s ({worst[1]})", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
