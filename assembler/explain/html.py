"""The inspector page: one self-contained HTML document per explanation.

Input: an ``Explanation``. Output: the page as a string.

The page needs nothing but itself: the style is inline, there is no script, no
font, no image and no link to fetch, and a Content-Security-Policy forbids the
browser to fetch anything (``default-src 'none'``), so it opens from disk in any
browser, offline, and reads the same with scripting off. Every text taken from the
request or the result is escaped. The key figures carry ``data-figure`` attributes
(``budget``, ``used``, ``slack``, ``value``, ``mandatory``, ``excess``;
``rendered-bytes`` when the result carries a rendering; ``token-delta`` and
``first-divergent-byte`` in the comparison with another compilation, ``comparison``)
so that a test can find them in the rendered DOM.
"""

from __future__ import annotations

from .billed import billed_section
from .cacheview import cache_section
from .comparison import comparison_section
from .explanation import Explanation
from .figures import COST_UNIT, VALUE_UNIT, Counterfactual, CounterfactualKind, Figure
from .markup import ROW_LIMIT, cls, e, figure
from .scene import Capacity, Item, Scene, Segment, SegmentKind
from .style import PALETTE, STYLE
from .wording import grouped, verdict

__all__ = ["render_html"]

_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none';"
    " form-action 'none'"
)


def render_html(explanation: Explanation) -> str:
    scene = explanation.scene
    parts = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f"<title>explain {e(scene.task)}: {e(scene.status.value)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        _header(scene, explanation.recorded),
        "<main>",
        _capacity(scene),
        cache_section(explanation.cache),
        billed_section(explanation.billed),
        comparison_section(explanation.comparison),
        _categories(scene),
        _admitted(scene),
        _rendered(scene),
        _rejected(scene),
        _counterfactuals(explanation),
        _diagnostics(explanation),
        _lineage(scene),
        "</main>",
        _footer(scene),
        "</body>",
        "</html>",
    ]
    return "\n".join(parts) + "\n"


def _header(scene: Scene, recorded: str | None) -> str:
    status = scene.status.value
    proof = ""
    if status == "bundle":
        proof = "proven optimal" if scene.optimal else "not proven optimal"
    code = f" {scene.refusal_code.value}" if scene.refusal_code is not None else ""
    badge = f'<span class="badge s-{status}">{e(status)}{e(code)}</span>'
    how = f'<span class="why">{e(scene.strategy)}{", " + proof if proof else ""}</span>'
    refusal = ""
    if scene.refusal_message:
        refusal = f'<p class="refusal"><strong>Refusal:</strong> {e(scene.refusal_message)}</p>'
    origin = f'<p class="why">Recorded: {e(recorded)}.</p>' if recorded else ""
    return (
        "<header>"
        '<p class="kicker">assembler explain: one compilation, inspected</p>'
        f'<h1><span class="id">{e(scene.task)}</span> {badge} {how}</h1>'
        f"{origin}"
        f'<p class="scenario">{e(scene.scenario)}</p>'
        f'<p class="boundary">{e(scene.boundary)}</p>'
        f"{refusal}"
        f'<p class="note" role="note"><strong>Not established.</strong>'
        f" {e(scene.not_established)}</p>"
        "</header>"
    )


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.4f}%"


def _segment(segment: Segment, scale: int) -> str:
    if segment.kind is SegmentKind.CATEGORY:
        css = f"c{segment.index % len(PALETTE)}"
    else:
        css = segment.kind.value
    title = f"{segment.label}: {segment.cost} {COST_UNIT}"
    return (
        f'<span class="seg {css}" style="width:{_percent(segment.cost, scale)}"'
        f' title="{e(title)}"></span>'
    )


def _bar(capacity: Capacity) -> str:
    scale = capacity.scale
    segments = "".join(_segment(s, scale) for s in capacity.segments if s.cost > 0)
    overlay = mark = ""
    if capacity.mandatory is not None and capacity.excess is not None:
        at = _percent(capacity.budget, scale)
        overlay = (
            f'<span class="over" style="left:{at};width:{_percent(capacity.excess, scale)}"'
            f' title="excess: {capacity.excess} {COST_UNIT}"></span>'
            f'<span class="budget-line" style="left:{at}" title="budget"></span>'
        )
        mark = f'<span class="mark" style="left:{at}">budget {capacity.budget}</span>'

    elif capacity.used is not None and capacity.used > capacity.budget:
        at = _percent(capacity.budget, scale)
        overlay = f'<span class="budget-line" style="left:{at}" title="budget"></span>'
        mark = f'<span class="mark" style="left:{at}">budget {capacity.budget}</span>'
    return (
        f'<div class="bar" role="img" aria-label="{e(capacity.caption)}">{segments}{overlay}</div>'
        f'<div class="scale"><span>0</span>{mark}<span class="end">{scale} {COST_UNIT}</span>'
        "</div>"
    )


