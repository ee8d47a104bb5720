"""Summaries as forms that keep the cache, with a deterministic summariser.

A cache-aware session whose transcript outgrows its budget: the oldest span the answer
leaves out is replaced by its summary, placed where the span began, so the head's
cache entry is still read; the summariser runs once per span and later calls send the
summary's very bytes; each answer is a fresh ``assemble`` of ``session.to_dict()``, and
the summary is kept only where its answer is no dearer than the one without it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from drawn import agent_head, turn

import assembler
from assembler.model.errors import InvalidRequest
from assembler.session.summaries import SUMMARY_PREFIX, Summaries

CALLS: list[tuple[str, ...]] = []


def summarise(span: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Deterministic: the ids of the span, in order, as relevant as the span's best."""
    CALLS.append(tuple(str(c["id"]) for c in span))
    best = max(float(c.get("relevance", 0)) for c in span)
    return {"content": "summary of " + ", ".join(str(c["id"]) for c in span),
            "relevance": min(1.0, round(best + 0.3, 3))}  # fmt: skip


def _session() -> assembler.Session:
    candidates = agent_head()
    return assembler.Session(
        {"task": {"id": "summaries", "budget": 2600}, "candidates": candidates},
        render="anthropic-messages", time_limit=60, summariser=summarise,
        cache={"provider": "anthropic", "tolerance": 0.05},
    )  # fmt: skip


def _summary_block(result: assembler.Result) -> dict[str, Any] | None:
    assert result.rendering is not None
    blocks = result.rendering.manifest.cache_blocks(result.rendering.text)
    return next((b for b in blocks if str(b.get("id", "")).startswith(SUMMARY_PREFIX)), None)


def test_a_span_is_summarised_once_and_its_bytes_are_sent_again() -> None:
    CALLS.clear()
    session = _session()
    first = session.answer()
    results = [first]
    for t in range(1, 12):
        held = session.to_dict()["cache"]
        results.append(session.apply({"add": turn(t, 30, 150, round(0.3 + 0.05 * t, 3),
                                                 compact=False)}))  # fmt: skip
        # the session's answer is a fresh call's of the request it solved: the candidates
        # it shows now (the summary in the span's place), what the provider held before
        solved = {**session.to_dict(), "cache": held}
        fresh = assembler.assemble(solved, render="anthropic-messages")
        assert fresh.selected == results[-1].selected
        assert fresh.rendering is not None and results[-1].rendering is not None
        assert fresh.rendering.data == results[-1].rendering.data
        assert assembler.verify(solved, results[-1]) == []
    summarised = [r for r in results if _summary_block(r) is not None]
    assert summarised, "the transcript outgrew the budget: some answer holds a summary"
    # each span summarised once; the summary's bytes are the same wherever it is sent
    assert len(CALLS) == len(set(CALLS))
    shas = {}
    for r in summarised:
        block = _summary_block(r)
        assert block is not None
        assert shas.setdefault(block["id"], block["content_sha256"]) == block["content_sha256"]
    # the summary takes the span's place: the head before it is read from the cache
    for r in summarised:
        assert r.cache is not None and r.cache.kept >= 1 and r.cache.read >= 1200
    # the span's own items are gone from the request, the summary stands for them
    request = session.to_dict()
    ids = {c["id"] for c in request["candidates"]}
    for span in CALLS:
        if any(i.startswith(SUMMARY_PREFIX) and span[0] in i for i in ids):
            assert not ids & set(span)


def test_a_summary_is_kept_only_when_no_dearer() -> None:
    CALLS.clear()
    session = _session()
    session.answer()
    for t in range(1, 12):
        before = session.to_dict()
        result = session.apply({"add": turn(t, 30, 150, round(0.3 + 0.05 * t, 3),
                                            compact=False)})  # fmt: skip
        after = session.to_dict()
        summaries = {c["id"] for c in after["candidates"]} - {c["id"] for c in before["candidates"]}
        if any(i.startswith(SUMMARY_PREFIX) for i in summaries):
            # the same call without the summary: priced no lower
            plain = dict(before)
            plain["candidates"] = [*before["candidates"], *turn(t, 30, 150,
                                   round(0.3 + 0.05 * t, 3), compact=False)]  # fmt: skip
            without = assembler.assemble(plain, render="anthropic-messages")
            assert result.cache is not None and without.cache is not None
            assert result.cache.price <= without.cache.price


def test_the_summariser_is_checked() -> None:
    with pytest.raises(InvalidRequest, match="summariser"):
        Summaries("not callable")  # type: ignore[arg-type]
    bad = Summaries(lambda span: 42)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidRequest, match="must return a text"):
        bad._summary([{"id": "a", "content": "x", "turn": 1}])
    given = Summaries(lambda span: {"content": "short", "cost": 3, "relevance": 0.4})
    made = given._summary([{"id": "a", "content": "x", "turn": 1, "relevance": 0.9}])
    assert (made["cost"], made["relevance"], made["turn"]) == (3, 0.4, 1)
    again = given._summary([{"id": "a", "content": "x", "turn": 1, "relevance": 0.9}])
    assert again is made and given.calls == 1
    assert hashlib.sha256(b"x").hexdigest()  # contents key the memo, ids alone do not
    other = given._summary([{"id": "a", "content": "y", "turn": 1, "relevance": 0.9}])
    assert other is not made and given.calls == 2
