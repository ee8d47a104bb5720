"""The built wheel, installed in a fresh virtual environment outside the checkout.

Input: the checkout, copied (setuptools builds in the source tree) and built into a
wheel without build isolation (nothing is downloaded). Output: checks that the wheel
carries its contract (``py.typed``, the LICENSE, one version, classifiers and project
URLs, and ``assembler/contract/``: the JSON Schemas, examples and corpus, byte for
byte the files of ``models/`` and ``corpus/``, no symlink); and that, installed in a
new virtual environment and run from another directory, ``compile`` answers a shipped
example, ``corpus run`` matches every case, ``explain --html`` writes its page, a
user's script passes ``mypy --strict`` and runs, and ``bench`` says it is a
development command.

The new environment gets the wheel alone (``--no-deps``); its dependencies (OR-Tools,
NumPy, HiGHS, mypy...) are the test environment's, made visible by one ``.pth`` file
that lists that environment's site-packages, so nothing is downloaded and the package
itself can only come from the wheel.
"""

from __future__ import annotations

import email
import json
import os
import shutil
import site
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import assembler

ROOT = Path(__file__).resolve().parents[1]
# what a source distribution holds, and so what a wheel is built from
_SOURCE = ("assembler", "models", "corpus", "setup.py", "pyproject.toml", "README.md",
           "LICENSE", "MANIFEST.in", "CHANGELOG.md")  # fmt: skip
USER_SCRIPT = """
import json
import sys
from importlib.resources import files

import assembler
from assembler import Limits, Result, Status


def best(path: str, budget: int) -> tuple[str, ...]:
    with open(path, encoding="utf-8") as handle:
        request = json.load(handle)
    request["task"]["budget"] = budget
    result: Result = assembler.assemble(request, limits=Limits(max_candidates=1000))
    if result.status is not Status.BUNDLE:
        return ()
    assert assembler.verify(request, result) == []
    return result.selected


schema = json.loads(files("assembler").joinpath("contract/request.schema.json").read_text())
print(schema["$schema"], len(best(sys.argv[1], 4000)))
"""


