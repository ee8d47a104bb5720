from __future__ import annotations

import pytest

from assembler.model.objective import bundle_key, form_value, tiebreak_weight


@pytest.mark.parametrize(
    ("relevance", "value"),
    [(0.0, 0), (1.0, 1000), (0.0005, 1), (0.1235, 124), (0.75, 750), (0.9994, 999), (0.9995, 1000)],
)
def test_value_is_thousandths_rounded_half_up(relevance: float, value: int) -> None:
    assert form_value(relevance, 0.0) == value


def test_value_below_threshold_is_zero_and_threshold_is_inclusive() -> None:
    assert form_value(0.49, 0.5) == 0
    assert form_value(0.5, 0.5) == 500


def test_tiebreak_weight_is_positive_and_depends_only_on_the_id() -> None:
    assert tiebreak_weight("a") == tiebreak_weight("a") >= 1
    assert tiebreak_weight("a") != tiebreak_weight("b")


def test_bundle_key_orders_value_then_cost_then_weight_then_canonical_rule() -> None:
    assert bundle_key(10, 5, 1, (True,)) < bundle_key(9, 0, 0, (False,))
    assert bundle_key(10, 4, 9, (True,)) < bundle_key(10, 5, 1, (False,))
    assert bundle_key(10, 5, 1, (True,)) < bundle_key(10, 5, 2, (False,))
    assert bundle_key(10, 5, 1, (False, True)) < bundle_key(10, 5, 1, (True, False))


def test_kept_weights_are_the_weights_and_the_memo_stays_bounded() -> None:
    from assembler.model import objective

    ids = [f"form-{k}" for k in range(50)]
    first = objective.tiebreak_weights(ids)
    again = objective.tiebreak_weights(iter(ids))  # read from the memo
    assert first == again == [objective.tiebreak_weight(i) for i in ids]
    many = [f"x{k}" for k in range(objective._KEEP + 5)]
    assert objective.tiebreak_weights(many)[-1] == objective.tiebreak_weight(many[-1])
    assert len(objective._KEPT) <= objective._KEEP
