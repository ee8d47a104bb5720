"""Diagnostics: findings about one compilation, each labelled with how it is known.

Input: the validated ``Request``, its ``GateReport``, the ``Result``, the verifiers'
``Violation`` lists (the bundle's, the rendering's) and the ``Counterfactuals`` (for
the fresh exact reference).
Output: a tuple of ``Diagnostic`` in a fixed order.

The label says what kind of statement it is, never more than was computed:
``confirmed`` (established by a computation: the verifier, a proof, a re-solve),
``informational`` (a fact worth seeing, not a problem), ``potential`` (a possible
problem the compilation cannot settle), ``unknown`` (the inputs do not say),
``not evaluated`` (outside what was computed).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..model.objective import form_value
from ..model.types import Reason, RefusalCode, Request, Result, Status, Verdict, Violation
from ..stages.gates import GateReport
from ..strategies import EXACT_STRATEGIES
from .counterfactuals import Counterfactuals
from .figures import COST_UNIT, VALUE_UNIT, FigureStatus

__all__ = ["HIGH_RELEVANCE", "Diagnostic", "Label", "diagnose"]

# "high relevance" for the gated-despite-relevance finding
HIGH_RELEVANCE = 0.8


class Label(StrEnum):
    CONFIRMED = "confirmed"
    INFORMATIONAL = "informational"
    POTENTIAL = "potential"
    UNKNOWN = "unknown"
    NOT_EVALUATED = "not evaluated"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    label: Label
    topic: str
    statement: str
    forms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label.value,
            "topic": self.topic,
            "statement": self.statement,
            "forms": list(self.forms),
        }


def _names(forms: list[str], limit: int = 6) -> str:
    shown = ", ".join(forms[:limit])
    return shown + (f" and {len(forms) - limit} more" if len(forms) > limit else "")


def diagnose(
    request: Request,
    gates: GateReport,
    result: Result,
    violations: list[Violation],
    render_violations: list[Violation],
    answers: Counterfactuals,
) -> tuple[Diagnostic, ...]:
    found: list[Diagnostic] = []
    found.extend(_legality(violations))
    found.extend(_optimum(result, answers))
    found.extend(_gated(request, gates))
    found.extend(_labels(request, result))
    found.extend(_slack(request, gates, result))
    found.append(_figures(answers))
    found.extend(_rendering(result, render_violations))
    found.append(
        Diagnostic(
            Label.UNKNOWN,
            "context window",
            f"The request states a budget of {request.task.budget} {COST_UNIT} but no model"
            " context window and no output allowance: whether the call fits the model's"
            " window is unknown.",
        )
    )
    found.append(
        Diagnostic(
            Label.NOT_EVALUATED,
            "received and used",
            "Whether the model received the material, or used it, is not evaluated: the"
            " compilation ends at the selection.",
        )
    )
    return tuple(found)


def _rendering(result: Result, violations: list[Violation]) -> list[Diagnostic]:
    rendering = result.rendering
    if rendering is None:
        return [
            Diagnostic(
                Label.NOT_EVALUATED,
                "rendered size",
                f"Costs are the caller's declared costs in {COST_UNIT}; they were not counted"
                " from rendered bytes: this result carries no rendering.",
            )
        ]
    size = len(rendering.data)
    found = [
        Diagnostic(
            Label.NOT_EVALUATED,
            "rendered size",
            f"Rendered {size} bytes ({rendering.format.value}); their token count was not"
            f" evaluated: costs are the caller's declared costs in {COST_UNIT}.",
        )
    ]
    if not violations:
        found.append(
            Diagnostic(
                Label.CONFIRMED,
                "rendering",
                "The render verifier finds the rendered bytes bound to the selection: every"
                " item at its offset behind its header, in layout order, the hashes holding,"
                " no foreign content.",
            )
        )
    found.extend(
        Diagnostic(Label.CONFIRMED, f"broken rendering rule: {v.kind}", v.detail, v.forms)
        for v in violations
    )
    return found


def _legality(violations: list[Violation]) -> list[Diagnostic]:
    if not violations:
        return [
            Diagnostic(
                Label.CONFIRMED,
                "legality",
                "The independent verifier finds no broken rule: gates, dependency closure,"
                " groups, one form per identity, required material, budget, and the record.",
            )
        ]
    return [
        Diagnostic(Label.CONFIRMED, f"broken rule: {v.kind}", v.detail, v.forms) for v in violations
    ]


def _optimum(result: Result, answers: Counterfactuals) -> list[Diagnostic]:
    reference = answers.reference
    proven_reference = (
        reference is not None
        and reference.status is not Status.UNDECIDED
        and (reference.status is Status.REFUSED or reference.optimal)
    )
    found = []
    exact = result.strategy in EXACT_STRATEGIES
    if result.status is Status.BUNDLE and result.optimal:
        found.append(
            Diagnostic(
                Label.CONFIRMED,
                "optimum",
                f"Proven optimal at this budget: {result.value} {VALUE_UNIT}; the optimum is"
                " unique (value, then cost, then the canonical tie-break).",
            )
        )
    elif result.status is Status.BUNDLE and exact:
        if result.bound is None:
            found.append(
                Diagnostic(
                    Label.UNKNOWN, "optimum", "Not proven optimal, and the solver has no bound."
                )
            )
        else:
            found.append(
                Diagnostic(
                    Label.POTENTIAL,
                    "optimum",
                    f"Not proven optimal: the time limit stopped the proof; up to"
                    f" {result.bound - result.value} {VALUE_UNIT} may be missing"
                    f" (bound {result.bound}).",
                )
            )
    elif result.status is Status.REFUSED and result.refusal is not None:
        found.extend(_refusal(result))
    elif result.status is Status.UNDECIDED:
        found.append(
            Diagnostic(
                Label.UNKNOWN,
                "optimum",
                "Whether a legal bundle exists is unknown: the time limit was reached first.",
            )
        )
    if not answers.evaluated:
        found.append(
            Diagnostic(
                Label.NOT_EVALUATED,
                "re-solved",
                "The request was not re-solved (counterfactuals are off).",
            )
        )
        return found
    if not proven_reference or reference is None:
        found.append(
            Diagnostic(
                Label.UNKNOWN,
                "re-solved",
                "A fresh exact solve did not finish within its limit: the exact answer is"
                " unknown here.",
            )
        )
        return found
    if reference.trace_id == result.trace_id:
        found.append(
            Diagnostic(
                Label.CONFIRMED,
                "re-solved",
                "A fresh exact solve of the request gives the same trace_id.",
            )
        )
    elif exact:
        found.append(
            Diagnostic(
                Label.CONFIRMED,
                "re-solved",
                f"A fresh exact solve of the request gives another answer (trace"
                f" {reference.trace_id[:12]}): this result was not produced by this request"
                " with this version of the assembler.",
            )
        )
    else:
        found.append(_against_exact(result, reference))
    return found


def _against_exact(result: Result, reference: Result) -> Diagnostic:
    """A baseline's answer next to the exact one."""
    if reference.status is Status.REFUSED:
        why = reference.refusal.message if reference.refusal is not None else "refused"
        return Diagnostic(Label.CONFIRMED, "exact answer", f"The exact answer is a refusal: {why}")
    value = result.value if result.status is Status.BUNDLE else 0
    if value > reference.value:
        statement = (
            f"This {result.strategy} answer is worth more than the exact optimum"
            f" ({value} > {reference.value} {VALUE_UNIT}): only a broken rule allows that."
        )
    elif value < reference.value:
        statement = (
            f"The exact optimum is worth {reference.value} {VALUE_UNIT} at cost"
            f" {reference.cost}; this {result.strategy} answer is {reference.value - value}"
            f" {VALUE_UNIT} below it."
        )
    elif result.cost > reference.cost:
        statement = (
            f"This {result.strategy} answer has the optimum's value but costs"
            f" {result.cost - reference.cost} {COST_UNIT} more."
        )
    else:
        statement = f"This {result.strategy} answer has the exact optimum's value and cost."
    return Diagnostic(Label.CONFIRMED, "exact answer", statement)


