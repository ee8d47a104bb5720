"""The session optimum (``benchmarks/sessionoptimum.py``): a proven lower bound and its plan.

A hand-worked session pins the price of appending (written once, read after); the
program's bound is never above the enumerated exact limit of a small session (the
clairvoyant program over every selection), nor above the price of its own plan replayed
through the library's rendering; where the rules the program relaxes are met the two
meet: the optimum is known.
"""

from __future__ import annotations

import math

import pytest
from test_cache_plan import session as plan_test_session

from assembler.cacheplan import LEVELS, PlanSession, plan, plan_session
from benchmarks.sessionoptimum import replay, session_optimum


def _appending(budget: int, provider: str = "anthropic") -> PlanSession:
    """A required 1,200-token system prompt and one 100-token user turn more per call,
    10 s apart."""
    system = {"id": "system", "role": "instruction", "channel": "system", "cost": 1200,
              "required": True, "scope": "shared", "content": "be exact"}  # fmt: skip
    calls = []
    for t in range(3):
        turns = [
            {"id": f"turn-{k}", "kind": "user_turn", "channel": "user", "turn": k,
             "cost": 100, "relevance": 0.9, "scope": "shared", "content": f"turn {k}"}
            for k in range(1, t + 2)
        ]  # fmt: skip
        calls.append({"at": 10.0 * t, "request": {"task": {"id": "append", "budget": budget},
                                                    "candidates": [system, *turns]}})  # fmt: skip
    return plan_session({"provider": provider, "model": None, "calls": calls})


def _value(session: PlanSession) -> int:
    return plan(session, exact=False).blind_value


def test_an_appending_session_writes_each_turn_once_and_reads_the_rest() -> None:
    session = _appending(2000)
    found = session_optimum(session, _value(session))
    # call 0 writes 1,300 tokens at 1.25; call 1 reads 1,300 at 0.1 and writes its new
    # 100; call 2 reads 1,400 and sends its new 100 uncached: no call reads them
    assert found.optimal
    assert found.lower == pytest.approx(1300 * 1.25 + (130 + 125) + (140 + 100))
    # the library marks the end of every call's content, so its last 100 are written;
    # with the program's own breakpoints (none after them) the plan costs the bound
    assert found.replayed == pytest.approx(found.lower + 25)
    assert found.placed == pytest.approx(found.lower) and found.gap == pytest.approx(1.0)
    assert found.plan[2] == ("system", "turn-1", "turn-2", "turn-3")


def test_openai_reads_whole_steps_from_its_minimum() -> None:
    session = _appending(2000, "openai")
    found = session_optimum(session, _value(session))
    # no write fee: call 0 sends 1,300 uncached; call 1 reads 1,280 (1,024 + 2 x 128) of
    # the 1,300 it shares, call 2 reads 1,280 of 1,400
    expected = 1300 + (1280 * 0.1 + 120) + (1280 * 0.1 + 220)
    assert found.optimal
    assert found.lower == pytest.approx(expected)
    assert found.replayed == pytest.approx(expected)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_bound_is_never_above_the_enumerated_limit_nor_the_plan_replayed(
    provider: str,
) -> None:
    session = plan_session(plan_test_session(provider=provider))
    exact = plan(session)
    assert exact.exact
    for _share, value, least in exact.levels:
        if math.isinf(least):
            continue
        found = session_optimum(session, value)
        assert found.optimal
        assert found.lower <= least + 1e-6
        assert found.lower <= found.replayed + 1e-6
        assert found.plan_value >= value
        assert replay(session, found.plan) == pytest.approx(found.replayed)
    assert len(exact.levels) == len(LEVELS)


def test_a_value_no_plan_reaches_has_no_plan() -> None:
    session = _appending(2000)
    found = session_optimum(session, _value(session) + 1)
    assert found.lower == math.inf and found.plan == ()
