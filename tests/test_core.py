"""Propagation and the core: a worklist that removes what fixings make impossible."""

from __future__ import annotations

import pytest
from drawn import problem_of

from assembler.exact.core import FREE, IN, OUT, Contradiction, core_of
from benchmarks.scenarios.adversarial import Adversary, build


def test_losing_a_chains_tail_removes_the_whole_chain() -> None:
    problem = problem_of(build(Adversary.CHAIN, 3000).request)
    forms_of = problem.forms_of()
    state = [FREE] * problem.size
    for f in forms_of[problem.identities.index("link-" + str(len(forms_of) - 1))]:
        state[f] = OUT
    reduction = core_of(problem, state, forms_of, None, None)
    assert reduction.core.size == 0 and reduction.chosen == ()


def test_a_form_fixed_in_drags_its_group_and_a_lost_partner_contradicts() -> None:
    problem = problem_of(build(Adversary.GIANT_GROUP, 300).request)
    forms_of = problem.forms_of()
    state = [FREE] * problem.size
    state[forms_of[0][0]] = IN
    reduction = core_of(problem, list(state), forms_of, None, None)
    # every other identity of the group must be admitted in the core
    assert len(reduction.core.required) == len(problem.identities) - 1
    for f in forms_of[1]:
        state[f] = OUT
    with pytest.raises(Contradiction):
        core_of(problem, state, forms_of, None, None)
