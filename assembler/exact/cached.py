"""The cache-aware decision: the cheapest bundle to send within the tolerance (section 6b).

Input: a validated ``Request`` with a ``cache`` section, its ``GateReport``, the
problem and the cache-blind optimum (``decide_exact`` found them), a backend, the
deadline and a worker count.
Output: a ``Choice`` for the cache-aware order, with its ``CacheOutcome``.

The order, from ``models/README.md`` section 6b: V* is the cache-blind optimum's value
at the budget B and F = ceil((1 - tolerance) V*) the value floor. The rewrite budget is
B' = B - ceil(headroom x B) when some legal selection of cost at most B' reaches F, else
B. A legal selection is feasible when its value reaches F and it either keeps every
previous block or costs at most the rewrite budget. Among the feasible: the least price
(``prefix.Prefix.price``), then section 6's order (most value, least cost, least weight,
canonical). The cache-blind optimum is feasible whenever B' is not taken, and a selection
reaching F within B' exists when it is, so a request with a legal bundle always gets
one; refusals are the cache-blind decision's.

Each backend solves the last step its own way (``Backend.solve_cached``): CP-SAT with
the kept prefix as a monotone chain of Booleans (``cpsat.CachedSearch``), the
brute-force oracle by enumeration. This module imports no solver.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from ..cache.prefix import Prefix, build_prefix
from ..deadline import Deadline
from ..model.cache import CacheOutcome, CacheTerms
from ..model.types import Request
from .backend import Ask, Backend, SolveOutcome, SolveStatus, selection_cost, selection_value
from .cheapest import Question, decision, program
from .closure import Problem
from .incumbent import is_legal

__all__ = [
    "CachedBackend",
    "decide_cached",
    "feasible",
    "settled_by_bound",
    "settled_by_program",
]


class CachedBackend(Protocol):
    def solve_cached(
        self, problem: Problem, prefix: Prefix, terms: CacheTerms, ask: Ask
    ) -> SolveOutcome:
        """The least-price feasible selection, then section 6's order; OPTIMAL when
        proven (``ask``: its deadline, workers and hint). ``cost_floor`` carries a
        proven lower bound on the price when stopped."""
        ...


def decide_cached(
    request: Request,
    problem: Problem,
    blind: SolveOutcome,
    backend: Backend,
    deadline: Deadline,
    workers: int,
) -> tuple[SolveOutcome, CacheOutcome]:
    """The cache-aware answer, from the cache-blind optimum ``blind`` of ``problem``.

    A cache-blind answer the time limit left unproven may be beaten in value by what the
    cache-aware search finds: that selection is legal within the budget, so it is the
    better cache-blind answer known, and the order's floors are derived again from it
    (the value only grows, so this ends)."""
    prefix = build_prefix(request, problem.form_ids, problem.cost)
    assert prefix is not None
    solve_cached = getattr(backend, "solve_cached", None)
    if solve_cached is None:
        raise TypeError(f"the {backend.name} backend has no cache-aware search")
    # the knapsack program's answers are shared by the rewrite budget's test and the
    # backend's ``settled_by_program`` on this problem, for this decision only
    with decision():
        return _decided(request, problem, prefix, blind, backend, deadline, workers)


def _decided(
    request: Request,
    problem: Problem,
    prefix: Prefix,
    blind: SolveOutcome,
    backend: Backend,
    deadline: Deadline,
    workers: int,
) -> tuple[SolveOutcome, CacheOutcome]:
    cache = request.cache
    assert cache is not None and problem.budget is not None
    solve_cached = backend.solve_cached  # type: ignore[attr-defined]
    while True:
        blind_value = selection_value(problem, blind.selection)
        floor = cache.value_floor(blind_value)
        rewrite_budget = cache.rewrite_budget(problem.budget)
        rewrite_hint: tuple[int, ...] | None = None
        if selection_cost(problem, blind.selection) > rewrite_budget:
            # the headroom holds only where the tolerance allows it: the best value
            # within it must reach the floor, else a rewrite may fill the whole budget
            rewrite_hint = _reaching(problem, rewrite_budget, floor, backend, deadline, workers)
            if rewrite_hint is None:
                rewrite_budget = problem.budget
        terms = CacheTerms(
            append_floor=floor if prefix.complete else None,
            rewrite_budget=rewrite_budget,
            rewrite_floor=floor,
        )
        hint = blind.selection if rewrite_hint is None else rewrite_hint
        outcome: SolveOutcome = solve_cached(
            problem, prefix, terms, Ask(deadline, workers, hint=hint)
        )
        if outcome.status is SolveStatus.UNKNOWN or not feasible(
            problem, prefix, terms, outcome.selection
        ):
            # nothing feasible found in time: the cache-blind answer, legal, unproven here
            outcome = SolveOutcome(
                SolveStatus.FEASIBLE, blind.selection, cost_floor=outcome.cost_floor
            )
        if selection_value(problem, outcome.selection) <= blind_value:
            proven = None if outcome.status is SolveStatus.OPTIMAL else outcome.cost_floor
            blind_price = prefix.price(blind.selection).price
            report = prefix.outcome(outcome.selection, terms, (blind_value, blind_price), proven)
            return outcome, report
        blind = SolveOutcome(SolveStatus.FEASIBLE, outcome.selection)


def _reaching(
    whole: Problem, budget: int, floor: int, backend: Backend, deadline: Deadline, workers: int
) -> tuple[int, ...] | None:
    """A legal selection of ``whole`` within ``budget`` worth ``floor``, or None when
    none is proven to exist. On a knapsack-shaped problem the program's cheapest
    selection worth the floor within the budget answers both ways (and is the class of
    nothing read that ``settled_by_program`` asks for next: ``cheapest.program`` keeps
    the answer). Else the budget row's Lagrangian bound says no at once below the floor,
    and the incumbent grown from it says yes at once when it reaches it; only between
    the two does the backend search for the most valuable selection."""
    from .incumbent import build_incumbent
    from .relaxation import budget_relaxation

    knapsack = program(whole)
    if knapsack is not None:
        cheapest = knapsack.cheapest(knapsack.question(floor, budget), deadline)
        if cheapest is not None and cheapest.status is SolveStatus.INFEASIBLE:
            return None
        # (the program is blind to the format's rules: a selection breaking one is no
        # answer, and the search below decides)
        if (
            cheapest is not None
            and cheapest.status is SolveStatus.OPTIMAL
            and is_legal(whole, cheapest.selection)
        ):
            return cheapest.selection
    problem = replace(whole, budget=budget)

    every = list(range(problem.size))
    bound, preference = budget_relaxation(problem, every)
    if bound < floor:
        return None
    grown = build_incumbent(problem, every, preference, deadline=deadline)
    # (the greedy is blind to the format's rules: its selection must keep them)
    if grown is not None and selection_value(problem, grown) >= floor and is_legal(problem, grown):
        return grown
    best = backend.solve(problem, Ask(deadline, workers, value_only=True))
    if best.status is SolveStatus.OPTIMAL and selection_value(problem, best.selection) >= floor:
        return best.selection
    return None


# the most combinations of the free forms the bound's enumeration walks
ENUMERATED = 1 << 12


def settled_by_program(
    problem: Problem, prefix: Prefix, terms: CacheTerms, deadline: Deadline
) -> SolveOutcome | None:
    """The optimum of a knapsack-shaped problem, by the knapsack program
    (``knapsack.cheapest_reaching``) once per class of the entry read; None when the
    problem is not of that shape, or a class hands back (a tie, too many states, the
    deadline).

    A selection keeping the run through entry ``e`` reads R_e tokens at least, so its
    price is at most ``read R_e + w (T - R_e)`` (w the write price once the tokens reach
    the provider's minimum, else the input price), exactly that when ``e`` is the last
    entry it keeps; that bound grows with T alone. The entries are the breakpoints' (a
    breakpoint long enough), or with automatic caching each block where the prefix read
    reaches its next step. So in each class (nothing read, through each entry, and
    appending) the cheapest feasible selection, then the most valuable and lightest, is
    the class's best; the optimum is the best of those under the true order (price,
    value, cost, weight), and a tie between two selections there is handed back (only
    the canonical rule separates them). The classes are searched the most read first;
    a class whose price at least (its least tokens, its read at most) exceeds the best
    found is not, and with a bound on the tokens of every class, neither is any class
    reading less."""
    cache = prefix.cache
    pricing = cache.pricing
    if any(problem.needs) or problem.budget is None:
        return None
    if cache.writes and pricing.write < pricing.input:
        return None  # crossing the minimum would lower the price: not monotone in T
    knapsack = program(problem)
    if knapsack is None:
        return None
    # per form its place in the run and the first block its selection forbids keeping
    place = np.full(problem.size, prefix.size + 1, dtype=np.int64)
    for j, f in enumerate(prefix.forms):
        if f is not None:
            place[f] = j
    barrier = np.full(problem.size, prefix.size + 1, dtype=np.int64)
    if prefix.barriers:
        barrier[list(prefix.barriers)] = list(prefix.barriers.values())
    # the classes keeping the run through each entry, the most read first
    tops = [entry + 1 for entry in reversed(_entries(prefix))] + [0]
    a = min(pricing.write if cache.writes else pricing.input, pricing.input)

    def least_price(least: float, top: int) -> float:
        """The price at least of a selection of ``least`` item tokens keeping ``top``
        blocks (what it reads at most)."""
        least += prefix.instruction
        read = prefix.read(top)[0]
        return a * max(0.0, least - read) + pricing.read * min(least, read)

    def question(top: int, budget: int, floor: int) -> Question:
        return knapsack.question(floor, budget, place < top, barrier < top)

    best: list[tuple[tuple[int, int, int, int], tuple[int, ...]]] = []

    def search(top: int, budget: int, floor: int) -> bool:
        """The class's best among ``best``; False when the program hands back."""
        found = knapsack.cheapest(question(top, budget, floor), deadline)
        if found is None:
            return False
        if found.status is SolveStatus.OPTIMAL:
            selection = found.selection
            if not is_legal(problem, selection) or not feasible(problem, prefix, terms, selection):
                return False  # never: each class holds feasible selections only
            key = (
                prefix.price(selection).price,
                -selection_value(problem, selection),
                selection_cost(problem, selection),
                sum(problem.weight[f] for f in selection),
            )
            best.append((key, selection))
            best.sort()
        return True

    if terms.append_floor is not None and not search(
        prefix.size, problem.budget, terms.append_floor
    ):
        return None
    # every rewrite class reaches the rewrite floor: a bound on its tokens
    budget, floor = terms.rewrite_budget, terms.rewrite_floor
    every = max(_cheapest_with(problem, prefix, terms, 0),
                knapsack.bound(knapsack.question(floor, budget)))  # fmt: skip
    # The classes are nested (keeping more blocks holds and bans more forms), so over a
    # run of them the least tokens are the lowest one's and the most read the highest
    # one's: a run whose price at least by those exceeds the best found is not searched.
    # A run whose lowest class is empty is empty too.
    runs = [(0, len(tops) - 1)]
    while runs:
        high, low = runs.pop()
        limit = best[0][0][0] if best else math.inf
        if least_price(every, tops[high]) > limit:
            continue
        least = knapsack.bound(question(tops[low], budget, floor))
        if least == math.inf or least_price(math.ceil(least - 1e-6), tops[high]) > limit:
            continue
        if high == low:
            if not search(tops[high], budget, floor):
                return None
            continue
        middle = (high + low) // 2
        runs.append((middle + 1, low))
        runs.append((high, middle))
    if not best:
        return SolveOutcome(SolveStatus.INFEASIBLE)
    top_key, chosen = best[0]
    if any(key == top_key and other != chosen for key, other in best[1:]):
        return None
    return SolveOutcome(SolveStatus.OPTIMAL, chosen, bound=selection_value(problem, chosen))


