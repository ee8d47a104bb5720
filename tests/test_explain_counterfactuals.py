"""Counterfactual figures against brute force, and what a time limit does to them.

The oracle knows nothing of derived requests or breakpoints. It lists every subset
of the candidates and keeps those the independent verifier accepts with no budget
and nothing required (C1, C2, C4, C5); each figure is then the definition read off
that list with plain Python. The smallest budget is checked, as defined, by
sweeping every integer budget from the request's own up to the sum of all costs
with the brute-force strategy (``enumerate``). Costs are kept small so that the
sweep is cheap; the structure comes from the project's generator.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import audited
from drawn import requests
from hypothesis import HealthCheck, given, settings
from profiles import examples

import assembler
from assembler.explain.counterfactuals import Counterfactuals, counterfactuals
from assembler.explain.figures import Counterfactual, CounterfactualKind, FigureStatus
from assembler.explain.limits import ExplainLimits
from assembler.hunt.generate import Shape, generate
from assembler.model.objective import bundle_key, form_value, tiebreak_weight
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates
from assembler.stages.trace import bundle_result

ROOT = Path(__file__).resolve().parents[1]
# small costs keep the sweep short; few required identities and budgets well below the
# total leave room above the budget, where the smallest-budget search has work to do
SMALL = replace(
    Shape.small(8),
    candidates=(4, 8),
    full_cost=(2, 24),
    resolver_cost=(4, 16),
    reference_cost=(1, 3),
    cost_grid=1,
    p_required=0.12,
    min_relevance=(0.0, 0.0, 0.5),
    budget_fraction=(0.1, 0.6),
)
# generous: on requests this small every figure is proven long before
EVERYTHING = ExplainLimits(top=100, per_figure=60.0, total=600.0, audit=True)


class Oracle:
    """Every selection meeting C1, C2, C4 and C5, judged by the verifier."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.request = parse_request(data)
        self.budget = self.request.task.budget
        self.required = set(self.request.required_identities)
        self.total = sum(c.cost for c in self.request.candidates)
        relaxed = json.loads(json.dumps(data))
        relaxed["task"]["required"] = []
        relaxed["task"]["budget"] = self.total
        for candidate in relaxed["candidates"]:
            candidate.pop("required", None)
        parsed = parse_request(relaxed)
        gates = apply_gates(parsed)
        self.candidates = parsed.candidates
        self.selections: list[tuple[frozenset[str], frozenset[str], int, Any]] = []
        threshold = parsed.task.min_relevance
        ids = [c.id for c in self.candidates]
        for size in range(len(ids) + 1):
            for chosen in itertools.combinations(ids, size):
                probe = bundle_result(parsed, gates, "probe", chosen, optimal=False, bound=None)
                if assembler.verify(relaxed, probe):
                    continue
                picked = [c for c in self.candidates if c.id in chosen]
                cost = sum(c.cost for c in picked)
                key = bundle_key(
                    sum(form_value(c.relevance, threshold) for c in picked),
                    cost,
                    sum(tiebreak_weight(c.id) for c in picked),
                    tuple(i in chosen for i in ids),
                )
                identities = frozenset(c.identity for c in picked)
                self.selections.append((frozenset(chosen), identities, cost, key))

    def best(self, budget: int, need: set[str], avoid: str | None = None) -> Any:
        fitting = [
            s
            for s in self.selections
            if s[2] <= budget and need <= s[1] and (avoid is None or avoid not in s[1])
        ]
        return min(fitting, key=lambda s: s[3], default=None)

    def cheapest(self, need: set[str], form: tuple[str, str] | None = None) -> int | None:
        """The cheapest selection admitting ``need`` (with ``form`` = (identity, form id):
        showing that identity in that form; C2 allows it no other)."""
        costs = [
            s[2] for s in self.selections if need <= s[1] and (form is None or form[1] in s[0])
        ]
        return min(costs, default=None)

    @staticmethod
    def value(selection: Any) -> int:
        return int(-selection[3][0])


