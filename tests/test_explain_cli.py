"""``assembler explain``: the report, the page, stdin, and clear errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import assembler
from assembler.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "models" / "examples" / "review-migration.json"
REFUSED = ROOT / "models" / "examples" / "mandatory-over-budget.json"


def compiled(tmp_path: Path, request: Path, strategy: str = "exact") -> Path:
    data = json.loads(request.read_text())
    result = assembler.assemble(data, strategy=strategy)
    if strategy == "exact":
        assert assembler.verify(data, result) == []
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result.to_dict()))
    return path


def test_the_readme_example_prints_the_report_and_writes_the_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "review.html"
    result = compiled(tmp_path, EXAMPLE)
    assert main(["explain", str(result), "--request", str(EXAMPLE), "--html", str(page)]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("EXPLAIN 'review-migration-0042': BUNDLE (exact")
    assert "budget 4000 cost units, used 3870, slack 130, value 7080 value points" in captured.out
    assert "[proven]" in captured.out
    assert f"wrote {page}" in captured.err
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!doctype html>") and 'data-figure="slack">130<' in html


def test_a_refusal_names_its_excess(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(compiled(tmp_path, REFUSED)), "--request", str(REFUSED)]) == 0
    out = capsys.readouterr().out
    assert "REFUSED MANDATORY_OVER_BUDGET" in out and "mandatory closure 4600, excess 600" in out


def test_without_a_result_the_request_is_compiled(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--request", str(EXAMPLE), "--counterfactuals", "0"]) == 0
    out = capsys.readouterr().out
    assert "counterfactuals: not evaluated (top 0)" in out
    assert "trace   a2747de50e23b650664bfe149cdaf4a3cb7347df701603ba381da5913f9073c6" in out


def test_the_file_is_read_as_the_request_or_the_result_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a request given alone is compiled first, as with --request; a result needs its request
    page = tmp_path / "page.html"
    assert main(["explain", str(EXAMPLE), "--counterfactuals", "0", "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "trace   a2747de50e23b650664bfe149cdaf4a3cb7347df701603ba381da5913f9073c6" in out
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert main(["explain", str(compiled(tmp_path, EXAMPLE))]) == 2
    assert "is a result: give the request it answers with --request" in capsys.readouterr().err


def test_the_result_can_come_from_a_pipe(tmp_path: Path) -> None:
    compiled_out = subprocess.run(
        [sys.executable, "-m", "assembler", "compile", str(EXAMPLE)],
        capture_output=True,
        check=True,
    ).stdout
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assembler",
            "explain",
            "-",
            "--request",
            str(EXAMPLE),
            "--counterfactuals",
            "1",
        ],
        input=compiled_out,
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"proven optimal" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--request", str(REFUSED), str(EXAMPLE) + ".result"], "cannot read"),
        (["--request", str(EXAMPLE), "--counterfactuals", "-1"], "must be 0 or more"),
        (["--request", str(EXAMPLE), "--figure-limit", "0"], "positive number"),
        (["--request", str(EXAMPLE), "--html", "/nonexistent/dir/x.html"], "cannot write"),
        (["-", "--request", "-"], "cannot both come from standard input"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["explain", *args])
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_a_result_of_another_request_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = compiled(tmp_path, REFUSED)
    assert main(["explain", str(other), "--request", str(EXAMPLE)]) == 2
    assert (
        "error: result decisions: do not match the request's candidates" in capsys.readouterr().err
    )


def test_a_result_that_is_not_json_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    assert main(["explain", str(path), "--request", str(EXAMPLE)]) == 2
    assert "is not JSON" in capsys.readouterr().err


def test_the_usage_lists_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assembler", "--help"], capture_output=True, text=True, check=True
    )
    assert "explain RESULT.json --request REQUEST.json" in done.stdout


def test_the_inspector_benchmark_runs_and_writes_its_report(tmp_path: Path) -> None:
    from benchmarks.explain import main as explain_main

    args = ["--sizes", "40", "--counterfactual-sizes", "30", "--repeats", "1"]
    assert explain_main([*args, "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "explain.json").read_text(encoding="utf-8"))
    assert data["page"][0]["size"] == 40 and data["counterfactuals"][0]["runs"][0]["solves"] > 0
    assert "## Counterfactuals" in (tmp_path / "EXPLAIN.md").read_text(encoding="utf-8")


def test_an_os_error_without_a_file_name_and_without_a_ledger_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    import assembler.cli.explain as explain_cli

    def failing(*_: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(explain_cli, "_from_files", failing)
    assert main(["explain", "--request", str(EXAMPLE)]) == 2
    err = capsys.readouterr().err
    assert "Input/output error" in err and "Traceback" not in err
