"""A recorded compilation, explained, with what changed since another of its session.

Input: an open ``Ledger``, a compilation reference (``N`` or ``last``), optionally the
compilation to compare with (default: the previous one of the same session) and
``ExplainLimits``. Output: an ``Explanation`` whose ``comparison`` is the ledger's own
``Diff`` (entered, left, changed form, token delta, first divergent rendered byte),
or None when the compilation is the first of its session; and its ``billed`` usage row
when the provider's usage for its body was recorded (``assembler.ledger.usage``).

The request and the result are the recorded ones (the result's rendering included);
the comparison is ``assembler.ledger.diff``, never a second diff.
"""

from __future__ import annotations

from dataclasses import replace

from ..cache.usage import sent_blocks
from ..ledger import Ledger
from ..ledger.diff import diff
from ..ledger.usage import UsageRow, cache_usage
from ..model.types import Result
from .explanation import Explanation, explain
from .limits import ExplainLimits
from .load import InvalidResult

__all__ = ["explain_recorded"]


def _billed(ledger: Ledger, number: int, session: str | None, result: Result) -> UsageRow | None:
    """The first usage report of the compilation's session, after it, for its body
    (``of`` naming it, or the same blocks sent)."""
    rendering = result.rendering
    if rendering is None:
        return None
    sent = sent_blocks(rendering.manifest.cache_blocks(rendering.text))
    for row in cache_usage(ledger, session).rows:
        if row.seq > number and (row.of == number or row.blocks == sent):
            return row
    return None


def explain_recorded(
    ledger: Ledger, ref: str, against: str | None = None, *, limits: ExplainLimits | None = None
) -> Explanation:
    number = ledger.resolve(ref)
    compilation = ledger.compilation(number)
    if compilation.request is None or compilation.result is None:
        why = (
            f"its outcome is {compilation.outcome.value}"
            if compilation.error is None
            else f"it failed: {compilation.error.get('message', '')}"
        )
        raise InvalidResult("result", f"compilation {number} of {ledger.path} has none ({why})")
    explanation = explain(compilation.request, compilation.result, limits=limits)
    billed = _billed(ledger, number, compilation.session, explanation.result)
    explanation = replace(explanation, billed=billed)
    where = f"compilation {number} of {ledger.path}, session {compilation.session or '-'}"
    other = ledger.resolve(against) if against is not None else ledger.previous(number)
    if other is None:
        return replace(explanation, recorded=f"{where} (the first of its session)")
    return replace(
        explanation, recorded=where, comparison=diff(ledger.compilation(other), compilation)
    )
