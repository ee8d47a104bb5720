"""The cheapest selection worth a floor, for each class of the cache-aware order.

Input: a knapsack-shaped ``Problem`` (no form needs another identity), and per question
a value floor, a budget, the forms a class holds (``forced``) and those it may not
(``banned``).
Output: ``Program.cheapest``: ``knapsack.cheapest_reaching``'s answer (the cheapest
legal selection worth the floor within the budget, holding the forced forms and none of
the banned; the most valuable, then the lightest, of those), and ``Program.bound``, a
lower bound on its cost, each made once per question for one decision.

Why: the cache-aware decision asks the same problem a few such questions (whether the
rewrite budget can be kept, then one per class of the entry read), and the program over
every item of an agent's thousand-turn request costs more than the cache-blind solve.
Its items are few once a Lagrangian bound has ruled out the options no cheapest
selection can hold:

* For any mu >= 0 every selection of the class worth the floor costs at least
  L(mu) = mu x floor + the sum over items of the least (cost - mu x value) among the
  item's allowed options (the floor's row relaxed); a selection holding option o costs
  at least L(mu) + o's excess over its item's least. L(mu) above the budget proves the
  class empty.
* A selection of the class (the least terms at a multiplier where they reach the floor,
  or those below it raised item by item until they do) costs C; an option whose bound
  exceeds C is in no selection as cheap. The program keeps every selection as cheap as
  the best (ties included), so with those options gone it answers the same.

The items are built from the problem's arrays (identities joined by coupled groups, as
``knapsack``'s own items; an item of more than ``knapsack.OPTION_LIMIT`` options leaves
the problem to the search), and only the items an answer can still vary are handed to
the program. Inside ``decision()`` (per thread or task), ``program(problem)`` keeps the
``Program`` of the problem last asked for until the decision ends.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..deadline import Deadline
from .backend import SolveOutcome, SolveStatus
from .closure import Problem, item_roots

__all__ = ["Program", "Question", "decision", "program"]

# bisection steps on the floor's multiplier (any multiplier gives a valid bound)
BISECTIONS = 16

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
# a class: (floor, budget, forced, banned)
Key = tuple[int, int, bytes, bytes]


@dataclass(frozen=True, slots=True)
class _Options:
    """Every option of every item in one row each (an item's rows contiguous, "none"
    first when the item may be left out): its forms, item, cost, value and weight; per
    form the rows holding it."""

    forms: list[tuple[int, ...]]
    item: Ints
    cost: Floats
    value: Floats
    weight: list[int]
    starts: Ints
    # each (row, form) the row holds, as two arrays
    entry_row: Ints
    entry_form: Ints
    # per form its item (-1: in none)
    item_of: Ints

    @staticmethod
    def of(problem: Problem) -> _Options | None:
        """The items of ``problem`` (no needs), or None when one has too many options
        or cannot be admitted nor left out."""
        from .knapsack import OPTION_LIMIT

        members: dict[int, list[int]] = {}
        for identity, head in enumerate(item_roots(problem)):
            members.setdefault(head, []).append(identity)
        forms_of = problem.forms_of()
        required = set(problem.required)
        cost_of, value_of, weight_of = problem.cost, problem.value, problem.weight
        forms: list[tuple[int, ...]] = []
        item: list[int] = []
        cost: list[int] = []
        value: list[int] = []
        weight: list[int] = []
        starts: list[int] = []
        entry_row: list[int] = []
        entry_form: list[int] = []
        item_of = np.full(problem.size, -1, dtype=np.int64)
        for component in members.values():
            must = any(i in required for i in component)
            choices = [forms_of[i] for i in component]
            if not all(choices):
                if must:
                    return None  # nothing can admit it: the search refuses
                continue  # only "none": not an item
            k = len(starts)
            starts.append(len(forms))
            if not must:
                forms.append(())
                item.append(k)
                cost.append(0)
                value.append(0)
                weight.append(0)
            if len(component) == 1:
                # one identity: a row per form (most items), no sums to take
                for f in choices[0]:
                    entry_row.append(len(forms))
                    entry_form.append(f)
                    item_of[f] = k
                    forms.append((f,))
                    item.append(k)
                    cost.append(cost_of[f])
                    value.append(value_of[f])
                    weight.append(weight_of[f])
                continue
            if math.prod(len(c) for c in choices) > OPTION_LIMIT:
                return None
            for chosen in (tuple(sorted(c)) for c in itertools.product(*choices)):
                for f in chosen:
                    entry_row.append(len(forms))
                    entry_form.append(f)
                    item_of[f] = k
                forms.append(chosen)
                item.append(k)
                cost.append(sum(cost_of[f] for f in chosen))
                value.append(sum(value_of[f] for f in chosen))
                weight.append(sum(weight_of[f] for f in chosen))
        return _Options(
            forms, np.array(item, dtype=np.int64), np.array(cost, dtype=np.float64),
            np.array(value, dtype=np.float64), weight, np.array(starts, dtype=np.int64),
            np.array(entry_row, dtype=np.int64), np.array(entry_form, dtype=np.int64), item_of,
        )  # fmt: skip

    def items(self, keep: Mask) -> list[list[tuple[tuple[int, ...], int, int, int]]]:
        """``knapsack``'s items of the rows kept: those left with a choice or with one
        option holding forms (an item left with "none" alone adds nothing)."""
        counts = np.add.reduceat(keep.astype(np.int64), self.starts)
        out = []
        ends = np.append(self.starts[1:], len(keep))
        for k in np.flatnonzero(counts > 0).tolist():
            rows = [r for r in range(int(self.starts[k]), int(ends[k])) if keep[r]]
            if len(rows) == 1 and not self.forms[rows[0]]:
                continue
            out.append(
                [(self.forms[r], int(self.cost[r]), int(self.value[r]), self.weight[r])
                 for r in rows]
            )  # fmt: skip
        return out


@dataclass(frozen=True, slots=True)
class Question:
    """A class of selections: worth ``floor`` within ``budget``, holding every form
    ``forced`` marks and none ``banned`` marks (both per form of the problem)."""

    floor: int
    budget: int
    forced: Mask
    banned: Mask


@dataclass(slots=True)
class Program:
    """One decision's questions on one problem, each answered once."""

    problem: Problem
    options: _Options
    # the forms every legal selection holds (a required identity's one form)
    held: Mask
    narrowed: dict[Key, tuple[Mask | None, float]] = field(default_factory=dict)
    found: dict[Key, SolveOutcome | None] = field(default_factory=dict)

    def question(self, floor: int, budget: int, forced: Mask | None = None,
                 banned: Mask | None = None) -> Question:  # fmt: skip
        none = np.zeros(self.problem.size, dtype=bool)
        # a form every legal selection holds forces nothing: the class keeping the
        # system prompt is then the class of nothing read
        forced = none if forced is None else forced & ~self.held
        return Question(floor, budget, forced, none if banned is None else banned)

    def bound(self, question: Question) -> float:
        """A lower bound on the cost of the class's selections (inf: it has none)."""
        kept, bound = self._narrowing(question)
        return math.inf if kept is None else bound

    def cheapest(self, question: Question, deadline: Deadline) -> SolveOutcome | None:
        """``knapsack.cheapest_reaching``'s answer for the class."""
        from .knapsack import cheapest_reaching

        key = _key(question)
        if key not in self.found:
            kept, _bound = self._narrowing(question)
            forced = frozenset(np.flatnonzero(question.forced).tolist())
            banned = frozenset(np.flatnonzero(question.banned).tolist())
            self.found[key] = (
                SolveOutcome(SolveStatus.INFEASIBLE) if kept is None
                else cheapest_reaching(self.problem, question.floor, question.budget,
                                       forced=forced, banned=banned, deadline=deadline,
                                       items=self.options.items(kept))
            )  # fmt: skip
        return self.found[key]

    def _narrowing(self, question: Question) -> tuple[Mask | None, float]:
        key = _key(question)
        if key not in self.narrowed:
            self.narrowed[key] = _narrowed(self.options, question)
        return self.narrowed[key]