def _refusal(result: Result) -> list[Diagnostic]:
    refusal = result.refusal
    assert refusal is not None
    found = [
        Diagnostic(
            Label.CONFIRMED,
            "refusal",
            f"No legal bundle exists ({refusal.code.value}, proven): {refusal.message}",
            refusal.conflict or tuple(i.identity for i in refusal.identities),
        )
    ]
    if refusal.code is RefusalCode.MANDATORY_OVER_BUDGET:
        if refusal.mandatory_cost is None:
            found.append(
                Diagnostic(
                    Label.UNKNOWN,
                    "mandatory closure",
                    "The time limit came before the mandatory closure was priced.",
                )
            )
        elif "not proven minimal" in refusal.message:
            found.append(
                Diagnostic(
                    Label.POTENTIAL,
                    "mandatory closure",
                    "The mandatory cost and the conflict set are not proven minimal: the"
                    " cheapest closure may cost less.",
                )
            )
    return found


def _gated(request: Request, gates: GateReport) -> list[Diagnostic]:
    found = []
    by_gate: dict[Reason, list[str]] = {}
    for form, (gate, _) in sorted(gates.rejected.items()):
        by_gate.setdefault(gate, []).append(form)
    threshold = form_value(HIGH_RELEVANCE, 0.0)
    # the candidates themselves are kept: an id may contain spaces, so it is never
    # recovered from the formatted text
    high = [
        c
        for c in request.candidates
        if c.id in gates.rejected and form_value(c.relevance, 0.0) >= threshold
    ]
    if high:
        named = [f"{c.id} ({c.relevance}, {gates.rejected[c.id][0].value})" for c in high]
        found.append(
            Diagnostic(
                Label.INFORMATIONAL,
                "gated despite relevance",
                f"Kept out by a gate with relevance {HIGH_RELEVANCE} or more: {_names(named)}."
                " A high score never buys legality.",
                tuple(c.id for c in high),
            )
        )
    if Reason.AUTHORITY in by_gate:
        forms = by_gate[Reason.AUTHORITY]
        found.append(
            Diagnostic(
                Label.INFORMATIONAL,
                "authority",
                f"{len(forms)} instruction(s) from channels without instruction standing kept"
                f" out, whatever they say: {_names(forms)}.",
                tuple(forms),
            )
        )
    for gate, what in (
        (Reason.SCOPE_UNKNOWN, "their scope"),
        (Reason.FRESHNESS_UNKNOWN, "whether they are current"),
    ):
        if gate in by_gate:
            forms = by_gate[gate]
            found.append(
                Diagnostic(
                    Label.UNKNOWN,
                    gate.value,
                    f"For {_names(forms)}, {what} is unknown: kept out, not assumed.",
                    tuple(forms),
                )
            )
    dangling = [
        form
        for form in by_gate.get(Reason.DEPENDENCY_UNAVAILABLE, [])
        if "which no candidate offers" in gates.rejected[form][1]
    ]
    if dangling:
        found.append(
            Diagnostic(
                Label.INFORMATIONAL,
                "missing dependency",
                f"{_names(dangling)} depend(s) on identities no candidate offers.",
                tuple(dangling),
            )
        )
    return found


