"""The command line: exit codes, formats, stdin, and no tracebacks on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import form, request

from assembler import verify
from assembler.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "models" / "examples" / "review-migration.json"


def write(tmp_path: Path, data: object, name: str = "req.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def test_compile_shipped_example_prints_a_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLE)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "bundle" and result["optimal"] is True
    assert verify(json.loads(EXAMPLE.read_text()), result) == []
    assert len(result["decisions"]) == len(json.loads(EXAMPLE.read_text())["candidates"])


def test_text_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLE), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("BUNDLE (exact)") and "admitted (" in out and "budget 4000" in out


def test_refused_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    req = request(budget=5, required=["a"])
    req["candidates"] = [form("a", 10)]
    assert main(["compile", write(tmp_path, req)]) == 1
    assert json.loads(capsys.readouterr().out)["refusal"]["excess"] == 5


def test_undecided_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Timing cannot be made deterministic, so a strategy that always runs out of time
    # stands in for a real time-out; tests/test_solve.py covers the solver's side.
    from assembler import strategies as solve_module

    monkeypatch.setitem(solve_module.STRATEGIES, "exact", "tests_support:never_finishes")
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4)]
    assert main(["compile", write(tmp_path, req)]) == 3
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "undecided" and out["decisions"][0]["reason"] == "undecided"


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{broken", "malformed JSON"),
        (
            json.dumps({"task": {"id": "t", "budget": 1}, "candidates": [{"id": "x", "cost": -3}]}),
            "candidates[0].cost (candidate 'x'): must be >= 0",
        ),
        (json.dumps({"task": {"id": "t"}, "candidates": []}), "task.budget"),
    ],
)
def test_invalid_input_exits_2_with_a_located_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    assert main(["compile", write(tmp_path, content)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_missing_file_and_bad_options_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "/no/such/file.json"]) == 2
    with pytest.raises(SystemExit) as caught:
        main(["compile", str(EXAMPLE), "--workers", "0"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        main(["compile", str(EXAMPLE), "--strategy", "magic"])
    assert caught.value.code == 2
    assert main(["frobnicate"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_stdin_and_console_script_in_a_subprocess() -> None:
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4)]
    done = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-", "--strategy", "enumerate"],
        input=json.dumps(req),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["selected"] == ["a"]
    bad = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-"],
        input="[1, 2",
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "malformed" in bad.stderr


# ---------------------------------------------------------------------------
# hardening (issue 14)


def _crashing_cli(args: list[str], stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    # a real process whose exact strategy has a bug (tests_support.crashes)
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from assembler import strategies;"
        "strategies.STRATEGIES['exact'] = 'tests_support:crashes';"
        "from assembler.cli import main; raise SystemExit(main(sys.argv[2:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent), *args],
        input=stdin, capture_output=True, text=True, check=False,
        env={**os.environ, **env},
    )  # fmt: skip


def test_a_bug_exits_4_with_one_line_saying_how_to_report_it() -> None:
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4)]
    done = _crashing_cli(["compile", "-"], json.dumps(req))
    assert done.returncode == 4 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: internal error: KeyError") and "report" in line
    assert "ASSEMBLER_TRACEBACK=1" in line
    traced = _crashing_cli(["compile", "-"], json.dumps(req), ASSEMBLER_TRACEBACK="1")
    assert traced.returncode == 4 and "Traceback" in traced.stderr


def test_a_bug_reaches_an_api_caller_as_internal_error_not_value_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import assembler
    from assembler import strategies

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    monkeypatch.setitem(strategies.STRATEGIES, "exact", "tests_support:crashes")
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4)]
    with pytest.raises(assembler.InternalError) as caught:
        assembler.assemble(req)
    assert isinstance(caught.value.cause, KeyError) and caught.value.stage == "assemble"
    assert isinstance(caught.value.__cause__, KeyError)
    assert not isinstance(caught.value, ValueError)


def test_limits_are_options_and_the_request_is_read_no_further(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4), form("b", 3, 0.4)]
    path = write(tmp_path, req)
    assert main(["compile", path, "--max-candidates", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "max_candidates" in err and "--max-candidates" in err
    assert main(["compile", path, "--max-request-bytes", "10"]) == 2
    assert "max_request_bytes" in capsys.readouterr().err
    assert main(["compile", path, "--max-candidates", "2"]) == 0
    capsys.readouterr()
    big = "x" * 5000
    done = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-", "--max-request-bytes", "100"],
        input=json.dumps({**req, "pad": big}), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "more than 100 bytes" in done.stderr
    with pytest.raises(SystemExit) as caught:
        main(["compile", path, "--workers", "257"])
    assert caught.value.code == 2


def test_text_output_escapes_control_characters_and_cuts_long_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    req = request(budget=100)
    req["candidates"] = [form("evil\x1b[2J\nid\u202e", 3, 0.4), form("long" * 1000, 5, 0.1)]
    assert main(["compile", write(tmp_path, req), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "evil\\x1b[2J\\nid\\u202e" in out
    assert max(len(line) for line in out.splitlines()) < 200 and "…" in out


def test_output_to_a_terminal_that_is_not_utf8_is_escaped_not_a_crash() -> None:
    req = request(budget=100)
    req["candidates"] = [form("日本-é", 3, 0.4)]
    for fmt in ("json", "text"):
        done = subprocess.run(
            [sys.executable, "-m", "assembler.cli", "compile", "-", "--format", fmt],
            input=json.dumps(req).encode(), capture_output=True, check=False,
            env={**os.environ, "PYTHONIOENCODING": "latin-1"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        if fmt == "json":
            assert json.loads(done.stdout)["selected"] == ["日本-é"]
        else:
            assert b"\\u65e5\\u672c-\xe9" in done.stdout


def test_limits_far_beyond_the_request_cost_nothing() -> None:
    # found by hand: read(n) allocates n bytes, and a limit may exceed memory
    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.4)]
    huge = str(10**30)
    done = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-",
         "--max-request-bytes", huge, "--max-depth", huge, "--max-candidates", huge],
        input=json.dumps(req), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    deep = "[" * 100_000 + "]" * 100_000
    done = subprocess.run(
        [sys.executable, "-m", "assembler.cli", "compile", "-", "--max-depth", huge],
        input=deep, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "nested too deeply" in done.stderr


def test_the_command_sets_its_process_collector_policy_and_main_alone_does_not() -> None:
    import gc

    from assembler.cli.process import GEN0_THRESHOLD

    probe = (
        "import gc, sys\n"
        "from assembler.cli import entry_point, main\n"
        "before = gc.get_threshold()\n"
        "assert main(['--help']) == 0 and gc.get_threshold() == before\n"
        "sys.argv = ['assembler', '--help']\n"
        "code = entry_point()\n"
        "print(code, gc.get_threshold()[0], gc.isenabled())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-3:] == ["0", str(GEN0_THRESHOLD), "True"]
    assert gc.get_threshold()[0] != GEN0_THRESHOLD  # this process is the tests'


def _parsers() -> list[tuple[str, object]]:
    import argparse

    from assembler.cli import compile as compile_cli
    from assembler.cli import corpus as corpus_cli
    from assembler.cli import explain as explain_cli
    from assembler.cli import hunt as hunt_cli
    from assembler.cli import ledger as ledger_cli
    from assembler.cli import serve as serve_cli
    from assembler.cli import sweep as sweep_cli

    found: list[tuple[str, object]] = []
    for module in (compile_cli, explain_cli, ledger_cli, serve_cli, corpus_cli, hunt_cli,
                   sweep_cli):  # fmt: skip
        for name in dir(module):
            if name.endswith("parser") and callable(getattr(module, name)):
                parser = getattr(module, name)()
                if isinstance(parser, argparse.ArgumentParser):
                    found.append((parser.prog, parser))
    return found


def test_every_option_of_every_command_has_help_text() -> None:
    import argparse

    seen = []
    pending = [parser for _, parser in _parsers()]
    while pending:
        parser = pending.pop()
        assert isinstance(parser, argparse.ArgumentParser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                pending.extend(action.choices.values())
            elif not isinstance(action, argparse._HelpAction):
                seen.append(action.dest)
                assert action.help, f"{parser.prog}: {action.option_strings or action.dest}"
    assert {"strategy", "time_limit", "workers", "format"} <= set(seen)


def test_one_exit_code_table_for_every_command_each_code_one_meaning() -> None:
    import re

    from assembler import exits

    # every named code has its one meaning in the table (aliases name the same one)
    codes = {value for name, value in vars(exits).items() if name.startswith("EXIT_")}
    assert codes == set(exits.MEANINGS)
    # the reference page lists each code once, the same codes
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    section = page[page.index("## Exit codes") : page.index("## Limits")]
    rows = [int(m.group(1)) for m in re.finditer(r"^\| (\d+) \|", section, flags=re.M)]
    assert sorted(rows) == sorted(exits.MEANINGS)
    # no module but the table defines a code of its own
    for path in (ROOT / "assembler").rglob("*.py"):
        if path.name != "exits.py":
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^EXIT_\w+ = ", text, flags=re.M), path


def test_every_setting_is_named_once_as_a_field_of_settings() -> None:
    import dataclasses

    from assembler import settings
    from assembler.cli.compile import setting_options
    from assembler.ledger import documents
    from assembler.serve import messages

    names = {field.name for field in dataclasses.fields(settings.Settings)}
    # the command line: an option per field, named as it (limits: their own group)
    assert set(setting_options()) | {"limits"} == names
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert all(f"--{name.replace('_', '-')}" in page for name in setting_options())
    # the server takes the fields marked served; a recorder writes the recorded ones
    assert set(messages._SETTINGS) == set(settings.SERVED) < names
    assert set(settings.Settings(render="text").recorded()) == set(settings.RECORDED)
    assert set(documents._SETTINGS) | set(documents._OPTIONAL_SETTINGS) == set(settings.RECORDED)
