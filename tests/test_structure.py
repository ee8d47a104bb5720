"""The structural conformance suite (models/structure/) and its judge."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cli import main
from assembler.conformance import load_suite, run_suite
from assembler.verifiers.structure import RULES, judge
from benchmarks import structure_suite

ROOT = Path(__file__).resolve().parents[1]
TOPICS = {"parallel calls", "a call answered by several results", "tool errors",
          "thinking and redacted thinking", "reasoning items", "images",
          "approval requests and responses", "empty content", "system placement",
          "role alternation"}  # fmt: skip


def test_the_suite_is_as_its_generator_writes_it() -> None:
    for suite in load_suite():
        path = ROOT / "models" / "structure" / f"{suite['format']}.json"
        written = json.dumps(structure_suite.suite(suite["format"]), indent=1,
                             ensure_ascii=False) + "\n"  # fmt: skip
        assert path.read_text(encoding="utf-8") == written


def test_the_suite_covers_every_format_rule_and_topic() -> None:
    suites = load_suite()
    assert {s["format"] for s in suites} == set(RULES)
    cases = [c for s in suites for c in s["cases"]]
    assert len(cases) >= 80
    assert {c["topic"] for c in cases} == TOPICS
    for suite in suites:
        assert set(suite["rules"]) == set(RULES[suite["format"]])
        for rule in suite["rules"].values():
            assert rule["statement"] and rule["source"].startswith("https://") and rule["error"]
        ids = [c["id"] for c in suite["cases"]]
        assert len(ids) == len(set(ids))
        assert {c["verdict"] for c in suite["cases"]} == {"accepted", "rejected"}
        for case in suite["cases"]:
            assert case["rule"] in suite["rules"]


def test_fit_passes_every_case() -> None:
    results = run_suite()
    failures = [(r.format, r.id, r.problems) for r in results if r.problems]
    assert failures == []
    cuts = [cut for r in results for cut in r.cuts]
    assert cuts.count("fitted") >= len(cuts) // 2


def _accepted(fmt: str, case_id: str) -> dict[str, Any]:
    (suite,) = load_suite([fmt])
    return next(c["body"] for c in suite["cases"] if c["id"] == case_id)


def test_the_judge_names_each_kind_of_cut_gone_wrong() -> None:
    chat = _accepted("openai-chat", "parallel-2")
    split = copy.deepcopy(chat)
    split["messages"] = [m for m in split["messages"] if m.get("tool_call_id") != "par2_1"]
    assert "tool-call-answered" in {r for r, _ in judge("openai-chat", split)}
    orphan = copy.deepcopy(chat)
    orphan["messages"] = [m for m in orphan["messages"] if not m.get("tool_calls")]
    assert "tool-result-after-call" in {r for r, _ in judge("openai-chat", orphan)}

    claude = _accepted("anthropic-messages", "thinking-and-redacted")
    edited = copy.deepcopy(claude)
    turn = next(m for m in edited["messages"] if m["role"] == "assistant")
    turn["content"][0]["thinking"] += " (shortened)"
    assert "thinking-unedited" in {r for r, _ in judge("anthropic-messages", edited, claude)}

    responses = _accepted("openai-responses", "reasoning-then-calls")
    dropped = copy.deepcopy(responses)
    dropped["input"] = [i for i in dropped["input"] if i.get("type") != "reasoning"]
    assert "reasoning-with-call" in {r for r, _ in judge("openai-responses", dropped, responses)}

    gemini = _accepted("gemini", "signatures-on-calls")
    unsigned = copy.deepcopy(gemini)
    for content in unsigned["contents"]:
        for part in content["parts"]:
            part.pop("thoughtSignature", None)
    assert "signature-kept" in {r for r, _ in judge("gemini", unsigned, gemini)}


def test_the_command_runs_the_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conformance", "--format", "gemini"]) == 0
    out = capsys.readouterr().out
    assert "gemini" in out and "cases passed" in out and "FAIL" not in out
    assert main(["conformance", "--format", "nope"]) == 2
    assert main(["conformance", "--json", "--format", "openai-chat"]) == 0
    assert json.loads(capsys.readouterr().out)


def test_the_peers_benchmark_judges_each_packer_on_the_same_cut() -> None:
    from benchmarks import structure

    (suite,) = load_suite(["openai-chat"])
    case = next(c for c in suite["cases"] if c["id"] == "parallel-2")
    instance = structure.Instance(suite, case, 0.5)
    kept = structure._trim(instance)
    assert kept <= {u.key for u in instance.units}
    assert judge("openai-chat", instance.body_of(kept), case["body"]) == []
    picked = structure._picked_units(instance, structure.ctxbudgeter(instance.request)())
    # ctxbudgeter keeps a call whose long result it drops: the judge says so
    assert "tool-call-answered" in {r for r, _ in judge("openai-chat", instance.body_of(picked))}


def test_the_adapters_goal_row_sends_every_format_through_its_sdk() -> None:
    from benchmarks import adapters

    for fmt in adapters.FORMATS:
        row = adapters._goal_row(2, fmt)
        assert row["accepted"] == 2 and row["orphaned"] == row["edited_thinking"] == 0
        assert row["over_budget"] == 0
