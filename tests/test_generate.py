"""The random request generator (assembler.hunt.generate).

Checks determinism per seed, that every generated request is valid input (own
structural checks, the JSON Schema in models/, and the parser through ``assemble``),
that the shapes' knobs are respected (candidate counts, the issue-5 scale mix), and
that the small shape reaches every gate and every refusal code.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from drawn import requests
from hypothesis import given, settings
from jsonschema import Draft202012Validator
from profiles import examples

import assembler
from assembler.hunt.generate import Relevance, Shape, generate
from benchmarks.scenarios.adversarial import tangled

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "models" / "request.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)

SHAPES = {
    "small": Shape.small(),
    "small-4": Shape.small(4),
    "small-30": Shape.small(30),
    "scale-200": Shape.scale(200),
    "uniform": Shape(relevance=Relevance.UNIFORM),
    "grid": Shape(relevance=Relevance.GRID),
}


def check_valid(request: dict[str, Any]) -> None:
    """Structural rules of the stated model that the generator promises."""
    task = request["task"]
    assert isinstance(task["id"], str) and task["id"]
    assert type(task["budget"]) is int and task["budget"] >= 0
    assert 0.0 <= task.get("min_relevance", 0.0) <= 1.0
    assert task.get("operation", "current") in ("current", "historical")
    for key in ("required", "seal"):
        items = task.get(key, [])
        assert items == sorted(set(items)) and all(isinstance(x, str) and x for x in items)
    ids = [c["id"] for c in request["candidates"]]
    assert len(ids) == len(set(ids)), "ids must be unique"
    for c in request["candidates"]:
        assert type(c["cost"]) is int and c["cost"] >= 0
        rel = c["relevance"]
        assert type(rel) is float and 0.0 <= rel <= 1.0 and round(rel, 3) == rel
        assert c.get("role", "evidence") in ("evidence", "instruction")
        if "transfer" in c:
            assert c["transfer"] == {"from": c["scope"]}
        if "source" in c:
            assert isinstance(c["version"], str)
        assert all(isinstance(d, str) and d for d in c.get("depends_on", []))
    for standing in request.get("policy", {}).get("authority", {}).values():
        assert standing in ("instruction", "data")
    # JSON round trip: plain data only, nothing a JSON encoder would change
    assert json.loads(json.dumps(request)) == request


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_same_seed_same_request(name: str) -> None:
    shape = SHAPES[name]
    for seed in range(20):
        first = generate(random.Random(seed), shape)
        assert generate(random.Random(seed), shape) == first
        assert json.dumps(generate(random.Random(seed), shape)) == json.dumps(first)
    assert generate(random.Random(1), shape) != generate(random.Random(2), shape)


@pytest.mark.parametrize(
    "name",
    # the 200-form shape is validated by the schema form by form: the integration tier's
    [pytest.param(n, marks=pytest.mark.integration) if n.startswith("scale") else n
     for n in sorted(SHAPES)],
)  # fmt: skip
def test_generated_requests_are_valid(name: str) -> None:
    for seed in range(150):
        request = generate(random.Random(seed), SHAPES[name])
        check_valid(request)
        errors = sorted(VALIDATOR.iter_errors(request), key=lambda e: list(e.path))
        assert not errors, (seed, errors[0].message, list(errors[0].path))


@settings(max_examples=examples(150), deadline=None)
@given(requests())
def test_assemble_accepts_every_generated_request(request: dict[str, Any]) -> None:
    check_valid(request)
    result = assembler.assemble(request)  # raises InvalidRequest on a bad request
    assert assembler.verify(request, result) == []


def test_every_greedy_and_baseline_strategy_accepts_generated_requests() -> None:
    for seed in range(40):
        request = generate(random.Random(seed))
        for strategy in ("greedy", "top-k", "weighted", "dump", "enumerate"):
            result = assembler.assemble(request, strategy=strategy)
            if strategy in ("greedy", "enumerate"):  # the others may break rules by design
                assert assembler.verify(request, result) == []


def test_small_shape_respects_max_candidates() -> None:
    for cap in (1, 2, 3, 6, 10, 25):
        counts = Counter(
            len(generate(random.Random(seed), Shape.small(cap))["candidates"])
            for seed in range(200)
        )
        assert max(counts) <= cap
        assert min(counts) >= min(2, cap)
        if cap >= 6:
            assert len(counts) >= cap - 3, "candidate counts spread over the range"


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50, 1000])
def test_scale_shape_gives_exactly_n_forms(n: int) -> None:
    for seed in range(5):
        assert len(generate(random.Random(seed), Shape.scale(n))["candidates"]) == n


def test_scale_shape_matches_issue_5() -> None:
    request = generate(random.Random(5), Shape.scale(10_000))
    forms = request["candidates"]
    n = len(forms)
    identities = Counter(c.get("identity", c["id"]) for c in forms)
    assert max(identities.values()) <= 4
    references = [c for c in forms if c["form"] == "reference"]
    assert 0.07 <= len(references) / n <= 0.13
    resolvers = {d for c in references for d in c["depends_on"] if d.startswith("resolver-")}
    assert len(references) / len(resolvers) >= 4, "resolvers are shared"
    grouped = {c.get("identity", c["id"]) for c in forms if "group" in c}
    assert 0.03 <= len(grouped) / len(identities) <= 0.07
    members: dict[str, set[str]] = {}
    for c in forms:
        if "group" in c:
            members.setdefault(c["group"], set()).add(c.get("identity", c["id"]))
    assert all(len(m) == 2 for m in members.values()), "coupled pairs"
    required = set(request["task"].get("required", []))
    required |= {c.get("identity", c["id"]) for c in forms if c.get("required")}
    assert 0.03 <= len(required) / len(identities) <= 0.07
    total = sum(c["cost"] for c in forms)
    assert request["task"]["budget"] == int(total * 0.3)
    result = assembler.assemble(request, strategy="greedy")
    rejected = sum(1 for d in result.decisions if d.reason.is_gate)
    assert rejected / n < 0.15, "mostly eligible items"


def test_tangled_shape_turns_up_chains_cycles_and_groups() -> None:
    def structure(shape: Shape) -> tuple[int, int, int, int]:
        forms = generate(random.Random(3), shape)["candidates"]
        needs: dict[str, set[str]] = {}
        members: dict[str, set[str]] = {}
        for c in forms:
            identity = c.get("identity", c["id"])
            needs.setdefault(identity, set()).update(
                d for d in c.get("depends_on", []) if d.startswith("item-")
            )
            if "group" in c:
                members.setdefault(c["group"], set()).add(identity)
        chained = sum(1 for ds in needs.values() if ds)
        mutual = sum(1 for a, ds in needs.items() for d in ds if a in needs.get(d, ()))
        triples = sum(1 for m in members.values() if len(m) == 3)
        return len(forms), chained, mutual, triples

    n, chained, mutual, triples = structure(tangled(800))
    _, scale_chained, scale_mutual, scale_triples = structure(Shape.scale(800))
    assert n == 800
    assert chained > 10 * max(1, scale_chained) and mutual > 10 * max(1, scale_mutual)
    assert triples > 0 == scale_triples


def test_small_shape_reaches_every_gate_and_refusal() -> None:
    reasons: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    structure: Counter[str] = Counter()
    for seed in range(400):
        request = generate(random.Random(seed))
        result = assembler.assemble(request)
        assert assembler.verify(request, result) == []
        outcomes[result.refusal.code.value if result.refusal else result.status.value] += 1
        reasons.update(d.reason.value for d in result.decisions)
        forms = request["candidates"]
        structure["shared scope"] += any(c.get("scope") == "shared" for c in forms)
        structure["transfer"] += any("transfer" in c for c in forms)
        structure["historical"] += request["task"].get("operation") == "historical"
        structure["threshold"] += "min_relevance" in request["task"]
        structure["required flag"] += any(c.get("required") for c in forms)
        structure["cycle"] += _has_cycle(forms)
        structure["dangling"] += any(
            d.startswith("ghost-") for c in forms for d in c.get("depends_on", [])
        )
        groups = {c["group"] for c in forms if "group" in c}
        structure["group"] += bool(groups)
        identities = Counter(c.get("identity", c["id"]) for c in forms)
        structure["partial group"] += any(
            "group" not in c
            and any(
                "group" in o and o.get("identity", o["id"]) == c.get("identity", c["id"])
                for o in forms
            )
            for c in forms
        )
        structure["alternatives"] += any(n > 1 for n in identities.values())
        structure["shared resolver"] += any(
            sum(r in c.get("depends_on", []) for c in forms if c["form"] == "reference") > 1
            for r in identities
            if r.startswith("resolver-")
        )
    for gate in (
        "sealed",
        "scope",
        "scope-unknown",
        "stale",
        "freshness-unknown",
        "authority",
        "dependency-unavailable",
        "group-ineligible",
    ):
        assert reasons[gate] > 0, gate
    for admitted in ("required", "dependency", "group", "value", "alternative", "not-chosen"):
        assert reasons[admitted] > 0, admitted
    for outcome in ("bundle", "REQUIRED_MISSING", "REQUIRED_INELIGIBLE", "MANDATORY_OVER_BUDGET"):
        assert outcomes[outcome] > 0, outcome
    assert outcomes["bundle"] >= 120, "most requests still have a bundle to compare"
    for name in (
        "shared scope",
        "transfer",
        "historical",
        "threshold",
        "required flag",
        "cycle",
        "dangling",
        "group",
        "partial group",
        "alternatives",
        "shared resolver",
    ):
        assert structure[name] > 0, name


def _has_cycle(forms: list[dict[str, Any]]) -> bool:
    needs: dict[str, set[str]] = {}
    for c in forms:
        needs.setdefault(c.get("identity", c["id"]), set()).update(c.get("depends_on", []))

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in needs.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    return any(reaches(i, i, {i}) for i in needs)


def test_candidates_are_shuffled_unless_asked_not_to() -> None:
    shape = Shape.small(10)
    unsorted = sum(
        [c["id"] for c in r["candidates"]] != sorted(c["id"] for c in r["candidates"])
        for r in (generate(random.Random(s), shape) for s in range(30))
    )
    assert unsorted > 10
    # the shuffle is the last draw: the same candidates, in creation order
    fixed = generate(random.Random(3), replace(shape, shuffle=False))
    shuffled = generate(random.Random(3), shape)
    assert fixed["task"] == shuffled["task"]
    assert sorted(fixed["candidates"], key=_id) == sorted(shuffled["candidates"], key=_id)


def _id(candidate: dict[str, Any]) -> str:
    return str(candidate["id"])


@pytest.mark.parametrize(
    "knobs",
    [
        {"candidates": (0, 3)},
        {"candidates": (5, 3)},
        {"forms_per_identity": (1, 5)},
        {"group_size": (1, 2)},
        {"p_sealed": 1.5},
        {"p_reference": -0.1},
        {"budget_fraction": (0.5, 0.2)},
        {"min_relevance": ()},
        {"min_relevance": (1.5,)},
        {"refs_per_resolver": 0.5},
        {"cost_grid": 0},
        {"full_cost": (0, 10)},
    ],
)
def test_shape_rejects_bad_knobs(knobs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Shape(**knobs)


def test_presets_reject_bad_sizes() -> None:
    with pytest.raises(ValueError):
        Shape.small(0)
    with pytest.raises(ValueError):
        Shape.scale(0)


def test_generator_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, assembler.hunt.generate, random;"
        "assembler.hunt.generate.generate(random.Random(0));"
        "heavy = [m for m in ('ortools', 'numpy', 'networkx') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
