"""Compiled kernels and their pure-Python twins: which one answers.

Input: the environment variable ``ASSEMBLER_KERNELS`` (read once, when the package is
imported): ``auto`` (the default: each kernel compiled where its build is present and
current), ``python`` (every kernel's pure-Python twin) or ``compiled`` (every kernel
compiled, else ``ImportError``).
Output: ``kernel(twin)``, the module that answers for a kernel (its compiled module or
its twin); ``status()`` says how each is (or would be) loaded and why; ``install()``,
called by ``assembler/__init__.py``, checks the mode once.

A kernel is code written for the compiler: a small C extension over integer arrays
(``KERNELS``: each twin's module and its compiled module, whose C source lies beside
it), with a pure-Python twin written for clarity that takes the same arrays and
returns the same answers; the tests run both on generated requests and require the
same answers (``tests/test_kernels.py``). ``setup.py`` builds the extensions when a C
compiler is present and records each C source's sha256 (``assembler/kernels.json``);
a compiled module whose source has changed since (a developer's edit) is not used,
its twin is. When a kernel is missing or stale under ``auto``, one ``KernelFallback``
warning says so, once per process; the answers are the same, only slower.
"""

from __future__ import annotations

import hashlib
import importlib
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

__all__ = ["KERNELS", "MODES", "KernelFallback", "install", "kernel", "mode", "source", "status"]

# each kernel's pure-Python twin -> its compiled module (C source: the compiled
# module's name with ``.c``, beside the twin)
KERNELS = {
    "assembler.exact.mckp_twin": "assembler.exact._mckp",
    "assembler.model.decode_twin": "assembler.model._decode",
    "assembler.stages.gates_twin": "assembler.stages._gates",
}
MODES = ("auto", "python", "compiled")
# written by setup.py's build: each compiled module's C source sha256 when it was built
RECORD = "kernels.json"
_PACKAGE = Path(__file__).resolve().parent
_LOADED: dict[str, ModuleType] = {}
_WARNED: list[bool] = []


class KernelFallback(RuntimeWarning):
    """A compiled kernel is missing or stale: its pure-Python twin answers (the same
    answers, slower). Issued once per process."""


def mode() -> str:
    """``ASSEMBLER_KERNELS`` as read now (``auto`` when unset)."""
    value = os.environ.get("ASSEMBLER_KERNELS", "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ImportError(f"ASSEMBLER_KERNELS must be one of {', '.join(MODES)}, not {value!r}")
    return value


def source(compiled: str) -> Path:
    """The C source of the compiled module named ``compiled``."""
    return _PACKAGE.joinpath(*compiled.split(".")[1:]).with_suffix(".c")


def _recorded() -> dict[str, str]:
    try:
        data = json.loads((_PACKAGE / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _why_not(compiled: str, recorded: dict[str, str]) -> str | None:
    """Why ``compiled`` cannot be used (None: it can)."""
    if importlib.util.find_spec(compiled) is None:
        return "not compiled in this install"
    if compiled not in recorded:
        return "not recorded by the build"
    path = source(compiled)
    # an install without the C source (a wheel) trusts its build's record
    if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() != recorded[compiled]:
        return "compiled from another version of its source"
    return None


def status() -> dict[str, str]:
    """Each kernel's twin -> ``compiled``, or ``python`` with the reason."""
    chosen = mode()
    recorded = _recorded()
    out: dict[str, str] = {}
    for twin, compiled in KERNELS.items():
        why = "ASSEMBLER_KERNELS=python" if chosen == "python" else _why_not(compiled, recorded)
        out[twin] = "compiled" if why is None else f"python ({why})"
    return out


def kernel(twin: str) -> ModuleType:
    """The module that answers for the kernel whose twin is ``twin``: the compiled one
    when the mode and the install allow, else the twin (announced once under ``auto``;
    ``ImportError`` under ``compiled``)."""
    found = _LOADED.get(twin)
    if found is not None:
        return found
    compiled = KERNELS[twin]
    chosen = mode()
    why = "ASSEMBLER_KERNELS=python" if chosen == "python" else _why_not(compiled, _recorded())
    if why is None:
        found = importlib.import_module(compiled)
    elif chosen == "compiled":
        raise ImportError(f"{compiled}: {why} (ASSEMBLER_KERNELS=compiled)")
    else:
        if chosen == "auto" and not _WARNED:
            _WARNED.append(True)
            warnings.warn(
                f"assembler: the compiled kernel {compiled} is {why}: its pure-Python twin"
                " answers (the same answers, slower; ASSEMBLER_KERNELS=python chooses the"
                " twins without this warning)",
                KernelFallback,
                stacklevel=2,
            )
        found = importlib.import_module(twin)
    _LOADED[twin] = found
    return found


class _SourceFirst(importlib.abc.MetaPathFinder):
    """Loads a module of the package from its source when an extension module of the
    same name lies beside it that is no kernel (a product of an older build, which
    compiled plain modules: never newer than their source, and never to be trusted)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("assembler.") or fullname in _COMPILED:
            return None
        plain = _PACKAGE.joinpath(*fullname.split(".")[1:]).with_suffix(".py")
        if not any(
            plain.with_suffix(suffix).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES
        ) or not plain.exists():
            return None
        loader = importlib.machinery.SourceFileLoader(fullname, str(plain))
        return importlib.util.spec_from_file_location(fullname, plain, loader=loader)


_COMPILED = frozenset(KERNELS.values())


def install() -> None:
    """Check the mode (an unknown one is an ``ImportError`` of the package's import),
    put the finder of plain modules shadowed by an older build's products first (once)
    and, under ``compiled``, load every compiled kernel now, so that a missing one fails
    the import rather than a later call."""
    chosen = mode()
    if not any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFirst())
    if chosen == "compiled":
        for twin in KERNELS:
            kernel(twin)