def assert_proven(item: Counterfactual, key: str, expected: int | None) -> None:
    figure = item.figure(key)
    assert figure is not None, (item, key)
    assert figure.status is FigureStatus.PROVEN, figure
    assert figure.exact == expected, (item.identity, item.question, figure, expected)


def check(data: dict[str, Any], answers: Counterfactuals, oracle: Oracle) -> None:
    """Every figure against the oracle (``explained`` has verified every bundle)."""
    reference = answers.reference
    assert reference is not None and reference.status is not assembler.Status.UNDECIDED
    best = oracle.best(oracle.budget, oracle.required)
    if reference.status is assembler.Status.BUNDLE:
        assert best is not None and set(reference.selected) == best[0]
    else:
        assert best is None
    sweep: dict[int, tuple[set[str], int]] | None = None
    for item in answers.items:
        identity = item.identity
        if item.kind in (CounterfactualKind.LEFT_OUT, CounterfactualKind.BUDGET) and sweep is None:
            sweep = budget_sweep(data, oracle)
        if item.kind is CounterfactualKind.BUDGET:
            assert sweep is not None
            rise = next((b for b in sorted(sweep) if sweep[b][1] > sweep[oracle.budget][1]), None)
            figure = item.figure("next_budget")
            assert figure is not None and figure.status is FigureStatus.PROVEN, figure
            if rise is None:
                assert figure.never
                assert_proven(item, "gain", 0)
            else:
                assert figure.exact == rise, (figure, rise)
                assert_proven(item, "gain", sweep[rise][1] - sweep[oracle.budget][1])
        elif item.kind is CounterfactualKind.LEFT_OUT:
            forced = oracle.best(oracle.budget, oracle.required | {identity})
            assert item.feasible is (forced is not None)
            if forced is None:
                assert_proven(item, "closure", oracle.cheapest(oracle.required | {identity}))
            else:
                assert_proven(item, "value_lost", oracle.value(best) - oracle.value(forced))
                assert_proven(item, "cost_change", forced[2] - best[2])
                assert set(item.entered) == forced[0] - best[0]
                assert set(item.left) == best[0] - forced[0]
            assert sweep is not None
            first = next((b for b in sorted(sweep) if identity in sweep[b][0]), None)
            figure = item.figure("smallest_budget")
            assert figure is not None and figure.status is FigureStatus.PROVEN, figure
            if first is None:
                assert figure.never, (identity, figure)
            else:
                assert not figure.never and figure.exact == first, (identity, figure, first)
        elif item.kind is CounterfactualKind.ADMITTED:
            without = oracle.best(oracle.budget, oracle.required, avoid=identity)
            assert item.feasible is (without is not None)
            if without is not None:
                assert_proven(item, "value_lost", oracle.value(best) - oracle.value(without))
                assert_proven(item, "cost_freed", best[2] - without[2])
        elif item.kind is CounterfactualKind.GATED:
            # no selection at any budget has the gated form
            assert item.form is not None
            assert not any(item.form in s[0] for s in oracle.selections)
            figure = item.figure("smallest_budget")
            assert figure is not None and figure.never and figure.status is FigureStatus.PROVEN
        else:
            check_refusal(item, answers, oracle)


def check_refusal(item: Counterfactual, answers: Counterfactuals, oracle: Oracle) -> None:
    rest = oracle.required - {item.identity}
    if answers.mandatory is None:
        # missing or ineligible: what the request answers without this requirement
        then = oracle.best(oracle.budget, rest)
        assert item.feasible is (then is not None)
        if then is not None:
            assert_proven(item, "value", oracle.value(then))
        return
    mandatory = oracle.cheapest(oracle.required)
    assert mandatory is not None and answers.mandatory.exact == mandatory
    if item.question == "no longer required":
        closure = oracle.cheapest(rest)
        then = oracle.best(oracle.budget, rest)
        if then is not None:
            assert_proven(item, "value", oracle.value(then))
    else:
        assert item.form is not None
        closure = oracle.cheapest(oracle.required, (item.identity, item.form))
    assert closure is not None
    assert_proven(item, "closure", closure)
    assert_proven(item, "saved", mandatory - closure)
    assert item.feasible is (closure <= oracle.budget)