def _key(question: Question) -> Key:
    return (question.floor, question.budget, question.forced.tobytes(),
            question.banned.tobytes())  # fmt: skip


# the program kept by the decision under way in this thread or task (None: no decision)
_KEPT: ContextVar[list[Program] | None] = ContextVar("cheapest_program", default=None)


@contextmanager
def decision() -> Iterator[None]:
    """One decision: the programs made inside it are kept until it ends."""
    token = _KEPT.set([])
    try:
        yield
    finally:
        _KEPT.reset(token)


def program(problem: Problem) -> Program | None:
    """The program of ``problem``, kept for the rest of the decision under way (made on
    first use, replacing another problem's), or None when it is not knapsack-shaped."""
    kept = _KEPT.get()
    if kept and kept[0].problem is problem:
        return kept[0]
    if any(problem.needs) or problem.budget is None:
        return None
    options = _Options.of(problem)
    if options is None:
        return None
    forms_of = problem.forms_of()
    held = np.zeros(problem.size, dtype=bool)
    held[[forms_of[i][0] for i in problem.required if len(forms_of[i]) == 1]] = True
    made = Program(problem, options, held)
    if kept is not None:
        kept[:] = [made]
    return made


def _narrowed(flat: _Options, question: Question) -> tuple[Mask | None, float]:
    """The class's options less those no selection as cheap as a known one can hold
    (all of them when none is known), and the bound L (module docstring); None for the
    options when L proves the class empty."""
    floor, budget = question.floor, question.budget
    rows = len(flat.cost)
    if not len(flat.starts):
        return np.zeros(0, dtype=bool), 0.0
    # a row is allowed when it holds no banned form and every forced form of its item
    # (a forced form in no item forces nothing, as the program reads it)
    banned = np.bincount(flat.entry_row, weights=question.banned[flat.entry_form],
                         minlength=rows) > 0  # fmt: skip
    held = np.bincount(flat.entry_row, weights=question.forced[flat.entry_form], minlength=rows)
    forced_items = flat.item_of[np.flatnonzero(question.forced)]
    need = np.bincount(forced_items[forced_items >= 0], minlength=len(flat.starts))
    allowed = ~banned & (held == need[flat.item])
    if not np.logical_or.reduceat(allowed, flat.starts).all():
        return None, math.inf  # an item with no option left
    cost = np.where(allowed, flat.cost, np.inf)
    value = flat.value

    def least(mu: float) -> tuple[Floats, Floats, tuple[Mask, Floats]]:
        """Per option its reduced cost; per item the least, and of the options at it
        the most valuable (the floor is reached soonest)."""
        reduced = np.where(allowed, cost - mu * value, np.inf)
        low = np.minimum.reduceat(reduced, flat.starts)
        at_low = reduced <= low[flat.item] + 1e-9 * (1.0 + np.abs(low[flat.item]))
        picked = np.maximum.reduceat(np.where(at_low, value, -np.inf), flat.starts)
        return reduced, low, (at_low, picked)

    def choice(picks: tuple[Mask, Floats]) -> tuple[Floats, Floats]:
        at_low, picked = picks
        spent = np.minimum.reduceat(
            np.where(at_low & (value == picked[flat.item]), cost, np.inf), flat.starts
        )
        return picked, spent

    valued = allowed & (value > 0)
    if not valued.any():
        return (None, math.inf) if floor > 0 else (allowed, 0.0)
    # the floor's multiplier, by bisection in its logarithm between the least and the
    # most cost per value of an option
    ratios = cost[valued] / value[valued]
    low_mu = max(float(ratios.min()) / 2, 1e-12)
    high_mu = max(float(ratios.max()) * 2, 2 * low_mu)
    best, best_mu = -math.inf, low_mu
    below: tuple[Mask, Floats] | None = None
    above: tuple[Mask, Floats] | None = None
    for _ in range(BISECTIONS):
        mu = math.sqrt(low_mu * high_mu)
        _reduced, low, picks = least(mu)
        bound = mu * floor + float(low.sum())
        if bound > best:
            best, best_mu = bound, mu
        if picks[1].sum() >= floor:
            high_mu, above = mu, picks
        else:
            low_mu, below = mu, picks
    if best > budget + 1e-7 * (budget + 1.0):
        return None, best  # every selection worth the floor costs more than the budget
    known = _repaired(
        flat, allowed, None if below is None else choice(below),
        choice(least(high_mu)[2] if above is None else above), floor, budget,
    )  # fmt: skip
    if known is None:
        return allowed, best
    reduced, low, _picks = least(best_mu)
    margin = 1e-7 * (abs(known) + 1.0)
    return allowed & (best + (reduced - low[flat.item]) <= known + margin), best


