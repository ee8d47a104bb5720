"""The command line: exit codes, formats, stdin, and no tracebacks on bad input."""

from __future__ import annotations

import json
import os
import shutil
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
    assert out.startswith("BUNDLE (cpsat)") and "admitted (" in out and "budget 4000" in out


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

    monkeypatch.setitem(solve_module.STRATEGIES, "cpsat", "tests_support:never_finishes")
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


def test_bench_from_a_wheel_install_says_what_is_missing(tmp_path: Path) -> None:
    # A real wheel, installed into a folder of its own: it holds assembler/ only.
    # (built from a copy: setuptools builds in the source tree)
    checkout = Path(__file__).resolve().parents[1]
    source = tmp_path / "source"
    shutil.copytree(checkout / "assembler", source / "assembler",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(checkout / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("assembler-*.whl"))
    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
         str(wheel)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert not (site / "benchmarks").exists()
    run = subprocess.run(
        [sys.executable, "-c", "from assembler.cli import main; raise SystemExit(main(['bench']))"],
        capture_output=True, text=True, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site), "PYTHONSAFEPATH": "1"},
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    message = run.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert "benchmarks/" in message and "clone" in message
