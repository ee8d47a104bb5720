"""A proven lower bound on what any policy pays for a whole session, at each value.

Input: ``Offers`` (every form a session ever offers: its tokens, and per call whether it
is offered, whether it must be sent, its value; each call's time and budget) and the
provider's ``CacheRules``.
Output: ``LimitBound``: pairs (lambda, base) such that no sequence of legal selections
whose value sums to V can cost less than ``base + lambda x V`` in the simulator
(``bound(V)`` is the best of them), found by ``lower_bound``.

Why it is a bound. Every token the simulator reads at call t belongs to a block that
an earlier call sent, within the entry's lifetime of t (an entry is written or
refreshed only by a call that sends its whole prefix). So a form's tokens cost, over
the calls that send it, at least what a *chain* costs: its first send in a chain at
the write rate of the chain's TTL (or at the input price, uncached), each later send
of the chain at the read rate, a chain continuing only while the gap since its last
send is below the TTL (a read refreshes an entry to the longer of its own lifetime and
the breakpoint's, as the simulator does, so a chain may move to a longer lifetime at
a read). Dropping everything else (the order of the prefix, minimum lengths, the
breakpoint limit and lookback, the 128-token step, dependencies) only lowers the
price: the relaxed problem's optimum is a lower bound. Its budgets (one per call), one
form per identity, the coupled identities (a tool call and its result) and the value
target are relaxed with Lagrange multipliers; for each choice of them the relaxed
problem falls apart by form, and each form's best chain plan is a shortest path over
the calls (``_plans``), so ``base + lambda V`` bounds every sequence of value V (weak
duality), whatever the other multipliers are. Subgradient steps on them tighten it.

Cost: per evaluation linear in calls x forms x TTLs (each TTL's sliding window is a
two-stack queue of whole rows); ``lower_bound`` runs a fixed number of them.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..facts import CacheMode, CacheRules

__all__ = ["LimitBound", "Offers", "chain_rates", "lower_bound"]

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Offers:
    """Every form a session offers. Arrays are (calls, forms) unless named per form."""

    times: tuple[float, ...]
    budgets: tuple[int, ...]
    # per form
    ids: tuple[str, ...]
    tokens: npt.NDArray[np.int64]
    offered: npt.NDArray[np.bool_]
    # must be sent at that call (a required identity with this one form)
    required: npt.NDArray[np.bool_]
    value: npt.NDArray[np.int64]
    # per form: its identity's index (None: each form its own identity); at most one
    # form of an identity is sent at a call, a constraint the bound prices too
    identity: npt.NDArray[np.int64] | None = None
    # coupled identities (a tool call and its result): all admitted at a call or none
    groups: tuple[tuple[int, ...], ...] = ()

    @property
    def calls(self) -> int:
        return len(self.times)

    def forced(self) -> npt.NDArray[np.bool_]:
        """The sends the bound enforces: a required form from the first call offering
        it on, while it stays required (anything else required is relaxed)."""
        forced = np.zeros_like(self.required)
        for t in range(self.calls):
            before = forced[t - 1] if t else np.zeros(len(self.ids), dtype=bool)
            first = ~self.offered[:t].any(axis=0) if t else np.ones(len(self.ids), dtype=bool)
            forced[t] = self.required[t] & self.offered[t] & (before | first)
        return forced


@dataclass(frozen=True, slots=True)
class LimitBound:
    """Valid (lambda, base) pairs: every plan of value V costs >= base + lambda V."""

    pairs: tuple[tuple[float, float], ...]
    # the most value any plan can have (each call's forms, every one of them)
    most_value: int

    def bound(self, value: float) -> float:
        return max([0.0, *(base + lam * value for lam, base in self.pairs)])


def chain_rates(rules: CacheRules) -> tuple[tuple[tuple[int, float], ...], float, bool]:
    """The chains the rules allow: (TTL seconds, rate of the send that opens one) for
    each lifetime a policy can use, the read rate, and whether an uncached send (at the
    input price) is cheaper than opening a chain."""
    if rules.bills_writes:
        ttls = rules.ttls if rules.mode is not CacheMode.AUTOMATIC else rules.ttls[:1]
        opens = tuple((t.seconds, t.write) for t in ttls)
    else:
        # automatic caching without a write fee: every send opens an entry at the input price
        opens = ((rules.default_ttl.seconds, 1.0),)
    return opens, rules.read, min(rate for _ttl, rate in opens) > 1.0


class _Window:
    """The minimum over a sliding window of rows (the same window for every form): a
    queue of two stacks, amortised O(1) rows of work per push or pop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.front: list[tuple[Floats, npt.NDArray[np.int32]]] = []
        self.back: list[tuple[Floats, int]] = []
        self.back_min: Floats | None = None
        self.back_arg: npt.NDArray[np.int32] | None = None
        self.head = 0
        self.pushed = 0

    def push(self, row: Floats) -> None:
        index = self.pushed
        self.pushed += 1
        self.back.append((row, index))
        if self.back_min is None or self.back_arg is None:
            self.back_min, self.back_arg = row.copy(), np.full(self.size, index, np.int32)
        else:
            better = row < self.back_min
            self.back_min = np.where(better, row, self.back_min)
            self.back_arg = np.where(better, index, self.back_arg)

    def pop_before(self, start: int) -> None:
        while self.head < start and self.head < self.pushed:
            if not self.front:
                low: Floats | None = None
                arg: npt.NDArray[np.int32] | None = None
                for row, index in reversed(self.back):
                    if low is None or arg is None:
                        low, arg = row.copy(), np.full(self.size, index, np.int32)
                    else:
                        better = row <= low
                        low = np.where(better, row, low)
                        arg = np.where(better, index, arg)
                    self.front.append((low, arg))
                self.back, self.back_min, self.back_arg = [], None, None
            self.front.pop()
            self.head += 1

    def least(self) -> tuple[Floats, npt.NDArray[np.int32]]:
        inf = np.full(self.size, np.inf)
        low, arg = self.front[-1] if self.front else (inf, np.full(self.size, -1, np.int32))
        if self.back_min is not None and self.back_arg is not None:
            better = self.back_min < low
            low = np.where(better, self.back_min, low)
            arg = np.where(better, self.back_arg, arg)
        return low, arg


