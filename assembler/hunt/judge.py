"""Judging one request: is the strategy under test right, against the exact answer?

Input: a valid request dict and a strategy name (or several: ``reference`` computes
the exact answer once and ``judge_against`` judges each strategy against it).
Output: a ``Judgement``: ``kind`` None when the strategy agrees with the exact
answer, else one ``FindingKind``, checked in this order: ``crash``,
``exact-disagreement``, ``false-bundle``, ``false-refusal``, ``suboptimal-value``,
``suboptimal-cost``. Every answer is judged against ``exact`` (and ``enumerate`` as a
second opinion on small requests), and every bundle by the independent verifier.

A request with a ``cache`` section is judged by the cache-aware order
(``models/README.md`` 6b, ``cachejudge.py``): exact and enumerate must give identical
answers, cache records included; a tested bundle is ``outside-tolerance`` (not in the
feasible set exact was held to, and no dearer), ``priced-higher``, or at exact's
price ``suboptimal-value`` or ``suboptimal-cost``; a feasible bundle cheaper than
exact's is an ``exact-disagreement``, and so is an exact bundle whose body the cache
simulator, replayed after the previous call's blocks, reads differently from what its
cache record states (an independent price check).

``render``: the format the bundle is sent in. The exact strategies then decide under its
rules (``models/README.md`` section 14) and their answer must render; a baseline
decides blind to them and its bundle, judged by the verifier in that format, is a
``false-bundle`` when the format cannot send it. ``judge_in`` judges a hunt's *shape*:
``render`` in every format in turn (the first finding), ``session`` a session against
fresh calls (``sessionjudge.py``), otherwise as above.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..api import assemble
from ..facts import cache_rules, format_caching_by
from ..model.errors import AssemblerError, EnumerationTooLarge, InvalidRequest
from ..model.rendering import RenderFormat
from ..model.types import Result, Status
from ..strategies import EXACT_STRATEGIES as EXACT
from ..verifiers.bundle import verify
from .cachejudge import cache_verdict, simulated_read, tokens
from .verdicts import Finding, FindingKind, Judgement

__all__ = [
    "EXACT",
    "Finding",
    "FindingKind",
    "Judgement",
    "Reference",
    "Verdicts",
    "judge",
    "judge_against",
    "judge_in",
    "judge_many_safely",
    "judge_safely",
    "reference",
]

# the second opinion costs exponential time; above this many candidates it is skipped
# even when enumerate's own limit would still allow it
ORACLE_MAX_CANDIDATES = 14


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


def _violations(request: Mapping[str, Any], result: Result, render: str | None = None) -> str:
    found = verify(request, result, render=render)
    if result.cache is None and result.strategy not in EXACT:
        # a baseline that prices nothing (top-k, ...) makes no claim about the cache to
        # be wrong about: its bundle is judged by the rules of a selection alone
        found = [v for v in found if v.kind != "cache"]
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
        cache_a, cache_b = a.to_dict()["cache"], b.to_dict()["cache"]
        if cache_a != cache_b:
            return f"cache records differ: {_record_change(cache_a, cache_b)}"
    if a.refusal is not None and b.refusal is not None:
        ra, rb = a.refusal, b.refusal
        if (ra.code, ra.mandatory_cost) != (rb.code, rb.mandatory_cost):
            return (
                f"refusal {ra.code.value} (mandatory {ra.mandatory_cost}) vs"
                f" {rb.code.value} (mandatory {rb.mandatory_cost})"
            )
    return None


def _record_change(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str:
    if a is None or b is None:
        return f"{'none' if a is None else 'a record'} vs {'none' if b is None else 'a record'}"
    keys = [key for key in a if a.get(key) != b.get(key)]
    return ", ".join(f"{key} {a.get(key)!r} vs {b.get(key)!r}" for key in keys[:3])


@dataclass(frozen=True, slots=True)
class Reference:
    """The exact answer to one request, checked once and shared by every strategy
    judged on it. ``verdict`` is set when it decides every strategy's judgement alike:
    an exact strategy crashed or failed its checks, or exact proved nothing."""

    exact: Result | None
    answers: Mapping[str, Mapping[str, Any]]
    verdict: Judgement | None
    seconds: float = field(default=0.0, compare=False)


def reference(
    request: Mapping[str, Any], *, oracle: bool = True, render: str | None = None
) -> Reference:
    """The exact answer (exact, and enumerate as a second opinion on small requests),
    for a bundle sent in ``render`` when set.

    Input: a valid request dict. Output: a ``Reference``. Raises ``InvalidRequest``
    when the request is not valid.
    """
    answers: dict[str, Mapping[str, Any]] = {}
    started = time.perf_counter()
    try:
        exact = assemble(request, strategy="exact", render=render)
    except InvalidRequest:
        raise
    except Exception as error:
        verdict = Judgement(FindingKind.CRASH, f"exact raised {type(error).__name__}: {error}")
        return Reference(None, answers, verdict)
    seconds = time.perf_counter() - started
    answers["exact"] = _answer(exact)
    broken = _violations(request, exact, render)
    if broken:
        return Reference(
            exact,
            answers,
            Judgement(
                FindingKind.EXACT_DISAGREEMENT,
                f"exact's own answer fails the verifier: {broken}",
                answers,
            ),
            seconds,
        )
    if exact.status is Status.UNDECIDED or (exact.status is Status.BUNDLE and not exact.optimal):
        skip = Judgement(None, "exact did not prove its answer", answers, skipped=True)
        return Reference(exact, answers, skip, seconds)

    if oracle and len(request["candidates"]) <= ORACLE_MAX_CANDIDATES:
        try:
            second = assemble(request, strategy="enumerate", render=render)
        except EnumerationTooLarge:
            pass
        except Exception as error:
            crash = Judgement(
                FindingKind.CRASH, f"enumerate raised {type(error).__name__}: {error}", answers
            )
            return Reference(exact, answers, crash, seconds)
        else:
            answers["oracle"] = _answer(second)
            why = _exact_mismatch(exact, second) or (
                f"enumerate's answer fails the verifier: {b}"
                if (b := _violations(request, second, render))
                else None
            )
            if why:
                wrong = Judgement(
                    FindingKind.EXACT_DISAGREEMENT, f"exact and enumerate disagree: {why}", answers
                )
                return Reference(exact, answers, wrong, seconds)
    priced = _price_check(request, exact)
    if priced:
        wrong = Judgement(FindingKind.EXACT_DISAGREEMENT, priced, answers)
        return Reference(exact, answers, wrong, seconds)
    return Reference(exact, answers, None, seconds)


def _price_check(request: Mapping[str, Any], exact: Result) -> str | None:
    """A cache request's exact bundle rendered (in a format whose body marks breakpoints
    when its provider caches by them, else in one that marks none) and replayed by the
    cache simulator after the
    previous call's blocks: the tokens it reads must be those the cache record states
    (an independent price check: the simulator shares no code with the decision)."""
    section = request.get("cache")
    if section is None or exact.status is not Status.BUNDLE or exact.cache is None:
        return None
    try:
        fmt = format_caching_by(cache_rules(str(section.get("provider"))).mode)
    except (ValueError, KeyError):
        return None  # a provider the data does not know, or caching no format shows
    try:
        rendered = assemble(request, strategy="exact", render=fmt)
    except AssemblerError:
        return None  # a bundle this format cannot carry (no message at all, ...)
    replayed = simulated_read(request, rendered)
    if replayed is None or rendered.cache is None or replayed == rendered.cache.read:
        return None
    return (
        f"the simulator's replay of the sent body reads {replayed} tokens, the cache record"
        f" {rendered.cache.read}"
    )


def judge(
    request: Mapping[str, Any], strategy: str, *, oracle: bool = True, render: str | None = None
) -> Judgement:
    """Run ``strategy`` and the exact solver on ``request`` and classify the outcome
    (for a bundle sent in ``render``, when set).

    Input: a valid request dict and a strategy name. Output: a ``Judgement``.
    Raises ``InvalidRequest`` when the request is not valid (the shrinker relies on it).
    """
    ref = reference(request, oracle=oracle, render=render)
    return judge_against(request, strategy, ref, render)


def judge_in(request: Mapping[str, Any], strategy: str, shape: str = "") -> Judgement:
    """``judge`` for a hunt's shape: ``render`` judges the request in every format in
    turn and answers the first finding (its explanation names the format);
    ``session`` judges a session against fresh calls (``sessionjudge.py``)."""
    if shape == "session":
        from .sessionjudge import judge_session

        return judge_session(request, strategy)
    if shape != "render":
        return judge(request, strategy)
    verdict = Judgement(None, "agrees in every format")
    for fmt in RenderFormat:
        found = judge(request, strategy, render=fmt.value)
        if found.kind is not None:
            return replace(found, explanation=f"[{fmt.value}] {found.explanation}")
        if found.skipped:
            verdict = replace(found, explanation=f"[{fmt.value}] {found.explanation}")
    return verdict


def judge_against(
    request: Mapping[str, Any], strategy: str, ref: Reference, render: str | None = None
) -> Judgement:
    """Judge ``strategy`` on ``request`` against its already computed ``Reference``
    (made for the same ``render``)."""
    if ref.verdict is not None:
        return ref.verdict
    exact = ref.exact
    assert exact is not None  # a reference without an answer carries its verdict
    answers: dict[str, Mapping[str, Any]] = dict(ref.answers)
    started = time.perf_counter()
    try:
        # a baseline decides blind to the format's rules: the verifier judges its bundle
        tested = assemble(request, strategy=strategy, render=render if strategy in EXACT else None)
        seconds = time.perf_counter() - started
    except EnumerationTooLarge:
        return Judgement(None, f"{strategy} cannot run at this size", answers, skipped=True)
    except Exception as error:
        return Judgement(
            FindingKind.CRASH, f"{strategy} raised {type(error).__name__}: {error}", answers
        )
    answers = {"tested": _answer(tested), **answers}
    if tested.status is Status.UNDECIDED:
        return Judgement(
            None, f"{strategy} answered undecided", answers, skipped=True, seconds=seconds
        )

    broken = _violations(request, tested, render) if tested.status is Status.BUNDLE else ""
    kind, explanation = _classify(strategy, exact, tested, broken)
    if kind is not FindingKind.FALSE_REFUSAL and not broken and request.get("cache") is not None:
        kind, explanation = _classify_cached(request, strategy, exact, tested, (kind, explanation))
    legal = tested.status is Status.BUNDLE and not broken
    lost = exact.value - tested.value if legal and exact.status is Status.BUNDLE else None
    return Judgement(
        kind,
        explanation,
        answers,
        value_lost=lost,
        optimum=exact.value if exact.status is Status.BUNDLE else None,
        seconds=seconds,
    )


def _classify(
    strategy: str, exact: Result, tested: Result, broken: str
) -> tuple[FindingKind | None, str]:
    """The kind of a decided answer (bundle or refusal) against the proven exact one;
    ``broken`` is the verifier's complaint about a tested bundle ("" when legal)."""
    if tested.status is Status.REFUSED:
        if exact.status is Status.BUNDLE:
            refusal = tested.refusal
            why = "" if refusal is None else f" {refusal.code.value}"
            if refusal is not None and refusal.mandatory_cost is not None:
                why += (
                    f" (claims mandatory cost {refusal.mandatory_cost} > budget {refusal.budget})"
                )
            return (
                FindingKind.FALSE_REFUSAL,
                f"{strategy} refused{why} but exact found {_describe(exact)}:"
                f" {' '.join(exact.selected)}",
            )
        if strategy in EXACT and (mismatch := _exact_mismatch(tested, exact)):
            return FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs exact: {mismatch}"
        return None, "both refuse"

    if broken:
        return (FindingKind.FALSE_BUNDLE, f"the verifier rejects {strategy}'s bundle: {broken}")
    # from here the tested bundle is legal and its value and cost are verified
    if exact.status is not Status.BUNDLE:
        return (
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy} found a legal bundle ({_describe(tested)}) but exact gave"
            f" {_describe(exact)}",
        )
    if tested.value < exact.value:
        return (
            FindingKind.SUBOPTIMAL_VALUE,
            f"{strategy}'s legal bundle is worth {tested.value} (cost {tested.cost}),"
            f" exact's {exact.value} (cost {exact.cost})",
        )
    if tested.value > exact.value or tested.cost < exact.cost:
        return (
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy}'s legal bundle ({_describe(tested)}) beats exact's ({_describe(exact)})",
        )
    if tested.cost > exact.cost:
        return (
            FindingKind.SUBOPTIMAL_COST,
            f"{strategy}'s legal bundle reaches the optimal value {tested.value} at cost"
            f" {tested.cost}, exact at cost {exact.cost}",
        )
    if strategy in EXACT and (mismatch := _exact_mismatch(tested, exact)):
        return FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs exact: {mismatch}"
    return None, "agrees"


