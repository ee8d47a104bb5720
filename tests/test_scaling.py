"""Every stage grows linearly (or as n log n) on every adversarial shape.

Each stage (parse, gates, closure, greedy, trace, render, the two verifiers, explain
with its two views, and ``ledger diff``) runs on each shape of
``benchmarks.scenarios.adversarial`` at two sizes, ``SCALE`` times apart; the work it does
at the larger size must stay under ``GROWTH`` times its work at the smaller one. Work
is counted, never timed: every line of Python the stage runs and every call it makes
to a built-in (``sys.settrace``, ``sys.setprofile``), so the count is the same on any
machine under any load. A linear stage grows ~4x, n log n ~4.6x, a quadratic one ~16x.
What a built-in does inside one call (a scan of a list, a numpy operation) counts as
that call; a scan repeated per item still shows, as calls or lines that grow with the
square. The solve itself is not here: its search is bounded by the time limit, not by
the request's size (``benchmarks/adversarial.py`` holds that promise).
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import assembler
from assembler.deadline import Deadline
from assembler.exact.closure import build_problem
from assembler.explain.explanation import explain
from assembler.explain.html import render_html
from assembler.explain.limits import ExplainLimits
from assembler.explain.text import render_report
from assembler.ledger.diff import diff
from assembler.model.parse import parse_request
from assembler.model.rendering import RenderFormat
from assembler.render.manifest import build_rendering
from assembler.stages.gates import apply_gates
from assembler.stages.trace import bundle_result
from assembler.strategies.greedy import greedy_strategy
from benchmarks.scenarios.adversarial import Adversary, build, with_content

SMALL = 1_000
SCALE = 4
# between n log n (~4.6x) and anything quadratic (~16x); counts do not vary by run
GROWTH = 6.0


@dataclass(frozen=True, slots=True)
class Case:
    """One shape at one size, with everything its stages read."""

    raw: dict[str, Any]
    request: assembler.Request
    gates: Any
    result: assembler.Result
    ledger: Path
    numbers: tuple[int, int]


def _case(kind: Adversary, size: int, folder: Path) -> Case:
    raw = with_content(build(kind, size).request)
    parsed = parse_request(raw)
    ledger = folder / f"{kind.value}-{size}.db"
    with assembler.Ledger(ledger) as book:
        # greedy: the stages after the solve need a legal bundle, not a proof, and one
        # that a loaded machine's pace cannot change (an exact call's time limit would)
        result = assembler.assemble(raw, strategy="greedy", render="anthropic-messages",
                                    ledger=book)  # fmt: skip
        # the next turn of the task drops the last candidate and a tenth of the
        # budget, so that its bundle differs
        after = copy.deepcopy(raw)
        after["candidates"].pop()
        after["task"]["budget"] -= after["task"]["budget"] // 10
        assembler.assemble(after, strategy="greedy", render="anthropic-messages",
                           ledger=book)  # fmt: skip
        numbers = tuple(book.numbers())
    assert len(numbers) == 2
    return Case(raw, parsed, apply_gates(parsed), result, ledger, (numbers[0], numbers[1]))


def _ledger_diff(case: Case) -> None:
    with assembler.Ledger(case.ledger, readonly=True) as book:
        diff(book.compilation(case.numbers[0]), book.compilation(case.numbers[1]))


def _explained(case: Case) -> None:
    explanation = explain(case.request, case.result, limits=ExplainLimits(top=0))
    render_report(explanation)
    render_html(explanation)


def _trace(case: Case) -> None:
    bundle_result(case.request, case.gates, "exact", case.result.selected, optimal=False,
                  bound=None)  # fmt: skip


def _render(case: Case) -> None:
    if case.result.status is assembler.Status.BUNDLE:
        build_rendering(case.request, case.result, RenderFormat.ANTHROPIC_MESSAGES, None)


def _verify_rendering(case: Case) -> None:
    if case.result.rendering is not None:
        assert assembler.verify_rendering(case.request, case.result, case.result.rendering) == []


STAGES: dict[str, Callable[[Case], object]] = {
    "parse": lambda case: parse_request(case.raw),
    "gates": lambda case: apply_gates(case.request),
    "closure": lambda case: build_problem(case.request, case.gates),
    # the baseline the conformance runs and hunts call on every case
    "greedy": lambda case: greedy_strategy(case.request, case.gates, Deadline.after(60), 1),
    "trace": _trace,
    "render": _render,
    "verify": lambda case: assembler.verify(case.request, case.result),
    "verify_rendering": _verify_rendering,
    "explain": _explained,
    "ledger diff": _ledger_diff,
}


class _Work:
    """The lines of Python run and the built-ins called while it is installed."""

    def __init__(self) -> None:
        self.count = 0

    def line(self, frame: Any, event: str, arg: Any) -> Any:
        self.count += 1
        return self.line

    def call(self, frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            self.count += 1


def _work(stage: Callable[[Case], object], case: Case) -> int:
    """The work ``stage`` does on ``case``, counted."""
    work = _Work()
    sys.setprofile(work.call)
    sys.settrace(work.line)
    try:
        stage(case)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return work.count


@pytest.mark.parametrize("kind", list(Adversary))
def test_every_stage_grows_linearly_on_each_adversarial_shape(
    kind: Adversary, tmp_path: Path
) -> None:
    small = _case(kind, SMALL, tmp_path)
    large = _case(kind, SMALL * SCALE, tmp_path)
    assert small.result.status is large.result.status
    growth = {name: _work(stage, large) / _work(stage, small) for name, stage in STAGES.items()}
    slow = {name: round(ratio, 1) for name, ratio in growth.items() if ratio >= GROWTH}
    assert not slow, f"{kind.value}: {SCALE}x the forms do {slow} times the work"


def test_the_count_sees_a_quadratic_stage(tmp_path: Path) -> None:
    # the yardstick itself: a scan of what came before, per item, is caught
    def quadratic(case: Case) -> int:
        ids = [c.id for c in case.request.candidates]
        return sum(1 for i, x in enumerate(ids) for y in ids[:i] if x == y)

    small = _case(Adversary.CHAIN, SMALL, tmp_path)
    large = _case(Adversary.CHAIN, SMALL * SCALE, tmp_path)
    assert _work(quadratic, large) / _work(quadratic, small) > GROWTH
