"""The clairvoyant limit's lower bound against the simulator, on drawn small sessions.

The bound claims: no sequence of selections, rendered in any order with any
breakpoints of the provider's lifetimes, costs less in the simulator than the relaxed
chain price of its sends (``relaxed_price``), and none of value V costs less than
``bound(V)``. Both are checked against the simulator itself on drawn sessions: every
sequence of selections of a tiny session is enumerated, each rendered with drawn
orders and breakpoints, and priced by ``assembler.cache.simulate``.
"""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache import CacheBlock, CacheRules, Call, cache_rules, simulate
from assembler.cache.limit import Offers, chain_rates, lower_bound

RULES = {
    "anthropic": cache_rules("anthropic", "claude-sonnet-4-5"),
    "openai": cache_rules("openai", "gpt-5"),
    "gpt-5.6": cache_rules("openai", "gpt-5.6"),
}


@st.composite
def sessions(draw: st.DrawFn) -> tuple[Offers, str]:
    calls = draw(st.integers(1, 3))
    forms = draw(st.integers(1, 3))
    gaps = draw(st.lists(st.sampled_from([10.0, 200.0, 400.0, 2000.0, 4000.0]),
                         min_size=calls, max_size=calls))  # fmt: skip
    times = tuple(float(x) for x in np.cumsum([0.0, *gaps[1:]]))
    tokens = np.array(draw(st.lists(st.integers(1, 3000), min_size=forms, max_size=forms)))
    offered = np.array(
        [[draw(st.booleans()) or t == 0 for _ in range(forms)] for t in range(calls)], bool
    )
    required = offered & np.array(draw(st.lists(st.booleans(), min_size=forms,
                                                max_size=forms)))  # fmt: skip
    value = np.array(
        [[draw(st.integers(0, 900)) for _ in range(forms)] for _ in range(calls)], np.int64
    )
    budget = draw(st.integers(int(tokens.min()), int(tokens.sum())))
    # some forms are two forms of one identity (at most one of them is sent at a call)
    identity = np.array(draw(st.lists(st.integers(0, forms - 1), min_size=forms,
                                      max_size=forms)), dtype=np.int64)  # fmt: skip
    # and two identities may be coupled (both admitted at a call, or neither)
    present = sorted(set(identity.tolist()))
    groups = ((present[0], present[1]),) if len(present) > 1 and draw(st.booleans()) else ()
    offers = Offers(
        times, (budget,) * calls, tuple(f"f{i}" for i in range(forms)), tokens, offered,
        required & (np.bincount(identity, minlength=forms)[identity] == 1),
        np.where(offered, value, 0), identity, groups,
    )  # fmt: skip
    return offers, draw(st.sampled_from(sorted(RULES)))


def _legal(offers: Offers, t: int) -> list[tuple[int, ...]]:
    n = len(offers.ids)
    out = []
    for chosen in itertools.product([False, True], repeat=n):
        picked = tuple(i for i in range(n) if chosen[i])
        if any(not offers.offered[t, i] for i in picked):
            continue
        if any(offers.required[t, i] and not chosen[i] for i in range(n)):
            continue
        if sum(int(offers.tokens[i]) for i in picked) > offers.budgets[t]:
            continue
        if offers.identity is not None:
            identities = [int(offers.identity[i]) for i in picked]
            if len(set(identities)) < len(identities):
                continue
            if any((a in identities) != (b in identities) for a, b in offers.groups):
                continue
        out.append(picked)
    return out


def _rendered(offers: Offers, plan: tuple[tuple[int, ...], ...], rules_name: str,
              seed: int) -> float:  # fmt: skip
    """The simulator's price of ``plan`` rendered in a drawn order with drawn marks."""
    rules = RULES[rules_name]
    rng = np.random.default_rng(seed)
    ttls = [t.seconds for t in rules.ttls]
    calls = []
    for t, picked in enumerate(plan):
        order = list(picked)
        rng.shuffle(order)
        marks = sorted(rng.choice(ttls, size=len(order)), reverse=True) if order else []
        blocks = tuple(
            CacheBlock(offers.ids[i], int(offers.tokens[i]),
                       int(marks[j]) if rng.random() < 0.7 else None)
            for j, i in enumerate(order)
        )  # fmt: skip
        if rules.breakpoints and sum(b.breakpoint is not None for b in blocks) > 4:
            blocks = tuple(CacheBlock(b.key, b.tokens) for b in blocks)
        calls.append(Call(offers.times[t], blocks))
    return simulate(rules, calls).price


