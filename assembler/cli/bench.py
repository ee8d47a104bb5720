"""``assembler bench``: where the benchmarks are (a development command's pointer).

Input: the arguments after ``bench`` (none are read). Output: one line on stderr saying
that the benchmarks are ``python -m benchmarks`` of a source clone, and exit 2 (usage).

The benchmarks are not part of the installed package (a wheel holds ``assembler/``
only): they live in ``benchmarks/`` of a clone and run there as ``python -m
benchmarks`` (``python -m pip install -e '.[bench]'``). The installed command never
imports code from beside the package or from the working directory.
"""

from __future__ import annotations

import sys

from ..exits import EXIT_INVALID

__all__ = ["bench_command"]


def bench_command(argv: list[str]) -> int:
    print(
        "error: the benchmarks are a development command, not part of the installed"
        " package: in a clone of the source repository, after python -m pip install -e"
        " '.[bench]', run python -m benchmarks",
        file=sys.stderr,
    )
    return EXIT_INVALID
