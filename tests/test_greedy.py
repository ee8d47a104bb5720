"""The greedy baseline: its definition, its legality, and its two named traps."""

from __future__ import annotations

from typing import Any

from conftest import form, request, solve
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import RefusalCode, Status


def greedy(req: dict[str, Any]) -> assembler.Result:
    """Run greedy and pass whatever it returns (bundle or refusal) through the verifier."""
    return solve(req, "greedy")


def test_empty_request_gives_an_empty_bundle() -> None:
    result = greedy(request(0))
    assert result.status is Status.BUNDLE
    assert result.selected == ()
    assert (result.optimal, result.bound) == (False, None)


def test_required_refusals_match_the_exact_pipeline() -> None:
    missing = request(required=["ghost"])
    missing["candidates"] = [form("a", 1)]
    assert greedy(missing).refusal.code is RefusalCode.REQUIRED_MISSING  # type: ignore[union-attr]

    ineligible = request(scope="proj-a")
    ineligible["candidates"] = [form("a", 1, required=True, scope="proj-b")]
    refusal = greedy(ineligible).refusal
    assert refusal is not None
    assert refusal.code is RefusalCode.REQUIRED_INELIGIBLE
    assert refusal == solve(ineligible).refusal


def test_required_identity_takes_its_most_valuable_eligible_form() -> None:
    req = request(1000, scope="p")
    req["candidates"] = [
        form("c-full", 600, 0.9, identity="c", required=True, scope="other"),  # gated out
        form("c-compact", 300, 0.6, identity="c", scope="p"),
        form("c-anchor", 50, 0.2, identity="c", scope="p"),
    ]
    assert greedy(req).selected == ("c-compact",)


def test_additions_take_the_cheapest_form_of_each_needed_identity_and_whole_groups() -> None:
    req = request(1000)
    req["candidates"] = [
        form("claim", 120, 0.9, group="g", depends_on=["glossary"]),
        form("qualification-full", 300, 0.4, identity="qualification", group="g"),
        form("qualification-note", 80, 0.1, identity="qualification"),
        form("glossary-full", 200, 0.3, identity="glossary"),
        form("glossary-anchor", 10, 0.0, identity="glossary", depends_on=["index"]),
        form("index", 5, 0.0),
    ]
    result = greedy(req)
    # claim's addition: its dependency (cheapest glossary form, with its own
    # dependency) and its group partner (cheapest qualification form). Then nothing
    # else fits by identity: every identity is admitted.
    assert set(result.selected) == {"claim", "qualification-note", "glossary-anchor", "index"}
    assert result.cost == 120 + 80 + 10 + 5


def test_optional_fill_is_by_density_and_skips_what_does_not_fit() -> None:
    req = request(100)
    req["candidates"] = [
        form("dense", 10, 0.5),  # density 50
        form("big", 95, 0.9),  # density ~9.5, does not fit after "dense"
        form("small", 80, 0.4),  # density 5, fits: a skip, not a stop
        form("worthless", 1, 0.0),  # value 0: never added on its own
    ]
    result = greedy(req)
    assert set(result.selected) == {"dense", "small"}
    assert result.decision("worthless").reason.value == "not-chosen"


def test_value_below_min_relevance_is_never_added_on_its_own() -> None:
    req = request(100, min_relevance=0.5)
    req["candidates"] = [form("weak", 1, 0.4), form("strong", 1, 0.6)]
    assert greedy(req).selected == ("strong",)


def test_mandatory_over_budget_worked_example() -> None:
    def make(budget: int) -> dict[str, Any]:
        req = request(budget, required=["a", "b", "c", "d"])
        req["candidates"] = [form("a", 1100), form("b", 1400), form("c", 900), form("d", 1200)]
        return req

    refusal = greedy(make(4000)).refusal
    assert refusal is not None
    assert refusal.code is RefusalCode.MANDATORY_OVER_BUDGET
    assert (refusal.mandatory_cost, refusal.excess) == (4600, 600)
    assert refusal.forms == ("a", "b", "c", "d")
    # greedy's conflict is everything it had admitted plus the failing item ("d"):
    # not minimal, unlike the exact pipeline's.
    assert refusal.conflict == ("a", "b", "c", "d")

    fits = greedy(make(4600))
    assert fits.status is Status.BUNDLE
    assert fits.slack == 0


def _false_refusal_request() -> dict[str, Any]:
    req = request(500, required=["alpha", "beta"])
    req["candidates"] = [
        form("alpha-full", 480, 0.9, identity="alpha"),
        form("alpha-ref", 20, 0.5, identity="alpha", form="reference", depends_on=["resolver"]),
        form("beta-ref", 20, 0.5, identity="beta", form="reference", depends_on=["resolver"]),
        form("resolver", 400, 0.0),
    ]
    return req


