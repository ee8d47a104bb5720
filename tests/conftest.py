"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

from typing import Any

import pytest

import assembler


def request(budget: int = 1000, **task: Any) -> dict[str, Any]:
    """A minimal request dict; add candidates with ``form(...)``."""
    return {"task": {"id": "t", "budget": budget, **task}, "candidates": []}


def form(id: str, cost: int, relevance: float = 0.5, **fields: Any) -> dict[str, Any]:
    return {"id": id, "cost": cost, "relevance": relevance, **fields}


def solve(req: dict[str, Any], strategy: str = "cpsat", **kw: Any) -> assembler.Result:
    """Assemble and always pass the result through the independent verifier (and its
    rendering, when there is one, through the render verifier)."""
    result = assembler.assemble(req, strategy=strategy, **kw)
    judged: Any = req
    if kw.get("counter") is not None:
        from assembler.render import priced_request

        judged = priced_request(assembler.parse_request(req), kw["counter"], result.budget)
    assert assembler.verify(judged, result) == [], result.to_dict()
    if result.rendering is not None:
        assert assembler.verify_rendering(judged, result, result.rendering) == []
    return result


def audited(answers: Any) -> None:
    """Every bundle a counterfactual produced (kept by ``Limits(audit=True)``) passes
    the independent verifier, against the derived request it answers."""
    assert answers.limits.audit, "explain with Limits(audit=True) to verify its bundles"
    for derived, answer in answers.audited:
        assert assembler.verify(derived, answer) == [], answer.to_dict()


@pytest.fixture
def make_request() -> Any:
    return request
