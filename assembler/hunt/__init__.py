"""Counterexample hunts: find, shrink and pin where a strategy fails.

Input: a strategy name, a seed, an example count or a time budget, a candidate cap,
an engine (this process, a local pool, a Dask cluster) and an output folder (the
command line ``assembler hunt ...``, ``assembler.cli.hunt``, parses them). The
examples come from the room's own generator (``generate``, ``shapes``;
``cachesessions`` for ``--cache``), which the tests and benchmarks share.
Output: a summary (text, or JSON with ``--json``) of every disagreement between the
strategy and the exact solver, and one JSON file per shrunk finding in ``--out``
with ``kind``, ``strategy``, ``seed``, ``example``, ``request``, ``answers`` and a
one-line ``explanation``. ``assembler hunt --replay FILE`` re-runs a saved case.

Example ``i`` of seed ``s`` is ``generate(random.Random(f"{s}:{i}"), Shape.small(M))``,
so a hunt is deterministic for a given seed and example count whatever the engine and
its worker count: workers take batches of indices and the parent merges them by index.
A state folder journals every merged batch (``journal``): a hunt stopped by Ctrl-C
writes its findings so far, and ``--resume DIR`` continues it without repeating a
batch.

Every answer is judged against ``exact`` (and against ``enumerate`` as a second
opinion when the request is small enough), and every bundle by the independent
verifier, never by the strategy's own claim. Kinds, in the order they are checked:
``crash`` (a strategy raised on valid input), ``exact-disagreement`` (exact and
enumerate disagree, an exact answer fails the verifier, or a baseline beats exact:
a bug in the project), ``false-bundle``, ``false-refusal``, ``suboptimal-value``,
``suboptimal-cost``.

Shrinking is delta debugging on the request dict (drop candidates, drop a candidate
together with its share of the budget, drop required / seal entries, dependencies,
lineage, groups and other optional fields, simplify costs, budget and relevance to
rounder numbers, renumber names, sort candidates), keeping every edit after which the
strategy still shows the same kind. It costs ~100 examples' worth of judging, so only
the first ``--shrink N`` findings of each kind (default 3) are shrunk; every finding
is counted and listed (by example index, which regenerates it). A saved case is named
``STRATEGY-KIND-HASH.json`` after its shrunk request, so a re-run overwrites rather
than duplicates; its ``answers`` are ``Result.to_dict()`` without the wall-clock
``timings`` (roles ``tested``, ``exact`` and, when run, ``oracle``).

Exit codes: 0 hunt finished; 1 an exact strategy is wrong (an exact-disagreement or
crash, or any finding against ``exact`` / ``enumerate``), or a replayed case did not
reproduce; 2 bad arguments; 5 the engine failed; 130 stopped by Ctrl-C (the table of
every command: ``assembler.exits``).
"""

from __future__ import annotations

from .judge import FindingKind, Judgement, judge
from .run import Finding, HuntConfig, HuntReport, Progress, example_request, hunt, replay
from .shrink import shrink

__all__ = [
    "Finding",
    "FindingKind",
    "HuntConfig",
    "HuntReport",
    "Judgement",
    "Progress",
    "example_request",
    "hunt",
    "judge",
    "replay",
    "shrink",
]
