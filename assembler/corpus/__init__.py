"""The corpus: its cases, and every strategy run over them (``assembler corpus run``).

Input: a corpus directory (``corpus/`` of the repository by default) holding one JSON
file per case, ``<family>-<budget_class>.json``, with the keys ``name`` (the file
stem), ``family``, ``budget_class`` (``tight``, ``medium`` or ``roomy``),
``description``, ``request`` (a request of ``models/README.md``) and ``expected``
(the frozen exact answer: ``status``; for a bundle ``selected`` in render order,
``value`` and ``cost``; for a refusal ``refusal`` with at least ``code``), and a list
of strategy names (default: all of ``assembler.strategies.STRATEGIES``).

Output: a ``CorpusReport``: one ``CaseOutcome`` per case and strategy, and one
``StrategySummary`` per strategy with

* ``status_matches``: cases whose status equals the frozen status;
* ``frozen_matches``: status and ``selected`` equal (bundles), or status and
  refusal code equal (refusals);
* ``illegal`` and ``illegal_by_kind``: bundles that break a rule of their request, as
  judged by the independent verifier (``assembler.verify``), never by the strategy's
  own claim; a bundle is counted once under every kind it breaks (``gate``,
  ``dependency``, ``group``, ``duplicate-identity``, ``budget``, ``required``);
* ``false_refusals``: refusals where the exact answer is a bundle;
* ``value_lost`` / ``value_lost_cases``: over the cases where both the frozen answer
  and the strategy's answer are bundles and the strategy's bundle is legal, the
  frozen value minus the strategy's value, summed, and the number of cases where it
  is positive; ``dearer_cases`` counts legal bundles of the optimal value that cost
  more than the frozen bundle;
* ``distractors`` / ``harmful``: admitted candidates labelled ``distractor`` /
  ``harmful`` (the labels are read here only, never by a strategy);
* ``errors`` (a strategy raised) and ``seconds`` (wall-clock, all cases).

Its command line, ``assembler corpus run [--strategies S,S,...] [--json] [--corpus
DIR]`` (``assembler.cli.corpus``), prints the table (or ``{"strategies": {...},
"cases": [...]}`` with ``--json``) and exits 0, 1 when ``exact`` or ``enumerate``
disagrees with a frozen output (status, selection, value, cost or any frozen refusal
field) or fails, and 2 on a usage error or an unreadable corpus.

Strategies are loaded lazily through ``assemble``: importing this module never
imports OR-Tools.
"""

from __future__ import annotations

from .cases import BUDGET_CLASSES, Case, CorpusError, default_corpus_dir, load_corpus
from .run import (
    DEFAULT_STRATEGIES,
    EXACT_STRATEGIES,
    CaseOutcome,
    CorpusReport,
    StrategySummary,
    run_case,
    run_corpus,
)

__all__ = [
    "BUDGET_CLASSES",
    "DEFAULT_STRATEGIES",
    "EXACT_STRATEGIES",
    "Case",
    "CaseOutcome",
    "CorpusError",
    "CorpusReport",
    "StrategySummary",
    "default_corpus_dir",
    "load_corpus",
    "run_case",
    "run_corpus",
]
