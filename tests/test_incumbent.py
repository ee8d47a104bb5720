"""The incumbent: always legal, whatever the order it is offered forms in."""

from __future__ import annotations

import random

import numpy as np
from drawn import problem_of, problems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from profiles import examples

from assembler.exact.closure import Problem
from assembler.exact.incumbent import build_incumbent, is_legal, rounded_selection
from assembler.strategies.bruteforce import BruteForce
from benchmarks.scenarios.adversarial import Adversary, build


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.randoms(use_true_random=False))
def test_the_incumbent_is_legal_or_absent_only_when_nothing_is(
    problem: Problem, rng: random.Random
) -> None:
    preference = np.array([rng.random() for _ in range(problem.size)])
    found = build_incumbent(problem, np.arange(problem.size), preference)
    if found is None:
        # only the required material can fail to be placed
        assert problem.required
    else:
        assert is_legal(problem, found)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_legality_agrees_with_the_oracle_on_its_answer(problem: Problem) -> None:
    optimum = BruteForce().solve(problem)
    if optimum.selection:
        assert is_legal(problem, optimum.selection)
        primal = np.zeros(problem.size)
        primal[list(optimum.selection)] = 1.0
        assert rounded_selection(problem, np.arange(problem.size), primal) == optimum.selection


def test_is_legal_names_each_broken_rule() -> None:
    problem = problem_of(build(Adversary.CHAIN, 20).request)
    head = problem.forms_of()[problem.identities.index("link-0")][0]
    assert not is_legal(problem, (head,))  # the chain's tail is missing


def test_a_giant_group_and_a_long_chain_still_get_a_bundle() -> None:
    for kind in (Adversary.GIANT_GROUP, Adversary.CHAIN):
        problem = problem_of(build(kind, 3000).request)
        found = build_incumbent(problem, np.arange(problem.size), np.zeros(problem.size))
        assert found and is_legal(problem, found)
