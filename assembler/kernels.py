"""Compiled kernels and their pure-Python twins: which one a module is loaded as.

Input: the environment variable ``ASSEMBLER_KERNELS`` (read once, when the package is
imported): ``auto`` (the default: each kernel compiled where its build is present and
current), ``python`` (every kernel's pure-Python twin) or ``compiled`` (every kernel
compiled, else ``ImportError``).
Output: ``install()``, called by ``assembler/__init__.py``, puts a finder in front of
the import system for the modules of ``KERNELS``; ``status()`` says how each was (or
will be) loaded and why.

A kernel is one of the package's own modules, compiled by Cython from its very source
(``setup.py`` builds it with the package when Cython and a C compiler are present) into
an extension module of the same name beside it: the source is the pure-Python twin, so
the two cannot drift apart in what they say, and the tests run both on generated
requests and require the same answers (``tests/test_kernels.py``). The build records
each source's sha256 (``assembler/kernels.json``); a compiled module whose source has
changed since (a developer's edit) is not loaded, its twin is. When a kernel is
missing or stale under ``auto``, one ``KernelFallback`` warning says so, once per
process; the answers are the same, only slower.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["KERNELS", "MODES", "KernelFallback", "install", "mode", "status"]

# The modules compiled: the interpreted hot path of a call (parse, gates, closure and
# the knapsack program, trace and identities, layout and manifest). Each is plain
# Python that Cython compiles as it is (annotations read as Python objects, so the
# twin's arithmetic and types are the compiled module's).
KERNELS = (
    "assembler.model.rules",
    "assembler.model.decode",
    "assembler.model.parse",
    "assembler.stages.gates",
    "assembler.stages.identities",
    "assembler.stages.trace",
    "assembler.exact.closure",
    "assembler.exact.presolve",
    "assembler.exact.incumbent",
    "assembler.exact.core",
    "assembler.exact.fixings",
    "assembler.exact.knapsack",
    "assembler.render.layout",
    "assembler.render.manifest",
)
MODES = ("auto", "python", "compiled")
# written by setup.py's build: each kernel's source sha256 when it was compiled
RECORD = "kernels.json"
_PACKAGE = Path(__file__).resolve().parent


class KernelFallback(RuntimeWarning):
    """A compiled kernel is missing or stale: its pure-Python twin answers (the same
    answers, slower). Issued once per process."""


def mode() -> str:
    """``ASSEMBLER_KERNELS`` as read now (``auto`` when unset)."""
    value = os.environ.get("ASSEMBLER_KERNELS", "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ImportError(f"ASSEMBLER_KERNELS must be one of {', '.join(MODES)}, not {value!r}")
    return value


def _source(name: str) -> Path:
    return _PACKAGE.joinpath(*name.split(".")[1:]).with_suffix(".py")


def _compiled(name: str) -> Path | None:
    source = _source(name)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = source.with_suffix(suffix)
        if path.exists():
            return path
    return None


def _recorded() -> dict[str, str]:
    try:
        data = json.loads((_PACKAGE / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _why_not(name: str, recorded: dict[str, str]) -> str | None:
    """Why ``name`` cannot be loaded compiled (None: it can)."""
    if _compiled(name) is None:
        return "not compiled in this install"
    digest = hashlib.sha256(_source(name).read_bytes()).hexdigest()
    if recorded.get(name) != digest:
        return "compiled from another version of its source"
    return None


def status() -> dict[str, str]:
    """Each kernel -> ``compiled``, or ``python`` with the reason."""
    chosen = mode()
    recorded = _recorded()
    out: dict[str, str] = {}
    for name in KERNELS:
        why = "ASSEMBLER_KERNELS=python" if chosen == "python" else _why_not(name, recorded)
        out[name] = "compiled" if why is None else f"python ({why})"
    return out


class _Finder(importlib.abc.MetaPathFinder):
    """Finds each kernel as its compiled module or its source, by the mode."""

    def __init__(self, chosen: str) -> None:
        self.chosen = chosen
        self.recorded: dict[str, str] | None = None
        self.warned = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in KERNELS:
            return None
        source = _source(fullname)
        if self.chosen != "python":
            if self.recorded is None:
                self.recorded = _recorded()
            why = _why_not(fullname, self.recorded)
            if why is None:
                compiled = _compiled(fullname)
                assert compiled is not None
                native = importlib.machinery.ExtensionFileLoader(fullname, str(compiled))
                return importlib.util.spec_from_file_location(fullname, compiled, loader=native)
            if self.chosen == "compiled":
                raise ImportError(f"{fullname}: {why} (ASSEMBLER_KERNELS=compiled)")
            self._announce(fullname, why)
        loader = importlib.machinery.SourceFileLoader(fullname, str(source))
        return importlib.util.spec_from_file_location(fullname, source, loader=loader)

    def _announce(self, fullname: str, why: str) -> None:
        if self.warned:
            return
        self.warned = True
        warnings.warn(
            f"assembler: the compiled kernel {fullname} is {why}: its pure-Python twin"
            " answers (the same answers, slower; ASSEMBLER_KERNELS=python chooses the twins"
            " without this warning)",
            KernelFallback,
            stacklevel=2,
        )


def install() -> None:
    """Put the kernels' finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(mode()))