def test_greedy_false_refusal_trap() -> None:
    """Greedy commits to alpha's dearer standalone form (480), then beta's reference
    plus the resolver (420) no longer fits; the exact solver shares the resolver."""
    req = _false_refusal_request()
    result = greedy(req)
    assert result.status is Status.REFUSED
    refusal = result.refusal
    assert refusal is not None
    assert refusal.code is RefusalCode.MANDATORY_OVER_BUDGET
    assert (refusal.mandatory_cost, refusal.excess) == (900, 400)
    assert refusal.forms == ("alpha-full", "beta-ref", "resolver")
    assert refusal.conflict == ("alpha", "beta")

    exact = solve(req)
    assert exact.status is Status.BUNDLE
    assert set(exact.selected) == {"alpha-ref", "beta-ref", "resolver"}
    assert (exact.cost, exact.value) == (440, 1000)


def _suboptimal_request(budget: int, *, with_other: bool) -> dict[str, Any]:
    req = request(budget)
    req["candidates"] = [
        form("incident-full", 400, 0.8, identity="incident"),
        form(
            "incident-ref",
            20,
            0.8,
            identity="incident",
            form="reference",
            depends_on=["incident-resolver"],
        ),
        form("incident-resolver", 650, 0.0),
    ]
    if with_other:
        req["candidates"].append(form("runbook", 300, 0.5))
    return req


def test_greedy_cost_suboptimal_pick() -> None:
    """The reference (density 40) beats the full form (density 2) in greedy's order,
    and drags in the 650-token resolver: 670 tokens for what 400 buy."""
    req = _suboptimal_request(1000, with_other=False)
    result = greedy(req)
    assert set(result.selected) == {"incident-ref", "incident-resolver"}
    assert (result.cost, result.value) == (670, 800)
    exact = solve(req)
    assert exact.selected == ("incident-full",)
    assert (exact.cost, exact.value) == (400, 800)


def test_greedy_value_suboptimal_pick() -> None:
    """Same trap with a second item: the 670-token pick leaves no room for it."""
    req = _suboptimal_request(700, with_other=True)
    result = greedy(req)
    assert set(result.selected) == {"incident-ref", "incident-resolver"}
    assert (result.cost, result.value) == (670, 800)
    exact = solve(req)
    assert set(exact.selected) == {"incident-full", "runbook"}
    assert (exact.cost, exact.value) == (700, 1300)


def test_required_identity_admitted_as_a_dependency_is_not_re_added() -> None:
    req = request(100, required=["a", "b"])
    req["candidates"] = [
        form("a", 10, 0.5, depends_on=["b"]),
        form("b-full", 80, 0.9, identity="b"),
        form("b-note", 5, 0.1, identity="b"),
    ]
    # "a" comes first and admits b by the dependency rule (cheapest form).
    assert set(greedy(req).selected) == {"a", "b-note"}


# ---------------------------------------------------------------------------
# property: greedy is always legal and never beats the optimum

_IDENTITIES = ["i0", "i1", "i2", "i3", "i4"]


@st.composite
def small_requests(draw: st.DrawFn) -> dict[str, Any]:
    candidates: list[dict[str, Any]] = []
    present = _IDENTITIES[: draw(st.integers(1, len(_IDENTITIES)))]
    for identity in present:
        for k in range(draw(st.integers(1, 3))):
            candidate: dict[str, Any] = {
                "id": f"{identity}-{k}",
                "identity": identity,
                "cost": draw(st.integers(0, 60)),
                "relevance": draw(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.75, 0.9, 1.0])),
                "scope": draw(st.sampled_from(["p", "p", "p", "shared", "q", "unknown"])),
            }
            # "ghost" is offered by no candidate: dependency-unavailable
            needed = st.sampled_from([*_IDENTITIES, *_IDENTITIES, "ghost"])
            deps = draw(st.lists(needed, max_size=2))
            if deps:
                candidate["depends_on"] = deps
            group = draw(st.sampled_from([None, None, None, "g0", "g1"]))
            if group is not None:
                candidate["group"] = group
            if draw(st.integers(0, 9)) == 0:
                candidate["required"] = True
            candidates.append(candidate)
    return {
        "task": {
            "id": "prop",
            "budget": draw(st.integers(0, 200)),
            "scope": "p",
            "min_relevance": draw(st.sampled_from([0.0, 0.0, 0.4])),
            # sometimes one with no candidate at all (REQUIRED_MISSING)
            "required": draw(
                st.lists(st.sampled_from([*present, *present, "i9"]), max_size=2, unique=True)
            ),
        },
        "candidates": candidates,
    }


@settings(max_examples=examples(50), deadline=None)
@given(small_requests())
def test_greedy_is_legal_and_never_beats_the_optimum(req: dict[str, Any]) -> None:
    result = greedy(req)  # verified, bundle or refusal
    exact = solve(req)
    if result.status is Status.BUNDLE:
        assert exact.status is Status.BUNDLE, "greedy found a bundle the exact solver refused"
        assert result.value <= exact.value
        if result.value == exact.value:
            assert result.cost >= exact.cost
    else:
        assert result.refusal is not None
    # REQUIRED_MISSING / REQUIRED_INELIGIBLE come from the same check in both.
    codes = {r.code for r in (result.refusal, exact.refusal) if r is not None}
    if codes - {RefusalCode.MANDATORY_OVER_BUDGET}:
        assert result.refusal == exact.refusal
