"""The structural conformance suite run against ``fit`` (``assembler conformance``).

Input: the formats to run (all by default); the suite is ``models/structure/`` as the
package ships it (``assembler.shipped.structure_dir``).
Output: a ``CaseResult`` per case: its format, id, topic, rule and verdict, the
problems found (none when it passes) and the cuts made. The command line, its table
and its exit code are ``assembler.cli.conformance``.

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

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .adapters.fitting import FitRefused, fit
from .model.errors import InvalidRequest
from .providers.registry import named
from .render.meters import meter_for
from .shipped import structure_dir
from .verifiers.structure import judge

__all__ = ["CaseResult", "load_suite", "run_case", "run_suite"]

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
