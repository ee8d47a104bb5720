"""The budget program for knapsack-shaped cores: the oracle's answer, or none at all."""

from __future__ import annotations

import dataclasses
import random

from drawn import problem_of, problems
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

from assembler.deadline import Deadline
from assembler.exact.backend import Ask, SolveOutcome, SolveStatus
from assembler.exact.closure import Problem
from assembler.exact.cpsat import CpSat
from assembler.exact.knapsack import cheapest_reaching, solve_knapsack
from assembler.hunt.generate import Shape, generate
from assembler.strategies.bruteforce import BruteForce

# requests with no references, chains or cycles: every core is knapsack-shaped
KNAPSACK = dataclasses.replace(
    Shape.small(12), p_reference=0.0, p_chain=0.0, p_cycle=0.0, p_dangling=0.0
)
# the same with few cost levels, so that value and cost ties are common
TIED = dataclasses.replace(KNAPSACK, cost_grid=40)


def _oracle(problem: Problem) -> SolveOutcome:
    return BruteForce().solve(problem)  # type: ignore[arg-type]


def _agrees(problem: Problem) -> SolveOutcome | None:
    found = solve_knapsack(problem)
    if found is not None:
        expected = _oracle(problem)
        assert found.status is expected.status
        if expected.status is SolveStatus.OPTIMAL:
            assert found.selection == expected.selection
            assert found.bound == sum(problem.value[f] for f in expected.selection)
    return found


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(KNAPSACK))
def test_the_program_gives_the_oracles_answer(problem: Problem) -> None:
    found = _agrees(problem)
    event("answered" if found is not None else "handed back")


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(TIED))
def test_ties_are_answered_as_the_oracle_does_or_handed_back(problem: Problem) -> None:
    _agrees(problem)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(Shape.small(12)))
def test_a_core_with_dependencies_gets_the_oracles_answer(problem: Problem) -> None:
    # references, chains and cycles: a form and what it needs are one item
    found = _agrees(problem)
    event(
        ("needs, " if any(problem.needs) else "no needs, ")
        + ("answered" if found is not None else "handed back")
    )


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(Shape.small(12)), st.data())
def test_a_floor_on_the_worth_keeps_the_answer_or_proves_none_reaches_it(
    problem: Problem, data: st.DataObject
) -> None:
    expected = _oracle(problem)
    top = expected.bound if expected.status is SolveStatus.OPTIMAL else 0
    assert top is not None
    worth = data.draw(st.integers(-1, top + 2), label="worth")
    found = solve_knapsack(problem, worth=worth)
    if found is None:
        return
    if expected.status is SolveStatus.OPTIMAL and worth <= top:
        assert found.status is SolveStatus.OPTIMAL
        assert found.selection == expected.selection
    else:
        assert found.status is SolveStatus.INFEASIBLE


def test_most_requests_with_dependencies_are_answered() -> None:
    answered = needy = 0
    for seed in range(200):
        problem = problem_of(generate(random.Random(seed), Shape.small(12)))
        if any(problem.needs):
            needy += 1
            answered += _agrees(problem) is not None
    assert needy >= 100
    assert answered >= needy // 2


def test_most_knapsack_shaped_requests_are_answered() -> None:
    # so that the property tests above judge answers, not a program that gives up
    answered = 0
    for seed in range(200):
        problem = problem_of(generate(random.Random(seed), KNAPSACK))
        answered += _agrees(problem) is not None
    assert answered >= 150


def _problem(
    cost: tuple[int, ...], value: tuple[int, ...], weight: tuple[int, ...], budget: int
) -> Problem:
    size = len(cost)
    return Problem(
        form_ids=tuple(f"f{i}" for i in range(size)),
        identity_of=tuple(range(size)),
        identities=tuple(f"i{i}" for i in range(size)),
        cost=cost,
        value=value,
        weight=weight,
        needs=((),) * size,
        groups=(),
        required=(),
        budget=budget,
    )


def test_a_tie_on_value_cost_and_weight_is_handed_back() -> None:
    # two forms alike on every level the program sees: only the canonical-order rule
    # separates them, and the program leaves that to the search
    assert solve_knapsack(_problem((5, 5), (7, 7), (3, 3), budget=5)) is None
    # a lighter one is the answer
    found = solve_knapsack(_problem((5, 5), (7, 7), (3, 2), budget=5))
    assert found is not None and found.selection == (1,)


def test_a_tie_below_a_better_answer_does_not_matter() -> None:
    found = solve_knapsack(_problem((5, 5, 9), (7, 7, 20), (3, 3, 1), budget=9))
    assert found is not None and found.selection == (2,)


def test_a_coupled_pair_comes_in_whole_or_not_at_all() -> None:
    problem = dataclasses.replace(
        _problem((4, 4, 5), (10, 1, 8), (1, 1, 1), budget=8), groups=((0, 1),)
    )
    found = solve_knapsack(problem)
    # the pair costs 8 for 11; the single form 5 for 8
    assert found is not None and found.selection == (0, 1)
    assert found == _oracle(problem)


