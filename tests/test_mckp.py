"""The multiple-choice knapsack kernel (``exact/mckp.py``, ``mckp_twin.py``, ``_mckp.c``).

Input: generated problems and requests (``drawn``: small, tied, with dependencies,
agent transcripts), the corpus, and hand-made items that tie or overrun.
Output: checks that the kernel's answer is the brute-force oracle's and the general
path's (reductions, knapsack program, CP-SAT), or none at all; that the compiled
kernel and its pure-Python twin give the same status and choice on the same arrays;
that a tie on value, cost and weight, a state limit and a passed deadline are handed
back, never answered; and that a whole call answers alike by every path (kernel,
twin, general), the path named in its timings.
"""

from __future__ import annotations

import dataclasses
import math
import random
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from drawn import problem_of, problems, requests, transcripts
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import kernels
from assembler.corpus import load_corpus
from assembler.deadline import NEVER, Deadline
from assembler.exact import mckp, mckp_twin
from assembler.exact import solve as solve_module
from assembler.exact.backend import Ask, SolveStatus
from assembler.exact.closure import Problem
from assembler.exact.mckp import WALKED
from assembler.exact.solve import exact_backend
from assembler.hunt.generate import Shape, generate
from assembler.strategies.bruteforce import BruteForce

SETTINGS = settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# no dependency edges (the coupled entry point), and few cost levels (ties on value and cost)
PLAIN = dataclasses.replace(
    Shape.small(12), p_reference=0.0, p_chain=0.0, p_cycle=0.0, p_dangling=0.0
)
TIED = dataclasses.replace(PLAIN, cost_grid=5)
CORPUS = load_corpus(Path(__file__).resolve().parent.parent / "corpus")
COMPILED = kernels.status()["assembler.exact.mckp_twin"] == "compiled"


def _scaled(seed: int, size: int = 100) -> Problem:
    """A realistic generated problem of ``size`` forms (``Shape.scale``)."""
    return problem_of(generate(random.Random(seed), Shape.scale(size)))


def _kernel_agrees_with_the_oracle(problem: Problem) -> None:
    found = mckp.solve_mckp(problem)
    event("answered" if found is not None else "handed back")
    if found is None:
        return
    expected = BruteForce().solve(problem)
    assert expected.status is SolveStatus.OPTIMAL
    assert found.status is SolveStatus.OPTIMAL
    assert found.selection == expected.selection
    assert found.bound == expected.bound


@SETTINGS
@given(problems(PLAIN))
def test_the_kernel_gives_the_oracles_answer(problem: Problem) -> None:
    _kernel_agrees_with_the_oracle(problem)


@SETTINGS
@given(problems(TIED))
def test_on_ties_of_value_and_cost_the_kernel_gives_the_oracles_answer(problem: Problem) -> None:
    _kernel_agrees_with_the_oracle(problem)


@SETTINGS
@given(problems(Shape.small(12)))
def test_items_joined_by_needs_get_the_oracles_answer(problem: Problem) -> None:
    _kernel_agrees_with_the_oracle(problem)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_the_kernel_gives_the_general_paths_answer_at_scale(seed: int) -> None:
    problem = _scaled(seed, 300)
    found = mckp.solve_mckp(problem)
    event("answered" if found is not None else "handed back")
    if found is not None:
        general = exact_backend().solve(problem, Ask(NEVER))
        assert general.status is SolveStatus.OPTIMAL
        assert (found.selection, found.bound) == (general.selection, general.bound)


def _coupled(problem: Problem, state_limit: int = 10**6) -> tuple[Any, ...]:
    assert problem.budget is not None
    return (*mckp._columns(problem), problem.budget, math.inf, state_limit, WALKED)