def _run(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    given = os.environ if env is None else env
    env = {k: v for k, v in given.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # the wheel's kernels as the wheel has them (CI's pure-Python pass sets this)
    env.pop("ASSEMBLER_KERNELS", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    for name in _SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=_NOT_IN_A_CLONE)
        else:
            shutil.copy(path, source / name)
    return _built(work, source)


# what a build leaves in a checkout and a fresh clone does not have
_NOT_IN_A_CLONE = shutil.ignore_patterns("__pycache__", "*.so", "kernels.json")


def _built(work: Path, source: Path, **env: str) -> Path:
    """The wheel of ``source``, built without build isolation (``env`` over the test
    environment's variables: ``CC`` naming no compiler, for one)."""
    dist = work / f"dist-{len(list(work.glob('dist-*')))}"
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(dist), str(source)],
        cwd=work, env={**os.environ, **env},
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return next(dist.glob("assembler-*.whl"))


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _installed(wheel, tmp_path_factory)


def _installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with ``wheel`` installed (no dependencies: the test
    environment's are visible through a ``.pth`` file)."""
    home = tmp_path_factory.mktemp("venv") / "env"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(home)], cwd=home.parent)
    assert made.returncode == 0, made.stderr
    where = "import site; print(site.getsitepackages()[0])"
    inside = _run([str(home / "bin" / "python"), "-c", where], cwd=home.parent)
    packages = Path(inside.stdout.strip())
    # the test environment's packages, after the new environment's own
    (packages / "test-environment.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    installed = _run(
        [sys.executable, "-m", "pip", "--python", str(home / "bin" / "python"), "install",
         "-q", "--no-deps", "--no-index", str(wheel)],
        cwd=home.parent,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    return home


def test_the_wheel_carries_its_contract_byte_for_byte(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert "assembler/py.typed" in names
        assert not any(name.startswith(("benchmarks/", "tests/", "models/")) for name in names)
        shipped = {name for name in names if name.startswith("assembler/contract/")}
        expected = {
            "assembler/contract/" + p.name: p for p in (ROOT / "models").glob("*.schema.json")
        }
        for folder, inside in (("models/examples", "examples"), ("corpus", "corpus"),
                               ("models/structure", "structure")):  # fmt: skip
            for path in (ROOT / folder).glob("*.json"):
                expected[f"assembler/contract/{inside}/{path.name}"] = path
        assert shipped == set(expected)
        # the providers' figures: each provider's data file, byte for byte
        for path in (ROOT / "assembler" / "facts").glob("*.json"):
            assert archive.read(f"assembler/facts/{path.name}") == path.read_bytes()
        # OpenAI's encodings, compact: counted as billed without any download
        for name in ("o200k_base", "cl100k_base"):
            ranks = ROOT / "assembler" / "render" / "ranks" / f"{name}.ranks.xz"
            assert archive.read(f"assembler/render/ranks/{name}.ranks.xz") == ranks.read_bytes()
        for name, path in expected.items():
            info = archive.getinfo(name)
            assert not stat.S_ISLNK(info.external_attr >> 16), f"{name} is a symlink"
            assert archive.read(name) == path.read_bytes(), f"{name} differs from {path}"
        info_dir = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(f"{info_dir}/METADATA"))
        assert any(n.startswith(f"{info_dir}/") and "LICENSE" in n for n in names)
    assert metadata["Version"] == assembler.__version__
    # the license as an SPDX expression (PEP 639), not a classifier (setuptools refuses both)
    assert metadata["License-Expression"] == "MIT"
    assert not any(c.startswith("License ::") for c in metadata.get_all("Classifier"))
    assert {url.split(",")[0] for url in metadata.get_all("Project-URL")} >= {
        "Documentation", "Source", "Changelog", "Issues"
    }  # fmt: skip


def test_the_installed_wheel_works_from_another_directory(venv: Path, tmp_path: Path) -> None:
    bin_ = venv / "bin"
    code = "import assembler, assembler.shipped as s; print(assembler.__file__, s.source())"
    where = _run([str(bin_ / "python"), "-c", code], cwd=tmp_path)
    path, source = where.stdout.split()
    assert Path(path).is_relative_to(venv) and source == "wheel", where.stderr

    example = _run([str(bin_ / "assembler"), "example", "review-migration", "--path"], cwd=tmp_path)
    request_path = example.stdout.strip()
    assert Path(request_path).is_relative_to(venv)
    compiled = _run([str(bin_ / "assembler"), "compile", request_path], cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    result = json.loads(compiled.stdout)
    assert result["status"] == "bundle" and result["optimal"] is True
    (tmp_path / "result.json").write_text(compiled.stdout)

    corpus = _run([str(bin_ / "assembler"), "corpus", "run", "--json"], cwd=tmp_path)
    assert corpus.returncode == 0, corpus.stderr
    cases = len(list((ROOT / "corpus").glob("*.json")))
    exact = json.loads(corpus.stdout)["strategies"]["exact"]
    assert exact["cases"] == cases and exact["frozen_matches"] == cases

    page = tmp_path / "review.html"
    explained = _run([str(bin_ / "assembler"), "explain", "result.json", "--request", request_path,
                      "--html", str(page), "--counterfactuals", "1"], cwd=tmp_path)  # fmt: skip
    assert explained.returncode == 0, explained.stderr
    assert page.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")

    bench = _run([str(bin_ / "assembler"), "bench"], cwd=tmp_path)
    assert bench.returncode == 2 and "\n" not in bench.stderr.strip()
    assert "development command" in bench.stderr and "clone" in bench.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json", "review.html"]


def test_a_user_script_passes_mypy_strict_against_the_wheel(venv: Path, tmp_path: Path) -> None:
    script = tmp_path / "user.py"
    script.write_text(USER_SCRIPT.lstrip())
    checked = _run([str(venv / "bin" / "python"), "-m", "mypy", "--strict", "--no-incremental",
                    "--cache-dir", os.devnull, str(script)], cwd=tmp_path)  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    example = _run([str(venv / "bin" / "assembler"), "example", "review-migration", "--path"],
                   cwd=tmp_path)  # fmt: skip
    ran = _run([str(venv / "bin" / "python"), str(script), example.stdout.strip()], cwd=tmp_path)
    assert ran.returncode == 0 and ran.stdout.split()[-1] == "10", ran.stderr


def test_the_wheel_carries_every_kernel_compiled(wheel: Path, venv: Path, tmp_path: Path) -> None:
    from assembler.kernels import KERNELS

    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        record = json.loads(archive.read("assembler/kernels.json"))
    for twin, compiled in KERNELS.items():
        stem = compiled.replace(".", "/")
        assert any(n.startswith(stem + ".cpython-") and n.endswith(".so") for n in names), compiled
        assert twin.replace(".", "/") + ".py" in names  # its pure-Python twin ships beside it
    assert sorted(record) == sorted(KERNELS.values())
    # only kernels are compiled (plain modules stay Python), without debug information
    stems = tuple(c.replace(".", "/") + "." for c in KERNELS.values())
    assert all(n.startswith(stems) for n in names if n.endswith(".so"))
    with zipfile.ZipFile(wheel) as archive:
        for name in (n for n in names if n.endswith(".so")):
            assert b".debug_info" not in archive.read(name), name
    code = "import json, assembler.kernels as k; print(json.dumps(k.status()))"
    where = _run([str(venv / "bin" / "python"), "-W", "always", "-c", code], cwd=tmp_path)
    assert set(json.loads(where.stdout).values()) == {"compiled"}, where.stderr
    assert "KernelFallback" not in where.stderr


def test_a_build_without_a_compiler_installs_and_answers_alike(
    wheel: Path, venv: Path, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    work = next(p for p in wheel.parents if (p / "source").is_dir())
    # a copy without the first build's products (its compiled modules would be reused)
    source = work / "source-plain"
    shutil.copytree(work / "source", source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    plain = _built(work, source, CC="/bin/false")
    with zipfile.ZipFile(plain) as archive:
        assert not [n for n in archive.namelist() if n.endswith(".so")]
    home = _installed(plain, tmp_path_factory)
    answers = []
    for env in (venv, home):
        example = _run([str(env / "bin" / "assembler"), "example", "review-migration", "--path"],
                       cwd=tmp_path)  # fmt: skip
        done = _run([str(env / "bin" / "assembler"), "compile", example.stdout.strip(),
                     "--render", "openai-chat"], cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answers.append((done.stdout, done.stderr))
    assert answers[0][0] == answers[1][0]
    # the fallback is announced once, on stderr, and never by the compiled wheel
    assert answers[0][1].count("KernelFallback") == 0
    assert answers[1][1].count("KernelFallback") == 1, answers[1][1]
