"""Exact counterfactuals: what the optimum would be if one thing were different.

Input: a validated ``Request``, the ``Result`` being explained (rendered or not), its
``GateReport`` and ``ExplainLimits``. Output: ``Counterfactuals``: the reference optimum (a
fresh exact solve of the request) and one ``Counterfactual`` per question, for the
``top`` most valuable identities of each kind, every figure with its proof status.

Every figure compares exact optima of derived requests (``derive``), solved by
``assemble()`` with an exact strategy, each computation under its own deadline
(``limits``). With V*(R) the optimal value and C*(R) the cost of the optimal bundle
of a request R at its budget B:

* more budget: ``next_budget``, the least budget above B at which the optimal value
  rises, and ``gain``, by how much (``budgets``);
* left out (an eligible identity i the result does not admit): ``value_lost`` =
  V*(R) - V*(R with i required), ``cost_change`` = C*(R with i required) - C*(R);
  when no legal bundle admits i at B, ``closure`` = the cheapest selection meeting
  C1-C5 with i required, and ``excess`` = closure - B; and ``smallest_budget``
  (``budgets``);
* admitted (an identity i the result admits): ``value_lost`` = V*(R) - V*(R without
  i), ``cost_freed`` = C*(R) - C*(R without i) (the re-solved bundle may spend the
  freed units elsewhere, so this can be less than i's own cost, or negative); R
  without i gates every form of i (and so what needs it or is coupled with it);
* refusal over budget, for each identity r of the conflict set: ``closure`` = the
  cheapest selection meeting C1-C5 once r is no longer required, ``saved`` = the
  mandatory closure minus it, and whether it then fits B; then the same with r kept
  required but shown only in its cheapest form (least own cost, then id);
  for a required identity that is missing or ineligible: the answer once it is no
  longer required;
* gated (a candidate rejected by a gate): gates never read the budget (model
  section 4), so no budget admits it: proven by the model, no solve needed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..model.errors import RenderError
from ..model.objective import form_value
from ..model.types import Candidate, Request, Result, Status, Verdict
from ..stages.gates import GateReport
from .budgets import next_breakpoint, smallest_budget
from .derive import content_only, forced_in, not_required, only_form, priced, without_identity
from .figures import COST_UNIT, VALUE_UNIT, Counterfactual, CounterfactualKind, Figure, FigureStatus
from .limits import Clock, ExplainLimits, FigureDeadline

__all__ = ["Counterfactuals", "counterfactuals"]

Range = tuple[int | None, int | None]


@dataclass(frozen=True, slots=True)
class Counterfactuals:
    """The answers, with what they were measured against and what was left out."""

    limits: ExplainLimits
    evaluated: bool
    # the fresh exact solve of the request every figure compares against
    reference: Result | None
    # for a refusal over budget: the request's own mandatory closure
    mandatory: Figure | None
    items: tuple[Counterfactual, ...]
    # questions of each kind beyond the top N, not evaluated
    skipped: tuple[tuple[CounterfactualKind, int], ...]
    seconds: float
    solves: int = 0
    # every derived request and its answer, when ``limits.audit`` asks for them
    audited: tuple[tuple[Request, Result], ...] = ()


def counterfactuals(
    request: Request, result: Result, gates: GateReport, limits: ExplainLimits
) -> Counterfactuals:
    """Answer the top-N questions of every kind for ``result`` under ``limits``."""
    started = time.monotonic()
    clock = Clock(limits)
    if limits.top == 0:
        return Counterfactuals(limits, False, None, None, (), (), 0.0)
    # A rendered result had its forms without content gated: the reference is solved
    # the same way, and every derived request starts from the request with that gate.
    render = None if result.rendering is None else result.rendering.format
    asked = _Questions(request, result, gates)
    gated = request if render is None else content_only(request)
    try:
        reference = clock.whole().solve(request, render)
    except RenderError:
        # a bundle found under the limit may break a provider rule the optimum keeps:
        # the same selections, without their rendering
        reference = clock.whole().solve(gated)
    request = gated
    items: list[Counterfactual] = []
    skipped: list[tuple[CounterfactualKind, int]] = []
    mandatory: Figure | None = None

    def ask(kind: CounterfactualKind, ranked: list[str]) -> list[str]:
        if len(ranked) > limits.top:
            skipped.append((kind, len(ranked) - limits.top))
        return ranked[: limits.top]

    if reference is None or reference.status is not Status.REFUSED:
        items.append(_more_budget(request, reference, clock))
        for identity in ask(CounterfactualKind.LEFT_OUT, asked.left_out()):
            items.append(_left_out(request, identity, reference, clock))
        for identity in ask(CounterfactualKind.ADMITTED, asked.admitted()):
            items.append(_admitted(request, identity, reference, clock))
    elif reference.refusal is not None and reference.refusal.conflict:
        deadline = clock.figure()
        closure = deadline.solve(priced(request))
        mandatory = _cost_figure("closure", "mandatory closure", _cost_range(closure), deadline)
        for identity in ask(CounterfactualKind.CONFLICT, asked.ranked(reference.refusal.conflict)):
            single = len(asked.eligible_forms(identity)) == 1
            items.append(_dropped(request, identity, mandatory, clock, single))
            if not single:
                items.append(_cheapest(request, identity, mandatory, clock, asked))
    elif reference.refusal is not None:
        named = [item.identity for item in reference.refusal.identities]
        for identity in ask(CounterfactualKind.CONFLICT, asked.ranked(named)):
            items.append(_requirement(request, identity, clock))
    by_id = {c.id: c for c in request.candidates}
    for form in ask(CounterfactualKind.GATED, asked.gated()):
        items.append(_gated(by_id[form], gates))
    return Counterfactuals(
        limits,
        True,
        reference,
        mandatory,
        tuple(items),
        tuple(skipped),
        time.monotonic() - started,
        clock.solves,
        tuple(clock.audited),
    )


class _Questions:
    """Which identities and forms to ask about, most valuable first."""

    def __init__(self, request: Request, result: Result, gates: GateReport) -> None:
        threshold = request.task.min_relevance
        self.gates = gates
        self.value = {c.id: form_value(c.relevance, threshold) for c in request.candidates}
        self.forms: dict[str, list[Candidate]] = {}
        for c in request.candidates:
            self.forms.setdefault(c.identity, []).append(c)
        self.admitted_form = {
            d.identity: d.id for d in result.decisions if d.verdict is Verdict.ADMITTED
        }

    def best(self, identity: str) -> int:
        return max((self.value[c.id] for c in self.forms.get(identity, ())), default=0)

    def ranked(self, identities: Iterable[str]) -> list[str]:
        return sorted(identities, key=lambda i: (-self.best(i), i))

    def eligible_forms(self, identity: str) -> list[Candidate]:
        return [c for c in self.forms.get(identity, ()) if self.gates.is_eligible(c.id)]

    def left_out(self) -> list[str]:
        eligible = {i for i in self.forms if self.eligible_forms(i)}
        out = eligible - set(self.admitted_form)
        best = {i: max(self.value[c.id] for c in self.eligible_forms(i)) for i in out}
        return sorted(out, key=lambda i: (-best[i], i))

    def admitted(self) -> list[str]:
        forms = self.admitted_form
        return sorted(forms, key=lambda i: (-self.value[forms[i]], i))

    def gated(self) -> list[str]:
        return sorted(self.gates.rejected, key=lambda f: (-self.value[f], f))


# -- ranges and figures ------------------------------------------------------------


def _value_range(result: Result | None) -> Range:
    if result is None or result.status is not Status.BUNDLE:
        return (None, None)
    return (result.value, result.value if result.optimal else result.bound)


def _cost_range(result: Result | None) -> Range:
    """Bounds on the optimal cost of a priced request (value is 0 everywhere): a bundle
    found bounds it from above; only a proven one from below."""
    if result is None or result.status is not Status.BUNDLE:
        return (None, None)
    return (result.cost if result.optimal else None, result.cost)


def _figure(key: str, label: str, unit: str, bounds: Range, deadline: FigureDeadline) -> Figure:
    low, high = bounds
    if low is not None and low == high:
        status = FigureStatus.PROVEN
    elif low is not None or high is not None:
        status = FigureStatus.BOUND_ONLY
    else:
        status = FigureStatus.NOT_EVALUATED if deadline.cut else FigureStatus.TIMED_OUT
    return Figure(key, label, unit, status, low, high, seconds=deadline.spent())


def _cost_figure(key: str, label: str, bounds: Range, deadline: FigureDeadline) -> Figure:
    return _figure(key, label, COST_UNIT, bounds, deadline)


def _difference(first: Range, second: Range, *, floor: int | None = None) -> Range:
    """Bounds on first - second, each given by its bounds; ``floor`` is known a priori."""
    low = None if first[0] is None or second[1] is None else first[0] - second[1]
    high = None if first[1] is None or second[0] is None else first[1] - second[0]
    if floor is not None and low is not None:
        low = max(low, floor)
    return (low, high)


def _exact_cost(
    key: str,
    label: str,
    reference: Result | None,
    derived: Result,
    sign: int,
    deadline: FigureDeadline,
) -> Figure:
    """A cost difference is proven only when both optima are: the cost of a bundle
    that is not proven optimal says nothing about the optimum's cost."""
    proven = reference is not None and reference.optimal and derived.optimal
    if proven and reference is not None:
        delta = sign * (derived.cost - reference.cost)
        return Figure(
            key, label, COST_UNIT, FigureStatus.PROVEN, delta, delta, seconds=deadline.spent()
        )
    return Figure(
        key,
        label,
        COST_UNIT,
        FigureStatus.TIMED_OUT,
        seconds=deadline.spent(),
        note="a bundle behind it is not proven optimal",
    )