def _classify_cached(
    request: Mapping[str, Any],
    strategy: str,
    exact: Result,
    tested: Result,
    plain: tuple[FindingKind | None, str],
) -> tuple[FindingKind | None, str]:
    """The kind of a legal tested bundle of a cache request, against exact's price and
    value (``cachejudge``); ``plain`` (section 6's verdict) stands for the rest."""
    if tested.status is not Status.BUNDLE or exact.status is not Status.BUNDLE:
        return plain
    verdict = cache_verdict(request, exact, tested)
    if verdict is None:
        return plain
    theirs, price = tokens(verdict.price), tokens(verdict.exact_price)
    exact_is = f"exact's (value {exact.value}, cost {exact.cost}) {price}"
    tested_is = f"{strategy}'s bundle (value {tested.value}, cost {tested.cost})"
    if verdict.priced_higher:
        outside = "" if verdict.feasible else ", outside the tolerance,"
        return FindingKind.PRICED_HIGHER, f"{tested_is}{outside} costs {theirs}, {exact_is}"
    if not verdict.feasible:
        return (
            FindingKind.OUTSIDE_TOLERANCE,
            f"{tested_is} costs {theirs} but lies outside the tolerance exact was held to;"
            f" {exact_is}",
        )
    if verdict.price < verdict.exact_price:
        return (
            FindingKind.EXACT_DISAGREEMENT,
            f"{tested_is} is feasible and costs {theirs}, less than {exact_is}",
        )
    if verdict.value_lost > 0:
        return (
            FindingKind.SUBOPTIMAL_VALUE,
            f"{tested_is} at exact's price is worth less: {exact_is}",
        )
    if verdict.value_lost < 0 or tested.cost < exact.cost:
        return FindingKind.EXACT_DISAGREEMENT, f"{tested_is} at exact's price beats {exact_is}"
    if tested.cost > exact.cost:
        return (
            FindingKind.SUBOPTIMAL_COST,
            f"{tested_is} at exact's price sends more tokens: {exact_is}",
        )
    if strategy in EXACT and (mismatch := _exact_mismatch(tested, exact)):
        return FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs exact: {mismatch}"
    return None, "agrees"


