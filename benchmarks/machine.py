"""What the numbers were measured on, and what a cold process costs.

Input: nothing (reads /proc, package metadata, git).
Output: ``describe()``: CPU model, cores, RAM, OS, Python and solver versions,
date and the commit measured; ``import_probe(repeats)``: ``import assembler``
time in fresh interpreters (median and all samples), which heavy modules that
import loaded, and the first and second ``assemble`` call on a 100-form instance
in that fresh process (the first one pays for loading the solver).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

HEAVY_MODULES = ("ortools", "highspy", "numpy", "scipy", "networkx", "matplotlib")


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _ram_gib() -> float | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            return round(int(line.split()[1]) / (1024 * 1024), 1)
    return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def describe() -> dict[str, Any]:
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "ram_gib": _ram_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": {
            name: _version(name)
            for name in ("assembler", "ortools", "highspy", "numpy", "scipy", "matplotlib")
        },
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "dirty": None if status is None else bool(status),
    }


_PROBE = """
import json, sys, time
t = time.perf_counter()
import assembler
imported = time.perf_counter() - t
loaded = {name: name in sys.modules for name in HEAVY}
import random
from assembler.hunt.generate import Shape, generate
request = generate(random.Random(1), Shape.scale(100))
t = time.perf_counter()
assembler.assemble(request, time_limit=5.0)
first = time.perf_counter() - t
t = time.perf_counter()
assembler.assemble(request, time_limit=5.0)
second = time.perf_counter() - t
print(json.dumps({"import_s": imported, "loaded": loaded, "first_s": first, "second_s": second}))
""".replace("HEAVY", repr(HEAVY_MODULES))


def import_probe(repeats: int = 5) -> dict[str, Any]:
    samples: list[dict[str, Any]] = []
    for _ in range(max(1, repeats)):
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            return {"error": done.stderr.strip()[-2000:]}
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    loaded = {name: any(sample["loaded"][name] for sample in samples) for name in HEAVY_MODULES}
    return {
        "repeats": len(samples),
        "import_s": statistics.median(s["import_s"] for s in samples),
        "import_samples_s": [s["import_s"] for s in samples],
        "loaded_by_import": loaded,
        "first_call_100_s": statistics.median(s["first_s"] for s in samples),
        "second_call_100_s": statistics.median(s["second_s"] for s in samples),
    }
