"""Docs and behaviour agree on reasons: every reason code of models/README.md §10 is
produced, each by a real request through ``assemble``, and the table and the
``Reason`` enum name the same codes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import form, request, solve

import assembler
from assembler import Reason

MODEL = Path(__file__).resolve().parents[1] / "models" / "README.md"


def documented_reasons() -> dict[str, str]:
    """reason -> verdict, from the table of section 10."""
    section = MODEL.read_text(encoding="utf-8").split("## 10. Decision reasons")[1]
    section = section.split("\n## ")[0]
    found: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] in ("admitted", "rejected"):
            for code in re.findall(r"`([a-z-]+)`", cells[1]):
                found[code] = cells[0]
    return found


def _undecided_request() -> dict[str, Any]:
    # Every one of 4,000 cheap items is required, with room for all of them: a legal
    # bundle exists, and a search finds it at once. But at a 1 ms limit the deadline
    # passes while the request's problem is still being built (the incumbent that
    # would place the required items comes after), so the answer is undecided.
    n = 4000
    req = request(budget=n + 6, required=["a", *[f"b-{i:04d}" for i in range(n)]])
    req["candidates"] = [
        form("a-cheap", 1, 0.001, identity="a"),
        form("a-rich", 11, 0.1, identity="a"),
        *[form(f"b-{i:04d}", 1, 0.5) for i in range(n)],
    ]
    return req


def _case(reason: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A request, the candidate in it that gets ``reason``, and assemble's options."""
    req = request(budget=100)
    options: dict[str, Any] = {}
    x: dict[str, Any] = form("x", 10, 0.5)
    others: list[dict[str, Any]] = []
    if reason == "sealed":
        req["task"]["seal"] = ["x"]
    elif reason in ("scope", "scope-unknown"):
        req["task"]["scope"] = "home"
        x["scope"] = "elsewhere" if reason == "scope" else "unknown"
    elif reason in ("stale", "freshness-unknown"):
        x.update(source="adr", version="v1")
        req["sources"] = {"adr": "v2"} if reason == "stale" else {}
    elif reason == "authority":
        x.update(role="instruction", channel="tool")
    elif reason == "no-content":
        # only a rendering asks for content; the form has none
        options["render"] = "text"
        others = [form("rendered", 10, 0.5, content="text to render")]
    elif reason == "dependency-unavailable":
        x["depends_on"] = ["ghost"]
    elif reason == "group-ineligible":
        x["group"] = "pair"
        others = [form("partner", 10, 0.5, group="pair")]
        req["task"]["seal"] = ["partner"]
    elif reason == "refused":
        req["task"]["required"] = ["big"]
        others = [form("big", 1000, 0.5)]
    elif reason == "undecided":
        # (any eligible form of it says so; a form added here would change the start)
        return _undecided_request(), "b-0000", {"time_limit": 1e-9}
    elif reason == "alternative":
        x["identity"] = "doc"
        others = [form("better", 10, 0.9, identity="doc")]
    elif reason == "not-chosen":
        x["cost"] = 1000
    elif reason == "required":
        x["required"] = True
    elif reason == "dependency":
        x["relevance"] = 0.0
        others = [form("needs-x", 10, 0.9, depends_on=["x"])]
    elif reason == "group":
        x.update(group="pair", relevance=0.0)
        others = [form("partner", 10, 0.9, group="pair")]
    elif reason != "value":
        raise AssertionError(f"no request produces {reason!r} yet")
    req["candidates"] = [*req["candidates"], x, *others]
    return req, "x", options


def test_the_model_table_and_the_enum_name_the_same_reasons() -> None:
    assert set(documented_reasons()) == {reason.value for reason in Reason}


@pytest.mark.parametrize("reason", sorted(documented_reasons()))
def test_every_documented_reason_is_produced_by_a_real_request(reason: str) -> None:
    req, form_id, options = _case(reason)
    result = solve(req, **options)
    decision = result.decision(form_id)
    assert decision.reason.value == reason, decision
    assert decision.verdict.value == documented_reasons()[reason]


def test_a_group_of_one_identity_explains_nothing() -> None:
    # models/README.md §10: `group` only when the group couples the identity with another
    req = request(budget=100)
    req["candidates"] = [form("alone", 10, 0.5, group="solo")]
    assert solve(req).decision("alone").reason is Reason.VALUE


def test_the_undecided_case_is_a_real_time_out() -> None:
    # with time, the same request has a bundle: undecided above came from the limit
    result = assembler.assemble(_undecided_request())
    assert result.status.value == "bundle" and assembler.verify(_undecided_request(), result) == []