def budget_sweep(data: dict[str, Any], oracle: Oracle) -> dict[int, tuple[set[str], int]]:
    """Admitted identities and value of the brute-force optimum at every budget from
    the request's own to the sum of all costs (past it nothing can change)."""
    admitted: dict[int, tuple[set[str], int]] = {}
    for budget in range(oracle.budget, max(oracle.budget, oracle.total) + 1):
        at = json.loads(json.dumps(data))
        at["task"]["budget"] = budget
        result = assembler.assemble(at, strategy="enumerate")
        assert assembler.verify(at, result) == []
        assert result.status is assembler.Status.BUNDLE
        admitted[budget] = (
            {d.identity for d in result.decisions if d.verdict is assembler.Verdict.ADMITTED},
            result.value,
        )
        mine = oracle.best(budget, oracle.required)
        assert mine is not None and mine[0] == set(result.selected)
    return admitted


def explained(data: dict[str, Any], limits: ExplainLimits = EVERYTHING) -> Counterfactuals:
    request = parse_request(data)
    result = assembler.assemble(data)
    assert assembler.verify(data, result) == []
    answers = counterfactuals(request, result, apply_gates(request), limits)
    if answers.solves:
        audited(answers)
    return answers


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(SMALL))
def test_every_figure_agrees_with_brute_force(data: dict[str, Any]) -> None:
    check(data, explained(data), Oracle(data))


def test_every_figure_agrees_with_brute_force_on_seeded_requests() -> None:
    # In seeds 63, 87, 170 and 279 a left-out identity's inclusion is not monotone in
    # the budget (in, out, in again) in a way that a bisection on inclusion answers
    # wrongly (checked by making budgets.py bisect on inclusion: these four fail).
    for seed in [*range(30), 63, 87, 170, 279]:
        data = generate(random.Random(seed), SMALL)
        check(data, explained(data), Oracle(data))


def candidates(*forms: tuple[str, int, float]) -> list[dict[str, Any]]:
    return [{"id": i, "cost": c, "relevance": r} for i, c, r in forms]


def smallest(answers: Counterfactuals, identity: str) -> tuple[int | None, bool, str]:
    item = next(
        i for i in answers.items if i.kind is CounterfactualKind.LEFT_OUT and i.identity == identity
    )
    figure = item.figure("smallest_budget")
    assert figure is not None and figure.status is FigureStatus.PROVEN
    return figure.exact, figure.never, figure.note


def test_smallest_budget_walks_past_a_budget_where_the_identity_is_out_again() -> None:
    # O(5)={a} O(6)={b} O(7)={c} O(11)={a,b} O(12)={a,c} O(13)={b,c} O(18)={a,b,c}
    forms = candidates(("a", 5, 0.5), ("b", 6, 0.6), ("c", 7, 0.65))
    at_4 = explained({"task": {"id": "t", "budget": 4}, "candidates": forms})
    assert smallest(at_4, "a")[0] == 5
    assert smallest(at_4, "b")[0] == 6
    assert smallest(at_4, "c")[0] == 7
    # from 6, a is out at 6 and 7 (b, then c, are worth more alone) and back at 11
    at_6 = explained({"task": {"id": "t", "budget": 6}, "candidates": forms})
    assert smallest(at_6, "a")[0] == 11


