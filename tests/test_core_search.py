"""The exact backend's levels (``exact/core_search.py``): every level closes.

The value, then the cost, then the tie-break weight are each proven on a core the
level's own fixings leave; at the cost and tie-break levels a hypothetical threshold
near the bound (``_tighten_level``) gives a small core whose optimum, when it reaches
the threshold, is the answer, or a far better incumbent to fix by. The case below is
the shape issue 47 reported: a 2,082-form knapsack whose costs follow its values, one
selected form's relevance set to 0 (found by ``benchmarks/proofhunt.py``). Its weight
level took CP-SAT 5.8 units of deterministic time (42 s of wall time on a busy machine,
unproven at a 10 s limit) before; CP-SAT's deterministic time counts the work here, as
wall time would depend on the machine.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler.exact import cpsat

CASE = Path(__file__).resolve().parent / "cases" / "tiebreak-2082.json.gz"


def test_the_2082_form_tie_break_case_is_proven_with_little_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    request: dict[str, Any] = json.loads(gzip.decompress(CASE.read_bytes()))
    assert len(request["candidates"]) == 2082
    work: list[float] = []
    run = cpsat.CpSatSearch._run

    def counted(self: cpsat.CpSatSearch) -> tuple[Any, Any]:
        status, response = run(self)
        work.append(response.deterministic_time)
        return status, response

    monkeypatch.setattr(cpsat.CpSatSearch, "_run", counted)
    result = assembler.assemble(request, time_limit=60)
    assert result.status is assembler.Status.BUNDLE and result.optimal
    # the value level's one CP-SAT solve; the cost and weight levels need none
    assert sum(work) < 0.3, work
