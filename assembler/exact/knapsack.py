"""Exact answers for knapsack-shaped cores: a program over the distinct reachable sums.

Input: a ``Problem`` (usually a core the reduction left), a state limit and a deadline.
Output: a ``SolveOutcome``, OPTIMAL (the unique best selection under the full
lexicographic order of ``assembler.model.objective``) or INFEASIBLE; or None when the
core is not knapsack-shaped (an item has too many options), has no budget, walks
more states than the limit, runs past the deadline, or when two selections tie on
value, cost and tie-break weight (only the canonical-order rule separates them: the
caller's search decides).

Why: the cores an agent's requests leave (a few dozen forms, tool calls coupled to
their results, no shared resolvers) are knapsacks on which the branch and bound of
``search.py`` runs out of its few milliseconds and a CP-SAT session costs more than
they take. Their costs are token counts, so a program over every unit of the budget
(tens of thousands of cells per item) costs more than the few hundred sums the items
can actually reach and that are worth keeping.

The items: identities joined by coupled groups form one item (all of its identities
admitted, each with one form, or none), whose options are the combinations of its
identities' forms, plus "none" unless an identity in it is required. A form that needs
another identity joins that identity's item too (the few tool calls and results an
agent's core keeps that a form refers to): the options are then the legal
combinations, each identity left out or with one form, every chosen form's needs
admitted and every group whole. Every rule but the budget is inside one item, so the
items are independent but for the budget. After each item
the program keeps the frontier of the partial selections that no other dominates: a
state (cost, value, weight) is dropped when another costs no more and is better under
the order (more value, else less cost, else less weight), since any completion of it
is then beaten by the same completion of the other; two states alike on all three are
one state flagged as a tie. A state whose value plus a Lagrangian bound on what the
remaining items can add within the room left stays below a legal selection already in
the frontier is dropped too. Every state that can still reach or tie the optimum
survives, so the most valuable state of the last frontier is the optimum; a flagged
one is a tie on all three levels and is handed back (None). Each step is a few
vectorised passes over the frontier, whatever the budget's size.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..deadline import NEVER, Deadline
from .backend import SolveOutcome, SolveStatus, selection_cost, selection_value
from .closure import Problem, item_roots

__all__ = [
    "ENUMERATED",
    "OPTION_LIMIT",
    "STATE_LIMIT",
    "cheapest_reaching",
    "items_of",
    "reaching_items",
    "solve_knapsack",
]

# states generated at most (each item's frontier times its options, summed): a core
# whose frontier grows past it goes to the search that would have had it anyway
STATE_LIMIT = 1_000_000
# combinations of forms of one coupled item
OPTION_LIMIT = 64
# choices walked at most to find the legal options of an item joined by needs
ENUMERATED = 1 << 12
# bisection steps on the budget's multiplier (any multiplier gives a valid bound)
_STEPS = 20
# the multiples of the best multiplier each state is bounded with (the least bound wins)
_MULTIPLES = (0.5, 1.0, 1.5, 3.0)

# an item's option: (forms, cost, value, weight)
_Option = tuple[tuple[int, ...], int, int, int]


def solve_knapsack(
    problem: Problem,
    state_limit: int = STATE_LIMIT,
    deadline: Deadline = NEVER,
    *,
    worth: int | None = None,
) -> SolveOutcome | None:
    """The answer, or None (see the module's docstring). ``deadline`` is read on
    entry, while the items are gathered and before each item is merged. With
    ``worth``, only a selection worth at least that is asked for: states that cannot
    reach it are dropped as soon as the bound shows it, and INFEASIBLE also says that
    no legal selection reaches it."""
    budget = problem.budget
    if budget is None or deadline.passed:
        return None
    items = _items(problem, deadline)
    if items is None:
        return None
    if not items:
        status = SolveStatus.OPTIMAL if worth is None or worth <= 0 else SolveStatus.INFEASIBLE
        return SolveOutcome(status, (), bound=0)
    if any(not options for options in items):
        return SolveOutcome(SolveStatus.INFEASIBLE)
    return _solve(items, budget, state_limit, deadline, worth=worth)


def items_of(problem: Problem, deadline: Deadline = NEVER) -> list[list[_Option]] | None:
    """Each item's options (forms, cost, value, weight), as the program reads them (the
    multiple-choice kernel's input too: ``mckp.py``), or None (see ``_items``)."""
    return _items(problem, deadline)


def _items(
    problem: Problem, deadline: Deadline, *, undominated: bool = True
) -> list[list[_Option]] | None:
    """Each item's options, or None when one has too many or the deadline passed; an
    item that cannot be admitted nor left out makes the list [[]] (no option:
    infeasible). A pass in Python over every form: the deadline is read every 1,024
    items. ``undominated``: an item joined by needs keeps only the options no other
    one of it beats (for the lexicographic order, not for ``cheapest_reaching``'s
    forced and banned forms)."""
    # a form and what it needs are one item: every rule of the problem but the budget
    # is then inside one item
    needy = {problem.identity_of[form] for form, needs in enumerate(problem.needs) if needs}
    members: dict[int, list[int]] = {}
    for identity, item in enumerate(item_roots(problem)):
        members.setdefault(item, []).append(identity)
    forms_of = problem.forms_of()
    required = set(problem.required)
    items: list[list[_Option]] = []
    for k, component in enumerate(members.values()):
        if k % 1024 == 1023 and deadline.passed:
            return None
        must = any(i in required for i in component)
        if needy.isdisjoint(component):
            found = _coupled_options(problem, component, forms_of, must)
        else:
            found = _needing_options(problem, component, forms_of, required, undominated)
        if found is None:
            return None
        if not found:
            return [[]]
        if len(found) > 1 or found[0][0]:
            items.append(found)
    return items


def _coupled_options(
    problem: Problem, component: list[int], forms_of: tuple[tuple[int, ...], ...], must: bool
) -> list[_Option] | None:
    """The options of identities coupled into one group (or of one identity): none
    unless required, or one form of each; None past ``OPTION_LIMIT``."""
    choices = [forms_of[i] for i in component]
    options: list[_Option] = [] if must else [((), 0, 0, 0)]
    if all(choices):
        combinations = 1
        for forms in choices:
            combinations *= len(forms)
        if combinations > OPTION_LIMIT:
            return None
        options.extend(_option(problem, forms) for forms in itertools.product(*choices))
    return options


def _needing_options(
    problem: Problem,
    component: list[int],
    forms_of: tuple[tuple[int, ...], ...],
    required: set[int],
    undominated: bool,
) -> list[_Option] | None:
    """The legal options of identities joined by needs (and groups): each identity left
    out (unless required) or with one of its forms, every chosen form's needs admitted
    and every group whole or absent; "none" first when it is legal; less the options
    another one of the item beats (``_undominated``) when asked. A depth-first walk,
    the most needed identities first, that leaves a branch as soon as a choice breaks
    a rule with the identities already decided; None when it would walk more than
    ``ENUMERATED`` choices or more than ``OPTION_LIMIT`` options are left, or when the
    item joins more identities than that (the walk's depth)."""
    if len(component) > OPTION_LIMIT:
        return None
    needs = problem.needs
    needed = dict.fromkeys(component, 0)
    for i in component:
        for f in forms_of[i]:
            for d in needs[f]:
                needed[d] += 1
    order = sorted(component, key=lambda i: (-needed[i], i))
    inside = set(component)
    groups_of: dict[int, list[tuple[int, ...]]] = {}
    for group in problem.groups:
        if group[0] in inside:
            for i in group:
                groups_of.setdefault(i, []).append(group)
    admitted: dict[int, bool] = {}
    # per identity, how many chosen forms need it
    needing = dict.fromkeys(component, 0)
    picked: list[int] = []
    options: list[_Option] = []
    walked = 0

    def fits(i: int, form: int | None) -> bool:
        on = form is not None
        for group in groups_of.get(i, ()):
            if any(admitted.get(j, on) is not on for j in group):
                return False
        if form is None:
            return needing[i] == 0
        # a need decided out breaks the rule now; one decided later is checked then
        return not any(admitted.get(d) is False for d in needs[form])

    cost, value, weight = problem.cost, problem.value, problem.weight

    def visit(k: int, spent: int, worth: int, heft: int) -> bool:
        nonlocal walked
        if k == len(order):
            options.append((tuple(sorted(picked)), spent, worth, heft))
            return True
        i = order[k]
        for form in forms_of[i] if i in required else (None, *forms_of[i]):
            walked += 1
            if walked > ENUMERATED:
                return False
            if not fits(i, form):
                continue
            admitted[i] = form is not None
            if form is None:
                going = visit(k + 1, spent, worth, heft)
            else:
                picked.append(form)
                for d in needs[form]:
                    needing[d] += 1
                going = visit(k + 1, spent + cost[form], worth + value[form], heft + weight[form])
                picked.pop()
                for d in needs[form]:
                    needing[d] -= 1
            del admitted[i]
            if not going:
                return False
        return True

    if not visit(0, 0, 0, 0):
        return None
    if undominated:
        options = _undominated(options)
    return None if len(options) > OPTION_LIMIT else options


def _undominated(options: list[_Option]) -> list[_Option]:
    """``options`` without those another option beats: one that costs no more and is
    better under the order (more value, else less cost, else less weight), as the
    frontier drops a state. Any selection with a beaten option is beaten by the same
    selection with the other, so no optimum holds it; options alike on all three are
    kept (the program flags the tie). "None" stays first when it is there."""
    ranked = sorted(options, key=lambda o: (o[1], -o[2], o[3]))
    kept: list[_Option] = []
    best = None
    for option in ranked:
        if best is None or option[2] > best or (kept and option[1:] == kept[-1][1:]):
            kept.append(option)
            best = option[2] if best is None else max(best, option[2])
    kept.sort(key=lambda o: (o[0] != (), o[0]))
    return kept


def _option(problem: Problem, forms: Iterable[int]) -> _Option:
    chosen = tuple(sorted(forms))
    return (
        chosen,
        selection_cost(problem, chosen),
        selection_value(problem, chosen),
        sum(problem.weight[f] for f in chosen),
    )


def reaching_items(problem: Problem, deadline: Deadline = NEVER) -> list[list[_Option]] | None:
    """Every item's options, none dropped (``cheapest_reaching``'s forced and banned
    forms break the dominance argument), or None as ``_items`` hands back."""
    return _items(problem, deadline, undominated=False)


def cheapest_reaching(
    problem: Problem,
    floor: int,
    budget: int,
    *,
    forced: frozenset[int] = frozenset(),
    banned: frozenset[int] = frozenset(),
    state_limit: int = STATE_LIMIT,
    deadline: Deadline = NEVER,
    items: list[list[_Option]] | None = None,
) -> SolveOutcome | None:
    """The cheapest legal selection of ``problem`` worth at least ``floor`` within
    ``budget``, holding every form of ``forced`` and none of ``banned``; among the
    cheapest the most valuable, then the lightest. OPTIMAL with it, INFEASIBLE when
    there is none, or None as ``solve_knapsack`` hands back (a tie on cost, value and
    weight included). The same frontier: a state that costs no more and is worth no
    less than another is at least as good for this order too. ``items``: the
    problem's ``reaching_items``, when a caller asks several times of one problem."""
    if deadline.passed:
        return None
    if items is None:
        items = reaching_items(problem, deadline)
    if items is None:
        return None
    narrowed = []
    for options in items:
        held = forced.intersection(f for o in options for f in o[0])
        kept = [o for o in options if held.issubset(o[0]) and not banned.intersection(o[0])]
        if len(kept) > 1 or (kept and kept[0][0]):
            narrowed.append(kept)
        elif not kept:
            return SolveOutcome(SolveStatus.INFEASIBLE)
    # an item left with one option is taken whole: its sums are a constant, not a step
    taken = [f for options in narrowed if len(options) == 1 for f in options[0][0]]
    base_cost = sum(options[0][1] for options in narrowed if len(options) == 1)
    base_value = sum(options[0][2] for options in narrowed if len(options) == 1)
    free = [options for options in narrowed if len(options) > 1]
    if base_cost > budget:
        return SolveOutcome(SolveStatus.INFEASIBLE)
    if not free:
        status = SolveStatus.OPTIMAL if base_value >= floor else SolveStatus.INFEASIBLE
        return SolveOutcome(status, tuple(sorted(taken)), bound=base_value)
    found = _solve(free, budget - base_cost, state_limit, deadline, floor=floor - base_value)
    if found is None or found.status is not SolveStatus.OPTIMAL:
        return found
    assert found.bound is not None
    selection = tuple(sorted((*found.selection, *taken)))
    return SolveOutcome(SolveStatus.OPTIMAL, selection, bound=found.bound + base_value)


def _solve(
    items: list[list[_Option]],
    budget: int,
    state_limit: int,
    deadline: Deadline,
    floor: int | None = None,
    worth: int | None = None,
) -> SolveOutcome | None:
    """With ``floor`` None the most valuable state of the last frontier (INFEASIBLE when
    it is worth less than ``worth``: a state that cannot reach that is dropped), else
    the cheapest worth at least ``floor`` (and a state that cannot reach it is dropped)."""
    # required items first (a lower bound is a legal selection only once they are
    # placed), then the most valuable per unit of cost: good states come early
    must = [options[0][0] != () for options in items]
    order = sorted(range(len(items)), key=lambda k: (not must[k], -_density(items[k]), k))
    items = [items[k] for k in order]
    must = [must[k] for k in order]
    placed = sum(must)
    multipliers, gains = _multipliers(items, budget)
    # what the items from k on can add at most beyond each multiplier x the room they
    # use, and the least the required ones among them cost
    after = np.zeros((len(multipliers), len(items) + 1))
    after[:, :-1] = np.cumsum(gains[:, ::-1], axis=1)[:, ::-1]
    least = [
        min(option[1] for option in options) if m else 0
        for options, m in zip(items, must, strict=True)
    ]
    reserve = np.zeros(len(items) + 1, dtype=np.int64)
    reserve[:-1] = np.cumsum(least[::-1])[::-1]
    scale = (
        float(multipliers.max()) * budget
        + float(np.abs(after[:, 0]).max())
        + sum(max(option[2] for option in options) for options in items)
    )
    margin = 1e-9 * scale + 1e-6
    # every state's value is below ``spread``
    spread = sum(max(option[2] for option in options) for options in items) + 1
    if (budget + 1) * spread >= 2**62:
        spread = 0  # cost x spread would overflow: states are ranked on three keys
    # the frontier: each state's cost, value, weight and whether it is a tie
    cost = np.zeros(1, dtype=np.int64)
    value = np.zeros(1, dtype=np.int64)
    weight = np.zeros(1, dtype=np.int64)
    tied = np.zeros(1, dtype=bool)
    # the value of a legal selection: a greedy one at first, then the frontier's best
    # (or the floor a selection must reach)
    best_known = _greedy(items, least, budget) if floor is None else float(floor)
    if worth is not None:
        best_known = max(best_known, float(worth))
    if floor is not None:
        # what reaching the floor costs at least, from each item on: for any mu >= 0 a
        # completion worth d costs at least mu d + the sum of each item's least
        # (cost - mu x value) (0 for "none"); and the least cost of a state worth it
        rates = np.array([1.0 / m for m in multipliers if m > 0] or [0.0])
        dues = _dues(items, must, rates)
        due_after = np.zeros((len(rates), len(items) + 1))
        due_after[:, :-1] = np.cumsum(dues[:, ::-1], axis=1)[:, ::-1]
        cheapest = np.inf
    steps: list[tuple[Any, Any]] = []  # per item, each state's parent state and option
    walked = 0
    for k, options in enumerate(items):
        if deadline.passed:
            return None
        walked += len(cost) * len(options)
        if walked > state_limit:
            return None
        offered = np.array([option[1:] for option in options], dtype=np.int64)
        grid = cost[None, :] + offered[:, 0:1]
        where = np.flatnonzero(grid <= budget - int(reserve[k + 1]))
        if not len(where):
            return SolveOutcome(SolveStatus.INFEASIBLE)
        choice, parent = np.divmod(where, len(cost))
        new_cost = grid.ravel()[where]
        new_value = value[parent] + offered[choice, 1]
        if np.isfinite(best_known):
            room = budget - new_cost
            reach = new_value + np.min(
                multipliers[:, None] * room[None, :] + after[:, k + 1 : k + 2], axis=0
            )
            hopeful = np.flatnonzero(reach + margin >= best_known)
            choice, parent = choice[hopeful], parent[hopeful]
            new_cost, new_value = new_cost[hopeful], new_value[hopeful]
            if not len(new_cost):
                return SolveOutcome(SolveStatus.INFEASIBLE)  # nothing reaches the floor
        if floor is not None and np.isfinite(cheapest):
            short = floor - new_value
            due = np.max(rates[:, None] * short[None, :] + due_after[:, k + 1 : k + 2], axis=0)
            hopeful = np.flatnonzero(new_cost + np.maximum(due, 0.0) <= cheapest + margin)
            choice, parent = choice[hopeful], parent[hopeful]
            new_cost, new_value = new_cost[hopeful], new_value[hopeful]
        new_weight = weight[parent] + offered[choice, 2]
        rank = _rank(new_cost, new_value, new_weight, spread)
        new_cost, new_value, new_weight = new_cost[rank], new_value[rank], new_weight[rank]
        parent, choice = parent[rank], choice[rank]
        new_tied = tied[parent]
        # kept: worth more than every state before it (none cheaper, or as cheap and
        # better, is as valuable)
        before = np.empty(len(new_value), dtype=np.int64)
        before[0] = np.iinfo(np.int64).min
        np.maximum.accumulate(new_value[:-1], out=before[1:])
        kept = np.flatnonzero(new_value > before)
        # a state alike on all three to the one before it: two selections, one state
        alike = np.zeros(len(new_value), dtype=bool)
        alike[1:] = (new_cost[1:] == new_cost[:-1]) & (new_value[1:] == new_value[:-1])
        if alike.any():
            alike[1:] &= new_weight[1:] == new_weight[:-1]
            head = np.maximum.accumulate(np.where(alike, 0, np.arange(len(alike))))
            new_tied[head[alike]] = True
        cost, value, weight = new_cost[kept], new_value[kept], new_weight[kept]
        tied = new_tied[kept]
        steps.append((parent[kept], choice[kept]))
        if k + 1 >= placed:
            # every required item is placed: each state, with nothing more, is legal
            if floor is None:
                best_known = max(best_known, float(value[-1]))
            else:
                reaching = np.flatnonzero(value >= floor)
                if len(reaching):
                    cheapest = min(cheapest, float(cost[reaching[0]]))
    if floor is None:
        # the last state is the most valuable, the cheapest of those and the lightest
        state = len(cost) - 1
        if worth is not None and value[state] < worth:
            return SolveOutcome(SolveStatus.INFEASIBLE)
    else:
        # the first state worth the floor is the cheapest that is, the most valuable
        # and lightest of those
        reaching = np.flatnonzero(value >= floor)
        if not len(reaching):
            return SolveOutcome(SolveStatus.INFEASIBLE)
        state = int(reaching[0])
    if tied[state]:
        return None
    best = int(value[state])
    selection: list[int] = []
    for k in range(len(items) - 1, -1, -1):
        parent, choice = steps[k]
        selection.extend(items[k][int(choice[state])][0])
        state = int(parent[state])
    return SolveOutcome(SolveStatus.OPTIMAL, tuple(sorted(selection)), bound=best)


def _rank(cost: Any, value: Any, weight: Any, spread: int) -> Any:
    """The order of states by cost, then most value, then least weight: one integer key
    (cost x spread - value; each option's states are already in its order, so a stable
    sort merges runs) unless two states share cost and value, or ``spread`` is 0."""
    if spread:
        rank = np.argsort(cost * spread - value, kind="stable")
        ordered_cost, ordered_value = cost[rank], value[rank]
        same = (ordered_cost[1:] == ordered_cost[:-1]) & (ordered_value[1:] == ordered_value[:-1])
        if not same.any():
            return rank
    return np.lexsort((weight, -value, cost))


def _dues(items: list[list[_Option]], must: list[bool], rates: Any) -> Any:
    """Per rate mu and item, the least (cost - mu x value) of its options ("none": 0)."""
    dues = np.zeros((len(rates), len(items)))
    for k, options in enumerate(items):
        cost = np.array([o[1] for o in options], dtype=np.float64)
        value = np.array([o[2] for o in options], dtype=np.float64)
        dues[:, k] = (cost[None, :] - rates[:, None] * value[None, :]).min(axis=1)
        if not must[k]:
            dues[:, k] = np.minimum(dues[:, k], 0.0)
    return dues


def _greedy(items: list[list[_Option]], least: list[int], budget: int) -> float:
    """The value of a legal selection, item by item in the program's order: the most
    valuable option that fits beside the cheapest of every required item still to
    come (-inf when the required items alone do not fit)."""
    room = budget - sum(least)
    if room < 0:
        return -np.inf
    total = 0
    for options, reserved in zip(items, least, strict=True):
        room += reserved
        fitting = [(gain, -cost) for _, cost, gain, _ in options if cost <= room]
        gain, cost = max(fitting) if fitting else (0, 0)
        total += gain
        room += cost
    return float(total)


def _density(options: list[_Option]) -> float:
    return max(
        (gain / cost if cost else (np.inf if gain > 0 else 0.0)) for _, cost, gain, _ in options
    )


def _multipliers(items: list[list[_Option]], budget: int) -> tuple[Any, Any]:
    """Multipliers m >= 0 on the budget and each item's best (value - m x cost) at each
    ("none" gives 0): whatever m, a selection of the items within a room r is worth at
    most m x r + the sum of those gains. Bisection on the slope (the budget less what
    each item's best option costs) looks for the least such bound of the whole
    problem; a state with less room left is bounded better by a larger multiplier, so
    a few multiples of that one are kept too."""
    sizes = [len(options) for options in items]
    starts = np.zeros(len(items), dtype=np.int64)
    starts[1:] = np.cumsum(sizes)[:-1]
    cost = np.array([o[1] for options in items for o in options], dtype=np.float64)
    value = np.array([o[2] for options in items for o in options], dtype=np.float64)
    item = np.repeat(np.arange(len(items)), sizes)
    chosen, lowest = 0.0, float(np.maximum.reduceat(value, starts).sum())
    low, high = 0.0, float((value / np.maximum(cost, 1.0)).max(initial=0.0)) + 1.0
    for _ in range(_STEPS):
        middle = (low + high) / 2
        gain = value - middle * cost
        best = np.maximum.reduceat(gain, starts)
        bound = middle * budget + float(best.sum())
        if bound < lowest:
            chosen, lowest = middle, bound
        taken = gain >= best[item]
        spent = np.zeros(len(items))
        np.maximum.at(spent, item[taken], cost[taken])
        if spent.sum() > budget:
            low = middle
        else:
            high = middle
    multipliers = chosen * np.array(_MULTIPLES)
    gains = np.maximum.reduceat(
        value[None, :] - multipliers[:, None] * cost[None, :], starts, axis=1
    )
    return multipliers, gains
