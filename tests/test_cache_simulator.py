"""The cache simulator against hand-worked sessions, one test per provider rule.

Each test states the session, the figures worked out by hand from the rules
(``models/cache-providers.md``), and compares the simulator's accounting with them.
Small minimum prefixes (``dataclasses.replace``) keep the arithmetic readable where a
rule does not depend on the provider's own figure.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

import assembler
from assembler.cache import (
    CacheBlock,
    CacheSimulator,
    Call,
    SessionError,
    blocks_of_rendering,
    cache_rules,
    simulate,
)

SONNET = cache_rules("anthropic", "claude-sonnet-4-5")  # 1024 minimum, 5m 1.25x, 1h 2x, read 0.1x
GPT5 = cache_rules("openai", "gpt-5")  # automatic, 1024 + 128k, read 0.1x, no write premium
EXAMPLES = Path(__file__).resolve().parents[1] / "models" / "examples"


def b(key: str, tokens: int, ttl: int | None = None, span: int = 1) -> CacheBlock:
    return CacheBlock(key, tokens, ttl, span)


def test_a_hit_reads_the_prefix_up_to_the_breakpoint_written_before() -> None:
    first = Call(0, (b("sys", 600), b("tools", 600, 300)))
    second = Call(60, (b("sys", 600), b("tools", 600, 300), b("turn", 50)))
    one, two = simulate(SONNET, [first, second]).calls
    # call 1: 1,200 tokens written at 1.25 = 1,500
    assert (one.read, one.written, one.uncached, one.price) == (0, 1200, 0, 1500.0)
    assert one.writes == ((300, 1200),)
    # call 2: 1,200 read at 0.1 = 120, the 50 after the last breakpoint uncached
    assert (two.read, two.written, two.uncached) == (1200, 0, 50)
    assert two.price == pytest.approx(170.0)
    assert two.read_blocks == 2


def test_a_prompt_without_breakpoints_is_sent_uncached_and_caches_nothing() -> None:
    blocks = (b("sys", 2000), b("turn", 100))
    costs = simulate(SONNET, [Call(0, blocks), Call(10, blocks)]).calls
    assert all((c.read, c.written, c.uncached, c.price) == (0, 0, 2100, 2100.0) for c in costs)


def test_an_entry_is_dead_at_exactly_its_ttl() -> None:
    blocks = (b("sys", 2000, 300),)
    alive, dead = (
        simulate(SONNET, [Call(0, blocks), Call(at, blocks)]).calls[1] for at in (299.9, 300)
    )
    assert (alive.read, alive.written) == (2000, 0)
    # at t = 300 the 5-minute entry has expired: written again
    assert (dead.read, dead.written, dead.price) == (0, 2000, 2500.0)


def test_a_hit_refreshes_the_five_minute_lifetime() -> None:
    blocks = (b("sys", 2000, 300),)
    calls = [Call(0, blocks), Call(200, blocks), Call(450, blocks)]
    # the hit at 200 moves the expiry from 300 to 500, so 450 still reads
    assert [c.read for c in simulate(SONNET, calls).calls] == [0, 2000, 2000]
    # without the refresh the entry dies at 300 and the third call writes again
    frozen = dataclasses.replace(SONNET, refresh_on_hit=False)
    assert [c.written for c in simulate(frozen, calls).calls] == [2000, 0, 2000]


def test_a_breakpoint_below_the_minimum_prefix_caches_nothing() -> None:
    short = (b("sys", 1000, 300), b("turn", 10))
    costs = simulate(SONNET, [Call(0, short), Call(5, short)]).calls
    # 1,000 < 1,024 tokens: no entry, no write premium, no hit
    assert [(c.read, c.written, c.uncached) for c in costs] == [(0, 0, 1010)] * 2
    # 1,024 tokens is enough
    enough = (b("sys", 1024, 300),)
    costs = simulate(SONNET, [Call(0, enough), Call(5, enough)]).calls
    assert [(c.read, c.written) for c in costs] == [(0, 1024), (1024, 0)]


def test_openai_reads_in_128_token_steps_from_1024() -> None:
    first = Call(0, (b("a", 1000), b("b", 400), b("c", 100)))
    second = Call(30, (b("a", 1000), b("b", 400), b("x", 700)))
    one, two = simulate(GPT5, [first, second]).calls
    # call 1: nothing cached yet, no write premium: all 1,500 uncached
    assert (one.read, one.written, one.uncached, one.price) == (0, 0, 1500, 1500.0)
    # call 2 shares 1,400 tokens: 1,024 + 2 x 128 = 1,280 read at 0.1, 820 uncached
    assert (two.read, two.written, two.uncached) == (1280, 0, 820)
    assert two.price == pytest.approx(128.0 + 820)


def test_openai_shares_nothing_below_1024_tokens() -> None:
    first = Call(0, (b("a", 1000), b("b", 400)))
    second = Call(30, (b("a", 1000), b("y", 400)))
    assert simulate(GPT5, [first, second]).calls[1].read == 0
    # and a prompt shorter than 1,024 tokens is not cached at all
    tiny = Call(0, (b("a", 900),))
    longer = Call(1, (b("a", 900), b("b", 900)))
    assert simulate(GPT5, [tiny, longer]).calls[1].read == 0


def test_openai_gpt_5_6_bills_its_writes() -> None:
    rules = cache_rules("openai", "gpt-5.6-luna")
    first = Call(0, (b("a", 2000),))
    second = Call(60, (b("a", 2000), b("b", 300)))
    one, two = simulate(rules, [first, second]).calls
    # the provider's implicit breakpoint ends each prompt: 2,000 written at 1.25
    assert (one.written, one.price) == (2000, 2500.0)
    # the entry of call 1 ends where "a" ends: read whole (no 128-token rounding at a
    # breakpoint), the 300 after it written at 1.25
    assert (two.read, two.written) == (2000, 300)
    assert two.price == pytest.approx(200.0 + 300 * 1.25)


def test_gemini_implicit_caching_has_its_model_minimum_and_no_step() -> None:
    rules = cache_rules("gemini", "gemini-2.5-flash")
    assert rules.min_prefix_tokens == 2048
    first = Call(0, (b("a", 2100), b("b", 50)))
    second = Call(20, (b("a", 2100), b("c", 50)))
    assert simulate(rules, [first, second]).calls[1].read == 2100
    small = [Call(0, (b("a", 2000), b("b", 100))), Call(20, (b("a", 2000), b("c", 100)))]
    assert simulate(rules, small).calls[1].read == 0


def _turns(count: int, mark: set[int]) -> tuple[CacheBlock, ...]:
    return tuple(b(f"block-{i}", 200, 300 if i in mark else None) for i in range(1, count + 1))


def test_the_lookback_checks_twenty_boundaries_per_breakpoint() -> None:
    # the page's example: 10 blocks, then 15, then 35, a breakpoint on the last each time
    calls = [Call(0, _turns(10, {10})), Call(10, _turns(15, {15})), Call(20, _turns(35, {35}))]
    one, two, three = simulate(SONNET, calls).calls
    assert (one.read, one.written) == (0, 2000)
    # call 2 looks back from block 15 and finds block 10's entry (6 boundaries back)
    assert (two.read, two.written) == (2000, 1000)
    # call 3 checks blocks 35..16; block 15's entry is one boundary outside the window
    assert (three.read, three.written) == (0, 7000)
    # a second breakpoint at block 15 opens a window there and finds it
    calls[2] = Call(20, _turns(35, {15, 35}))
    assert simulate(SONNET, calls).calls[2].read == 3000


def test_the_lookback_counts_provider_content_blocks() -> None:
    first = Call(0, (b("sys", 2000, 300),))
    # 19 blocks after the system prompt: its boundary is the 20th checked, a hit
    tail = tuple(b(f"t{i}", 10) for i in range(18))
    near = Call(5, (b("sys", 2000), *tail, b("last", 10, 300)))
    assert simulate(SONNET, [first, near]).calls[1].read == 2000
    # the same blocks with one tool call of two content blocks push it out of the window
    wide = Call(5, (b("sys", 2000), *tail[:-1], b("call", 10, span=2), b("last", 10, 300)))
    assert simulate(SONNET, [first, wide]).calls[1].read == 0


def test_at_most_four_breakpoints() -> None:
    five = tuple(b(f"s{i}", 300, 300) for i in range(5))
    with pytest.raises(SessionError) as error:
        simulate(SONNET, [Call(0, five)])
    assert error.value.call == 0 and "5 cache breakpoints, at most 4" in str(error.value)
    assert isinstance(error.value, ValueError)
    assert simulate(SONNET, [Call(0, five[:4])]).calls[0].written == 1200


def test_writes_stop_at_the_last_breakpoint() -> None:
    blocks = (b("sys", 1000), b("tools", 500, 300), b("turn", 300))
    cost = simulate(SONNET, [Call(0, blocks)]).calls[0]
    assert (cost.read, cost.written, cost.uncached) == (0, 1500, 300)
    assert cost.price == pytest.approx(1500 * 1.25 + 300)


def test_a_changed_block_in_the_middle_reads_up_to_the_breakpoint_before_it() -> None:
    first = Call(0, (b("sys", 2000, 300), b("x", 500), b("y", 500, 300)))
    second = Call(60, (b("sys", 2000, 300), b("x-edited", 500), b("y", 500, 300)))
    cost = simulate(SONNET, [first, second]).calls[1]
    # y's prefix hash moved with x; the lookback reaches the system prompt's entry
    assert (cost.read, cost.written, cost.uncached) == (2000, 1000, 0)
    # without the breakpoint on the system prompt nothing before the change was written
    first = Call(0, (b("sys", 2000), b("x", 500), b("y", 500, 300)))
    second = Call(60, (b("sys", 2000), b("x-edited", 500), b("y", 500, 300)))
    assert simulate(SONNET, [first, second]).calls[1].read == 0


def test_mixed_ttls_bill_one_hour_then_five_minute_writes() -> None:
    blocks = (b("sys", 2000, 3600), b("docs", 1000, 300), b("turn", 100))
    cost = simulate(SONNET, [Call(0, blocks)]).calls[0]
    assert cost.writes == ((3600, 2000), (300, 1000))
    assert cost.price == pytest.approx(2000 * 2.0 + 1000 * 1.25 + 100)
    # after six minutes the 5-minute entry is gone and the 1-hour one reads
    later = simulate(SONNET, [Call(0, blocks), Call(360, blocks)]).calls[1]
    assert (later.read, later.writes) == (2000, ((300, 1000),))


def test_breakpoint_ttls_are_checked() -> None:
    backwards = (b("sys", 2000, 300), b("docs", 1000, 3600))
    with pytest.raises(SessionError, match="longer TTLs come first"):
        simulate(SONNET, [Call(0, backwards)])
    with pytest.raises(SessionError, match=r"calls\[0\]\.blocks\[0\]\.breakpoint.*no 60-second"):
        simulate(SONNET, [Call(0, (b("sys", 2000, 60),))])


def test_time_must_not_go_backwards_and_blocks_must_be_sane() -> None:
    simulator = CacheSimulator(SONNET)
    simulator.call(Call(10, (b("a", 1),)))
    with pytest.raises(SessionError, match=r"calls\[1\]\.at"):
        simulator.call(Call(5, (b("a", 1),)))
    with pytest.raises(SessionError, match=r"blocks\[0\]"):
        simulate(SONNET, [Call(0, (b("a", -1),))])
    with pytest.raises(SessionError, match=r"blocks\[1\]\.key"):
        simulate(SONNET, [Call(0, (b("a", 1), b("", 1)))])


def test_session_totals_and_dollars() -> None:
    calls = [Call(0, (b("sys", 2000, 300),)), Call(30, (b("sys", 2000, 300), b("q", 40)))]
    session = simulate(SONNET, calls)
    totals = (session.tokens, session.read, session.written, session.uncached)
    assert totals == (4040, 2000, 2000, 40)
    assert session.price == pytest.approx(2500 + 200 + 40)
    assert session.ratio == pytest.approx(2740 / 4040)
    # Sonnet 4.5 at $3 per million input tokens
    assert session.usd == pytest.approx(2740 * 3 / 1e6)
    assert cache_rules("openai", "gpt-5.6").input_usd_per_mtok is None
    unmarked = [Call(c.at, tuple(dataclasses.replace(x, breakpoint=None) for x in c.blocks))
                for c in calls]  # fmt: skip
    assert simulate(cache_rules("openai", "gpt-5.6"), unmarked).usd is None


def _agent_request() -> dict[str, object]:
    return json.loads((EXAMPLES / "agent-tool-call.json").read_text(encoding="utf-8"))


def test_the_rendering_adapter_covers_every_byte_and_keeps_the_breakpoints() -> None:
    request = _agent_request()
    result = assembler.assemble(request, render="anthropic-messages")
    rendering = result.rendering
    assert rendering is not None
    blocks = blocks_of_rendering(rendering, ttl=3600, envelope_tokens=7)
    manifest = rendering.manifest
    assert len(blocks) == len(manifest.items) + len(manifest.envelope)
    assert sum(x.tokens for x in blocks) == sum(i.tokens for i in manifest.items) + 7 * len(
        manifest.envelope
    )
    assert sum(x.breakpoint is not None for x in blocks) == len(manifest.breakpoints)
    assert {x.breakpoint for x in blocks} <= {None, 3600}
    calls = [i for i in manifest.items if i.kind == "tool_call"]
    # a call is its tool_use block alone (render_version 3); framed with a header as
    # text in version 2, two content blocks
    assert calls and all(x.span == 1 for x in blocks)
    # the same bundle in another format has the same bytes, hence the same keys
    text = assembler.render_bundle(request, result, format="text")
    assert [x.key for x in blocks_of_rendering(text)] == [x.key for x in blocks]


def test_an_appended_turn_keeps_every_block_before_the_query() -> None:
    request = _agent_request()
    before = assembler.assemble(request, render="anthropic-messages").rendering
    grown = copy.deepcopy(request)
    turn = {"id": "turn-5-user", "kind": "user_turn", "turn": 5, "cost": 30, "relevance": 1,
            "scope": "support", "content": "And the shipping fee?"}  # fmt: skip
    grown["candidates"].append(turn)  # type: ignore[attr-defined]
    grown["task"]["budget"] += 30  # type: ignore[index]
    after = assembler.assemble(grown, render="anthropic-messages").rendering
    assert before is not None and after is not None
    old, new = blocks_of_rendering(before), blocks_of_rendering(after)
    # everything but the query (last) is kept byte for byte; the new turn comes before it
    assert [x.key for x in new[: len(old) - 1]] == [x.key for x in old[:-1]]
    assert len(new) == len(old) + 1 and new[-1].key == old[-1].key
    # so the second call reads the first call's conversation entry: the stable and
    # evidence sections, then the conversation up to its old last block (under a small
    # minimum; the example is far below Anthropic's 1,024 tokens)
    rules = dataclasses.replace(SONNET, min_prefix_tokens=1)
    one, two = simulate(rules, [Call(0, old), Call(30, new)]).calls
    assert two.read == one.written
    assert two.written == 30