def judge_safely(request: Mapping[str, Any], strategy: str, shape: str = "") -> Judgement:
    """``judge`` (``judge_in`` for a hunt's ``shape``) that turns any exception into a
    ``crash`` finding.

    A generated request rejected as invalid is a disagreement between the generator
    and the parser, and an exception in the verifier is a bug too: either is worth a
    saved case, and neither may take a whole hunt down.
    """
    if shape in ("render", "session"):
        try:
            return judge_in(request, strategy, shape)
        except InvalidRequest as error:
            return Judgement(FindingKind.CRASH, f"the request was rejected as invalid: {error}")
        except Exception as error:
            return Judgement(FindingKind.CRASH, f"judging raised {type(error).__name__}: {error}")
    return judge_many_safely(request, (strategy,)).judgements[0]


@dataclass(frozen=True, slots=True)
class Verdicts:
    """Several strategies judged on one request: one ``Judgement`` each, in the order
    asked, and exact's wall time for the shared exact answer (0 when it failed)."""

    judgements: tuple[Judgement, ...]
    exact_seconds: float = field(default=0.0, compare=False)


def judge_many_safely(request: Mapping[str, Any], strategies: Sequence[str]) -> Verdicts:
    """``judge_safely`` for several strategies on one request, the exact answer
    computed once (a sweep judges every strategy of its grid on the same request)."""
    try:
        ref = reference(request)
    except InvalidRequest as error:
        crash = Judgement(FindingKind.CRASH, f"the request was rejected as invalid: {error}")
        return Verdicts(tuple(crash for _ in strategies))
    except Exception as error:
        crash = Judgement(FindingKind.CRASH, f"judging raised {type(error).__name__}: {error}")
        return Verdicts(tuple(crash for _ in strategies))
    out = []
    for strategy in strategies:
        try:
            out.append(judge_against(request, strategy, ref))
        except Exception as error:
            out.append(
                Judgement(FindingKind.CRASH, f"judging raised {type(error).__name__}: {error}")
            )
    return Verdicts(tuple(out), ref.seconds)
