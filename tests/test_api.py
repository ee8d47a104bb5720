"""The curated public API, pinned, and the import-time promise."""

from __future__ import annotations

import subprocess
import sys

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
    "render",
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
        assert exc.name == "magic" and "cpsat" in exc.known
    else:
        raise AssertionError("expected UnknownStrategy")


def test_the_cyclic_collector_is_off_during_a_call_and_restored_after() -> None:
    import gc

    from conftest import request

    from assembler.strategies import STRATEGIES

    seen: list[bool] = []
    STRATEGIES["gc-probe"] = "tests_support:records_gc_state"
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assembler.assemble(request(), strategy="gc-probe")
            seen.append(gc.isenabled())
            assert gc.isenabled() is enabled
    finally:
        del STRATEGIES["gc-probe"]
        gc.enable()
    assert seen == [True, False]


def test_an_exact_call_does_not_load_pandas_and_cp_model_still_serves_it() -> None:
    # OR-Tools' cp_model imports pandas (~0.3 s) for helpers the exact backend never
    # calls; once pandas is imported for real, those helpers work as ever
    code = (
        "import sys, assembler\n"
        "from assembler.tooling.generate import Shape, generate\n"
        "import random\n"
        "request = generate(random.Random(3), Shape.scale(300))\n"
        "result = assembler.assemble(request, time_limit=30)\n"
        "assert 'ortools.sat.python.cp_model' in sys.modules, 'CP-SAT was not reached'\n"
        "assert assembler.verify(request, result) == []\n"
        "print('pandas' in sys.modules)\n"
        "import pandas as pd\n"
        "from ortools.sat.python import cp_model\n"
        "model = cp_model.CpModel()\n"
        "series = model.new_bool_var_series('x', pd.Index([1, 2]))\n"
        "print(type(series).__name__, isinstance(series, cp_model.pd.Series),"
        " isinstance(1, cp_model.pd.Series), sys.modules['pandas'] is pd)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "Series", "True", "False", "True"]
