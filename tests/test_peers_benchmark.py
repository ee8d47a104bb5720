"""The peers benchmark's one judge and one value function, on a real transcript.

No timing is asserted (performance goals live in benchmarks/, never in tests).
"""

from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
if str(CHECKOUT) not in sys.path:
    sys.path.insert(0, str(CHECKOUT))

import assembler  # noqa: E402
from benchmarks import peers  # noqa: E402
from benchmarks.agentcases import transcript  # noqa: E402


def test_our_answer_is_valid_and_its_value_is_the_optimum() -> None:
    t = transcript(12, seed=1)
    request = t.request()
    picked = peers.ours(request)()
    assert peers.violations(request, picked) == []
    result = assembler.assemble(request)
    assert picked == set(result.selected)
    assert peers.value_of(request, picked) == result.to_dict()["value"]


def test_the_judge_names_orphans_missing_required_material_and_overspending() -> None:
    request = transcript(12, seed=1).request()
    picked = peers.ours(request)()
    by_id = {c["id"]: c for c in request["candidates"]}
    grouped = [i for i in picked if "group" in by_id[i] and not by_id[i].get("required")]
    assert grouped, "the optimum keeps some tool call"
    assert peers.ORPHANED in peers.violations(request, picked - {grouped[0]})
    required = next(i for i in picked if by_id[i].get("required"))
    assert peers.REQUIRED in peers.violations(request, picked - {required})
    everything = {c["id"] for c in request["candidates"] if c["form"] == "full"}
    assert "over budget" in peers.violations(request, everything)


def test_a_session_adding_the_last_round_answers_as_a_fresh_call() -> None:
    t = transcript(12, seed=2)
    before, delta = t.next_turn()
    assert peers.ours_turn(before, delta)() == peers.ours(t.request())()


def test_trim_messages_keeps_known_messages_within_the_budget() -> None:
    t = transcript(12, seed=1)
    request = t.request()
    kept = peers.trim(request, t.messages)()
    assert kept and kept <= {c["id"] for c in request["candidates"]}
    assert "over budget" not in peers.violations(request, kept)
