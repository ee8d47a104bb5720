"""The garbage-collector policy of a process the command line owns.

Input: nothing (``collector_policy()``, called by ``cli.main`` before a command runs).
Output: the process's cyclic collector set for answering requests: what the imports
built is frozen out of its passes (``gc.freeze``), and its first generation is
collected after ``GEN0_THRESHOLD`` allocations instead of Python's 700.

A library call never changes the collector (it is the caller's process); the commands,
``assembler serve`` included, own theirs. A call builds many acyclic objects that live
as long as it does, and each pass over the older generations walks all of them again;
collecting less often keeps that walk off the call (the figures:
``benchmarks/results/collector.md``). Cycles are still collected, less often.
"""

from __future__ import annotations

import gc

__all__ = ["GEN0_THRESHOLD", "collector_policy"]

# allocations between first-generation passes (Python's default is 700)
GEN0_THRESHOLD = 100_000


def collector_policy() -> None:
    """Freeze what exists now out of the collector's passes and collect less often."""
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, older, oldest)
