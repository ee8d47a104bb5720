"""Counterexample hunts (assembler.hunt, issue 4).

A seeded hunt with a fixed example count finds a greedy false refusal and shrinks it
to at most 8 candidates; saved cases replay to their kind; a hunt against exact
finds nothing; hunts are deterministic whatever the worker count; the judge
classifies hand-made cases; the command line rejects bad arguments with exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assembler.cli.hunt import main
from assembler.hunt import FindingKind, HuntConfig, hunt, judge, replay, shrink
from assembler.hunt.shrink import _ddmin, _simpler_ints, _simpler_relevance

ROOT = Path(__file__).resolve().parent.parent
REGISTER = sorted((ROOT / "corpus" / "register").glob("*.json"))

# Pinned: seed 0 finds greedy false refusals within its first 100 examples.
SEED = 0
EXAMPLES = 100


@pytest.fixture(scope="module")
def greedy_hunt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("register")
    config = HuntConfig(strategy="greedy", seed=SEED, examples=EXAMPLES, out=out, shrink_per_kind=1)
    return hunt(config), out


def test_seeded_hunt_finds_and_shrinks_a_greedy_false_refusal(
    greedy_hunt: tuple[Any, Path],
) -> None:
    report, out = greedy_hunt
    assert report.examples == EXAMPLES
    assert report.counts()["false-refusal"] >= 1
    assert report.counts()["exact-disagreement"] == 0
    assert report.counts()["crash"] == 0
    refusals = [c for c in report.cases if c["kind"] == "false-refusal"]
    assert refusals, "the first false refusal is shrunk and saved"
    case = refusals[0]
    assert len(case["request"]["candidates"]) <= 8
    assert len(case["request"]["candidates"]) <= case["shrunk_from"]
    saved = json.loads((out / Path(report.paths[report.cases.index(case)]).name).read_text())
    assert saved == case
    assert set(saved) >= {"kind", "strategy", "seed", "request", "answers", "explanation"}
    assert saved["answers"]["tested"]["status"] == "refused"
    assert saved["answers"]["exact"]["status"] == "bundle"
    assert "\n" not in saved["explanation"]


def test_saved_cases_replay_to_their_kind(greedy_hunt: tuple[Any, Path]) -> None:
    report, _ = greedy_hunt
    for path in report.paths:
        assert main(["--replay", path]) == 0


@pytest.mark.parametrize("path", REGISTER, ids=[p.stem for p in REGISTER])
def test_register_case_reproduces(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    result = replay(case)
    assert result.reproduced, (result.expected, result.judgement.explanation)
    assert main(["--replay", str(path)]) == 0


def test_register_has_a_greedy_false_refusal() -> None:
    kinds = {(c["strategy"], c["kind"]) for c in map(_load, REGISTER)}
    assert ("greedy", "false-refusal") in kinds


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_replay_fails_when_the_kind_does_not_reproduce(tmp_path: Path) -> None:
    case = _load(REGISTER[0]) if REGISTER else None
    if case is None:
        pytest.skip("no register case")
    case["kind"] = "suboptimal-cost"
    path = tmp_path / "case.json"
    path.write_text(json.dumps(case))
    assert main(["--replay", str(path)]) == 1


def test_hunt_against_exact_finds_nothing() -> None:
    report = hunt(HuntConfig(strategy="exact", seed=SEED, examples=150, out=None))
    assert report.examples == 150
    assert not report.findings
    assert not report.exact_is_wrong


def test_hunt_is_deterministic_for_seed_and_count() -> None:
    config = HuntConfig(strategy="greedy", seed=3, examples=40, out=None, shrink_per_kind=0)
    first, second = hunt(config), hunt(config)
    assert first.findings == second.findings
    assert (
        first.findings
        != hunt(HuntConfig("greedy", seed=4, examples=40, out=None, shrink_per_kind=0)).findings
    )


def test_workers_do_not_change_the_findings() -> None:
    one = HuntConfig(strategy="greedy", seed=5, examples=48, out=None, shrink_per_kind=1)
    two = HuntConfig(strategy="greedy", seed=5, examples=48, out=None, shrink_per_kind=1, workers=2)
    a, b = hunt(one), hunt(two)
    assert a.findings == b.findings
    assert a.cases == b.cases


def test_seconds_mode_tries_a_prefix() -> None:
    report = hunt(
        HuntConfig(
            strategy="greedy", seed=1, examples=None, seconds=0.5, out=None, shrink_per_kind=0
        )
    )
    assert report.examples > 0
    expected = hunt(
        HuntConfig(strategy="greedy", seed=1, examples=report.examples, out=None, shrink_per_kind=0)
    )
    assert report.findings == expected.findings


# -- the judge on hand-made requests ---------------------------------------------------


def _classic_false_refusal() -> dict[str, Any]:
    # two required documents; greedy admits a's dear full form first and then cannot
    # fit b's reference with its resolver, which a's reference would have shared
    return {
        "task": {"id": "t", "budget": 700, "required": ["a", "b"]},
        "candidates": [
            {"id": "a.full", "identity": "a", "form": "full", "cost": 400, "relevance": 0.9},
            {
                "id": "a.ref",
                "identity": "a",
                "form": "reference",
                "cost": 20,
                "relevance": 0.6,
                "depends_on": ["resolver"],
            },
            {
                "id": "b.ref",
                "identity": "b",
                "form": "reference",
                "cost": 20,
                "relevance": 0.5,
                "depends_on": ["resolver"],
            },
            {"id": "resolver", "cost": 650, "relevance": 0.1},
        ],
    }


def test_judge_classifies_a_false_refusal() -> None:
    verdict = judge(_classic_false_refusal(), "greedy")
    assert verdict.kind is FindingKind.FALSE_REFUSAL
    assert verdict.answers["exact"]["selected"] == ["a.ref", "b.ref", "resolver"]


def test_judge_classifies_an_illegal_bundle() -> None:
    request = {
        "task": {"id": "t", "budget": 100, "scope": "p", "seal": ["secret"]},
        "candidates": [
            {"id": "secret", "cost": 10, "relevance": 0.99, "scope": "p"},
            {"id": "ok", "cost": 10, "relevance": 0.5, "scope": "p"},
        ],
    }
    verdict = judge(request, "top-k")
    assert verdict.kind is FindingKind.FALSE_BUNDLE
    assert "gate" in verdict.explanation
    assert judge(request, "exact").kind is None


def test_shrink_keeps_the_kind_and_only_removes() -> None:
    request = _classic_false_refusal()
    request["candidates"].append({"id": "noise", "cost": 5, "relevance": 0.3})
    small = shrink(request, "greedy", FindingKind.FALSE_REFUSAL)
    assert judge(small, "greedy").kind is FindingKind.FALSE_REFUSAL
    assert len(small["candidates"]) < len(request["candidates"])


def test_ddmin_finds_a_one_minimal_subset() -> None:
    calls = []

    def needs_3_and_7(items: list[int]) -> bool:
        calls.append(items)
        return 3 in items and 7 in items

    assert _ddmin(list(range(10)), needs_3_and_7) == [3, 7]


def test_simplifications_are_strictly_simpler() -> None:
    for x in (1, 9, 10, 15, 137, 600, 1234, 99999):
        assert x not in _simpler_ints(x)
        assert all(v >= 10 for v in _simpler_ints(x))
    # a chain of simplifications always ends
    for start in (0.347, 0.5, 0.05, 1.0):
        seen, value = 0, start
        while (options := _simpler_relevance(value)) and seen < 10:
            value, seen = options[0], seen + 1
        assert seen < 10


# -- the command line --------------------------------------------------------------------


def test_cli_json_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "--against",
            "greedy",
            "--seed",
            str(SEED),
            "--examples",
            "30",
            "--out",
            str(tmp_path),
            "--json",
            "--shrink",
            "1",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["examples"] == 30 and data["strategy"] == "greedy"
    assert set(data["findings"]) == {k.value for k in FindingKind}
    for case in data["cases"]:
        assert Path(case["path"]).exists()


def test_cli_text_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hunt", "--against", "exact", "--examples", "20", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "20 examples" in out and "no findings" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--against"),
        (["--against", "nope"], "unknown strategy"),
        (["--against", "greedy", "--examples", "0"], "--examples"),
        (["--against", "greedy", "--seconds", "-1"], "--seconds"),
        (["--against", "greedy", "--seconds", "1", "--examples", "3"], "not allowed"),
        (["--against", "greedy", "--workers", "0"], "--workers"),
        (["--against", "greedy", "--max-candidates", "0"], "--max-candidates"),
        (["--against", "greedy", "--seed", "x"], "invalid int"),
        (["--against", "greedy", "--bogus"], "unrecognized"),
        (["--replay", "/nonexistent/case.json"], "cannot read"),
        (["--replay", "/nonexistent/case.json", "--against", "greedy"], "--against"),
        (["--against", "greedy", "--scheduler", "tcp://127.0.0.1:1"], "--engine dask"),
        (["--against", "greedy", "--engine", "spark"], "invalid choice"),
        (["--against", "greedy", "--batch", "0"], "--batch"),
        (["--against", "greedy", "--progress", "-1"], "--progress"),
        (["--resume", "/nonexistent/state"], "no such directory"),
    ],
)
def test_cli_bad_arguments_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err


def test_cli_replay_rejects_a_file_that_is_not_a_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--replay", str(bad)]) == 2
    bad.write_text(json.dumps({"kind": "false-refusal", "strategy": "greedy"}))
    assert main(["--replay", str(bad)]) == 2
    assert "request" in capsys.readouterr().err


def test_cli_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--against" in capsys.readouterr().out


def test_hunt_config_needs_a_stopping_rule() -> None:
    with pytest.raises(ValueError):
        HuntConfig(strategy="greedy", examples=None, seconds=None)
    with pytest.raises(ValueError):
        HuntConfig(strategy="greedy", workers=0)


# -- the journal: --state and --resume ------------------------------------------------------


def test_resume_needs_no_settings_and_refuses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["--against", "greedy", "--examples", "24", "--shrink", "0", "--out", str(tmp_path)]
    assert main([*argv, "--state", str(state), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert json.loads((state / "findings.json").read_text())["complete"] is True
    # a finished hunt may be extended: only the new examples are judged
    assert main(["--resume", str(state), "--examples", "40", "--json"]) == 0
    more = json.loads(capsys.readouterr().out)
    assert more["resumed_from"] == 24 and more["examples"] == 40
    assert more["found"][: len(first["found"])] == first["found"]
    again = hunt(HuntConfig("greedy", examples=40, out=None, shrink_per_kind=0))
    assert more["found"] == again.answer()["found"]
    assert main(["--resume", str(state), "--seed", "3"]) == 2
    assert "drop --seed" in capsys.readouterr().err


def test_a_stopped_hunt_is_not_overwritten_and_a_damaged_journal_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    report = hunt(
        HuntConfig("greedy", examples=40, out=None, shrink_per_kind=0),
        stop=lambda: True,
        state=state,
    )
    assert not report.complete and report.examples == 0
    saved = json.loads((state / "findings.json").read_text())
    assert saved["complete"] is False
    assert main(["--against", "greedy", "--state", str(state)]) == 2
    assert "--resume" in capsys.readouterr().err
    journal = state / "batches.jsonl"
    journal.write_text('{"start": 0, "stop": 8, "skipped": 0, "findings": []}\n{bad\n{"x": 1}\n')
    assert main(["--resume", str(state)]) == 2
    assert "line 2 is damaged" in capsys.readouterr().err


def test_resume_keeps_the_worker_count_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["--against", "greedy", "--examples", "16", "--shrink", "0", "--out", str(tmp_path)]
    assert main([*argv, "--workers", "2", "--state", str(state), "--json"]) == 0
    assert "2 worker processes" in json.loads(capsys.readouterr().out)["engine"]
    assert main(["--resume", str(state), "--examples", "24", "--json"]) == 0
    assert "2 worker processes" in json.loads(capsys.readouterr().out)["engine"]
    assert main(["--resume", str(state), "--examples", "32", "--workers", "1", "--json"]) == 0
    assert "1 worker process" in json.loads(capsys.readouterr().out)["engine"]


def test_the_default_output_folder_is_never_the_corpus(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["--against", "greedy", "--examples", "40", "--shrink", "1"]) == 0
    capsys.readouterr()
    assert not (tmp_path / "corpus").exists()
    assert list((tmp_path / "hunt-findings").glob("greedy-*.json"))


# -- cache hunts (issue 24): sessions judged by the cache-aware order ---------------


@pytest.fixture(scope="module")
def cache_hunt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    out = tmp_path_factory.mktemp("cache-register")
    config = HuntConfig(
        strategy="greedy", seed=0, examples=60, max_candidates=12, out=out, shrink_per_kind=1,
        cache=True,
    )  # fmt: skip
    return hunt(config), out


def test_a_cache_hunt_draws_a_next_call_caching_on_the_rendering_before() -> None:
    from assembler.hunt.run import example_request

    request = example_request(0, 1, 12, cache=True)
    assert example_request(0, 1, 12, cache=True) == request
    blocks = request["cache"]["previous"]["blocks"]
    assert blocks and all(len(b["content_sha256"]) == 64 for b in blocks)
    assert len(request["candidates"]) <= 12
    # the plain series is another one
    assert example_request(0, 1, 12) != request


def test_a_cache_hunt_finds_greedy_priced_higher_and_outside_the_tolerance(
    cache_hunt: tuple[Any, Path],
) -> None:
    report, out = cache_hunt
    counts = report.counts()
    assert report.cache and report.answer()["cache"] is True
    assert counts["priced-higher"] >= 10 and counts["outside-tolerance"] >= 3
    assert counts["exact-disagreement"] == 0
    for kind in ("priced-higher", "outside-tolerance"):
        case = next(c for c in report.cases if c["kind"] == kind)
        assert case["cache"] is True and "cache" in case["request"]
        assert len(case["request"]["candidates"]) <= case["shrunk_from"]
        tested, exact = case["answers"]["tested"], case["answers"]["exact"]
        assert tested["status"] == exact["status"] == "bundle"
        assert exact["cache"]["rewrite_floor"] is not None
    # every saved case of a valid request replays to its kind (the parser's crash below
    # is a request it refuses: replaying that is a usage error)
    for path, case in zip(report.paths, report.cases, strict=True):
        assert main(["--replay", path]) == (2 if case["kind"] == "crash" else 0)
    assert all(Path(p).parent == out for p in report.paths)


def test_the_cache_judge_reads_price_before_value() -> None:
    previous = [
        {"id": "sys", "form": "full", "content_sha256": _sha("be brief"), "tokens": 40,
         "breakpoint": True},
        {"id": "old", "form": "full", "content_sha256": _sha("old"), "tokens": 30,
         "breakpoint": True},
    ]  # fmt: skip
    request = {
        "task": {"id": "t", "budget": 80},
        "candidates": [
            {"id": "sys", "kind": "system", "cost": 40, "relevance": 1.0, "required": True,
             "channel": "system", "content": "be brief"},
            {"id": "old", "kind": "evidence", "cost": 30, "relevance": 0.5, "content": "old"},
            {"id": "new", "kind": "evidence", "cost": 30, "relevance": 0.6, "content": "new"},
        ],
        "cache": {"provider": "anthropic", "min_prefix_tokens": 10, "tolerance": 0.2,
                  "previous": {"blocks": previous}},
    }  # fmt: skip
    # exact keeps the previous prefix (old, within 20% of the value): greedy agrees
    assert judge(request, "greedy").kind is None
    # with no tolerance the new document must come in: keeping old is under the floor
    strict = {**request, "cache": {**request["cache"], "tolerance": 0.0}}
    assert judge(strict, "exact").kind is None
    verdict = judge(strict, "greedy")
    assert verdict.kind is FindingKind.OUTSIDE_TOLERANCE, verdict.explanation
    # top-k sends the new document after rewriting the prefix: dearer, same value
    assert judge(request, "top-k").kind is FindingKind.PRICED_HIGHER


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_a_cache_hunt_against_exact_agrees_with_enumerate() -> None:
    # exact and enumerate give identical answers, cache records included
    report = hunt(
        HuntConfig(strategy="exact", seed=3, examples=60, max_candidates=12, out=None, cache=True)
    )
    assert report.examples == 60
    assert not report.findings, report.findings


def test_exact_finds_the_selection_that_stays_under_the_cacheable_minimum() -> None:
    import assembler

    request = {
        "task": {"id": "t", "budget": 70, "instruction": "answer in English"},
        "candidates": [
            {"id": "doc0-0", "identity": "doc0-0", "cost": 20, "relevance": 0.1,
             "kind": "evidence"},
            {"id": "tool-0", "cost": 10, "relevance": 0.2, "kind": "tool_definition"},
            {"id": "user-0", "cost": 50, "relevance": 0.5, "kind": "user_turn", "turn": 0},
        ],
        "cache": {"provider": "anthropic", "min_prefix_tokens": 70, "tolerance": 0.2,
                  "previous": {"blocks": [{"part": "instruction", "content_sha256": _sha(
                      "answer in English"), "tokens": 0}]}},
    }  # fmt: skip
    exact = assembler.assemble(request, strategy="exact").to_dict()
    oracle = assembler.assemble(request, strategy="enumerate").to_dict()
    # enumerate: tool-0 and user-0, 60 tokens sent uncached (price 60) and worth 700
    assert (exact["selected"], exact["cache"]) == (oracle["selected"], oracle["cache"])


# two more exact bugs the cache hunt found (seed 0, 120 s), shrunk: a tool definition
# before the kept instruction (whose block lists 0 tokens) and a rewrite within the
# headroom; exact misses enumerate's cheaper feasible bundle, or answers outside the
# feasible set its own record states
_EXACT_BUGS = [
    {
        "task": {"id": "t", "budget": 100, "instruction": "answer in English"},
        "candidates": [
            {"id": "a0-0", "cost": 50, "relevance": 0.8, "kind": "assistant_turn", "turn": 1},
            {
                "id": "c0-0",
                "cost": 5,
                "relevance": 0.2,
                "kind": "tool_call",
                "tool_call_id": "call0",
                "tool_name": "read",
                "turn": 2,
            },
            {
                "id": "r0",
                "identity": "result0-0",
                "cost": 30,
                "relevance": 0.9,
                "kind": "tool_result",
                "tool_call_id": "call0",
                "turn": 3,
            },
            {"id": "tool-0", "cost": 20, "relevance": 0.9, "kind": "tool_definition"},
        ],
        "cache": {
            "provider": "anthropic",
            "min_prefix_tokens": 50,
            "previous": {
                "blocks": [
                    {
                        "part": "instruction",
                        "content_sha256": _sha("answer in English"),
                        "tokens": 0,
                    }
                ]
            },
        },
    },
    {
        "task": {"id": "t", "budget": 200, "instruction": "answer in English"},
        "candidates": [
            {
                "id": "c0-0",
                "cost": 5,
                "relevance": 0.2,
                "kind": "tool_call",
                "tool_call_id": "call0",
                "tool_name": "read",
                "turn": 2,
            },
            {
                "id": "c1-0",
                "cost": 5,
                "relevance": 0.1,
                "kind": "tool_call",
                "tool_call_id": "call1",
                "tool_name": "read",
                "turn": 5,
            },
            {
                "id": "r0-short",
                "identity": "result0-0",
                "form": "compact",
                "cost": 10,
                "relevance": 0.1,
                "kind": "tool_result",
                "tool_call_id": "call0",
                "turn": 3,
            },
            {
                "id": "r1",
                "identity": "result1-0",
                "cost": 60,
                "relevance": 0.1,
                "kind": "tool_result",
                "tool_call_id": "call1",
                "turn": 6,
            },
            {"id": "tool-0", "cost": 30, "relevance": 0.5, "kind": "tool_definition"},
        ],
        "cache": {
            "provider": "anthropic",
            "min_prefix_tokens": 50,
            "tolerance": 0.2,
            "headroom": 0.5,
            "previous": {
                "blocks": [
                    {
                        "part": "instruction",
                        "content_sha256": _sha("answer in English"),
                        "tokens": 0,
                    }
                ]
            },
        },
    },
]


@pytest.mark.parametrize("request_", _EXACT_BUGS, ids=["cheaper-rewrite", "outside-its-record"])
def test_exact_is_enumerate_on_the_cache_hunts_findings(request_: dict[str, Any]) -> None:
    import assembler

    exact = assembler.assemble(request_, strategy="exact").to_dict()
    oracle = assembler.assemble(request_, strategy="enumerate").to_dict()
    assert (exact["selected"], exact["cache"]) == (oracle["selected"], oracle["cache"])


# -- render-rule and session hunts (issue 47) ---------------------------------------
#
# Marked unit: they run in both kernel modes. The render-rule hunt draws conversations
# (turns that may open one, calls with bad arguments, malformed tool definitions, cache
# sections in any order) and judges them in every format; the session hunt draws the
# cache hunt's requests and judges a Session after an empty delta and re-scorings
# against fresh calls.


@pytest.mark.unit
def test_a_render_rule_hunt_finds_nothing_against_exact_and_greedy_s_unsendable_bundles() -> None:
    exact = hunt(HuntConfig(strategy="exact", examples=40, max_candidates=7, out=None,
                            shape="render"))  # fmt: skip
    assert exact.examples == 40 and not exact.findings, exact.findings
    greedy = hunt(HuntConfig(strategy="greedy", examples=40, max_candidates=7, out=None,
                             shape="render", shrink_per_kind=1))  # fmt: skip
    assert greedy.answer()["shape"] == "render"
    unsendable = [f for f in greedy.findings if "format-rule" in f.explanation]
    assert unsendable and all(f.kind is FindingKind.FALSE_BUNDLE for f in unsendable)
    assert greedy.counts()["exact-disagreement"] == greedy.counts()["crash"] == 0


@pytest.mark.unit
def test_a_session_hunt_finds_nothing_against_exact() -> None:
    report = hunt(HuntConfig(strategy="exact", examples=40, max_candidates=10, out=None,
                             shape="session"))  # fmt: skip
    assert report.examples == 40 and not report.findings, report.findings


# What the two hunts found on the code before issue 47 (seed 0, shrunk): the rule-blind
# decision's answer failed to render (RENDER_EMPTY, first-message-user,
# messages-non-empty, tool-call-arguments, tool-definition), and a cached session answered
# an empty delta with the kept cache-blind optimum and no cache record.
_RENDER_FINDINGS = [
    {"task": {"id": "t", "budget": 10}, "candidates": []},
    {"task": {"id": "t", "budget": 0, "instruction": "Answer briefly."}, "candidates": []},
    {"task": {"id": "t", "budget": 1, "query": "What next?"},
     "candidates": [{"id": "assistant-0", "cost": 0, "relevance": 0.1, "content": "said at 0",
                     "kind": "assistant_turn", "turn": 1}]},
    {"task": {"id": "t", "budget": 10, "query": "What next?"},
     "candidates": [{"id": "tool-0", "cost": 0, "relevance": 0.1, "kind": "tool_definition",
                     "content": "{\"description\": \"no name\"}"}]},
    {"task": {"id": "t", "budget": 20, "instruction": "Answer briefly.", "query": "What next?"},
     "candidates": [{"id": "result-0", "cost": 10, "relevance": 0.1, "content": "output 5",
                     "kind": "tool_result", "tool_call_id": "c5"},
                    {"id": "tool-0", "cost": 10, "relevance": 0.1, "content": "[1, 2]",
                     "kind": "tool_call", "tool_call_id": "c5", "tool_name": "read",
                     "turn": 0}]},
]  # fmt: skip
_SESSION_FINDINGS = [
    {"task": {"id": "t", "budget": 10, "instruction": "answer in English"},
     "candidates": [{"id": "doc0-0", "identity": "doc0-0", "cost": 1, "relevance": 0.1,
                     "content": "document 0", "kind": "evidence"}],
     "cache": {"provider": "anthropic", "min_prefix_tokens": 10,
               "previous": {"blocks": [], "at": 1000.0}}},
    {"task": {"id": "t", "budget": 40, "instruction": "answer in English"},
     "candidates": [{"id": "a0-0", "cost": 30, "relevance": 0.1, "content": "step 0",
                     "kind": "assistant_turn", "turn": 1}],
     "cache": {"provider": "gemini", "min_prefix_tokens": 30, "previous": {"blocks": []}}},
    {"task": {"id": "t", "budget": 90, "instruction": "answer in English"}, "candidates": [],
     "cache": {"provider": "openai", "min_prefix_tokens": 10,
               "previous": {"blocks": [], "at": 1000.0}}},
]  # fmt: skip


@pytest.mark.unit
@pytest.mark.parametrize("request_", _RENDER_FINDINGS)
def test_exact_agrees_in_every_format_on_the_render_hunt_s_findings(
    request_: dict[str, Any],
) -> None:
    from assembler.hunt.judge import judge_in

    verdict = judge_in(request_, "exact", "render")
    assert verdict.kind is None, verdict.explanation


@pytest.mark.unit
@pytest.mark.parametrize("request_", _SESSION_FINDINGS, ids=["anthropic", "gemini", "openai"])
def test_a_session_agrees_with_fresh_calls_on_the_session_hunt_s_findings(
    request_: dict[str, Any],
) -> None:
    from assembler.hunt.judge import judge_in

    verdict = judge_in(request_, "exact", "session")
    assert verdict.kind is None, verdict.explanation