def test_smallest_budget_of_a_resolver_the_full_form_later_replaces() -> None:
    data = {
        "task": {"id": "t", "budget": 1},
        "candidates": [
            {"id": "x.ref", "identity": "x", "cost": 1, "relevance": 0.5, "depends_on": ["r"]},
            {"id": "x.full", "identity": "x", "cost": 10, "relevance": 0.6},
            {"id": "r", "cost": 1, "relevance": 0.0},
        ],
    }
    budget, never, note = smallest(explained(data), "r")
    assert budget == 2 and not never
    assert note.startswith("not monotone: at a budget of 10 or more")
    data["task"]["budget"] = 10
    assert smallest(explained(data), "r")[1] is True


def test_a_spent_limit_is_reported_never_guessed() -> None:
    data = json.loads((ROOT / "models" / "examples" / "review-migration.json").read_text())
    answers = explained(data, ExplainLimits(top=3, per_figure=1e-9, total=1e-9))
    assert answers.reference is None and answers.items
    statuses = {f.status for item in answers.items for f in item.figures}
    # gated figures need no solve: the model proves them; everything else was not run
    for item in answers.items:
        for figure in item.figures:
            if item.kind is CounterfactualKind.GATED:
                assert figure.status is FigureStatus.PROVEN and figure.never
            else:
                assert figure.status is FigureStatus.NOT_EVALUATED, figure
                assert figure.low is None and figure.high is None
    assert FigureStatus.NOT_EVALUATED in statuses


def test_counterfactuals_can_be_turned_off() -> None:
    data = json.loads((ROOT / "models" / "examples" / "review-migration.json").read_text())
    answers = explained(data, ExplainLimits(top=0))
    assert not answers.evaluated and answers.items == () and answers.solves == 0


def test_limits_are_checked() -> None:
    with pytest.raises(assembler.InvalidRequest) as caught:
        ExplainLimits(settings=assembler.Settings(strategy="greedy"))
    assert caught.value.field == "strategy"
    with pytest.raises(ValueError):
        ExplainLimits(per_figure=0)
    with pytest.raises(ValueError):
        ExplainLimits(top=-1)


@pytest.mark.parametrize(
    "name", ["review-migration", "mandatory-over-budget", "shared-resolver", "required-ineligible"]
)
def test_shipped_examples_agree_with_brute_force_where_it_can_run(name: str) -> None:
    data = json.loads((ROOT / "models" / "examples" / f"{name}.json").read_text())
    answers = explained(data)
    assert answers.items
    for derived, answer in answers.audited:
        again = assembler.assemble(derived, strategy="enumerate")
        assert again.selected == answer.selected and again.status is answer.status
    for item in answers.items:
        assert all(f.status is FigureStatus.PROVEN for f in item.figures), item


def test_a_figure_cut_short_keeps_a_true_bound() -> None:
    # the same questions, once with room to prove every figure and once with a limit
    # that cuts the budget searches short: each cut figure must still hold the truth
    data = generate(random.Random(3), Shape.scale(40))
    proven = explained(data, ExplainLimits(top=2, per_figure=60.0, total=300.0, audit=True))
    cut = explained(data, ExplainLimits(top=2, per_figure=0.02, total=300.0, audit=True))
    truth = {
        (i.kind, i.identity, f.key): f
        for i in proven.items
        for f in i.figures
        if f.status is FigureStatus.PROVEN
    }
    checked = 0
    for item in cut.items:
        for figure in item.figures:
            exact = truth.get((item.kind, item.identity, figure.key))
            if exact is None:
                continue
            checked += 1
            if figure.status is FigureStatus.PROVEN:
                assert (figure.low, figure.high, figure.never) == (
                    exact.low,
                    exact.high,
                    exact.never,
                )
            elif figure.status is FigureStatus.BOUND_ONLY:
                assert exact.never or figure.low is None or figure.low <= (exact.low or 0)
                assert figure.high is None or (exact.high is not None and exact.high <= figure.high)
            else:
                assert figure.low is None and figure.high is None
    assert checked >= 5