def _fits(bounds: Range, budget: int) -> bool | None:
    low, high = bounds
    if high is not None and high <= budget:
        return True  # a selection that cheap exists
    if low is not None and low > budget:
        return False
    return None


def _moved(reference: Result | None, derived: Result) -> tuple[tuple[str, ...], tuple[str, ...]]:
    before = set(() if reference is None else reference.selected)
    after = set(derived.selected)
    return tuple(sorted(after - before)), tuple(sorted(before - after))


def _not_evaluated(key: str, label: str, unit: str) -> Figure:
    return Figure(key, label, unit, FigureStatus.NOT_EVALUATED, note="the overall limit was spent")


# -- the questions -----------------------------------------------------------------


def _left_out(
    request: Request, identity: str, reference: Result | None, clock: Clock
) -> Counterfactual:
    budget = request.task.budget
    question = f"forced in at budget {budget}"
    deadline = clock.figure()
    forced = deadline.solve(forced_in(request, identity))
    figures: list[Figure] = []
    feasible: bool | None = None
    entered: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    if forced is None:
        figures.append(_not_evaluated("value_lost", "value lost if forced in", VALUE_UNIT))
    elif forced.status is Status.REFUSED:
        feasible = False
        closure = deadline.solve(priced(forced_in(request, identity)))
        bounds = _cost_range(closure)
        figures.append(_cost_figure("closure", "cheapest closure with it", bounds, deadline))
        excess = (
            None if bounds[0] is None else bounds[0] - budget,
            None if bounds[1] is None else bounds[1] - budget,
        )
        figures.append(_cost_figure("excess", "over the budget by", excess, deadline))
    elif forced.status is Status.UNDECIDED:
        figures.append(
            _figure("value_lost", "value lost if forced in", VALUE_UNIT, (None, None), deadline)
        )
    else:
        feasible = True
        lost = _difference(_value_range(reference), _value_range(forced), floor=0)
        figures.append(_figure("value_lost", "value lost if forced in", VALUE_UNIT, lost, deadline))
        figures.append(
            _exact_cost("cost_change", "cost change if forced in", reference, forced, 1, deadline)
        )
        entered, left = _moved(reference, forced)
    if clock.exhausted() or reference is None:
        figures.append(
            _not_evaluated("smallest_budget", "smallest budget that admits it", COST_UNIT)
        )
    else:
        figures.append(smallest_budget(request, identity, reference, clock.figure(), forced))
    return Counterfactual(
        CounterfactualKind.LEFT_OUT, identity, question, tuple(figures), feasible, entered, left
    )


