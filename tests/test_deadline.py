"""The call's deadline: what is left, and the shares it hands to the stages below it."""

from __future__ import annotations

import math

from assembler.deadline import LEAST, NEVER, Deadline


def test_a_passed_deadline_has_nothing_left_and_a_solver_still_gets_the_least_limit() -> None:
    late = Deadline.after(-1.0)
    assert late.passed
    assert late.left() == 0.0
    assert late.limit() == LEAST


def test_shares_never_reach_past_the_deadline() -> None:
    deadline = Deadline.after(10.0)
    assert deadline.within(60.0).at == deadline.at
    assert deadline.within(1.0).at < deadline.at
    assert deadline.less(2.0).at == deadline.at - 2.0
    quarter = deadline.share(0.25)
    assert quarter.at < deadline.at
    assert 2.0 < quarter.left() <= 2.5
    # a share of a deadline already passed is passed too
    assert Deadline.after(-1.0).share(0.5).passed


def test_never_is_unbounded_and_so_is_every_share_of_it() -> None:
    assert not NEVER.passed
    assert math.isinf(NEVER.left())
    assert math.isinf(NEVER.share(0.8).left())
    assert math.isinf(NEVER.less(5.0).at)
    assert NEVER.within(1.0).left() <= 1.0
