"""The terminal table: a result as the text ``assembler compile --format text`` prints.

Input: a ``Result``. Output: ``render_text(result)``, the admitted forms, the rejected
ones with their reasons, and the budget line, safe for a terminal (every control or
formatting character escaped, long ids and details cut and marked).
"""

from __future__ import annotations

from ..model.rules import printable
from ..model.types import Result, Status, Verdict

__all__ = ["ID_COLUMN", "render_text"]

# Widths in the text table: ids wider than this are cut (the JSON output has them
# whole), so that one long id cannot pad every row of the table.
ID_COLUMN = 48
_DETAIL_CHARACTERS = 240


def render_text(result: Result) -> str:
    """A readable table: admitted forms, then rejected ones, then the budget line.

    Safe for a terminal: every control or formatting character of an id, a detail or
    a message is shown escaped (``\\x1b``, ``\\u202e``), so no escape sequence, line
    break or bidirectional override passes through; ids longer than ``ID_COLUMN`` and
    details longer than a few lines' worth are cut, marked with ``…``.
    """
    lines = [f"{result.status.value.upper()} ({_safe(result.strategy, 40)})"]
    if result.refusal is not None:
        refusal = result.refusal
        lines.append(f"refusal: {refusal.code.value}: {_safe(refusal.message, _DETAIL_CHARACTERS)}")
    ids = {d.id: _safe(d.id, ID_COLUMN) for d in result.decisions}
    width = max([len(shown) for shown in ids.values()] + [4])
    for verdict in (Verdict.ADMITTED, Verdict.REJECTED):
        rows = [d for d in result.decisions if d.verdict is verdict]
        if verdict is Verdict.ADMITTED:
            order = {form: i for i, form in enumerate(result.selected)}
            rows.sort(key=lambda d: order.get(d.id, len(order)))
        lines.append(f"\n{verdict.value} ({len(rows)}):")
        for d in rows:
            detail = _safe(d.detail, _DETAIL_CHARACTERS)
            lines.append(f"  {ids[d.id]:<{width}}  {d.reason.value:<22}  {detail}")
    if result.status is Status.BUNDLE:
        proof = "proven optimal" if result.optimal else _unproven(result)
        lines.append(
            f"\nbudget {result.budget}: cost {result.cost}, slack {result.slack},"
            f" value {result.value} ({proof})"
        )
        lines.append(f"package {result.package_id}")
    else:
        lines.append(f"\nbudget {result.budget}")
    lines.append(f"trace   {result.trace_id}")
    return "\n".join(lines) + "\n"


def _safe(text: str, limit: int) -> str:
    """``text`` on one line, unprintable characters escaped, at most ``limit`` long."""
    # controls, format characters (bidirectional overrides, zero widths), separators
    # and lone surrogates escaped
    text = printable(text)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _unproven(result: Result) -> str:
    if result.bound is None:
        return "not proven optimal, no bound"
    return f"not proven optimal: bound {result.bound}, gap {result.gap:.2%}"
