"""Long-context tiers, OpenAI's 12-hour entries and prefix units, against hand-worked sessions.

Each test states the session and the figures worked out by hand from the rules
(``models/cache-providers.md``): past a tier's line the whole request is billed at
the higher rate, output included; a GPT-5.6 breakpoint may ask for 12 hours instead of
30 minutes; and in units mode (DeepSeek's prefix units) only a whole unit is read, a
unit being persisted at each request's end, at the end of its output, at a prefix two
requests shared, and at fixed intervals of tokens.
"""

from __future__ import annotations

import dataclasses

import pytest

from assembler.cache import CacheBlock, CacheMode, Call, cache_rules, simulate

GPT56 = cache_rules("openai", "gpt-5.6")  # entries, writes 1.25x, reads 0.1x, output 6x
HAIKU55 = cache_rules("anthropic", "claude-haiku-5-5")  # 5x over 100,000 tokens
# units mode with DeepSeek's shape, the arithmetic kept readable: reads 0.1x, no write fee
UNITS = dataclasses.replace(
    cache_rules("openai", "gpt-5"), mode=CacheMode.UNITS, min_prefix_tokens=1, step_tokens=1
)


def b(key: str, tokens: int, ttl: int | None = None) -> CacheBlock:
    return CacheBlock(key, tokens, ttl)


def test_past_the_line_the_whole_request_is_billed_at_the_higher_rate() -> None:
    at_line = Call(0, (b("sys", 200_000), b("turn-1", 72_000)))
    past = Call(60, (*at_line.blocks, b("turn-2", 1)), output=b("answer", 1_000))
    first, second = simulate(GPT56, [at_line, past]).calls
    # 272,000 tokens is not above the line: written at 1.25, no tier
    assert (first.tier, first.price) == (1.0, pytest.approx(272_000 * 1.25))
    # 272,001: the read 272,000 at 0.1 and the written 1 at 1.25 are all doubled, and
    # the 1,000 output tokens cost 6x input at 1.5x
    assert second.tier == 2.0 and second.output == 1_000
    assert second.price == pytest.approx((27_200 + 1.25) * 2 + 1_000 * 6.0 * 1.5)


def test_a_haiku_prompt_over_100000_tokens_is_billed_five_times_over() -> None:
    under = simulate(HAIKU55, [Call(0, (b("doc", 100_000, 300),))]).calls[0]
    over = simulate(HAIKU55, [Call(0, (b("doc", 100_001, 300),))]).calls[0]
    assert under.price == pytest.approx(100_000 * 1.25)
    assert over.price == pytest.approx(100_001 * 1.25 * 5)


def test_a_twelve_hour_breakpoint_outlives_a_thirty_minute_one() -> None:
    def session(ttl: int) -> list[Call]:
        stable = (b("sys", 3_000, ttl),)
        return [Call(0, (*stable, b("u1", 50))), Call(7_200, (*stable, b("u2", 50)))]

    short = simulate(GPT56, session(1_800)).calls[1]
    long = simulate(GPT56, session(43_200)).calls[1]
    # two hours later the 30-minute entry is gone, the 12-hour one is read
    assert short.read == 0 and long.read == 3_000
    assert long.price == pytest.approx(3_000 * 0.1 + 50 * 1.25)


def test_a_request_reads_the_unit_its_predecessor_ended() -> None:
    # DeepSeek's example 1: A + B, then A + B + C reads A + B
    first = Call(0, (b("A", 500), b("B", 200)))
    second = Call(10, (b("A", 500), b("B", 200), b("C", 100)))
    costs = simulate(UNITS, [first, second]).calls
    assert [c.read for c in costs] == [0, 700]
    assert costs[1].price == pytest.approx(700 * 0.1 + 100)


def test_a_shared_prefix_becomes_a_unit_for_the_requests_after() -> None:
    # DeepSeek's example 2: A + B, then A + C misses (A is no unit yet), and A + D reads A
    calls = [Call(t, (b("A", 500), b(tail, 200))) for t, tail in ((0, "B"), (10, "C"), (20, "D"))]
    assert [c.read for c in simulate(UNITS, calls).calls] == [0, 0, 500]


def test_the_answer_ends_a_unit_the_next_turn_reads() -> None:
    first = Call(0, (b("sys", 400), b("u1", 100)), output=b("a1", 80))
    second = Call(10, (b("sys", 400), b("u1", 100), b("a1", 80), b("u2", 60)))
    assert [c.read for c in simulate(UNITS, [first, second]).calls] == [0, 580]


def test_a_long_input_is_carved_into_units_at_fixed_intervals() -> None:
    every = dataclasses.replace(UNITS, unit_tokens=100)
    # a 250-token document with one question, then with another: the units at 100 and
    # 200 tokens inside the document are read, the rest of it and the question sent
    calls = [Call(0, (b("doc", 250), b("q1", 30))), Call(10, (b("doc", 250), b("q2", 30)))]
    second = simulate(every, calls).calls[1]
    assert (second.read, second.uncached) == (200, 80)
    # without intervals only whole units: nothing shared was a unit yet
    assert simulate(UNITS, calls).calls[1].read == 0


def test_a_unit_shorter_than_the_minimum_is_not_persisted() -> None:
    floor = dataclasses.replace(UNITS, min_prefix_tokens=1_000)
    calls = [Call(0, (b("A", 500), b("B", 200))), Call(10, (b("A", 500), b("B", 200), b("C", 1)))]
    assert simulate(floor, calls).calls[1].read == 0
