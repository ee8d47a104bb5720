"""``assembler conformance``: the structural conformance suite run against ``fit``.

Input: ``[--format F] [--json]``; the suite is ``models/structure/`` as the package
ships it (``assembler.shipped.structure_dir``).
Output: a table per format and rule (or JSON with ``--json``) and the exit code: 0
when every case passes, 1 when one fails, 2 on a usage error.

Each case is a transcript with the provider's verdict and the rule it exercises. A
case passes when

1. ``fit`` gives the provider's verdict: an accepted transcript fits, a rejected one
   is one ``InvalidRequest`` (never another exception);
2. the independent judge (``verifiers.structure``) gives it too, and on a rejected
   transcript names the case's rule;
3. an accepted transcript, fitted at a half and at a third of its tokens, comes back
   as a body the judge accepts, judged against the transcript it was cut from (no
   orphaned result, no call split from its results, no thinking, reasoning or
   signature edited or separated from its turn), within the budget; a ``FitRefused``
   (the required part alone does not fit) is a refusal, not a body, and passes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..adapters.fitting import FitRefused, fit
from ..model.errors import InvalidRequest
from ..providers.registry import named
from ..render.meters import meter_for
from ..shipped import structure_dir
from ..verifiers.structure import judge

__all__ = ["CaseResult", "load_suite", "main", "run_case", "run_suite"]

SHARES = (0.5, 0.33)


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case's outcome: ``problems`` empty when it passes."""

    format: str
    id: str
    topic: str
    rule: str
    verdict: str
    problems: tuple[str, ...] = ()
    # accepted cases: how each cut came out ("fitted" or "refused")
    cuts: tuple[str, ...] = field(default=())


def load_suite(formats: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The suite's files, one per format, in name order."""
    out = []
    for entry in sorted(structure_dir().iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            data: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
            if formats is None or data["format"] in formats:
                out.append(data)
    return out


def _fit(case: dict[str, Any], model: str, fmt: str, budget: int | None) -> Any:
    return fit(case["body"], model=model, format=fmt, budget=budget)


def run_case(suite: dict[str, Any], case: dict[str, Any]) -> CaseResult:
    fmt, model = suite["format"], suite["model"]
    problems: list[str] = []
    cuts: list[str] = []
    broken = judge(fmt, case["body"])
    if (case["verdict"] == "accepted") != (not broken):
        problems.append(f"the judge says {broken or 'accepted'}, the provider {case['verdict']}")
    elif broken and case["rule"] not in {rule for rule, _ in broken}:
        problems.append(f"the judge names {sorted({r for r, _ in broken})}, not {case['rule']}")
    try:
        _fit(case, model, fmt, None)
        ours = "accepted"
    except InvalidRequest:
        ours = "rejected"
    except FitRefused:
        ours = "accepted"
    except Exception as exc:  # the suite's point: a raw exception is a finding
        ours = f"raised {type(exc).__name__}: {exc}"
    if ours != case["verdict"]:
        problems.append(f"fit: {ours}, the provider: {case['verdict']}")
    if case["verdict"] == "accepted" and ours == "accepted":
        full = named(fmt).tokens(meter_for(model), case["body"])
        for share in SHARES:
            budget = int(full * share)
            try:
                fitted = _fit(case, model, fmt, budget)
            except FitRefused:
                cuts.append("refused")
                continue
            except Exception as exc:
                problems.append(f"fit at {share:.0%} raised {type(exc).__name__}: {exc}")
                continue
            cuts.append("fitted")
            body = fitted.body()
            for rule, detail in judge(fmt, body, case["body"]):
                problems.append(f"fit at {share:.0%}: {rule}: {detail}")
            if fitted.tokens > budget:
                problems.append(f"fit at {share:.0%}: {fitted.tokens} tokens > {budget}")
    return CaseResult(fmt, case["id"], case["topic"], case["rule"], case["verdict"],
                      tuple(problems), tuple(cuts))  # fmt: skip


def run_suite(formats: Sequence[str] | None = None) -> list[CaseResult]:
    return [run_case(suite, case) for suite in load_suite(formats) for case in suite["cases"]]


def _table(results: list[CaseResult]) -> str:
    rows: dict[tuple[str, str], list[CaseResult]] = {}
    for r in results:
        rows.setdefault((r.format, r.topic), []).append(r)
    lines = [f"{'format':<20} {'topic':<36} {'cases':>5} {'passed':>6}"]
    for (fmt, topic), group in sorted(rows.items()):
        passed = sum(not r.problems for r in group)
        lines.append(f"{fmt:<20} {topic:<36} {len(group):>5} {passed:>6}")
    for r in results:
        for problem in r.problems:
            lines.append(f"FAIL {r.format} {r.id}: {problem}")
    passed = sum(not r.problems for r in results)
    lines.append(f"{passed} of {len(results)} cases passed")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="assembler conformance",
        description="Run the structural conformance suite (models/structure/) against fit.",
    )
    parser.add_argument("--format", action="append", dest="formats", metavar="FORMAT",
                        help="only this format (repeatable)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    try:
        options = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exit_:
        return 0 if exit_.code == 0 else 2
    known = {suite["format"] for suite in load_suite()}
    for fmt in options.formats or []:
        if fmt not in known:
            print(f"error: --format: unknown format {fmt!r}; one of {sorted(known)}",
                  file=sys.stderr)  # fmt: skip
            return 2
    results = run_suite(options.formats)
    if options.json:
        json.dump([{"format": r.format, "id": r.id, "topic": r.topic, "rule": r.rule,
                    "verdict": r.verdict, "problems": list(r.problems), "cuts": list(r.cuts)}
                   for r in results], sys.stdout, indent=1)  # fmt: skip
        print()
    else:
        print(_table(results))
    return 0 if all(not r.problems for r in results) else 1