def _entries(prefix: Prefix) -> tuple[int, ...]:
    """The blocks of the run whose entry can be read: the breakpoints' (long enough,
    alive), or with automatic caching each block where the read reaches its next step."""
    if prefix.cache.breakpoints > 0 or prefix.automatic_from is None:
        return prefix.entries
    out: list[int] = []
    last = 0
    for kept in range(prefix.automatic_from + 1, prefix.size + 1):
        read = prefix.read(kept)[0]
        if read > last:
            out.append(kept - 1)
            last = read
    return tuple(out)


def settled_by_bound(problem: Problem, prefix: Prefix, terms: CacheTerms) -> SolveOutcome | None:
    """The optimum, when a bound proves it keeps the run through one of its last two
    entries and the forms that leaves free are few enough to enumerate; None otherwise
    (the search decides). Only with explicit breakpoints, whose entries are few.

    The selections are split by the entry they read: those keeping through entry ``e``
    (and not the next) read R_e tokens and hold the run's forms through ``e``; their
    price is at least ``a (T - R_e) + read R_e``, ``a`` the lesser of the write and input
    multipliers, with T at least those forms' cost and what reaching the value floor
    from the rest costs (a fractional bound). When every such bound exceeds the best
    price among the selections keeping through the entry enumerated from, that one is
    the optimum."""
    cache = prefix.cache
    if not prefix.forms or not cache.alive or cache.breakpoints == 0 or not prefix.entries:
        return None
    entries = prefix.entries
    # enumerate from as deep an entry as the free forms allow (the last two classes when
    # they can: the one just below the top is the top's nearest rival), bound the rest
    best = None
    for depth in (2, 1):
        if len(entries) >= depth:
            best = _best_keeping(problem, prefix, terms, entries[-depth] + 1)
            if best is not None:
                break
    if best is None:
        return None
    price, selection = best
    a = min(cache.pricing.write if cache.writes else cache.pricing.input, cache.pricing.input)
    read = cache.pricing.read
    for below in (None, *entries[:-depth]):
        top = 0 if below is None else below + 1
        tokens = sum(prefix.tokens[:top])
        least = prefix.instruction + _cheapest_with(problem, prefix, terms, top)
        bound = a * max(0, least - tokens) + read * min(least, tokens)
        if bound <= price:
            return None
    return SolveOutcome(SolveStatus.OPTIMAL, selection, bound=selection_value(problem, selection))