def _more_budget(request: Request, reference: Result | None, clock: Clock) -> Counterfactual:
    question = f"a budget above {request.task.budget}"
    if reference is None or clock.exhausted():
        missing = _not_evaluated(
            "next_budget", "next budget at which the optimum gains value", COST_UNIT
        )
        return Counterfactual(CounterfactualKind.BUDGET, "", question, (missing,))
    budget, gain, there = next_breakpoint(request, reference, clock.figure())
    entered, left = _moved(reference, there) if there is not None else ((), ())
    return Counterfactual(
        CounterfactualKind.BUDGET, "", question, (budget, gain), None, entered, left
    )


def _admitted(
    request: Request, identity: str, reference: Result | None, clock: Clock
) -> Counterfactual:
    question = "taken out, every form of it gated"
    deadline = clock.figure()
    derived = deadline.solve(without_identity(request, identity))
    if derived is None:
        missing = _not_evaluated("value_lost", "value lost if taken out", VALUE_UNIT)
        return Counterfactual(CounterfactualKind.ADMITTED, identity, question, (missing,))
    if derived.status is Status.REFUSED:
        code = derived.refusal.code.value if derived.refusal is not None else "refused"
        return Counterfactual(
            CounterfactualKind.ADMITTED,
            identity,
            question,
            (),
            feasible=False,
            note=f"without it the request is refused ({code}): required material needs it",
        )
    if derived.status is Status.UNDECIDED:
        figure = _figure(
            "value_lost", "value lost if taken out", VALUE_UNIT, (None, None), deadline
        )
        return Counterfactual(CounterfactualKind.ADMITTED, identity, question, (figure,))
    lost = _difference(_value_range(reference), _value_range(derived), floor=0)
    entered, left = _moved(reference, derived)
    figures: tuple[Figure, ...] = (
        _figure("value_lost", "value lost if taken out", VALUE_UNIT, lost, deadline),
        _exact_cost("cost_freed", "cost freed if taken out", reference, derived, -1, deadline),
    )
    return Counterfactual(
        CounterfactualKind.ADMITTED, identity, question, figures, True, entered, left
    )


