"""The gate-ignoring baselines: top-k, weighted and dump, and the illegal bundles they make."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import form, request

import assembler
from assembler import Status
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates
from assembler.strategies.baselines import GATE_PENALTY, REQUIRED_BONUS, weighted_score

BASELINES = ("top-k", "weighted", "dump")


def run(req: dict[str, Any], strategy: str) -> tuple[assembler.Result, set[str]]:
    """The result and the kinds of violation the independent verifier finds in it."""
    result = assembler.assemble(req, strategy=strategy)
    assert result.status is Status.BUNDLE
    assert (result.optimal, result.bound) == (False, None)
    kinds = {v.kind for v in assembler.verify(req, result)}
    # the record is always honest: only the bundle itself may be illegal
    assert "record" not in kinds, assembler.verify(req, result)
    return result, kinds


@pytest.mark.parametrize("strategy", BASELINES)
def test_empty_request_gives_an_empty_bundle(strategy: str) -> None:
    result, kinds = run(request(0), strategy)
    assert result.selected == ()
    assert kinds == set()


@pytest.mark.parametrize("strategy", BASELINES)
def test_baselines_never_refuse(strategy: str) -> None:
    req = request(10, required=["ghost"])
    req["candidates"] = [form("a", 5, 0.5), form("b", 50, 0.9, required=True)]
    _, kinds = run(req, strategy)
    assert "required" in kinds


@pytest.mark.parametrize("strategy", BASELINES)
def test_baselines_never_exceed_the_budget(strategy: str) -> None:
    req = request(30)
    req["candidates"] = [form(f"c{i}", 7, i / 10) for i in range(10)]
    result, kinds = run(req, strategy)
    assert result.cost <= 30
    assert "budget" not in kinds


# ---------------------------------------------------------------------------
# top-k


def test_top_k_admits_a_gate_failing_high_relevance_item() -> None:
    req = request(1000, scope="proj-a")
    req["candidates"] = [
        form("wrong-project", 300, 0.99, scope="proj-b"),
        form("current", 300, 0.75, scope="proj-a"),
    ]
    result, kinds = run(req, "top-k")
    assert set(result.selected) == {"wrong-project", "current"}
    assert kinds == {"gate"}
    gate = [v for v in assembler.verify(req, result) if v.kind == "gate"]
    assert gate[0].forms == ("wrong-project",)
    # the exact strategy keeps it out whatever its score
    assert assembler.assemble(req).selected == ("current",)


def test_top_k_stops_at_the_first_item_that_does_not_fit() -> None:
    req = request(100)
    req["candidates"] = [form("a", 60, 0.9), form("b", 60, 0.8), form("c", 10, 0.7)]
    result, _ = run(req, "top-k")
    assert result.selected == ("a",)  # "c" would fit, but top-k stopped at "b"


def test_top_k_ignores_dependencies_alternatives_and_its_cutoff_is_min_relevance() -> None:
    req = request(1000, min_relevance=0.3)
    req["candidates"] = [
        form("x-full", 400, 0.8, identity="x"),
        form("x-ref", 20, 0.8, identity="x", depends_on=["resolver"]),
        form("resolver", 650, 0.0),
        form("weak", 1, 0.2),
    ]
    result, kinds = run(req, "top-k")
    assert set(result.selected) == {"x-full", "x-ref"}
    assert kinds == {"duplicate-identity", "dependency"}


# ---------------------------------------------------------------------------
# dump


def test_dump_respects_arrival_order_and_stops_at_the_first_misfit() -> None:
    req = request(100)
    req["candidates"] = [
        form("zeta", 50, 0.0),
        form("alpha", 40, 0.1),
        form("mid", 30, 1.0),  # does not fit: dump stops here
        form("beta", 5, 0.9),  # would fit, never reached
    ]
    result, kinds = run(req, "dump")
    assert set(result.selected) == {"zeta", "alpha"}
    assert kinds == set()
    # the same candidates in another order give another bundle
    req["candidates"] = list(reversed(req["candidates"]))
    reordered, _ = run(req, "dump")
    assert set(reordered.selected) == {"beta", "mid", "alpha"}


def test_dump_admits_everything_it_reaches_gates_or_not() -> None:
    req = request(1000, seal=["call-7"])
    req["candidates"] = [
        form("sibling", 10, 0.9, lineage=["call-7"]),
        form("claim", 10, 0.9, group="g"),
        form("qualification", 10, 0.1, group="g"),
    ]
    result, kinds = run(req, "dump")
    assert set(result.selected) == {"sibling", "claim", "qualification"}
    assert kinds == {"gate"}


# ---------------------------------------------------------------------------
# weighted


def test_weighted_score_is_a_finite_penalty_and_bonus() -> None:
    raw = request(100, scope="p", required=["must"])
    raw["candidates"] = [
        form("wrong", 1, 0.99, scope="q"),
        form("ok", 1, 0.6, scope="p"),
        form("must", 1, 0.2, scope="p"),
        form("stranded", 1, 0.5, scope="p", depends_on=["wrong"]),  # derived gate
    ]
    req = parse_request(raw)
    gates = apply_gates(req)
    scores = {c.id: weighted_score(req, gates, c) for c in req.candidates}
    assert scores == {
        "wrong": 990 - GATE_PENALTY,
        "ok": 600,
        "must": 200 + REQUIRED_BONUS,
        "stranded": 500 - GATE_PENALTY,
    }


def test_weighted_lets_a_high_score_buy_an_illegal_item() -> None:
    req = request(300, scope="proj-a")
    req["candidates"] = [
        form("wrong-project", 300, 0.99, scope="proj-b"),  # score 690
        form("current", 300, 0.6, scope="proj-a"),  # score 600
        form("weak-stale", 1, 0.25, scope="proj-a", source="s", version="v1"),  # score < 0
    ]
    req["sources"] = {"s": "v2"}
    result, kinds = run(req, "weighted")
    assert result.selected == ("wrong-project",)
    assert kinds == {"gate"}
    # the penalty stops only what scores no more than it: the 0.25 stale item stays out
    assert result.decision("weak-stale").verdict.value == "rejected"
    assert assembler.assemble(req).selected == ("current",)


def test_weighted_adds_dependencies_and_skips_alternatives_but_ignores_groups() -> None:
    req = request(1000)
    req["candidates"] = [
        form("x-ref", 20, 0.8, identity="x", depends_on=["resolver"]),
        form("x-full", 400, 0.8, identity="x"),
        form("resolver", 650, 0.0),
        form("claim", 120, 0.9, group="migration-claim"),
        form("qualification", 80, 0.0, group="migration-claim"),
    ]
    result, kinds = run(req, "weighted")
    assert set(result.selected) == {"x-ref", "resolver", "claim"}
    assert kinds == {"group"}


def test_weighted_requirement_is_only_a_bonus_so_density_can_crowd_it_out() -> None:
    req = request(110, required=["pinned"])
    req["candidates"] = [form("pinned", 90, 0.1), form("popular", 20, 0.9), form("filler", 20, 0.3)]
    # pinned scores 100 + 1000 but costs 90: by density it ranks after popular (45)
    # and filler (15), at 12.2, and no longer fits.
    result, kinds = run(req, "weighted")
    assert set(result.selected) == {"popular", "filler"}
    assert kinds == {"required"}
    # without the filler the bonus is enough to bring the required item in
    req["candidates"].pop()
    result, kinds = run(req, "weighted")
    assert set(result.selected) == {"popular", "pinned"}
    assert kinds == set()


def test_weighted_skips_an_addition_that_does_not_fit() -> None:
    req = request(100)
    req["candidates"] = [
        form("ref", 10, 0.9, depends_on=["resolver"]),
        form("resolver", 200, 0.0),
        form("note", 50, 0.3),
    ]
    result, kinds = run(req, "weighted")
    assert result.selected == ("note",)
    assert kinds == set()
