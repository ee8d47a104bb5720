"""The package's architecture, as a test: layers import downwards only.

The README's map names the same layers. Every import of an ``assembler`` module,
at module level or inside a function, must go to a lower layer or stay inside its
own subpackage; a verifier imports only the stated model; module-level imports form
no cycle; no module is much over 600 lines.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "assembler"

# bottom to top; a module may import from any layer listed before its own
LAYERS = (
    # the contract's files (schemas, examples, corpus) as the package carries them
    "shipped",
    # which kernels load compiled (C over arrays) or as their pure-Python twins
    "kernels",
    # the exit codes of every command and served call (assembler/exits.py)
    "exits",
    # the exception hierarchy every floor raises (assembler/errors.py)
    "errors",
    # every figure of a provider (facts/<provider>.json) as typed values: the stated
    # model reads them (a cache section's defaults, a rendering's format)
    "facts",
    "model",
    # the one clock of a call: stages and solvers read it
    "deadline",
    # provider caches: a previous rendering mapped onto a request (prefix, block order)
    # and the simulator: data and pure functions over the model
    "cache",
    "stages",
    "exact",
    "strategies",
    # one room per provider API: its body built, checked and counted from the figures,
    # and a caller's list of it cut for fit (the renderer and the adapters dispatch here)
    "providers",
    # render sits below api: assemble(render=...) renders, and the budget guarantee of
    # counted costs re-solves through a strategy
    "render",
    # the protocol assemble() drives a ledger through (assembler/recorder.py)
    "recorder",
    # the call's settings name a strategy and a render format; the chain runs them
    "settings",
    "pipeline",
    "api",
    # above api: each drives assemble(); assemble() reaches a ledger only through the
    # recorder protocol it is handed, never by importing it
    "session",
    "ledger",
    # the adapters drive assemble() and may record in a ledger they are handed
    "adapters",
    "explain",
    # where the batches of the commands below run: this process, a pool, a Dask cluster
    "engines",
    # the users' commands beside compile, each a room named for it (its command line in
    # cli/): counterexample hunts (with their request generator), sweeps, the corpus
    # run, the structural conformance suite, a cache session's clairvoyant plan
    "hunt",
    "sweep",
    "corpus",
    "conformance",
    "cacheplan",
    "serve",
    "cli",
    "__main__",
    "__init__",
)
# the judges may import the stated model and nothing else of the package
VERIFIERS_MAY_IMPORT = ("errors", "model", "verifiers")
MAX_LINES = 620


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, module: str, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target == "assembler" or target.startswith("assembler."):
                found.add(target)
                # "from . import x" imports a submodule
                found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("assembler"))
    modules = _modules()
    return {name for name in found if name in modules and name != module}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_subpackage_has_a_layer() -> None:
    layers = {_layer(m) for m in _modules()}
    assert layers <= {*LAYERS, "verifiers"}, sorted(layers - {*LAYERS, "verifiers"})


@pytest.mark.parametrize("module", sorted(_modules()))
def test_imports_go_down(module: str) -> None:
    path = _modules()[module]
    mine = _layer(module)
    for target in _imports(path, module, top_level_only=False):
        theirs = _layer(target)
        if theirs == mine:
            continue
        if mine == "verifiers":
            assert theirs in VERIFIERS_MAY_IMPORT, f"{module} (a verifier) imports {target}"
            continue
        if theirs == "verifiers":
            # anyone above the stated model may consult a judge
            continue
        assert LAYERS.index(theirs) < LAYERS.index(mine), f"{module} imports {target} (upwards)"


def test_module_level_imports_have_no_cycle() -> None:
    modules = _modules()
    graph = {m: _imports(p, m, top_level_only=True) for m, p in modules.items()}
    # a package's __init__ re-exporting its submodules is not a cycle with them
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError(f"import cycle: {' -> '.join([*path, node, nxt])}")
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_every_module_states_its_input_and_output() -> None:
    for module, path in _modules().items():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc, f"{module} has no docstring"
        if path.name not in ("__init__.py", "__main__.py"):
            assert "Input" in doc and "Output" in doc, f"{module}'s docstring lacks Input/Output"


def test_no_module_is_over_the_size_limit() -> None:
    for module, path in _modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines <= MAX_LINES, f"{module} has {lines} lines"


def test_each_public_class_name_names_one_class() -> None:
    # one concept, one name: two classes called Limits (or Outcome, Kind...) are a
    # reader's trap; a private helper class may repeat a name
    homes: dict[str, list[str]] = {}
    for module, path in _modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                homes.setdefault(node.name, []).append(module)
    assert {name: found for name, found in homes.items() if len(found) > 1} == {}


def test_only_the_cp_sat_model_module_imports_ortools() -> None:
    for module, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        }
        if any(name.startswith("ortools") for name in names):
            # the model writer loads OR-Tools once, for the CP-SAT backend and the cached one
            assert module == "assembler.exact.cpmodel", f"{module} imports OR-Tools"


def test_python_dash_m_runs_the_command_line() -> None:
    for target in ("assembler", "assembler.cli"):
        done = subprocess.run(
            [sys.executable, "-m", target, "--help"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0 and "compile" in done.stdout, (target, done.stderr)


def test_an_integer_that_is_not_a_bool_is_asked_of_one_rule() -> None:
    # True is an int to Python, never a count here: model.numbers.is_whole / is_number
    # say so once (the verifiers keep their own reading on purpose)
    asked = re.compile(
        r"isinstance\(([\w.]+), bool\)\s+or\s+not\s+isinstance\(\1, int"
        r"|isinstance\(([\w.]+), int[^)]*\)\s+and\s+not\s+isinstance\(\2, bool\)"
        r"|not\s+isinstance\(([\w.]+), int[^)]*\)\s+or\s+isinstance\(\3, bool\)"
    )
    for module, path in _modules().items():
        if module == "assembler.model.numbers" or _layer(module) == "verifiers":
            continue
        assert not asked.search(path.read_text(encoding="utf-8")), module