def _cheapest_with(problem: Problem, prefix: Prefix, terms: CacheTerms, top: int) -> int:
    """A lower bound on the cost of a feasible selection keeping the first ``top``
    blocks of the run: their forms' cost, and reaching the value floor from the forms
    that leaves allowed, each identity giving up to its best value at its best value per
    cost (fractionally)."""
    forced = {f for f in prefix.forms[:top] if f is not None}
    taken = {problem.identity_of[f] for f in forced}
    banned = {f for f, barrier in prefix.barriers.items() if barrier < top}
    need = terms.rewrite_floor - sum(problem.value[f] for f in forced)
    spent = float(sum(problem.cost[f] for f in forced))
    best: dict[int, tuple[int, float]] = {}
    for f, identity in enumerate(problem.identity_of):
        value, cost = problem.value[f], problem.cost[f]
        if value <= 0 or identity in taken or f in banned:
            continue
        rate = float("inf") if cost == 0 else value / cost
        top_value, top_rate = best.get(identity, (0, 0.0))
        best[identity] = (max(top_value, value), max(top_rate, rate))
    for value, rate in sorted(best.values(), key=lambda vr: -vr[1]):
        if need <= 0:
            break
        take = min(value, need)
        spent += 0 if rate == float("inf") else take / rate
        need -= take
    if need > 0:
        return 1 << 62  # nothing feasible keeps these blocks
    return int(spent)  # rounded down: a bound


