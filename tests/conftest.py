"""Shared fixtures and helpers for the test suite."""

from __future__ import annotations

import functools
from typing import Any

import pytest

import assembler
from assembler import api as _api
from assembler.session import session as _session

# Strategies whose every bundle must be legal; the other baselines (top-k, weighted,
# dump) break rules by design, and the corpus table counts how.
_LEGAL_BY_DESIGN = frozenset({"cpsat", "enumerate", "greedy"})


def _judge(request: Any, result: assembler.Result, strategy: str, counter: Any) -> None:
    """Every answer the suite produces, from ``assemble()`` or a session, through the
    independent verifier (and its rendering through the render verifier)."""
    if strategy not in _LEGAL_BY_DESIGN:
        return
    judged = request
    if counter is not None:
        from assembler.render import priced_request

        parsed = request if isinstance(request, assembler.Request) else None
        parsed = parsed or assembler.parse_request(request)
        judged = priced_request(parsed, counter, result.budget)
    try:
        problems = assembler.verify(judged, result)
    except assembler.RequestTooLarge:
        return  # above the verifier's default size limit: the benchmarks judge those
    assert problems == [], result.to_dict()
    if result.rendering is not None:
        assert assembler.verify_rendering(judged, result, result.rendering) == []


def _verifying_recorded(recorded: Any) -> Any:
    @functools.wraps(recorded)
    def wrapper(request: Any, run: Any, counter: Any, *args: Any, **kwargs: Any) -> Any:
        result = recorded(request, run, counter, *args, **kwargs)
        _judge(request, result, run.strategy, counter)
        return result

    return wrapper


def _verifying_answer(answer: Any) -> Any:
    @functools.wraps(answer)
    def wrapper(state: Any, options: Any, *args: Any, **kwargs: Any) -> Any:
        result, kept = answer(state, options, *args, **kwargs)
        _judge(state.request, result, options.strategy, options.counter)
        return result, kept

    return wrapper


# Installed before any test module imports the package's functions: ``assemble`` and
# ``assemble_validated`` reach ``_recorded`` and every session method reaches
# ``answer`` through their modules' globals, so no answer escapes the verifier.
_api._recorded = _verifying_recorded(_api._recorded)
_session.answer = _verifying_answer(_session.answer)


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
