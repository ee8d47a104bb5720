"""The call's own arguments are judged before any work, with located errors."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import form, request

import assembler
from assembler import InvalidRequest


@pytest.mark.parametrize(
    ("kwargs", "field", "needle"),
    [
        ({"strategy": ["exact"]}, "strategy", "not a list"),
        ({"strategy": None}, "strategy", "not null"),
        ({"workers": 10**30}, "workers", "between 1 and 256"),
        ({"workers": 2**40}, "workers", "between 1 and 256"),
        ({"workers": "2"}, "workers", "not a string"),
        ({"time_limit": 10**400}, "time_limit", "finite"),
        ({"time_limit": -1}, "time_limit", "positive"),
        ({"time_limit": "5"}, "time_limit", "not a string"),
        ({"limits": {"max_candidates": 5}}, "limits", "assembler.Limits"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(
    kwargs: dict[str, Any], field: str, needle: str
) -> None:
    # a one-candidate request would never reach CP-SAT: the check may not depend on it
    req = request()
    req["candidates"] = [form("a", 1)]
    with pytest.raises(InvalidRequest) as caught:
        assembler.assemble(req, **kwargs)
    assert caught.value.field == field and needle in str(caught.value)


def test_the_largest_worker_count_is_accepted() -> None:
    req = request()
    req["candidates"] = [form("a", 1)]
    assert assembler.assemble(req, workers=256).selected == ("a",)
