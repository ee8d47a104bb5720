"""What a session keeps between calls for the render: each candidate's block, reused only
while it is exact.

A request's memo of rendered blocks (``Request.blocks``, by candidate id) is handed on
by a session from call to call (``session/state.py``): a candidate a delta re-scores is
another object with the same framed fields, so its block (its text and a body's piece
of it) is the kept one with the new candidate; a candidate whose content changes under
the same id is framed again. A session with a cache section solves a request with the
call's time in it, and holds what its rendering sent: both requests read the same
memos, so the next call frames only what it adds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler.render import layout
from assembler.session import Session

EXAMPLE = Path(__file__).resolve().parents[1] / "models" / "examples" / "agent-tool-call.json"
TIME_LIMIT = 60.0


def _request() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    data["task"]["budget"] = 10**6  # everything fits: every candidate has a block
    return data


def _answer(result: assembler.Result) -> dict[str, Any]:
    data = result.to_dict()
    del data["timings"]
    return data


def _framed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the candidates the layout frames from now on."""
    framed: list[str] = []
    original = layout.item_block

    def counted(candidate: Any, *args: Any, **kwargs: Any) -> Any:
        framed.append(candidate.id)
        return original(candidate, *args, **kwargs)

    monkeypatch.setattr(layout, "item_block", counted)
    return framed


@pytest.mark.parametrize("fmt", [f.value for f in assembler.RenderFormat])
def test_a_rescored_candidate_keeps_its_block_and_a_rewritten_one_is_framed_again(
    monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    request = _request()
    session = Session(request, time_limit=TIME_LIMIT, render=fmt, headers="provenance")
    ids = session.answer().selected
    kept = {i: session.request.blocks[i] for i in ids}
    framed = _framed(monkeypatch)
    # each selected form re-scored (to the relevance it has: the selection stays)
    rescored = session.apply({"relevance": {i: kept[i][0].relevance for i in ids}})
    assert rescored.selected == ids and framed == []
    for i in ids:
        candidate, _, block = session.request.blocks[i]
        assert candidate is session.state.by_id[i] is not kept[i][0]
        assert block.candidate is candidate
        assert block.pieces is kept[i][2].pieces and block.text == kept[i][2].text
    expected = assembler.assemble(
        session.to_dict(), time_limit=TIME_LIMIT, render=fmt, headers="provenance"
    )
    assert _answer(rescored) == _answer(expected)
    # the same id with other content: its kept block would be stale
    memory = next(c for c in request["candidates"] if c["id"] == "memory-customer-tier")
    changed = {**memory, "content": "Customer C-88 is on the Basic tier (30-day window)."}
    framed.clear()  # the fresh call above framed its own blocks
    rewritten = session.apply({"update": [changed]})
    assert framed == ["memory-customer-tier"]
    assert session.request.blocks["memory-customer-tier"][2].pieces is not (
        kept["memory-customer-tier"][2].pieces
    )
    expected = assembler.assemble(
        session.to_dict(), time_limit=TIME_LIMIT, render=fmt, headers="provenance"
    )
    assert _answer(rewritten) == _answer(expected)
    assert rewritten.rendering is not None and "Basic tier" in rewritten.rendering.body_json


def test_a_cached_session_frames_only_what_a_delta_adds(monkeypatch: pytest.MonkeyPatch) -> None:
    request = _request()
    sessions = [
        Session(request, time_limit=TIME_LIMIT, render="anthropic-messages", cache="anthropic")
        for _ in range(2)
    ]
    for session in sessions:
        session.answer()
    # the second session forgets what it rendered: it frames every block again
    forgetful = sessions[1].request
    object.__setattr__(forgetful, "blocks", {})
    object.__setattr__(forgetful, "digests", {})
    framed = _framed(monkeypatch)
    turn = {"id": "turn-9-user", "kind": "user_turn", "turn": 9, "cost": 20, "relevance": 0.9,
            "scope": "support", "content": "And the shipping, is it refunded too?"}  # fmt: skip
    got = sessions[0].apply({"add": [turn]})
    assert framed == ["turn-9-user"]
    again = sessions[1].apply({"add": [turn]})
    assert sorted(framed[1:]) == sorted(got.selected) != []
    assert got.rendering is not None and again.rendering is not None
    assert "shipping, is it refunded" in got.rendering.text
    assert (got.rendering.text, got.rendering.body_json) == (
        again.rendering.text,
        again.rendering.body_json,
    )
    assert got.rendering.manifest.to_dict() == again.rendering.manifest.to_dict()
