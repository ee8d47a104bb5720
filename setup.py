"""The build's two steps beyond pyproject.toml: the contract and the compiled kernels.

Input: ``models/`` and ``corpus/`` of the source tree, and the kernels' C sources
(``assembler/kernels.py``'s ``KERNELS``). Output: the contract's JSON files copied into
the built package as ``assembler/contract/`` (schemas at its top, ``examples/``,
``corpus/``), read at run time through ``assembler.shipped``
(never kept in git; an editable install reads those folders where they are); and each
kernel's C source compiled into an extension module beside its pure-Python twin
(optimised, without debug information), with each source's sha256 in
``assembler/kernels.json`` (an editable install builds them in the source tree, and
removes the compiled copies of plain modules an older build left there).

Without a C compiler the build still succeeds: a kernel that cannot be built is left
out (one line says so) and its pure-Python twin answers; the package warns once at run
time (``assembler.kernels.KernelFallback``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# optimised, no debug information in the modules (the wheel's size), symbols stripped
_COMPILE = ["-O2", "-g0"]
_LINK = ["-s"]

# (source folder, pattern, folder inside assembler/contract/)
CONTRACT = (
    ("models", "*.schema.json", ""),
    ("models/structure", "*.json", "structure"),
    ("models/examples", "*.json", "examples"),
    ("corpus", "*.json", "corpus"),
)


class BuildWithContract(build_py):
    """``build_py``, then the contract's files into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads models/ and corpus/ in place
        target = Path(self.build_lib) / "assembler" / "contract"
        shutil.rmtree(target, ignore_errors=True)
        for folder, pattern, inside in CONTRACT:
            sources = sorted((ROOT / folder).glob(pattern))
            if not sources:
                raise SystemExit(f"setup.py: no {pattern} in {folder}/: the contract is missing")
            (target / inside).mkdir(parents=True, exist_ok=True)
            for path in sources:
                shutil.copyfile(path, target / inside / path.name)


def _kernel_names() -> list[str]:
    """The compiled modules of ``KERNELS`` in ``assembler/kernels.py``, read without
    importing the package."""
    tree = ast.parse((ROOT / "assembler" / "kernels.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELS" for t in node.targets
        ):
            names: dict[str, str] = ast.literal_eval(node.value)
            return sorted(names.values())
    raise SystemExit("setup.py: assembler/kernels.py names no KERNELS")


def _source(name: str) -> Path:
    return ROOT.joinpath(*name.split(".")).with_suffix(".c")


def _kernels() -> list[Extension]:
    """The kernels as optional C extensions (none when the pure-Python package is asked
    for)."""
    if os.environ.get("ASSEMBLER_KERNELS", "").strip().lower() == "python":
        return []
    return [
        Extension(
            name,
            [str(_source(name).relative_to(ROOT))],
            extra_compile_args=_COMPILE,
            extra_link_args=_LINK,
            optional=True,
        )
        for name in _kernel_names()
    ]


class BuildKernels(build_ext):
    """``build_ext`` of optional extensions (one that fails to compile is left out),
    then the record of the sources each built kernel was compiled from."""

    def run(self) -> None:
        super().run()
        built: dict[str, str] = {}
        for ext in self.extensions:
            target = Path(self.get_ext_fullpath(ext.name))
            if target.exists():
                built[ext.name] = hashlib.sha256(_source(ext.name).read_bytes()).hexdigest()
        missing = sorted({e.name for e in self.extensions} - set(built))
        if missing:
            print(f"setup.py: not compiled, pure Python: {', '.join(missing)}", file=sys.stderr)
        package = Path(self.get_ext_fullpath("assembler.kernels")).parent
        package.mkdir(parents=True, exist_ok=True)
        record = json.dumps(built, indent=1, sort_keys=True) + "\n"
        (package / "kernels.json").write_text(record, encoding="utf-8")
        if self.inplace or getattr(self, "editable_mode", False):
            _remove_leftovers(package)


def _remove_leftovers(package: Path) -> None:
    """The compiled copies of plain modules an older build left in the source tree
    (every module was compiled then): the source answers now."""
    kernels = {_source(name).with_suffix("") for name in _kernel_names()}
    for path in package.rglob("*.so"):
        stem = path.with_name(path.name.split(".", 1)[0])
        if stem not in kernels and stem.with_suffix(".py").exists():
            path.unlink()


setup(
    cmdclass={"build_py": BuildWithContract, "build_ext": BuildKernels},
    ext_modules=_kernels(),
)
