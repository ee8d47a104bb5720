"""The online planner: its expected prices worked by hand, its rules, and t=0 by construction.

At tolerance 0 the planner sends the cache-blind request at every call, so on every
session of the cache benchmark (short ones here, seeds drawn) its price equals the
cache-blind exact policy's call by call, under every provider the benchmark prices.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assembler.cache import cache_rules
from assembler.cache.planner import HEADROOMS, Planner, expected_price

CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))

from benchmarks import cache as bench  # noqa: E402

SONNET = cache_rules("anthropic", "claude-sonnet-4-5")


def test_the_expected_price_of_a_cycle_by_hand() -> None:
    # B = 1000, h = 0.2, g = 100: a rewrite of 800 written at 1.25 (1000), then 2
    # appends: prompts of 900 and 1000, each reading all but its 100 new tokens
    # (chance 1) at 0.1 and writing the 100 at 1.25: 80 + 125 and 90 + 125
    total = 1000 + (80 + 125) + (90 + 125)
    assert expected_price(0.2, 1000, 100, 1.0, 0.1, 1.25) == pytest.approx(total / 3 / 1000)
    # chance 0: every append writes its whole prompt again
    never = 1000 + 900 * 1.25 + 1000 * 1.25
    assert expected_price(0.2, 1000, 100, 0.0, 0.1, 1.25) == pytest.approx(never / 3 / 1000)
    # nothing new arrives: the prompt is read for ever
    assert expected_price(0.2, 1000, 0, 1.0, 0.1, 1.25) == pytest.approx(0.08)


def test_tolerance_zero_is_always_the_cache_blind_request() -> None:
    planner = Planner(SONNET, 16_000, 0.0, ttl=300)
    for at in range(10):
        planner.observe(20.0 * at, 500, 1.0)
        assert planner.terms().blind


def test_writes_that_the_next_call_never_reads_send_the_cache_blind_request() -> None:
    planner = Planner(SONNET, 16_000, 0.05, ttl=300)
    # every gap past the 5-minute lifetime: a write is never read back
    for call in range(12):
        planner.observe(400.0 * call, 300, 1.0 if call else None)
    terms = planner.terms()
    # chance (1/13 alive) x (1 kept) x 1.15 < 0.25: writing does not pay
    assert terms.read_chance < 0.25 / 1.15 and terms.blind
    # a provider without a write fee always caches
    assert not Planner(cache_rules("openai", "gpt-5"), 16_000, 0.05).terms().blind


def test_the_headroom_follows_the_expected_price_and_what_rewrites_could_keep() -> None:
    planner = Planner(SONNET, 16_000, 0.05, ttl=300)
    for call in range(20):
        planner.observe(20.0 * call, 800, 1.0 if call else None)
    terms = planner.terms()
    assert not terms.blind and terms.headroom in HEADROOMS
    prices = {h: expected_price(h, 16_000, 800.0, terms.read_chance, 0.1, 1.25) for h in HEADROOMS}
    assert terms.expected == pytest.approx(min(prices.values()))
    # a rewrite that could not keep the headroom asked lowers the ceiling below it
    planner.observe(420.0, 800, 0.2, headroom_kept=False, asked=terms.headroom)
    assert planner.terms().headroom < terms.headroom


@settings(max_examples=3, deadline=None)
@given(st.integers(0, 10_000))
def test_planned_t0_costs_what_the_cache_blind_policy_costs_on_every_session(seed: int) -> None:
    chosen = {"exact": bench.exact, "planned t=0": bench.planned(0.0)}
    for session in bench.sessions(10, 8, seed):
        summary = bench.run_session(session, chosen, limit=False)
        rows = {r["policy"]: r for r in summary["policies"]}
        for key, figures in rows["exact"]["providers"].items():
            assert rows["planned t=0"]["providers"][key]["price"] == figures["price"]
            assert rows["planned t=0"]["providers"][key]["vs_exact"] == 1.0


def test_the_lifetime_is_priced_five_minutes_or_one_hour() -> None:
    # calls 20 s apart: 5-minute entries live, and cost 1.25x against 1 hour's 2x
    quick = Planner(SONNET, 16_000, 0.05)
    for call in range(20):
        quick.observe(20.0 * call, 800, 1.0 if call else None)
    assert quick.terms().ttl == 300
    # a human in the loop, 10 minutes between calls: only 1-hour entries are read
    slow = Planner(SONNET, 16_000, 0.05)
    for call in range(20):
        slow.observe(600.0 * call, 800, 1.0 if call else None)
    terms = slow.terms()
    assert terms.ttl == 3600 and not terms.blind
    assert terms.read_chance == slow.read_chance(3600) > slow.read_chance(300)
    # a planner held to one lifetime prices that one only
    assert Planner(SONNET, 16_000, 0.05, ttl=300).terms().ttl == 300
