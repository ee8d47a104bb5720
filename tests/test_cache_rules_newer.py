"""The GPT-5.6 entries rules and Gemini's explicit caches, against hand-worked sessions.

Each test states the session and the figures worked out by hand from the rules
(``models/cache-providers.md``: up to four writes a request, one of them the
provider's implicit breakpoint; a read matched against the conversation's latest 80
entries with no lookback in blocks; 30-minute entries written at 1.25x; Gemini's
explicit caches created at the input price plus their storage per hour), then compares
the simulator's accounting with them.
"""

from __future__ import annotations

import dataclasses

import pytest

from assembler.cache import CacheBlock, Call, SessionError, cache_rules, simulate

GPT56 = cache_rules("openai", "gpt-5.6")
PRO = cache_rules("gemini", "gemini-2.5-pro")  # $1.25 input, $4.50 per MTok-hour stored


def b(key: str, tokens: int, ttl: int | None = None) -> CacheBlock:
    return CacheBlock(key, tokens, ttl)


def test_an_explicit_breakpoint_keeps_a_stable_prefix_the_implicit_one_misses() -> None:
    # a 2,000-token instruction, then a changing user turn: the implicit breakpoint
    # alone writes the whole prompt each time and never matches again
    calls = [Call(60 * i, (b("sys", 2000), b(f"user-{i}", 100))) for i in range(3)]
    implicit = simulate(GPT56, calls).calls
    assert [c.read for c in implicit] == [0, 0, 0]
    assert [c.written for c in implicit] == [2100, 2100, 2100]
    # a breakpoint at the instruction's end: call 1 writes 2,000 + 100 (two entries),
    # calls 2 and 3 read the 2,000 and write their 100 at 1.25
    marked = [Call(c.at, (b("sys", 2000, 1800), c.blocks[1])) for c in calls]
    costs = simulate(GPT56, marked).calls
    assert [(c.read, c.written) for c in costs] == [(0, 2100), (2000, 100), (2000, 100)]
    assert costs[1].price == pytest.approx(2000 * 0.1 + 100 * 1.25)


def test_explicit_mode_drops_the_implicit_breakpoint() -> None:
    call = Call(0, (b("sys", 2000, 1800), b("user", 100)), implicit=False)
    cost = simulate(GPT56, [call]).calls[0]
    # the 100 after the only breakpoint are plain input
    assert (cost.read, cost.written, cost.uncached) == (0, 2000, 100)


def test_only_the_last_four_breakpoints_are_written() -> None:
    # five explicit breakpoints and the implicit one: the last four are written (the
    # implicit and the last three explicit); the first two write nothing
    blocks = (*tuple(b(f"part-{i}", 1100, 1800) for i in range(5)), b("tail", 100))
    one = simulate(GPT56, [Call(0, blocks)]).calls[0]
    assert (one.written, one.uncached) == (5600, 0)
    # a later call sharing only the first two parts finds no entry there: those
    # boundaries were never written
    two = simulate(GPT56, [Call(0, blocks), Call(10, (*blocks[:2], b("new", 100)))]).calls[1]
    assert two.read == 0


def test_a_read_has_no_lookback_limit_but_only_the_latest_80_entries() -> None:
    # the entry at the end of "head" is matched from a prompt 200 blocks longer
    head = (b("head", 1500, 1800),)
    later = (*head, *(b(f"x-{i}", 10) for i in range(200)))
    two = simulate(GPT56, [Call(0, head), Call(5, later)]).calls[1]
    assert two.read == 1500
    # 80 other entries written after it push it out of the latest 80
    calls = [Call(0, head)]
    calls += [Call(1 + i, (b(f"other-{i}", 1100),)) for i in range(80)]
    calls.append(Call(100, later))
    assert simulate(GPT56, calls).calls[-1].read == 0
    # 79 do not
    kept = [*calls[:80], Call(100, later)]
    assert simulate(GPT56, kept).calls[-1].read == 1500


def test_gpt_5_6_entries_live_thirty_minutes_refreshed_by_use() -> None:
    prompt = (b("sys", 2000),)
    calls = [Call(0, prompt), Call(1700, prompt), Call(3400, prompt), Call(5300, prompt)]
    # 1700 < 1800 reads and refreshes to 3500; 3400 reads (refresh to 5200); 5300 misses
    assert [c.read for c in simulate(GPT56, calls).calls] == [0, 2000, 2000, 0]
    with pytest.raises(SessionError, match="no 300-second"):
        simulate(GPT56, [Call(0, (b("sys", 2000, 300),))])


