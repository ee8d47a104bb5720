"""The compiled kernels and their pure-Python twins (``assembler/kernels.py``).

Input: generated requests (small, at scale, tangled, agent transcripts with content,
rendered in every format), session deltas, and invalid requests; each answered in two
child processes, one with every kernel compiled (``ASSEMBLER_KERNELS=compiled``) and
one with every twin (``ASSEMBLER_KERNELS=python``).
Output: checks that both give the same answers (status, selection, ``package_id``,
``trace_id``, the whole result's JSON but its timings, the rendered bytes and the
provider body) and the same error lines; that a missing or stale kernel is loaded as
its twin with one ``KernelFallback`` warning; and that the mode is the one asked for.
Where this install has no compiled kernels, the twin comparison is skipped, except
under CI (``CI`` set), which must build them.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import assembler
from assembler import kernels

ROOT = Path(__file__).resolve().parents[1]

# answers every input in one child process; prints one JSON line of digests
_ANSWER = textwrap.dedent(
    """
    import hashlib, json, random, sys
    import assembler
    from assembler.hunt.generate import Shape, generate
    from benchmarks.scenarios.adversarial import tangled

    def digest(result):
        data = result.to_dict()
        data.pop("timings")
        rendering = data.pop("rendering")
        text = None if rendering is None else hashlib.sha256(
            json.dumps(rendering, sort_keys=True).encode()).hexdigest()
        return [hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest(), text,
                result.status.value, list(result.selected), result.package_id, result.trace_id]

    def answer(request, **options):
        try:
            return digest(assembler.assemble(request, time_limit=30, **options))
        except assembler.AssemblerError as error:
            return [type(error).__name__, str(error)]

    rng = random.Random(20261202)
    out = []
    formats = (None, "text", "openai-chat", "anthropic-messages")
    for i in range(int(sys.argv[1])):
        shape = (Shape.scale(rng.choice((100, 300, 1000))) if i % 40 == 39
                 else tangled(60) if i % 40 == 19 else Shape.small(rng.randint(1, 14)))
        request = generate(rng, shape)
        fmt = formats[i % 4]
        if fmt is not None:
            for c in request["candidates"]:
                c.setdefault("content", f"content of {c['id']} " * rng.randint(1, 3))
        out.append(answer(request, render=fmt))
        # an invalid variant: the same error line from both
        broken = json.loads(json.dumps(request))
        if broken["candidates"]:
            c = rng.choice(broken["candidates"])
            key, value = rng.choice([("cost", -1), ("relevance", 2), ("depends_on", "x"),
                                     ("kind", "tool"), ("costt", 1), ("id", "")])
            c[key] = value
        out.append(answer(broken))
        text = json.dumps(request)
        try:
            out.append(digest(assembler.assemble(assembler.request_from_json(text))))
        except assembler.AssemblerError as error:
            out.append([type(error).__name__, str(error)])
    sys.path.insert(0, sys.argv[2])
    from benchmarks.agentcases import transcript
    for rounds in (3, 20, 60):
        t = transcript(rounds, rounds)
        before, delta = t.next_turn()
        for fmt in formats[1:]:
            out.append(answer(t.request(), render=fmt))
        session = assembler.Session(before, render="openai-chat", time_limit=30)
        out.append(digest(session.answer()))
        out.append(digest(session.apply(delta)))
        out.append(digest(session.apply({"remove": [delta["add"][0]["id"]]})))
    print(json.dumps(out))
    """
)


def _answers(mode: str, count: int) -> list[object]:
    env = {**os.environ, "ASSEMBLER_KERNELS": mode}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", _ANSWER, str(count), str(ROOT)],
        env=env, capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    answers: list[object] = json.loads(done.stdout)
    return answers


def _all_compiled() -> bool:
    return os.environ.get("ASSEMBLER_KERNELS", "auto") != "python" and all(
        how == "compiled" for how in kernels.status().values()
    )


def test_each_kernel_loads_as_the_mode_says() -> None:
    chosen = kernels.mode()
    status = kernels.status()
    assert set(status) == set(kernels.KERNELS)
    for twin, how in status.items():
        module = kernels.kernel(twin)
        compiled = not str(module.__file__).endswith(".py")
        assert compiled == (how == "compiled"), (twin, how, module.__file__)
        assert module.__name__ == (kernels.KERNELS[twin] if compiled else twin)
    if chosen == "python":
        assert all(how.startswith("python") for how in status.values())
    elif os.environ.get("CI"):
        # CI builds the kernels: its run of the compiled path must be that path
        assert _all_compiled(), status


@pytest.mark.skipif(
    not _all_compiled() and not os.environ.get("CI"), reason="no compiled kernels here"
)
def test_the_compiled_kernels_answer_as_their_twins() -> None:
    count = 120
    compiled, twins = _answers("compiled", count), _answers("python", count)
    assert len(compiled) == len(twins) > 3 * count
    differ = [i for i, (a, b) in enumerate(zip(compiled, twins, strict=True)) if a != b]
    assert differ == [], [(compiled[i], twins[i]) for i in differ[:3]]
    # the inputs reach every outcome: bundles, refusals and input errors
    kinds = {str(a[0]) for a in compiled if isinstance(a, list)}
    assert {"InvalidRequest", "bundle"} <= kinds | {a[2] for a in compiled if len(a) == 6}


def _child(code: str, mode: str = "auto") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ASSEMBLER_KERNELS": mode}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", textwrap.dedent(code)],
        env=env, capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip


# every kernel seen as compiled from another version of its source (a developer's edit)
_STALE = """
    import assembler, assembler.kernels as kernels
    kernels._recorded = lambda: {name: "0" * 64 for name in kernels.KERNELS.values()}
    kernels._LOADED.clear()  # (compiled mode loaded them on import)
    import json
    from assembler.shipped import example
    request = json.loads(example("review-migration").read_text())
    result = assembler.assemble(request, render="text")
    print(result.package_id, result.trace_id)
    print(sorted(set(kernels.status().values())))