def relaxed_price(offers: Offers, rules: CacheRules, sends: npt.NDArray[np.bool_]) -> float:
    """The relaxed price of given sends (each form's cheapest chain over exactly its
    sends): what ``cache.limit``'s plans minimise, written out plainly here to be
    checked against the simulator."""
    opens, read, plain = chain_rates(rules)
    total = 0.0
    for i in range(sends.shape[1]):
        at = [offers.times[t] for t in np.flatnonzero(sends[:, i])]
        if not at:
            continue
        tokens = float(offers.tokens[i])
        # per TTL: the cheapest plan ending with a live entry of it; and overall
        live = [rate * tokens for _ttl, rate in opens]
        overall = min([*live, tokens] if plain else live)
        for previous, now in itertools.pairwise(at):
            gap = now - previous
            alive = [
                cost if gap < ttl else np.inf for (ttl, _r), cost in zip(opens, live, strict=True)
            ]
            live = [
                min(overall + rate * tokens,
                    min(c for (t_j, _r), c in zip(opens, alive, strict=True) if t_j <= ttl)
                    + read * tokens)
                for ttl, rate in opens
            ]  # fmt: skip
            overall = min([*live, overall + tokens] if plain else live)
        total += overall
    return total


@settings(max_examples=60, deadline=None)
@given(sessions(), st.integers(0, 3))
def test_no_sequence_costs_less_than_the_bound_at_its_value(drawn: tuple[Offers, str],
                                                            seed: int) -> None:  # fmt: skip
    offers, name = drawn
    rules = RULES[name]
    if rules.breakpoints == 0 or name == "openai":
        # automatic caching: only the default lifetime, no marks
        pass
    bound = lower_bound(offers, rules, steps=6)
    per_call = [_legal(offers, t) for t in range(offers.calls)]
    if any(not options for options in per_call):
        return
    for plan in itertools.product(*per_call):
        sends = np.zeros(offers.offered.shape, bool)
        for t, picked in enumerate(plan):
            sends[t, list(picked)] = True
        value = int((offers.value * sends).sum())
        simulated = _rendered(offers, plan, name, seed)
        relaxed = relaxed_price(offers, rules, sends)
        assert relaxed <= simulated + 1e-6, (plan, relaxed, simulated)
        assert bound.bound(value) <= relaxed + 1e-6, (plan, bound.bound(value), relaxed)


def test_a_stable_prompt_is_bounded_by_one_write_and_reads() -> None:
    # one 2,000-token form sent at 3 calls 10 s apart: write 2,500 + 2 reads of 200
    offers = Offers(
        (0.0, 10.0, 20.0), (5000,) * 3, ("sys",), np.array([2000]),
        np.ones((3, 1), bool), np.ones((3, 1), bool), np.zeros((3, 1), np.int64),
    )  # fmt: skip
    rules = RULES["anthropic"]
    assert relaxed_price(offers, rules, np.ones((3, 1), bool)) == 2900.0
    assert lower_bound(offers, rules, steps=2).bound(0) == 2900.0
    calls = [Call(t, (CacheBlock("sys", 2000, 300),)) for t in offers.times]
    assert simulate(rules, calls).price == 2900.0
    # a pause past five minutes: the 1-hour chain (2x) is the cheaper one to bound by
    paused = Offers(
        (0.0, 400.0, 800.0), (5000,) * 3, ("sys",), np.array([2000]),
        np.ones((3, 1), bool), np.ones((3, 1), bool), np.zeros((3, 1), np.int64),
    )  # fmt: skip
    assert lower_bound(paused, rules, steps=2).bound(0) == 4000.0 + 400.0
