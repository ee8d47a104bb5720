"""The curated public API, pinned, and the import-time promise."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import assembler

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_names_have_one_list() -> None:
    # __all__ is _HOME's names; each is read from the module _HOME names
    assert assembler.__all__ == sorted(assembler._HOME)
    for name, home in assembler._HOME.items():
        module = importlib.import_module(home, "assembler")
        assert getattr(assembler, name) is getattr(module, name), name
    # what type checkers read (the TYPE_CHECKING imports) are the same names and homes
    tree = ast.parse(Path(assembler.__file__).read_text(encoding="utf-8"))
    checked = next(
        node for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
    )  # fmt: skip
    imported = {
        alias.name: "." * node.level + (node.module or "")
        for node in checked.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == assembler._HOME
    # the reference page documents every public name
    page = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    assert [name for name in assembler.__all__ if not re.search(rf"\b{name}\b", page)] == []


def test_every_error_derives_from_the_root_and_input_errors_are_value_errors() -> None:
    for error in (
        assembler.InvalidRequest,
        assembler.UnknownStrategy,
        assembler.EnumerationTooLarge,
        assembler.RenderError,
    ):
        assert issubclass(error, assembler.AssemblerError) and issubclass(error, ValueError)
    assert issubclass(assembler.RequestTooLarge, assembler.InvalidRequest)
    for error in (assembler.SolverError, assembler.InternalError):
        # not the input's fault: a caller catching ValueError must not swallow a bug
        assert issubclass(error, assembler.AssemblerError) and not issubclass(error, ValueError)


@pytest.mark.integration
def test_importing_the_package_loads_no_solver() -> None:
    # every module, the solver backends included, imports its solver only when it solves
    code = (
        "import importlib, pkgutil, sys, assembler\n"
        "for m in pkgutil.walk_packages(assembler.__path__, 'assembler.'):\n"
        "    if not m.name.endswith('__main__'):\n"
        "        importlib.import_module(m.name)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'ortools', 'highspy', 'pandas',"
        " 'sqlite3'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_strategy_is_a_clear_error() -> None:
    try:
        assembler.assemble({"task": {"id": "t", "budget": 1}, "candidates": []}, strategy="magic")
    except assembler.UnknownStrategy as exc:
        assert exc.name == "magic" and "exact" in exc.known
    else:
        raise AssertionError("expected UnknownStrategy")


def test_settings_of_another_type_are_an_input_error_naming_the_field() -> None:
    request = {"task": {"id": "t", "budget": 1}, "candidates": []}
    with pytest.raises(assembler.InvalidRequest, match=r"settings: must be an assembler\.Settings"):
        assembler.assemble(request, "exact")  # type: ignore[arg-type]


def test_a_call_leaves_the_collector_as_the_caller_set_it() -> None:
    # the collector is the whole process's: a library call neither pauses it nor tunes
    # it, for its own thread or any other (the commands set a policy for the processes
    # they own: test_cli.py)
    import gc

    import tests_support
    from conftest import request

    from assembler.strategies import STRATEGIES

    STRATEGIES["gc-probe"] = "tests_support:records_gc_state"
    tests_support.GC_SEEN.clear()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            before = (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count())
            assembler.assemble(request(), strategy="gc-probe")
            assert tests_support.GC_SEEN[-1] == before
            assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
    finally:
        del STRATEGIES["gc-probe"]
        gc.enable()
    assert [seen[0] for seen in tests_support.GC_SEEN] == [True, False]


def test_the_subpackages_keep_no_names_from_before_a_rename() -> None:
    import pytest

    from assembler import explain, ledger

    for module, old in ((explain, "Limits"), (explain, "Kind"), (ledger, "Outcome"),
                        (ledger, "Rendering")):  # fmt: skip
        with pytest.raises(AttributeError):
            getattr(module, old)


def test_every_error_class_has_one_home() -> None:
    import inspect
    import pkgutil

    # a command line's own signals and a search's private one are no errors of the API
    signals = {"assembler.cli.arguments.UsageError", "assembler.cli.arguments.ExitRequest",
               "assembler.exact.core.Contradiction"}  # fmt: skip
    elsewhere = []
    for info in pkgutil.walk_packages(assembler.__path__, "assembler."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and not issubclass(value, Warning)
                and value.__module__ == info.name
                and not name.startswith("_")
                and f"{info.name}.{name}" not in signals
                and info.name != "assembler.errors"
            ):
                elsewhere.append(f"{info.name}.{name}")
    assert elsewhere == [], "every error class is defined in assembler/errors.py"
    from assembler import errors

    assert all(issubclass(getattr(errors, n), errors.AssemblerError) for n in errors.__all__
               if n != "PUBLIC")  # fmt: skip
