"""Judging one request: is the strategy under test right, against the exact answer?

Input: a valid request dict and a strategy name.
Output: a ``Judgement``: ``kind`` None when the strategy agrees with the exact
answer, else one ``FindingKind``, checked in this order: ``crash``,
``exact-disagreement``, ``false-bundle``, ``false-refusal``, ``suboptimal-value``,
``suboptimal-cost``. Every answer is judged against ``cpsat`` (and ``enumerate`` as a
second opinion on small requests), and every bundle by the independent verifier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...api import assemble
from ...model.errors import EnumerationTooLarge, InvalidRequest
from ...model.types import Result, Status
from ...verifiers.bundle import verify

__all__ = ["EXACT", "FindingKind", "Judgement", "judge", "judge_safely"]

EXACT = ("cpsat", "enumerate")
# the second opinion costs exponential time; above this many candidates it is skipped
# even when enumerate's own limit would still allow it
ORACLE_MAX_CANDIDATES = 14


class FindingKind(StrEnum):
    """How a strategy's answer disagrees with the exact answer."""

    CRASH = "crash"
    EXACT_DISAGREEMENT = "exact-disagreement"
    FALSE_BUNDLE = "false-bundle"
    FALSE_REFUSAL = "false-refusal"
    SUBOPTIMAL_VALUE = "suboptimal-value"
    SUBOPTIMAL_COST = "suboptimal-cost"


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one request: ``kind`` is None when the strategy is right.

    ``skipped`` is true when no verdict could be reached (the strategy answered
    ``undecided`` or cannot run at this size). ``answers`` maps a role (``tested``,
    ``exact``, ``oracle``) to that answer's ``Result.to_dict()`` without timings.
    """

    kind: FindingKind | None
    explanation: str
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    skipped: bool = False


def _answer(result: Result) -> dict[str, Any]:
    # timings are wall-clock noise: a saved case must be byte-identical on a re-run
    data = result.to_dict()
    data.pop("timings", None)
    return data


def _describe(result: Result) -> str:
    if result.status is Status.BUNDLE:
        return f"a bundle of value {result.value}, cost {result.cost}"
    if result.refusal is not None:
        return f"a refusal {result.refusal.code.value}"
    return result.status.value


def _violations(request: Mapping[str, Any], result: Result) -> str:
    found = verify(request, result)
    return "; ".join(f"{v.kind}: {v.detail}" for v in found[:3])


def _exact_mismatch(a: Result, b: Result) -> str | None:
    """Why two exact answers differ, or None when they agree."""
    if a.status is not b.status:
        return f"status {a.status.value} vs {b.status.value}"
    if a.status is Status.BUNDLE:
        if (a.value, a.cost) != (b.value, b.cost):
            return f"value/cost {a.value}/{a.cost} vs {b.value}/{b.cost}"
        if a.selected != b.selected:
            return (
                f"same value and cost, different selection {list(a.selected)} vs {list(b.selected)}"
            )
    if a.refusal is not None and b.refusal is not None:
        ra, rb = a.refusal, b.refusal
        if (ra.code, ra.mandatory_cost) != (rb.code, rb.mandatory_cost):
            return (
                f"refusal {ra.code.value} (mandatory {ra.mandatory_cost}) vs"
                f" {rb.code.value} (mandatory {rb.mandatory_cost})"
            )
    return None


def judge(request: Mapping[str, Any], strategy: str, *, oracle: bool = True) -> Judgement:
    """Run ``strategy`` and the exact solver on ``request`` and classify the outcome.

    Input: a valid request dict and a strategy name. Output: a ``Judgement``.
    Raises ``InvalidRequest`` when the request is not valid (the shrinker relies on it).
    """
    answers: dict[str, Mapping[str, Any]] = {}
    try:
        exact = assemble(request, strategy="cpsat")
    except InvalidRequest:
        raise
    except Exception as error:
        return Judgement(FindingKind.CRASH, f"cpsat raised {type(error).__name__}: {error}")
    answers["exact"] = _answer(exact)
    broken = _violations(request, exact)
    if broken:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"cpsat's own answer fails the verifier: {broken}",
            answers,
        )
    if exact.status is Status.UNDECIDED or (exact.status is Status.BUNDLE and not exact.optimal):
        return Judgement(None, "cpsat did not prove its answer", answers, skipped=True)

    if oracle and len(request["candidates"]) <= ORACLE_MAX_CANDIDATES:
        try:
            second = assemble(request, strategy="enumerate")
        except EnumerationTooLarge:
            pass
        except Exception as error:
            return Judgement(
                FindingKind.CRASH, f"enumerate raised {type(error).__name__}: {error}", answers
            )
        else:
            answers["oracle"] = _answer(second)
            why = _exact_mismatch(exact, second) or (
                f"enumerate's answer fails the verifier: {b}"
                if (b := _violations(request, second))
                else None
            )
            if why:
                return Judgement(
                    FindingKind.EXACT_DISAGREEMENT, f"cpsat and enumerate disagree: {why}", answers
                )

    try:
        tested = assemble(request, strategy=strategy)
    except EnumerationTooLarge:
        return Judgement(None, f"{strategy} cannot run at this size", answers, skipped=True)
    except Exception as error:
        return Judgement(
            FindingKind.CRASH, f"{strategy} raised {type(error).__name__}: {error}", answers
        )
    answers = {"tested": _answer(tested), **answers}
    if tested.status is Status.UNDECIDED:
        return Judgement(None, f"{strategy} answered undecided", answers, skipped=True)

    if tested.status is Status.REFUSED:
        if exact.status is Status.BUNDLE:
            refusal = tested.refusal
            why = "" if refusal is None else f" {refusal.code.value}"
            if refusal is not None and refusal.mandatory_cost is not None:
                why += (
                    f" (claims mandatory cost {refusal.mandatory_cost} > budget {refusal.budget})"
                )
            return Judgement(
                FindingKind.FALSE_REFUSAL,
                f"{strategy} refused{why} but cpsat found {_describe(exact)}:"
                f" {' '.join(exact.selected)}",
                answers,
            )
        if strategy in EXACT and (why := _exact_mismatch(tested, exact)):
            return Judgement(FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs cpsat: {why}", answers)
        return Judgement(None, "both refuse", answers)

    broken = _violations(request, tested)
    if broken:
        return Judgement(
            FindingKind.FALSE_BUNDLE, f"the verifier rejects {strategy}'s bundle: {broken}", answers
        )
    # from here the tested bundle is legal and its value and cost are verified
    if exact.status is not Status.BUNDLE:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy} found a legal bundle ({_describe(tested)}) but cpsat gave"
            f" {_describe(exact)}",
            answers,
        )
    if tested.value < exact.value:
        return Judgement(
            FindingKind.SUBOPTIMAL_VALUE,
            f"{strategy}'s legal bundle is worth {tested.value} (cost {tested.cost}),"
            f" cpsat's {exact.value} (cost {exact.cost})",
            answers,
        )
    if tested.value > exact.value or tested.cost < exact.cost:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy}'s legal bundle ({_describe(tested)}) beats cpsat's ({_describe(exact)})",
            answers,
        )
    if tested.cost > exact.cost:
        return Judgement(
            FindingKind.SUBOPTIMAL_COST,
            f"{strategy}'s legal bundle reaches the optimal value {tested.value} at cost"
            f" {tested.cost}, cpsat at cost {exact.cost}",
            answers,
        )
    if strategy in EXACT and (why := _exact_mismatch(tested, exact)):
        return Judgement(FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs cpsat: {why}", answers)
    return Judgement(None, "agrees", answers)


def judge_safely(request: Mapping[str, Any], strategy: str) -> Judgement:
    """``judge`` that turns any exception into a ``crash`` finding.

    A generated request rejected as invalid is a disagreement between the generator
    and the parser, and an exception in the verifier is a bug too: either is worth a
    saved case, and neither may take a whole hunt down.
    """
    try:
        return judge(request, strategy)
    except InvalidRequest as error:
        return Judgement(FindingKind.CRASH, f"the request was rejected as invalid: {error}")
    except Exception as error:
        return Judgement(FindingKind.CRASH, f"judging raised {type(error).__name__}: {error}")