@pytest.mark.skipif(not COMPILED, reason="the compiled kernel is not built here")
@SETTINGS
@given(st.one_of(problems(PLAIN), problems(TIED), st.integers(0, 2**32).map(_scaled)), st.data())
def test_the_compiled_kernel_answers_as_its_twin(problem: Problem, data: st.DataObject) -> None:
    compiled = kernels.kernel("assembler.exact.mckp_twin")
    assert compiled is not mckp_twin
    if any(problem.needs) or problem.budget is None:
        return
    limit = data.draw(st.sampled_from([1, 3, 10**6]), label="state limit")
    answer = compiled.solve_coupled(*_coupled(problem, limit))
    assert answer == tuple(mckp_twin.solve_coupled(*_coupled(problem, limit)))
    event(f"status {answer[0]}")


@pytest.mark.skipif(not COMPILED, reason="the compiled kernel is not built here")
@SETTINGS
@given(st.lists(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 4)),
                         min_size=1, max_size=4), max_size=8), st.integers(-2, 40))  # fmt: skip
def test_the_compiled_kernel_answers_as_its_twin_on_raw_items(
    items: list[list[tuple[int, int, int]]], cap: int
) -> None:
    # small integers: many ties between options and between states
    columns = _items(items)
    compiled = kernels.kernel("assembler.exact.mckp_twin")
    expected = mckp_twin.solve_items(*columns, cap, math.inf, 10**6)
    assert compiled.solve_items(*columns, cap, math.inf, 10**6) == tuple(expected)
    if expected[0] == mckp_twin.OPTIMAL:
        best = _brute(items, cap)
        assert best is not None and not best[1]
        assert [o - s for o, s in zip(expected[1], columns[0], strict=False)] == best[0]


def _items(items: list[list[tuple[int, int, int]]]) -> tuple[array[int], ...]:
    start, cost, value, weight = array("q", [0]), array("q"), array("q"), array("q")
    for options in items:
        for c, v, w in options:
            cost.append(c)
            value.append(v)
            weight.append(w)
        start.append(len(cost))
    return start, cost, value, weight


def _brute(
    items: list[list[tuple[int, int, int]]], cap: int
) -> tuple[list[int], bool] | None:
    """The best choice by the order (most value, least cost, least weight), and whether
    another choice ties with it on all three; None when nothing fits."""
    best: tuple[tuple[int, int, int], list[int]] | None = None
    tied = False
    for choice in _choices([len(options) for options in items]):
        c = sum(items[i][o][0] for i, o in enumerate(choice))
        if c > cap:
            continue
        key = (-sum(items[i][o][1] for i, o in enumerate(choice)), c,
               sum(items[i][o][2] for i, o in enumerate(choice)))  # fmt: skip
        if best is None or key < best[0]:
            best, tied = (key, choice), False
        elif key == best[0]:
            tied = True
    return None if best is None else (best[1], tied)


def _choices(sizes: list[int]) -> Iterator[list[int]]:
    if not sizes:
        yield []
        return
    for rest in _choices(sizes[1:]):
        for first in range(sizes[0]):
            yield [first, *rest]


@given(st.lists(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 4)),
                         min_size=1, max_size=4), max_size=6), st.integers(-2, 40))  # fmt: skip
@SETTINGS
def test_the_twin_on_raw_items_is_the_brute_force_or_hands_back(
    items: list[list[tuple[int, int, int]]], cap: int
) -> None:
    columns = _items(items)
    status, chosen = mckp_twin.solve_items(*columns, cap, math.inf, 10**6)
    best = _brute(items, cap)
    if best is None:
        assert status == mckp_twin.INFEASIBLE
    elif best[1]:
        # a tie on all three levels is the canonical walk's to settle: never answered
        assert status == mckp_twin.TIE
    else:
        assert status == mckp_twin.OPTIMAL
        assert [o - s for o, s in zip(chosen, columns[0], strict=False)] == best[0]
    event(f"status {status}")


