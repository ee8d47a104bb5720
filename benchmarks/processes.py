"""Measurement processes: spawn one, and be one.

Input: a module to run as ``python -m MODULE [...] SPEC.json OUT.json`` with a spec
dict (``run_child``); or, inside that process, the arguments and the function that
measures a spec (``child_main``).
Output: the child's report (its OUT.json) or ``{"error": ...}``; the child's exit
status.

Every benchmark family measures in fresh interpreters, so that sizes and roles do not
share memory high-water marks, allocator state or warm caches, and runs them one
after another so that no two measurements share the cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "child_main", "run_child"]

ROOT = Path(__file__).resolve().parent.parent


def run_child(
    module: str,
    spec: dict[str, Any],
    name: str,
    workdir: Path,
    budget: float,
    *,
    leading: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Run ``python -m module *leading SPEC OUT`` in the checkout; its report, or an error
    naming ``name``."""
    spec_path = workdir / f"{name}.spec.json"
    out_path = workdir / f"{name}.out.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    try:
        done = subprocess.run(
            [sys.executable, "-m", module, *leading, str(spec_path), str(out_path)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=budget,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"{name}: no answer within {budget:.0f} s"}
    if done.returncode != 0 or not out_path.is_file():
        tail = (done.stderr or done.stdout).strip()[-3000:]
        return {"error": f"{name}: exit status {done.returncode}\n{tail}"}
    loaded: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
    return loaded


def child_main(
    args: list[str], measure: Callable[[dict[str, Any]], dict[str, Any]], usage: str
) -> int:
    """The body of a measurement process: read SPEC.json, measure, write OUT.json."""
    if len(args) != 2:
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as handle:
        spec = json.load(handle)
    report = measure(spec)
    with open(args[1], "w", encoding="utf-8") as handle:
        json.dump(report, handle)
    return 0