def _best_keeping(
    problem: Problem, prefix: Prefix, terms: CacheTerms, top: int
) -> tuple[int, tuple[int, ...]] | None:
    """The best feasible selection (least price, then section 6's order) among those
    keeping the first ``top`` blocks of the run, by enumerating the forms that leaves
    free; None when there are too many or none is feasible."""
    forced = {f for f in prefix.forms[:top] if f is not None}
    taken = {problem.identity_of[f] for f in forced}
    banned = {f for f, barrier in prefix.barriers.items() if barrier < top}
    options: dict[int, list[int | None]] = {}
    for f, identity in enumerate(problem.identity_of):
        if identity in taken or f in banned:
            continue
        options.setdefault(identity, [None]).append(f)
    required = set(problem.required)
    for identity in required - taken:
        if identity not in options:
            return None
        options[identity] = options[identity][1:]
    combinations = 1
    for choices in options.values():
        combinations *= len(choices)
        if combinations > ENUMERATED:
            return None
    base = tuple(sorted(forced))
    best: tuple[Any, tuple[int, ...]] | None = None
    for choice in itertools.product(*options.values()):
        selection = tuple(sorted((*base, *(f for f in choice if f is not None))))
        if not is_legal(problem, selection) or not feasible(problem, prefix, terms, selection):
            continue
        chosen = set(selection)
        key = (
            prefix.price(selection).price,
            -selection_value(problem, selection),
            selection_cost(problem, selection),
            sum(problem.weight[f] for f in selection),
            tuple(f in chosen for f in range(problem.size)),
        )
        if best is None or key < best[0]:
            best = (key, selection)
    return None if best is None else (best[0][0], best[1])


def feasible(
    problem: Problem, prefix: Prefix, terms: CacheTerms, selection: tuple[int, ...]
) -> bool:
    """Whether a legal ``selection`` is in the cache-aware order's feasible set."""
    value = selection_value(problem, selection)
    if (
        terms.append_floor is not None
        and value >= terms.append_floor
        and prefix.kept(selection) == prefix.size
    ):
        return True
    return (
        selection_cost(problem, selection) <= terms.rewrite_budget and value >= terms.rewrite_floor
    )