def _plans(
    offers: Offers,
    rules: CacheRules,
    lam: float,
    mu: Floats,
    forced: npt.NDArray[np.bool_],
    extra: Floats | None = None,
) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """Each form's cheapest chain plan under (lambda, mu): its Lagrangian cost (chain
    price + mu_t x tokens - lambda x value + ``extra[t]``, summed over its sends),
    and the sends."""
    opens, read, plain = chain_rates(rules)
    calls, n = offers.offered.shape
    tokens = offers.tokens.astype(np.float64)
    states = len(opens) + (1 if plain else 0)
    # per call and state: the previous send (call, state) of the best plan ending there
    prev_call = np.full((calls, states, n), -1, np.int32)
    prev_state = np.zeros((calls, states, n), np.int8)
    windows = [_Window(n) for _ in opens]
    rows: list[list[Floats]] = [[] for _ in opens]
    best = np.zeros(n)  # the best plan over the calls before t (0: no send yet)
    best_call = np.full(n, -1, np.int32)
    best_state = np.zeros(n, np.int8)
    times = offers.times
    every = np.arange(n)
    for t in range(calls):
        here = offers.offered[t]
        cost = mu[t] * tokens - lam * offers.value[t]
        if extra is not None:
            cost = cost + extra[t]
        base = np.where(here, cost, np.inf)
        # per lifetime: the best live plan before t still alive at t (the window's least)
        carried_from: list[tuple[Floats, npt.NDArray[np.int32]]] = []
        for k, (ttl, _rate) in enumerate(opens):
            window = windows[k]
            window.pop_before(bisect.bisect_right(times, times[t] - ttl, 0, t))
            low, arg = window.least()
            if t and ttl > times[t] - times[t - 1]:
                # a form sent at every call so far continues only from the call before
                held = forced[t - 1]
                low = np.where(held, rows[k][t - 1], low)
                arg = np.where(held, t - 1, arg)
            elif t:
                low = np.where(forced[t - 1], np.inf, low)
            carried_from.append((low, arg))
        values: list[Floats] = []
        for k, (ttl, rate) in enumerate(opens):
            # a read refreshes an entry to the longer of its lifetime and the breakpoint's,
            # so a live plan of any lifetime up to this one carries into this one
            low, arg, came = np.full(n, np.inf), np.full(n, -1, np.int32), np.zeros(n, np.int8)
            for j, (ttl_j, _rate_j) in enumerate(opens):
                if ttl_j <= ttl:
                    better = carried_from[j][0] < low
                    low = np.where(better, carried_from[j][0], low)
                    arg = np.where(better, carried_from[j][1], arg)
                    came = np.where(better, j, came).astype(np.int8)
            opened = best + rate * tokens
            carried = low + read * tokens
            take = carried < opened
            value = base + np.where(take, carried, opened)
            prev_call[t, k] = np.where(take, arg, best_call)
            prev_state[t, k] = np.where(take, came, best_state)
            values.append(value)
        if plain:
            values.append(base + best + tokens)
            prev_call[t, states - 1] = best_call
            prev_state[t, states - 1] = best_state
        for k, window in enumerate(windows):
            window.push(values[k])
            rows[k].append(values[k])
        stacked = np.stack(values)
        state = np.argmin(stacked, axis=0).astype(np.int8)
        low_here = stacked[state, every]
        keep = ~forced[t] & (best <= low_here)
        best = np.where(keep, best, low_here)
        best_call = np.where(keep, best_call, t).astype(np.int32)
        best_state = np.where(keep, best_state, state).astype(np.int8)
    sends = np.zeros((calls, n), dtype=bool)
    at, st = best_call.copy(), best_state.copy()
    while (alive := at >= 0).any():
        forms = every[alive]
        sends[at[alive], forms] = True
        at_alive, st_alive = at[alive], st[alive]
        at[alive] = prev_call[at_alive, st_alive, forms]
        st[alive] = prev_state[at_alive, st_alive, forms]
    return best, sends