"""


def test_a_stale_or_missing_kernel_is_its_twin_announced_once() -> None:
    done = _child(_STALE)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("KernelFallback") == 1, done.stderr
    assert "compiled from another version of its source" in done.stderr
    twins = _child(_STALE, mode="python")
    assert twins.returncode == 0 and "KernelFallback" not in twins.stderr, twins.stderr
    # the same answer either way
    assert done.stdout.splitlines()[0] == twins.stdout.splitlines()[0]


def test_compiled_mode_refuses_a_kernel_it_cannot_load() -> None:
    done = _child(_STALE, mode="compiled")
    assert done.returncode != 0
    assert "ASSEMBLER_KERNELS=compiled" in done.stderr


def test_an_unknown_mode_is_an_import_error_naming_the_variable() -> None:
    done = _child("import assembler", mode="fast")
    assert done.returncode != 0 and "ASSEMBLER_KERNELS must be one of" in done.stderr


def test_each_kernel_has_its_twin_and_its_c_source() -> None:
    # the build compiles each kernel's C source, and nothing else
    assert len(set(kernels.KERNELS.values())) == len(kernels.KERNELS)
    for twin, compiled in kernels.KERNELS.items():
        path = Path(assembler.__file__).parent.joinpath(*twin.split(".")[1:]).with_suffix(".py")
        assert path.exists(), twin
        assert kernels.source(compiled).exists(), compiled
        assert compiled.rsplit(".", 1)[0] == twin.rsplit(".", 1)[0]


def test_a_plain_module_compiled_by_an_older_build_is_loaded_from_its_source(
    tmp_path: Path,
) -> None:
    # an older build compiled plain modules beside their sources; a checkout keeps them
    # (ignored by git) while the sources move on: the source must answer, never the copy
    package = tmp_path / "assembler"
    shutil.copytree(Path(assembler.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    shutil.copyfile("/bin/true", package / "model" / f"limits{suffix}")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "ASSEMBLER_KERNELS": "python"}
    done = subprocess.run(
        [sys.executable, "-c", "import assembler.model.limits as m; print(m.__file__)"],
        env=env, capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(package / "model" / "limits.py")
