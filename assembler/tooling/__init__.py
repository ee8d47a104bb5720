"""Tooling around the assembler: it drives strategies, it is never driven by them.

``shapes`` and ``generate``: a seeded random request generator (hunts, property
tests and benchmarks share it). ``conformance``: the 48-case corpus, run over every
strategy, and its comparison table. ``hunt``: counterexample hunts (``judge`` one
request, ``shrink`` a finding, ``run`` a hunt, its ``state`` journal, its ``command``
line). ``sweep``: a grid of shapes x budgets x strategies judged into one table.
``engine``: where batches run (this process, a local pool, a Dask cluster), shared
by hunts, sweeps and the corpus run, with ``progress``, ``stopping`` (Ctrl-C) and
``arguments`` for their command lines.
"""
