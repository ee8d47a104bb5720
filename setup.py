"""The build's one step beyond pyproject.toml: the wheel carries its contract.

Input: ``models/`` and ``corpus/`` of the source tree. Output: their JSON files copied
into the built package as ``assembler/contract/`` (schemas at its top, ``examples/``,
``corpus/`` with ``corpus/register/``), read at run time through ``assembler.shipped``.
The copy is made at every build from the normative folders and is never kept in git;
an editable install reads those folders where they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent

# (source folder, pattern, folder inside assembler/contract/)
CONTRACT = (
    ("models", "*.schema.json", ""),
    ("models", "framing.json", ""),
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


setup(cmdclass={"build_py": BuildWithContract})