@pytest.mark.parametrize("solver", ["twin", "compiled"])
def test_a_tie_on_all_three_levels_is_handed_back(solver: str) -> None:
    if solver == "compiled" and not COMPILED:
        pytest.skip("the compiled kernel is not built here")
    module = mckp_twin if solver == "twin" else kernels.kernel("assembler.exact.mckp_twin")
    # two items, each with "none" and one option; taking either one fits, not both,
    # and both are alike in cost, value and weight
    tie = _items([[(0, 0, 0), (5, 7, 3)], [(0, 0, 0), (5, 7, 3)]])
    assert module.solve_items(*tie, 6, math.inf, 10**6)[0] == mckp_twin.TIE
    # within one item: two options alike
    inside = _items([[(0, 0, 0), (5, 7, 3), (5, 7, 3)]])
    assert module.solve_items(*inside, 9, math.inf, 10**6)[0] == mckp_twin.TIE
    # a lighter weight breaks the tie
    light = _items([[(0, 0, 0), (5, 7, 3)], [(0, 0, 0), (5, 7, 2)]])
    assert tuple(module.solve_items(*light, 6, math.inf, 10**6)) == (mckp_twin.OPTIMAL, [0, 3])


@pytest.mark.parametrize("solver", ["twin", "compiled"])
def test_a_passed_deadline_and_a_state_limit_are_handed_back(solver: str) -> None:
    if solver == "compiled" and not COMPILED:
        pytest.skip("the compiled kernel is not built here")
    module = mckp_twin if solver == "twin" else kernels.kernel("assembler.exact.mckp_twin")
    items = _items([[(0, 0, 0), (c, c + k % 3, 1 + k)] for k, c in enumerate(range(3, 30))])
    assert module.solve_items(*items, 100, 0.0, 10**6)[0] == mckp_twin.DEADLINE
    assert module.solve_items(*items, 100, math.inf, 2)[0] == mckp_twin.LIMIT
    assert module.solve_items(*items, 100, math.inf, 10**6)[0] == mckp_twin.OPTIMAL


def test_the_kernel_answers_an_agent_transcript_and_hands_back_what_it_cannot() -> None:
    deadline_passed = Deadline(0.0)
    problem = _transcript_problem()
    assert mckp.solve_mckp(problem) is not None
    assert mckp.solve_mckp(problem, deadline_passed) is None
    assert mckp.solve_mckp(dataclasses.replace(problem, budget=None)) is None
    # nothing fits: the general path prices the refusal
    assert mckp.solve_mckp(dataclasses.replace(problem, budget=0)) is None


def _transcript_problem() -> Problem:
    candidates = [
        {"id": f"m{k}", "cost": 10 + k, "relevance": k / 20, "kind": "user_turn", "turn": k}
        for k in range(12)
    ]
    candidates[0]["required"] = True
    return problem_of({"task": {"id": "t", "budget": 60}, "candidates": candidates})


# -- every path of a whole call answers alike ------------------------------------------

# (the monkeypatch fixture is only used inside each example's own context)
CALLS = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _digest(result: assembler.Result) -> tuple[Any, ...]:
    data = result.to_dict()
    data.pop("timings")
    return (data, result.package_id, result.trace_id)


def _paths(monkeypatch: pytest.MonkeyPatch, request: Any, **options: Any) -> str:
    """The request answered by the kernel (as loaded), its twin, the general path and
    the brute-force oracle when small: every answer the same, each judged by the
    verifier (the audit hook); returns the path the kernel's call took."""
    first = assembler.assemble(request, **options)
    timed = dict(first.timings)
    answers = [_digest(first)]
    with monkeypatch.context() as patch:
        patch.setitem(kernels._LOADED, "assembler.exact.mckp_twin", mckp_twin)
        answers.append(_digest(assembler.assemble(request, **options)))
    with monkeypatch.context() as patch:
        patch.setattr(solve_module, "solve_mckp", lambda *_: None)
        general = assembler.assemble(request, **options)
        assert "path-mckp" not in dict(general.timings)
        answers.append(_digest(general))
    assert answers[1] == answers[0]
    assert answers[2] == answers[0]
    return "mckp" if "path-mckp" in timed else "general" if "path-general" in timed else "none"


