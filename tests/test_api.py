"""The curated public API, pinned, and the import-time promise."""

from __future__ import annotations

import subprocess
import sys

import pytest

import assembler

PUBLIC = {
    "DEFAULT_LIMITS",
    "DEFAULT_TIME_LIMIT",
    "STRATEGIES",
    "AssemblerError",
    "Candidate",
    "Decision",
    "EnumerationTooLarge",
    "InternalError",
    "InvalidRequest",
    "Kind",
    "Ledger",
    "LedgerError",
    "Limits",
    "Manifest",
    "ManifestItem",
    "Reason",
    "Refusal",
    "RefusalCode",
    "RenderError",
    "RenderFormat",
    "Rendering",
    "Request",
    "RequestTooLarge",
    "Result",
    "Session",
    "Settings",
    "SolverError",
    "Status",
    "Task",
    "UnknownStrategy",
    "Verdict",
    "Violation",
    "assemble",
    "fit",
    "parse_request",
    "render_bundle",
    "request_from_json",
    "verify",
    "verify_rendering",
}


def test_public_api_is_pinned() -> None:
    assert set(assembler.__all__) == PUBLIC
    for name in PUBLIC:
        assert hasattr(assembler, name)


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
