"""The peers benchmark's one judge and one value function, on a real transcript.

No timing is asserted (performance goals live in benchmarks/, never in tests).
"""

from __future__ import annotations

import itertools
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


def test_the_bakeoffs_traps_are_gated_and_our_pack_sends_none() -> None:
    from benchmarks import bakeoff

    case = bakeoff._rag(3, 30, traps=True)
    request = case["request"]
    result = assembler.assemble(request)
    gated = {d.id for d in result.decisions if d.reason.is_gate}
    assert case["traps"] and case["traps"] <= gated
    value, wrong = bakeoff._judged(case, set(result.selected))
    assert wrong == [] and value == result.to_dict()["value"]
    # a packer that sends the most relevant trap breaks the pool's rule
    trap = max(case["traps"], key=lambda i: next(
        c["relevance"] for c in request["candidates"] if c["id"] == i))  # fmt: skip
    assert bakeoff.TRAP in bakeoff._judged(case, {trap})[1]


def test_the_bakeoffs_loop_adds_one_round_a_call_and_every_packer_answers() -> None:
    from benchmarks import bakeoff

    steps = bakeoff._loop(3, 5, seed=1)
    assert len(steps) == 4 and all("delta" in s for s in steps[1:])
    for before, after in itertools.pairwise(steps):
        known = {c["id"] for c in before["request"]["candidates"]}
        added = {c["id"] for c in after["delta"]["add"]}
        assert added and known | added == {c["id"] for c in after["request"]["candidates"]}
    case = {**steps[-1], "traps": set(), "workload": "loop"}
    for name, packer in bakeoff.PACKERS.items():
        picked = packer(case)()
        assert picked, name


def test_the_dense_request_has_the_edges_it_says() -> None:
    from benchmarks.dense import dense_request

    request = dense_request(600, 30, seed=2)
    forms = request["candidates"]
    assert len(forms) == 600
    needing = [c for c in forms if "depends_on" in c]
    assert needing and all(len(set(c["depends_on"])) == 30 for c in needing)
    result = assembler.assemble(request, time_limit=30)
    assert result.status is assembler.Status.BUNDLE