def _marginal_prices(offers: Offers, lam: float, read: float) -> Floats:
    """A first price per token for each call's budget: the value density (net of a
    read) of the form at which the call's best forms by density fill the budget."""
    tokens = offers.tokens.astype(np.float64)
    mu = np.zeros(offers.calls)
    for t in range(offers.calls):
        here = np.flatnonzero(offers.offered[t])
        if not len(here):
            continue
        density = lam * offers.value[t, here] / np.maximum(tokens[here], 1.0) - read
        order = np.argsort(-density)
        filled = np.cumsum(tokens[here][order])
        cut = int(np.searchsorted(filled, offers.budgets[t], side="right"))
        if cut < len(order):
            mu[t] = max(0.0, float(density[order[cut]]))
    return mu


def lower_bound(
    offers: Offers,
    rules: CacheRules,
    *,
    lambdas: tuple[float, ...] | None = None,
    steps: int = 20,
) -> LimitBound:
    """Valid (lambda, base) pairs over a grid of lambdas, each with ``steps``
    subgradient steps on the other multipliers (every step's pair is valid): per call,
    the budget's (mu >= 0); per call and identity of several forms, at most one sent
    (nu >= 0); per call and coupled pair of identities, both admitted or neither (rho,
    of either sign: an equality)."""
    forced = offers.forced()
    tokens = offers.tokens.astype(np.float64)
    budgets = np.array(offers.budgets, dtype=np.float64)
    if lambdas is None:
        lambdas = (0.0, *(float(x) for x in np.geomspace(0.01, 5.0, 10)))
    _opens, read, _plain = chain_rates(rules)
    identity = offers.identity
    if identity is None:
        identity = np.arange(len(offers.ids), dtype=np.int64)
    identities = int(identity.max()) + 1 if len(identity) else 0
    shared = np.bincount(identity, minlength=identities) > 1
    first = np.array([g[0] for g in offers.groups for _ in g[1:]], dtype=np.int64)
    other = np.array([o for g in offers.groups for o in g[1:]], dtype=np.int64)
    positive = offers.value[offers.value > 0]
    scale = float(positive.mean()) if positive.size else 1.0
    pairs: list[tuple[float, float]] = []
    calls = offers.calls
    for lam in lambdas:
        mu = _marginal_prices(offers, lam, read)
        nu = np.zeros((calls, identities))
        rho = np.zeros((calls, len(first)))
        for step in range(steps):
            # each identity's price at each call, then each form's
            per_identity = nu.copy()
            if len(first):
                np.add.at(per_identity.T, first, rho.T)
                np.subtract.at(per_identity.T, other, rho.T)
            best, sends = _plans(offers, rules, lam, mu, forced, per_identity[:, identity])
            pairs.append((lam, float(best.sum() - mu @ budgets - nu.sum())))
            admitted = np.zeros((identities, calls))
            np.add.at(admitted, identity, sends.T.astype(np.float64))
            admitted = admitted.T
            over = np.clip((sends.astype(np.float64) @ tokens - budgets) / budgets, -1.0, 1.0)
            doubled = np.where(shared, np.maximum(0.0, admitted - 1.0), 0.0)
            apart = admitted[:, first] - admitted[:, other] if len(first) else rho
            if not (over > 0).any() and not mu.any() and not doubled.any() and not apart.any():
                break
            # multiplicative steps keep each price at its own scale; a price at 0
            # restarts from a small share of the call's marginal price
            rate = 0.7 / (1.0 + step) ** 0.5
            mu = np.where(mu > 0, mu * np.exp(rate * over), np.where(over > 0, 0.05 * lam, 0.0))
            step_value = rate * max(lam, 0.01) * scale
            nu = np.maximum(0.0, nu + step_value * (doubled - 0.5 * (nu > 0)))
            if len(first):
                rho = rho + step_value * apart
    most = int(np.where(offers.offered, offers.value, 0).sum())
    return LimitBound(tuple(pairs), most)
