"""The page's comparison section: what changed since another compilation of the session.

Input: the ledger's ``Diff`` (``assembler.ledger.diff``), or None. Output: the HTML
section (empty without a comparison): entered, left, changed form, the token delta
(in cost units), what was offered differently, the common prefix, and the first
divergent rendered byte, or why it is unknown.
"""

from __future__ import annotations

from ..ledger.diff import AdmittedItem, Diff
from .figures import COST_UNIT
from .markup import ROW_LIMIT, e, figure

__all__ = ["comparison_section"]


def _diff_items(title: str, items: tuple[AdmittedItem, ...]) -> str:
    if not items:
        return f"<p>{e(title)}: none.</p>"
    rows = "".join(
        f'<tr><td class="id">{e(i.identity)}</td><td class="id">{e(i.form)}</td>'
        f'<td class="n">{i.cost}</td></tr>'
        for i in items[:ROW_LIMIT]
    )
    return (
        f"<table><caption>{e(title)} ({len(items)})</caption>"
        '<thead><tr><th scope="col">identity</th><th scope="col">form id</th>'
        f'<th scope="col" class="n">cost ({COST_UNIT})</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def comparison_section(d: Diff | None) -> str:
    if d is None:
        return ""
    figures = [
        figure("token-delta", "Token delta", f"{d.token_delta:+d}", COST_UNIT),
        f"<div><dt>Entered</dt><dd>{len(d.entered)}</dd></div>",
        f"<div><dt>Left</dt><dd>{len(d.left)}</dd></div>",
        f"<div><dt>Changed form</dt><dd>{len(d.changed)}</dd></div>",
    ]
    if not d.both_rendered:
        rendered = "unknown: the rendered bytes were not recorded for both compilations"
    elif d.rendered_identical:
        rendered = f"none: the rendered bytes are identical ({d.rendered_sizes[1]} bytes)"
    else:
        figures.append(
            figure(
                "first-divergent-byte", "First divergent byte", d.first_divergent_byte, "(offset)"
            )
        )
        rendered = (
            f"the rendered bytes first differ at byte {d.first_divergent_byte} (sizes"
            f" {d.rendered_sizes[0]} and {d.rendered_sizes[1]}): the bytes before it are a"
            " reusable cache prefix"
        )
    changed = "".join(
        f'<tr><td class="id">{e(c.identity)}</td><td>{e(", ".join(c.what))}</td>'
        f'<td class="id">{e(c.before.form)} &rarr; {e(c.after.form)}</td>'
        f'<td class="n">{c.before.cost} &rarr; {c.after.cost}</td></tr>'
        for c in d.changed[:ROW_LIMIT]
    )
    changed_table = (
        f"<table><caption>Changed form ({len(d.changed)})</caption>"
        '<thead><tr><th scope="col">identity</th><th scope="col">what</th>'
        f'<th scope="col">form</th><th scope="col" class="n">cost ({COST_UNIT})</th></tr>'
        f"</thead><tbody>{changed}</tbody></table>"
        if d.changed
        else "<p>Changed form: none.</p>"
    )
    offered = (
        f"Offered: {len(d.offered_added)} added, {len(d.offered_removed)} removed,"
        f" {len(d.offered_changed)} changed. The first {d.common_prefix} selected forms in"
        f" render order are unchanged ({d.selected[0]} then {d.selected[1]} selected)."
    )
    return (
        '<section id="comparison" aria-labelledby="h-comparison">'
        f'<h2 id="h-comparison">Since compilation {d.a}</h2>'
        f'<p class="why">Compilation {d.b} against compilation {d.a} of session'
        f" {e(d.sessions[0] or '-')} ({e(d.statuses[0] or d.outcomes[0])} then"
        f" {e(d.statuses[1] or d.outcomes[1])}), as the ledger's diff gives it; costs"
        f" {d.costs[0]} then {d.costs[1]} {COST_UNIT}, budgets {d.budgets[0]} then"
        f" {d.budgets[1]}.</p>"
        f'<dl class="figures">{"".join(figures)}</dl>'
        f"<p>{e(rendered)}.</p>"
        f"{_diff_items('Entered', d.entered)}{_diff_items('Left', d.left)}{changed_table}"
        f"<p>{e(offered)}</p></section>"
    )