def test_required_material_over_the_budget_is_infeasible() -> None:
    problem = dataclasses.replace(_problem((7,), (1,), (1,), budget=5), required=(0,))
    found = solve_knapsack(problem)
    assert found is not None and found.status is SolveStatus.INFEASIBLE


def test_the_budgets_size_does_not_matter() -> None:
    # a budget of a billion and costs with no common factor: three items, a few states
    costs = (999_999, 1_000_001, 500_000)
    problem = _problem(costs, (7, 8, 9), (3, 2, 1), budget=10**9)
    found = solve_knapsack(problem)
    assert found is not None and found.selection == (0, 1, 2)
    tight = dataclasses.replace(problem, budget=1_999_999)
    assert solve_knapsack(tight) == _oracle(tight)


def test_a_frontier_past_the_state_limit_is_handed_back() -> None:
    problem = _problem((5, 4), (7, 6), (3, 2), budget=9)
    assert solve_knapsack(problem) is not None
    # the first item alone offers two states from the empty one
    assert solve_knapsack(problem, state_limit=1) is None


# larger knapsack-shaped requests than the oracle enumerates: judged by CP-SAT, whose
# answer is the unique optimum too (the bound prunes the frontier on these)
LARGER = dataclasses.replace(
    Shape.scale(120), p_reference=0.0, p_chain=0.0, p_cycle=0.0, p_dangling=0.0
)


def test_larger_programs_give_cpsats_answer() -> None:
    answered = 0
    for seed in range(20):
        problem = problem_of(generate(random.Random(seed), LARGER))
        found = solve_knapsack(problem)
        if found is None:
            continue
        answered += 1
        expected = CpSat().solve(problem, Ask(Deadline.after(60), 1))
        assert expected.status in (SolveStatus.OPTIMAL, SolveStatus.INFEASIBLE)
        assert found.status is expected.status
        assert found.selection == expected.selection
    assert answered >= 15


def test_a_deadline_already_past_hands_the_core_back() -> None:
    problem = _problem((5, 4), (7, 6), (3, 2), budget=9)
    assert solve_knapsack(problem, deadline=Deadline.after(-1)) is None
    assert solve_knapsack(problem, deadline=Deadline.after(60)) is not None


def _cheapest_oracle(
    problem: Problem, floor: int, budget: int, forced: frozenset[int], banned: frozenset[int]
) -> tuple[SolveStatus, tuple[int, ...] | None]:
    """Every legal selection within ``budget``: the cheapest worth ``floor``, then the
    most valuable and lightest; None for the selection when two tie on all three."""
    keys = []
    for selection in BruteForce()._legal(dataclasses.replace(problem, budget=budget)):
        chosen = set(selection)
        if not forced <= chosen or banned & chosen:
            continue
        value = sum(problem.value[f] for f in selection)
        if value < floor:
            continue
        cost = sum(problem.cost[f] for f in selection)
        keys.append(((cost, -value, sum(problem.weight[f] for f in selection)), selection))
    if not keys:
        return SolveStatus.INFEASIBLE, None
    keys.sort()
    if len(keys) > 1 and keys[0][0] == keys[1][0]:
        return SolveStatus.OPTIMAL, None
    return SolveStatus.OPTIMAL, keys[0][1]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(KNAPSACK), st.data())
def test_the_cheapest_selection_reaching_a_floor_is_the_oracles(
    problem: Problem, data: st.DataObject
) -> None:
    _cheapest_agrees(problem, data)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(TIED), st.data())
def test_the_cheapest_selection_among_ties_is_the_oracles_or_handed_back(
    problem: Problem, data: st.DataObject
) -> None:
    _cheapest_agrees(problem, data)


def _cheapest_agrees(problem: Problem, data: st.DataObject) -> None:
    best = _oracle(problem)
    top = best.bound if best.bound is not None else 0
    floor = data.draw(st.integers(0, max(0, top)), label="floor")
    budget = data.draw(st.integers(0, problem.budget or 0), label="budget")
    forms = list(range(problem.size))
    forced = frozenset(data.draw(st.lists(st.sampled_from(forms), max_size=2)) if forms else [])
    banned = frozenset(data.draw(st.lists(st.sampled_from(forms), max_size=2)) if forms else [])
    found = cheapest_reaching(problem, floor, budget, forced=forced, banned=banned)
    status, expected = _cheapest_oracle(problem, floor, budget, forced, banned)
    if found is None:
        event("handed back")
        return
    assert found.status is status
    if status is SolveStatus.OPTIMAL:
        assert expected is not None, "a tie on cost, value and weight must be handed back"
        assert found.selection == expected
        assert found.bound == sum(problem.value[f] for f in expected)