def _legend(capacity: Capacity) -> str:
    items = []
    for s in capacity.segments:
        swatch = f"c{s.index % len(PALETTE)}" if s.kind is SegmentKind.CATEGORY else s.kind.value
        items.append(
            f'<li><span class="swatch {swatch}"></span>{e(s.label)}: {s.cost} {COST_UNIT}</li>'
        )
    if capacity.excess is not None:
        items.append(
            f'<li><span class="swatch sw-excess"></span>beyond the budget (excess):'
            f" {capacity.excess} {COST_UNIT}</li>"
        )
    return f'<ul class="legend">{"".join(items)}</ul>'


def _capacity(scene: Scene) -> str:
    capacity = scene.capacity
    figures = [figure("budget", "Budget", capacity.budget, COST_UNIT)]
    if capacity.used is not None:
        figures.append(figure("used", "Used", capacity.used, COST_UNIT))
        figures.append(figure("slack", "Slack", capacity.slack, COST_UNIT))
    if capacity.mandatory is not None:
        figures.append(figure("mandatory", "Mandatory closure", capacity.mandatory, COST_UNIT))
        figures.append(figure("excess", "Excess", capacity.excess, COST_UNIT))
    if scene.status.value == "bundle":
        proof = ", proven optimal" if scene.optimal else f", bound {scene.bound}"
        figures.append(figure("value", "Value", scene.value, VALUE_UNIT, proof))
    return (
        '<section id="capacity" aria-labelledby="h-capacity">'
        '<h2 id="h-capacity">Capacity</h2>'
        f'<dl class="figures">{"".join(figures)}</dl>'
        f"{_bar(capacity)}{_legend(capacity)}"
        f'<p class="caption">{e(capacity.caption)}.</p>'
        "</section>"
    )


def _categories(scene: Scene) -> str:
    rows = []
    for i, c in enumerate(scene.categories):
        share = "n/a" if c.share is None else f"{c.share:.1%}"
        rows.append(
            f'<tr><th scope="row"><span class="swatch c{i % len(PALETTE)}"></span>'
            f"{e(c.role)} / {e(c.channel)}</th>"
            f'<td class="n">{c.counted}</td><td class="n">{c.cost}</td>'
            f'<td class="n">{share}</td><td class="n">{c.offered}</td>'
            f'<td class="n">{c.rejected}</td></tr>'
        )
    return (
        '<section id="categories" aria-labelledby="h-categories">'
        '<h2 id="h-categories">Categories by role and channel</h2>'
        f"<table><caption>Forms {e(scene.counted_as)}, their cost in {COST_UNIT}, and that"
        " cost as a share of the budget; of all the forms offered in the category.</caption>"
        '<thead><tr><th scope="col">role / channel</th>'
        f'<th scope="col" class="n">{e(scene.counted_as)}</th>'
        f'<th scope="col" class="n">cost ({COST_UNIT})</th>'
        '<th scope="col" class="n">share of budget</th>'
        '<th scope="col" class="n">offered</th><th scope="col" class="n">rejected</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        "</section>"
    )


def _item_rows(items: tuple[Item, ...], *, admitted: bool) -> str:
    rows = []
    for item in items[:ROW_LIMIT]:
        reason = f"<td>{e(item.reason.value)}</td>" if admitted else ""
        rows.append(
            f'<tr><td class="id">{e(item.id)}</td><td>{e(item.identity)}</td>'
            f"<td>{e(item.form)}</td><td>{e(item.role)} / {e(item.channel)}</td>"
            f'<td class="n">{item.value}</td><td class="n">{item.cost}</td>'
            f"{reason}<td>{e(item.detail)}</td></tr>"
        )
    if len(items) > ROW_LIMIT:
        span = 8 if admitted else 7
        rows.append(
            f'<tr><td colspan="{span}" class="more">{len(items) - ROW_LIMIT} more not shown'
            " (the terminal report lists every one)</td></tr>"
        )
    return "".join(rows)


def _item_head(*, admitted: bool) -> str:
    reason = '<th scope="col">reason</th>' if admitted else ""
    return (
        '<thead><tr><th scope="col">form id</th><th scope="col">identity</th>'
        '<th scope="col">form</th><th scope="col">role / channel</th>'
        f'<th scope="col" class="n">value ({VALUE_UNIT})</th>'
        f'<th scope="col" class="n">cost ({COST_UNIT})</th>{reason}'
        '<th scope="col">why</th></tr></thead>'
    )


