"""The build's two steps beyond pyproject.toml: the contract and the compiled kernels.

Input: ``models/`` and ``corpus/`` of the source tree, and the kernels' sources
(``assembler/kernels.py``'s ``KERNELS``). Output: the contract's JSON files copied into
the built package as ``assembler/contract/`` (schemas at its top, ``examples/``,
``corpus/`` with ``corpus/register/``), read at run time through ``assembler.shipped``
(never kept in git; an editable install reads those folders where they are); and each
kernel compiled by Cython from its own source into an extension module beside it, with
each source's sha256 in ``assembler/kernels.json`` (an editable install builds them in
the source tree).

Without Cython or a C compiler the build still succeeds: a kernel that cannot be built
is left out (one line says so) and its source, the pure-Python twin, answers; the
package warns once at run time (``assembler.kernels.KernelFallback``).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Cython's directives: language 3, annotations read as Python objects (not C types), so
# the compiled module computes with the same values as its source; signatures kept
_DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True}

# (source folder, pattern, folder inside assembler/contract/)
CONTRACT = (
    ("models", "*.schema.json", ""),
    ("models/structure", "*.json", "structure"),
    ("models/examples", "*.json", "examples"),
    ("corpus", "*.json", "corpus"),
    ("corpus/register", "*.json", "corpus/register"),
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
    """``KERNELS`` of ``assembler/kernels.py``, read without importing the package."""
    tree = ast.parse((ROOT / "assembler" / "kernels.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KERNELS" for t in node.targets
        ):
            names: list[str] = list(ast.literal_eval(node.value))
            return names
    raise SystemExit("setup.py: assembler/kernels.py names no KERNELS")


def _source(name: str) -> Path:
    return ROOT.joinpath(*name.split(".")).with_suffix(".py")


def _kernels() -> list[Any]:
    """The kernels as Cython extensions, or none when Cython is not installed."""
    if os.environ.get("ASSEMBLER_KERNELS", "").strip().lower() == "python":
        return []  # a build asked for the pure-Python package
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("setup.py: Cython is not installed: the kernels stay pure Python", file=sys.stderr)
        return []
    names = _kernel_names()
    extensions = [Extension(name, [str(_source(name).relative_to(ROOT))]) for name in names]
    built: list[Any] = cythonize(
        extensions,
        compiler_directives=_DIRECTIVES,
        build_dir=str(Path("build") / "cython"),
        quiet=True,
    )
    for extension in built:
        # one that fails to compile is left out (cythonize's copies drop the flag)
        extension.optional = True
    return built


class BuildKernels(build_ext):
    """``build_ext`` of optional extensions (one that fails to compile is left out),
    in parallel, then the record of the sources each built kernel was compiled from."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

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


setup(
    cmdclass={"build_py": BuildWithContract, "build_ext": BuildKernels},
    ext_modules=_kernels(),
)