def _repaired(
    flat: _Options,
    allowed: Mask,
    below: tuple[Floats, Floats] | None,
    above: tuple[Floats, Floats],
    floor: int,
    budget: int,
) -> float | None:
    """The cost of a selection of the class worth ``floor`` within ``budget``: the
    least of the least terms above the floor's multiplier, and those below it with one
    item raised to cover the shortfall, or with items raised one at a time (the least
    cost per value gained first) until the floor is reached; None when none fits."""
    picked, spent = above
    known = float(spent.sum()) if picked.sum() >= floor and spent.sum() <= budget else None
    if below is None:
        return known
    value, cost = below
    gained = float(value.sum())
    total = float(cost.sum())
    # each item's raises: the allowed options adding value, and what each adds
    rise = flat.value - value[flat.item]
    extra = flat.cost - cost[flat.item]
    ok = allowed & (rise > 0)
    covering = ok & (rise >= floor - gained) & (total + extra <= budget)
    if covering.any():
        one = total + float(extra[covering].min())
        known = one if known is None else min(known, one)
    ratio = np.where(ok, extra / np.where(ok, rise, 1.0), np.inf)
    raised: set[int] = set()
    for row in np.lexsort((flat.item, ratio)).tolist():
        if gained >= floor or not np.isfinite(ratio[row]):
            break
        k = int(flat.item[row])
        if k in raised or total + extra[row] > budget:
            continue
        raised.add(k)
        gained += float(rise[row])
        total += float(extra[row])
    if gained >= floor and total <= budget:
        known = total if known is None else min(known, total)
    return known
