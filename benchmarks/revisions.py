"""Two revisions side by side: a git revision checked out beside the working tree, and a
child process that imports one side's package.

Input: a revision (``checked_out``), or a side's checkout and what its child runs
(``run_side``, ``call_in``). Output: the checkout's path while the ``with`` block runs,
and the child's JSON output. Shared by ``compare`` (answers), ``sidebyside`` and
``speed`` (times): each side imports its own ``assembler`` (``PYTHONPATH`` is the
side's checkout, the working directory a temporary one, so nothing else is found).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "call_in", "checked_out", "run_side"]

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def checked_out(*revisions: str | None) -> Iterator[list[Path]]:
    """Each revision in a detached ``git worktree`` of its own (``None``: the working
    tree itself), removed when the block ends."""
    with tempfile.TemporaryDirectory() as scratch:
        made: list[Path] = []
        paths: list[Path] = []
        try:
            for n, revision in enumerate(revisions):
                if revision is None:
                    paths.append(ROOT)
                    continue
                path = Path(scratch) / f"side-{n}"
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(path),
                     revision],
                    check=True,
                )  # fmt: skip
                made.append(path)
                paths.append(path)
            yield paths
        finally:
            for path in made:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)],
                    check=False,
                )


def run_side(path: Path, argv: list[str], what: str, env: dict[str, str] | None = None) -> Any:
    """``python argv...`` importing the package at ``path`` (``env`` over the
    environment); its stdout as JSON. A failed child ends the benchmark with its
    stderr's end, naming ``what`` ran."""
    done = subprocess.run(
        [sys.executable, *argv],
        env={**os.environ, "PYTHONPATH": str(path), **(env or {})},
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{what} at {path} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def call_in(
    path: Path, module: Path, function: str, *args: Any, env: dict[str, str] | None = None
) -> Any:
    """``function(*args)`` of the benchmark file ``module``, in a child importing the
    package at ``path`` (the file is loaded by its path, so that the package it imports
    is the side's own); the function prints its JSON answer. ``args`` are given as
    their ``repr`` (paths, numbers, strings)."""
    given = ", ".join(f"pathlib.Path({str(a)!r})" if isinstance(a, Path) else repr(a) for a in args)
    code = (
        "import importlib.util as u, pathlib;"
        f" spec = u.spec_from_file_location({module.stem!r}, {str(module)!r});"
        " m = u.module_from_spec(spec); spec.loader.exec_module(m);"
        f" m.{function}({given})"
    )
    return run_side(path, ["-c", code], f"{module.stem}.{function}", env)
