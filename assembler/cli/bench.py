"""``assembler bench``: run the benchmarks of the source checkout (a development command).

Input: the arguments after ``bench``. Output: the benchmark runner's exit code, or
2 with a message saying what is missing.

The benchmarks are not part of the installed package (a wheel holds ``assembler/``
only): they live in ``benchmarks/`` of a clone. This command finds that folder next
to the package (an editable install) or in the current directory, and otherwise
says how to get it.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from ..exits import EXIT_INVALID

__all__ = ["bench_command", "find_checkout"]

# what the benchmarks import beyond the package's own dependencies
_BENCH_EXTRAS = ("matplotlib",)


def find_checkout() -> Path | None:
    """The clone holding ``benchmarks/``: beside the package, else the current directory."""
    # assembler/cli/bench.py -> the folder holding assembler/
    beside = Path(__file__).resolve().parents[2]
    for root in (beside, Path.cwd()):
        if (root / "benchmarks" / "runner.py").is_file():
            return root
    return None


def bench_command(argv: list[str]) -> int:
    checkout = find_checkout()
    if checkout is None:
        print(
            "error: 'assembler bench' is a development command: the benchmarks are not in"
            " the installed package (a wheel holds only assembler/); they live in"
            " benchmarks/ of the source repository. Run it from a clone, after"
            " python -m pip install -e '.[bench]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    missing = [name for name in _BENCH_EXTRAS if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"error: the benchmarks need {', '.join(missing)}, which is not installed;"
            " install the extra: python -m pip install -e '.[bench]'",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    runner = importlib.import_module("benchmarks")
    return int(runner.main(argv))
