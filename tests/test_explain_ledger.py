"""``assembler explain --ledger PATH ID``: a recorded compilation, and what changed since
the previous one of its session, by the ledger's own diff."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import audited

import assembler
from assembler.cli import main
from assembler.explain import ExplainLimits
from assembler.explain.html import render_html
from assembler.explain.load import InvalidResult
from assembler.explain.recorded import explain_recorded
from assembler.ledger.diff import diff

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = json.loads((ROOT / "models" / "examples" / "review-migration.json").read_text())
QUICK = ExplainLimits(top=1, audit=True)


def recorded(tmp_path: Path, *budgets: int, render: str | None = "text") -> tuple[Path, list[Any]]:
    """A ledger holding one compilation of the example per budget, in one session."""
    path = tmp_path / "run.db"
    results = []
    with assembler.Ledger(path) as ledger:
        for budget in budgets:
            data = copy.deepcopy(EXAMPLE)
            data["task"]["budget"] = budget
            result = assembler.assemble(data, ledger=ledger, render=render)
            assert assembler.verify(data, result) == []
            results.append(result)
    return path, results


def test_a_recorded_compilation_is_compared_with_the_previous_of_its_session(
    tmp_path: Path,
) -> None:
    path, (before, after) = recorded(tmp_path, 4000, 3000)
    with assembler.Ledger(path, readonly=True) as ledger:
        explanation = explain_recorded(ledger, "last", limits=QUICK)
        first, last = ledger.numbers()
    audited(explanation.counterfactuals)
    with assembler.Ledger(path, readonly=True) as ledger:
        assert explanation.comparison == diff(ledger.compilation(first), ledger.compilation(last))
    assert explanation.result.trace_id == after.trace_id
    d = explanation.comparison
    assert d is not None and d.token_delta == after.cost - before.cost
    assert before.rendering is not None and after.rendering is not None
    old, new = before.rendering.data, after.rendering.data
    differs = next(i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y)
    assert d.first_divergent_byte == differs
    page = render_html(explanation)
    assert f'data-figure="token-delta">{d.token_delta:+d}<' in page
    assert f'data-figure="first-divergent-byte">{differs}<' in page
    assert "Since compilation" in page and "Recorded: compilation" in page


def test_the_first_of_a_session_has_nothing_to_compare(tmp_path: Path) -> None:
    path, _ = recorded(tmp_path, 4000, render=None)
    with assembler.Ledger(path, readonly=True) as ledger:
        explanation = explain_recorded(ledger, "1", limits=QUICK)
    audited(explanation.counterfactuals)
    assert explanation.comparison is None
    assert explanation.recorded is not None and "the first of its session" in explanation.recorded


def test_the_command_prints_the_ledger_diff_and_writes_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, (before, after) = recorded(tmp_path, 4000, 3000, render=None)
    page = tmp_path / "page.html"
    args = ["explain", "--ledger", str(path), "last", "--counterfactuals", "1", "--html", str(page)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("EXPLAIN 'review-migration-0042'")
    assert f"tokens {before.cost} -> {after.cost} ({after.cost - before.cost:+d})" in out
    assert "rendered bytes: not recorded for both" in out
    html = page.read_text(encoding="utf-8")
    assert "the rendered bytes were not recorded for both compilations" in html
    # --against names the other side explicitly
    with assembler.Ledger(path, readonly=True) as ledger:
        first = str(ledger.numbers()[0])
    assert (
        main(
            ["explain", "--ledger", str(path), first, "--against", first, "--counterfactuals", "0"]
        )
        == 0
    )
    assert "tokens 3870 -> 3870 (+0)" in capsys.readouterr().out


def test_a_failed_compilation_has_nothing_to_explain(tmp_path: Path) -> None:
    path = tmp_path / "run.db"
    with assembler.Ledger(path) as ledger, pytest.raises(assembler.InvalidRequest):
        assembler.assemble({"task": {"id": "t", "budget": -1}, "candidates": []}, ledger=ledger)
    with assembler.Ledger(path, readonly=True) as ledger, pytest.raises(InvalidResult) as caught:
        explain_recorded(ledger, "last", limits=QUICK)
    assert "has none" in str(caught.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ledger", "{db}", "99"], "holds no compilation 99"),
        (["--ledger", "{db}", "last", "--request", "x.json"], "give no FILE, --request"),
        (["--request", "x.json", "--against", "1"], "--against compares recorded"),
        (["--ledger", "{missing}", "1"], "no such ledger file"),
    ],
)
def test_ledger_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    path, _ = recorded(tmp_path, 4000, render=None)
    filled = [a.format(db=path, missing=tmp_path / "missing.db") for a in args]
    assert main(["explain", *filled]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