def _admitted(scene: Scene) -> str:
    if scene.admitted:
        body = (
            "<table><caption>In render order: instructions first, then by id.</caption>"
            f"{_item_head(admitted=True)}<tbody>{_item_rows(scene.admitted, admitted=True)}"
            "</tbody></table>"
        )
    else:
        body = "<p>None: there is no bundle.</p>"
    return (
        '<section id="admitted" aria-labelledby="h-admitted">'
        f'<h2 id="h-admitted">Admitted ({len(scene.admitted)})</h2>{body}</section>'
    )


def _rendered(scene: Scene) -> str:
    rendered = scene.rendered
    if rendered is None:
        return ""
    costs = (
        f"declared ({COST_UNIT}, from the request)"
        if rendered.costs == "declared"
        else f"counted by {rendered.counter}"
    )
    rows = "".join(
        f'<tr><td class="id">{e(form)}</td><td>{e(kind)}</td><td class="n">{offset}</td>'
        f'<td class="n">{length}</td><td class="n">{tokens}</td></tr>'
        for form, kind, offset, length, tokens in rendered.items[:ROW_LIMIT]
    )
    return (
        '<section id="rendering" aria-labelledby="h-rendering">'
        '<h2 id="h-rendering">Rendering</h2>'
        '<dl class="figures">'
        f"{figure('rendered-bytes', 'Rendered', rendered.size, 'bytes (UTF-8)')}"
        f"<div><dt>Format</dt><dd>{e(rendered.format)}</dd></div>"
        f"<div><dt>Costs</dt><dd>{e(costs)}</dd></div></dl>"
        f'<p class="why">sha256 <code>{e(rendered.sha256)}</code>. These bytes were'
        " prepared for the call; nothing here says a model received them.</p>"
        "<table><caption>Items in layout order: where each content sits in the rendered"
        " bytes, and its cost.</caption>"
        '<thead><tr><th scope="col">form id</th><th scope="col">kind</th>'
        '<th scope="col" class="n">offset (bytes)</th><th scope="col" class="n">length'
        ' (bytes)</th><th scope="col" class="n">cost</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def _rejected(scene: Scene) -> str:
    count = sum(len(s.items) for s in scene.rejected)
    blocks = []
    for section in scene.rejected:
        blocks.append(
            f"<h3><code>{e(section.reason.value)}</code> {e(section.title)}"
            f" ({len(section.items)})</h3>"
            f'<p class="why">{e(section.why)}.</p>'
            f"<table>{_item_head(admitted=False)}"
            f"<tbody>{_item_rows(section.items, admitted=False)}</tbody></table>"
        )
    return (
        '<section id="rejected" aria-labelledby="h-rejected">'
        f'<h2 id="h-rejected">Rejected ({count}), by reason</h2>'
        f"{''.join(blocks) or '<p>None.</p>'}</section>"
    )


def _figure_item(figure: Figure) -> str:
    status = figure.status.value
    note = f' <span class="why">({e(figure.note)})</span>' if figure.note else ""
    return (
        f"<li>{e(figure.label)}: <strong>{e(figure.shown())}</strong>"
        f' <span class="badge f-{cls(status)}">{e(status)}</span>{note}</li>'
    )


def _counterfactual(item: Counterfactual, budget: int) -> str:
    said = verdict(item, budget)
    said_html = f" &mdash; {e(said)}" if said else ""
    moved = ""
    if item.entered or item.left:
        moved = (
            f"<li>enters: {e(', '.join(item.entered) or 'nothing')};"
            f" leaves: {e(', '.join(item.left) or 'nothing')}</li>"
        )
    note = f'<li class="why">{e(item.note)}</li>' if item.note else ""
    figures = "".join(_figure_item(f) for f in item.figures)
    who = f'<span class="id">{e(item.identity)}</span>: ' if item.identity else ""
    return (
        f'<div class="cf"><h4>{who}{e(item.question)}{said_html}</h4>'
        f"<ul>{figures}{moved}{note}</ul></div>"
    )


def _gated_table(items: tuple[Counterfactual, ...]) -> str:
    rows = []
    for item in items:
        figure = item.figures[0]
        gate, _, why = item.note.partition(": ")
        rows.append(
            f'<tr><td class="id">{e(item.form)}</td>'
            f"<td>{e(item.identity)}</td><td><code>{e(gate)}</code> {e(why)}</td>"
            f"<td><strong>{e(figure.shown())}</strong>"
            f' <span class="badge f-{cls(figure.status.value)}">{e(figure.status.value)}</span>'
            f"</td></tr>"
        )
    return (
        '<table><thead><tr><th scope="col">form id</th><th scope="col">identity</th>'
        '<th scope="col">gate</th><th scope="col">smallest budget that admits it</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        '<p class="why">Gates never read the budget (model section 4): no budget change can'
        " admit a gated candidate, only a change to what the gate reads.</p>"
    )


def _counterfactuals(explanation: Explanation) -> str:
    answers = explanation.counterfactuals
    budget = explanation.request.task.budget
    head = (
        '<section id="counterfactuals" aria-labelledby="h-counterfactuals">'
        '<h2 id="h-counterfactuals">Counterfactuals</h2>'
    )
    if not answers.evaluated:
        return head + "<p>Not evaluated (asked for the top 0).</p></section>"
    limits = answers.limits
    reference = answers.reference
    against = "not available: the fresh exact solve did not finish within its limit"
    if reference is not None:
        against = f"a fresh exact solve of the request ({reference.status.value})"
    intro = (
        f"<p>Each figure is the exact optimum of a derived request, compared with {e(against)};"
        f" each computation ran under its own limit of {limits.per_figure:g} s, all of them"
        f" under {limits.total:g} s, for the top {limits.top} identities of each kind by value."
        " A figure is <em>proven</em>, a <em>bound only</em>, <em>timed out</em> or"
        " <em>not evaluated</em>; nothing more is claimed.</p>"
    )
    blocks = [head, intro]
    if answers.mandatory is not None:
        blocks.append(f"<ul>{_figure_item(answers.mandatory)}</ul>")
    for group in grouped(answers):
        blocks.append(f'<h3>{e(group.title)}</h3><p class="why">{e(group.about)}.</p>')
        if group.kind is CounterfactualKind.GATED:
            blocks.append(_gated_table(group.items))
        else:
            cards = "".join(_counterfactual(item, budget) for item in group.items)
            blocks.append(f'<div class="cfs">{cards}</div>')
        if group.skipped:
            blocks.append(
                f'<p class="more">{group.skipped} more not evaluated: beyond the top'
                f" {limits.top}.</p>"
            )
    blocks.append("</section>")
    return "".join(blocks)


def _diagnostics(explanation: Explanation) -> str:
    rows = "".join(
        f'<li><span><span class="badge l-{cls(d.label.value)}">{e(d.label.value)}</span></span>'
        f'<span class="topic">{e(d.topic)}</span><span>{e(d.statement)}</span></li>'
        for d in explanation.diagnostics
    )
    return (
        '<section id="diagnostics" aria-labelledby="h-diagnostics">'
        '<h2 id="h-diagnostics">Diagnostics</h2>'
        '<p class="why">confirmed: established by a computation; informational: a fact,'
        " not a problem; potential: a possible problem this compilation cannot settle;"
        " unknown: the inputs do not say; not evaluated: outside what was computed.</p>"
        f'<ul class="diagnostics">{rows}</ul></section>'
    )


def _lineage(scene: Scene) -> str:
    lineage = scene.lineage
    rows = []
    for entry, hits in lineage.seals:
        gated = ", ".join(f"{form} (by {how})" for form, how in hits) or "no candidate"
        rows.append(("seal", entry, f"gates {gated}"))
    for form, ancestors, decided in lineage.derived:
        rows.append(("lineage", form, f"derives from {', '.join(ancestors)}; {decided}"))
    for form, origin, scope, decided in lineage.transfers:
        rows.append(("transfer", form, f"from {origin} (scope {scope}); {decided}"))
    for source, current, forms in lineage.sources:
        now = "no current version given" if current is None else f"current version {current}"
        listed = "; ".join(
            f"{f} at {v if v is not None else 'no version'}: {d}" for f, v, d in forms
        )
        rows.append(("source", source, f"{now}. {listed}"))
    if rows:
        body = (
            '<table><thead><tr><th scope="col">kind</th><th scope="col">name</th>'
            '<th scope="col">what it does here</th></tr></thead><tbody>'
            + "".join(
                f'<tr><td>{e(k)}</td><td class="id">{e(n)}</td><td>{e(w)}</td></tr>'
                for k, n, w in rows[:ROW_LIMIT]
            )
            + "</tbody></table>"
        )
    else:
        body = "<p>No seals, lineage, transfers or source versions in this request.</p>"
    return (
        '<section id="lineage" aria-labelledby="h-lineage">'
        f'<h2 id="h-lineage">Lineage and seals</h2>{body}</section>'
    )


def _footer(scene: Scene) -> str:
    package = scene.package_id or "none (no bundle)"
    return (
        "<footer>"
        f"<p>package_id <code>{e(package)}</code></p>"
        f"<p>trace_id <code>{e(scene.trace_id)}</code></p>"
        "<p>A self-contained page: no script, no font, no image and no network request.</p>"
        "</footer>"
    )
