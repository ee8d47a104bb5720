"""The garbage-collector policy of a process the command line owns.

Input: nothing (``collector_policy()``, called by ``cli.entry_point`` before a command
runs). Output: the process's cyclic collector collects its first generation after
``GEN0_THRESHOLD`` allocations instead of Python's 700 (and so the older generations,
which wait for it, less often too).

A library call never changes the collector (it is the caller's process); the commands,
``assembler serve`` included, own theirs. A call builds many objects that live as long
as it does, and each pass over the oldest generation walks every one of them again:
collecting less often keeps those passes off the calls. Cycles are still collected
(figures: ``benchmarks/results/collector.md``).
"""

from __future__ import annotations

import gc

__all__ = ["GEN0_THRESHOLD", "collector_policy"]

# allocations between first-generation passes (Python's default is 700)
GEN0_THRESHOLD = 100_000


def collector_policy() -> None:
    """Collect the first generation after ``GEN0_THRESHOLD`` allocations."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GEN0_THRESHOLD, older, oldest)