@settings(max_examples=examples(100), deadline=None, suppress_health_check=CALLS)
@given(requests())
def test_every_path_gives_the_same_answer_on_generated_requests(
    monkeypatch: pytest.MonkeyPatch, request: dict[str, Any]
) -> None:
    event(_paths(monkeypatch, request))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=CALLS)
@given(transcripts(most_turns=8))
def test_every_path_gives_the_same_answer_on_agent_transcripts(
    monkeypatch: pytest.MonkeyPatch, request: dict[str, Any]
) -> None:
    path = _paths(monkeypatch, request, render="openai-chat")
    event(path)


@pytest.mark.parametrize("case", CORPUS, ids=[case.name for case in CORPUS])
def test_every_path_gives_the_same_answer_on_the_corpus(
    monkeypatch: pytest.MonkeyPatch, case: Any
) -> None:
    _paths(monkeypatch, case.request)


def test_a_problem_stating_a_rule_the_kernel_does_not_read_is_handed_back() -> None:
    # a format's structural rules (sendable.py) are constraints the kernel does not read:
    # a problem stating one goes to the general path
    import dataclasses as dc

    from assembler.model.sendable import Clause

    problem = _transcript_problem()
    assert problem.rules == ()
    assert mckp.solve_mckp(problem) is not None
    ruled = dc.replace(problem, rules=(Clause("first-message-user", (0,), ()),))
    assert mckp.solve_mckp(ruled) is None


def test_a_rendered_call_whose_optimum_the_format_sends_is_the_kernels() -> None:
    # the kernel solves the problem without the format's rules; its optimum, when it
    # keeps them, is the answer (a relaxation's feasible optimum), else the general path
    turns = [
        {"id": f"m{k}", "cost": 10 + k, "relevance": 0.2 + k / 30,
         "kind": "user_turn" if k % 2 == 0 else "assistant_turn", "turn": k,
         "content": f"turn {k}"}
        for k in range(8)
    ]  # fmt: skip
    request = {"task": {"id": "t", "budget": 80}, "candidates": turns}
    sent = assembler.assemble(request, render="anthropic-messages")
    assert "path-mckp" in dict(sent.timings)
    # a cheap, valuable assistant turn first: the blind optimum opens with it, which the
    # format refuses (first-message-user), so the general path answers
    opening = [
        {"id": i, "content": i, "cost": c, "relevance": r, "kind": kind, "turn": t}
        for t, (i, c, r, kind) in enumerate(
            [("a0", 5, 1.0, "assistant_turn"), ("u1", 60, 0.3, "user_turn"),
             ("a2", 5, 0.9, "assistant_turn")]
        )
    ]  # fmt: skip
    ruled = {"task": {"id": "t", "budget": 30}, "candidates": opening}
    answer = assembler.assemble(ruled, render="anthropic-messages")
    assert "path-mckp" not in dict(answer.timings)
    oracle = assembler.assemble(ruled, render="anthropic-messages", strategy="enumerate")
    assert (answer.status, answer.selected) == (oracle.status, oracle.selected)


def test_a_tool_call_whose_results_offer_many_sizes_is_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # fit offers a long tool result at several sizes: a call with three results of five
    # forms each is one item of 1 + 5 * 5 * 5 options (past the general path's 64 per
    # item); the kernel makes them and answers as every other path
    candidates: list[dict[str, Any]] = [
        {"id": "q", "cost": 20, "relevance": 1.0, "kind": "user_turn", "turn": 0},
        {"id": "call", "cost": 15, "relevance": 0.5, "turn": 1, "group": "g"},
    ]  # fmt: skip
    for r in range(3):
        for f, share in enumerate((1.0, 0.6, 0.4, 0.25, 0.1)):
            candidates.append(
                {"id": f"r{r}-{f}", "identity": f"r{r}", "form": f"s{f}",
                 "cost": int(400 * share) + r, "relevance": round(0.9 * share, 3),
                 "turn": 2 + r, "group": "g"}
            )  # fmt: skip
    request = {"task": {"id": "t", "budget": 700}, "candidates": candidates}
    assert _paths(monkeypatch, request) == "mckp"