def _labels(request: Request, result: Result) -> list[Diagnostic]:
    chosen = set(result.selected)
    labelled = [c for c in request.candidates if c.labels]
    if not labelled:
        return []
    admitted = [f"{c.id} ({', '.join(c.labels)})" for c in labelled if c.id in chosen]
    if admitted:
        return [
            Diagnostic(
                Label.POTENTIAL,
                "labels",
                f"Admitted items carry evaluation labels: {_names(admitted)}. No strategy reads"
                " labels; a label may mark a known distractor or harmful item.",
                tuple(c.id for c in labelled if c.id in chosen),
            )
        ]
    return [
        Diagnostic(
            Label.INFORMATIONAL,
            "labels",
            f"{len(labelled)} labelled item(s), none admitted (labels are read by no strategy).",
        )
    ]


def _slack(request: Request, gates: GateReport, result: Result) -> list[Diagnostic]:
    if result.status is not Status.BUNDLE or result.cost > result.budget:
        return []
    slack = result.budget - result.cost
    admitted = {d.identity for d in result.decisions if d.verdict is Verdict.ADMITTED}
    outside = [
        c for c in request.candidates if gates.is_eligible(c.id) and c.identity not in admitted
    ]
    if not outside:
        tail = "every eligible identity is admitted."
    else:
        cheapest = min(outside, key=lambda c: (c.cost, c.id))
        tail = (
            f"the cheapest eligible form of an identity left out, {cheapest.id!r}, costs"
            f" {cheapest.cost} {COST_UNIT} on its own (before its dependencies and group)."
        )
    return [Diagnostic(Label.INFORMATIONAL, "slack", f"{slack} {COST_UNIT} unused; {tail}")]


def _figures(answers: Counterfactuals) -> Diagnostic:
    if not answers.evaluated:
        return Diagnostic(
            Label.NOT_EVALUATED, "counterfactuals", "Counterfactuals were not computed (top 0)."
        )
    counts = Counter(f.status for item in answers.items for f in item.figures)
    parts = [f"{counts[s]} {s.value}" for s in FigureStatus if counts[s]]
    limits = answers.limits
    skipped = sum(n for _, n in answers.skipped)
    return Diagnostic(
        Label.INFORMATIONAL,
        "counterfactuals",
        f"{', '.join(parts) or 'no'} figure(s) from {answers.solves} exact solves in"
        f" {answers.seconds:.2f} s (limits: {limits.per_figure:g} s per figure,"
        f" {limits.total:g} s overall, top {limits.top} per kind; {skipped} question(s)"
        " beyond the top not evaluated).",
    )