def _closure_question(
    request: Request, derived: Request, mandatory: Figure, deadline: FigureDeadline
) -> tuple[tuple[Figure, ...], bool | None]:
    closure = deadline.solve(priced(derived))
    bounds = _cost_range(closure)
    saved = _difference((mandatory.low, mandatory.high), bounds)
    figures = (
        _cost_figure("closure", "cheapest closure then", bounds, deadline),
        _cost_figure("saved", "saved on the mandatory closure", saved, deadline),
    )
    return figures, _fits(bounds, request.task.budget)


def _dropped(
    request: Request, identity: str, mandatory: Figure, clock: Clock, single: bool
) -> Counterfactual:
    deadline = clock.figure()
    derived = not_required(request, identity)
    figures, fits = _closure_question(request, derived, mandatory, deadline)
    if fits:
        answer = deadline.solve(derived)
        figures += (
            _figure(
                "value",
                "value of the optimal bundle then",
                VALUE_UNIT,
                _value_range(answer),
                deadline,
            ),
        )
    # with one eligible form, "only its cheapest form" is the request itself: nothing saved
    note = "it has one eligible form: no cheaper form to take" if single else ""
    return Counterfactual(
        CounterfactualKind.CONFLICT, identity, "no longer required", figures, fits, note=note
    )


def _cheapest(
    request: Request, identity: str, mandatory: Figure, clock: Clock, asked: _Questions
) -> Counterfactual:
    forms = asked.eligible_forms(identity)
    cheapest = min(forms, key=lambda c: (c.cost, c.id))
    question = f"kept, only in its cheapest form {cheapest.id!r} of {cheapest.cost} {COST_UNIT}"
    deadline = clock.figure()
    figures, fits = _closure_question(
        request, only_form(request, identity, cheapest.id), mandatory, deadline
    )
    return Counterfactual(
        CounterfactualKind.CONFLICT, identity, question, figures, fits, form=cheapest.id
    )


def _requirement(request: Request, identity: str, clock: Clock) -> Counterfactual:
    deadline = clock.figure()
    answer = deadline.solve(not_required(request, identity))
    question = "no longer required"
    note = "no budget changes this refusal: gates and missing candidates do not read the budget"
    if answer is None or answer.status is Status.UNDECIDED:
        figure = _figure(
            "value", "value of the optimal bundle then", VALUE_UNIT, (None, None), deadline
        )
        return Counterfactual(
            CounterfactualKind.CONFLICT, identity, question, (figure,), None, note=note
        )
    if answer.status is Status.REFUSED:
        code = answer.refusal.code.value if answer.refusal is not None else "refused"
        return Counterfactual(
            CounterfactualKind.CONFLICT,
            identity,
            question,
            (),
            False,
            note=f"{note}; still refused ({code})",
        )
    figure = _figure(
        "value", "value of the optimal bundle then", VALUE_UNIT, _value_range(answer), deadline
    )
    return Counterfactual(
        CounterfactualKind.CONFLICT, identity, question, (figure,), True, note=note
    )


def _gated(candidate: Candidate, gates: GateReport) -> Counterfactual:
    gate, detail = gates.rejected[candidate.id]
    figure = Figure(
        "smallest_budget",
        "smallest budget that admits it",
        COST_UNIT,
        FigureStatus.PROVEN,
        never=True,
        note="gates never read the budget (model section 4)",
    )
    return Counterfactual(
        CounterfactualKind.GATED,
        candidate.identity,
        f"form {candidate.id!r} at any budget",
        (figure,),
        False,
        note=f"{gate.value}: {detail}",
        form=candidate.id,
    )
