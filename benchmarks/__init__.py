"""Benchmarks for issue 5: the exact pipeline timed stage by stage, side by side
with CP-SAT alone and HiGHS MILP on the same seeded instances.

Run ``python -m benchmarks`` (or ``assembler bench``) from the checkout; ``--help``
lists the options, ``--quick`` is a smoke test. Results go to
``benchmarks/results/`` (RESULTS.md, results.json, scaling.png).

Modules: ``runner`` (options, processes, aggregation), ``worker`` (one measuring
process), ``peers`` (the two reference solvers), ``machine`` (machine description,
import time), ``report`` (markdown and plot), ``limits`` (the time-limit sweep at
10k-300k forms, issue 12), ``adversarial`` (the adversarial shapes at a limit, also
runnable alone), ``timed`` (one call under a limit, with its overrun and load).
"""

from __future__ import annotations

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    from .runner import main as run

    return run(argv)