def test_gemini_explicit_cache_bills_storage_per_hour_and_is_not_refreshed() -> None:
    storage = 4.50 / 1.25  # base input prices per token and hour
    assert PRO.storage == pytest.approx(storage)
    cached = b("corpus", 10_000, 3600)
    calls = [Call(0, (cached, b("q1", 100))), Call(1800, (cached, b("q2", 100))),
             Call(3600, (cached, b("q3", 100)))]  # fmt: skip
    one, two, three = simulate(PRO, calls).calls
    # created: 10,100 tokens at the input price, plus 10,000 tokens held one hour
    assert one.storage == pytest.approx(10_000 * storage)
    assert (one.read, one.uncached) == (0, 10_100)
    assert one.price == pytest.approx(10_100 + 10_000 * storage)
    # read at 0.1x while alive
    assert (two.read, two.storage) == (10_000, 0.0)
    assert two.price == pytest.approx(1000 + 100)
    # expired at exactly 3,600 s (use does not extend it): created again
    assert three.storage == pytest.approx(10_000 * storage)
    totals = simulate(PRO, calls)
    assert totals.storage == pytest.approx(20_000 * storage)


def test_gemini_explicit_cache_needs_a_known_storage_price() -> None:
    flash = cache_rules("gemini", "gemini-2.5-flash")
    assert flash.storage is None
    with pytest.raises(SessionError, match="storage"):
        simulate(flash, [Call(0, (b("corpus", 5000, 3600),))])
    priced = dataclasses.replace(flash, storage_usd_per_mtok_hour=1.0)
    assert simulate(priced, [Call(0, (b("corpus", 5000, 3600),))]).calls[0].storage > 0


def _example_bodies(fmt: str) -> tuple[tuple[CacheBlock, ...], tuple[CacheBlock, ...]]:
    """The agent example rendered in ``fmt``, and again with another question (the
    body's last block)."""
    import copy
    import json
    from pathlib import Path

    import assembler
    from assembler.cache import blocks_of_rendering

    path = Path(__file__).resolve().parents[1] / "models" / "examples" / "agent-tool-call.json"
    request = json.loads(path.read_text(encoding="utf-8"))
    later = copy.deepcopy(request)
    later["task"]["query"] = "And order 4472?"
    out = []
    for data in (request, later):
        rendering = assembler.assemble(data, render=fmt).rendering
        assert rendering is not None
        out.append(blocks_of_rendering(rendering))
    return out[0], out[1]


def test_gemini_and_responses_bodies_replay_under_their_providers_rules() -> None:
    # Gemini bodies: implicit caching reads the same body whole, and a body whose last
    # block (the question) changed up to that block
    first, other = _example_bodies("gemini")
    assert other[:-1] == first[:-1] and other[-1] != first[-1]
    flash = dataclasses.replace(cache_rules("gemini", "gemini-2.5-flash"), min_prefix_tokens=1)
    total = sum(b.tokens for b in first)
    head = total - first[-1].tokens
    costs = simulate(flash, [Call(0, first), Call(30, first), Call(60, other)]).calls
    assert [c.read for c in costs] == [0, total, head]
    # an explicit cache of the prefix before the question, marked by the caller:
    # created at the input price plus an hour's storage, then read by the other body
    pro = dataclasses.replace(PRO, min_prefix_tokens=1)
    mark = len(first) - 2

    def marked(blocks: tuple[CacheBlock, ...], ttl: int = 3600) -> tuple[CacheBlock, ...]:
        return tuple(dataclasses.replace(b, breakpoint=ttl) if j == mark else b
                     for j, b in enumerate(blocks))  # fmt: skip

    one, two = simulate(pro, [Call(0, marked(first)), Call(30, marked(other))]).calls
    assert one.storage == pytest.approx(head * PRO.storage) and two.read == head
    # Responses bodies under GPT-5.6: the implicit breakpoint ends each body, so the
    # same body reads whole and the other question reads nothing (no entry ends before
    # it); an explicit breakpoint before the question keeps that prefix
    first, other = _example_bodies("openai-responses")
    gpt = dataclasses.replace(GPT56, min_prefix_tokens=1)
    total = sum(b.tokens for b in first)
    costs = simulate(gpt, [Call(0, first), Call(30, first), Call(60, other)]).calls
    assert [c.read for c in costs] == [0, total, 0]
    marked_costs = simulate(gpt, [Call(0, marked(first, 1800)),
                                  Call(30, marked(other, 1800))]).calls  # fmt: skip
    assert marked_costs[1].read == total - first[-1].tokens
