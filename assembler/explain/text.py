"""The terminal report of an explanation.

Input: an ``Explanation``. Output: plain text (lines of at most ~100 columns, apart
from long ids), in the order of the page: scenario, boundary, capacity, the cache (a
request with a cache section), categories, admitted, rejected by reason,
counterfactuals, diagnostics, lineage and seals, what the compilation does not
establish, identities.
"""

from __future__ import annotations

import string

from .cacheview import cache_lines
from .explanation import Explanation
from .figures import COST_UNIT, VALUE_UNIT
from .scene import Capacity, Scene, SegmentKind
from .wording import figure_phrase, grouped, verdict

__all__ = ["render_report"]

_BAR = 60
_MARKS = string.ascii_uppercase


def render_report(explanation: Explanation) -> str:
    scene = explanation.scene
    lines = [_headline(scene), ""]
    if explanation.recorded is not None:
        lines.append(f"recorded: {explanation.recorded}")
    lines += [scene.scenario, scene.boundary, ""]
    lines += _capacity(scene)
    lines += cache_lines(explanation.cache)
    lines += _categories(scene)
    lines += _admitted(scene)
    lines += _rendered(scene)
    lines += _rejected(scene)
    lines += _counterfactuals(explanation)
    lines.append("diagnostics:")
    for d in explanation.diagnostics:
        lines.append(f"  [{d.label.value}] {d.topic}: {d.statement}")
    lines.append("")
    lines += _lineage(scene)
    lines.append(f"not established: {scene.not_established}")
    lines.append("")
    lines.append(f"package {scene.package_id or '(none: no bundle)'}")
    lines.append(f"trace   {scene.trace_id}")
    return "\n".join(lines) + "\n"


def _headline(scene: Scene) -> str:
    proof = ""
    if scene.status.value == "bundle":
        proof = ", proven optimal" if scene.optimal else ", not proven optimal"
    code = f" {scene.refusal_code.value}" if scene.refusal_code is not None else ""
    return f"EXPLAIN {scene.task!r}: {scene.status.value.upper()}{code} ({scene.strategy}{proof})"


def _bar(capacity: Capacity) -> list[str]:
    scale = capacity.scale
    cells: list[str] = []
    done = 0
    for segment in capacity.segments:
        # cumulative rounding: the cells add up to the bar, whatever the segments
        done += segment.cost
        width = round(done * _BAR / scale) - len(cells)
        if segment.kind is SegmentKind.CATEGORY:
            mark = _MARKS[segment.index % len(_MARKS)]
        else:
            mark = {SegmentKind.SLACK: ".", SegmentKind.UNPRICED: "?"}.get(segment.kind, "!")
        cells.extend(mark * width)
    cells = (cells + [" "] * _BAR)[:_BAR]
    rows = ["  [" + "".join(cells) + "]"]
    if capacity.mandatory is not None and capacity.excess is not None:
        at = round(capacity.budget * _BAR / scale)
        rows.append("   " + " " * at + "^ budget " + f"{capacity.budget}; excess {capacity.excess}")
    return rows


def _capacity(scene: Scene) -> list[str]:
    capacity = scene.capacity
    lines = ["capacity:", *_bar(capacity)]
    legend = [
        f"{_MARKS[s.index % len(_MARKS)]} {s.label} {s.cost}"
        for s in capacity.segments
        if s.kind is SegmentKind.CATEGORY
    ]
    if legend:
        lines.append(f"  ({'; '.join(legend)}, in {COST_UNIT})")
    figures = [f"budget {capacity.budget} {COST_UNIT}"]
    if capacity.used is not None:
        figures.append(f"used {capacity.used}")
        figures.append(f"slack {capacity.slack}")
    if capacity.mandatory is not None:
        figures.append(f"mandatory closure {capacity.mandatory}")
        figures.append(f"excess {capacity.excess}")
    if scene.status.value == "bundle":
        figures.append(f"value {scene.value} {VALUE_UNIT}")
    lines.append("  " + ", ".join(figures))
    lines.append(f"  {capacity.caption}")
    return [*lines, ""]


def _categories(scene: Scene) -> list[str]:
    lines = [f"categories (role / channel; {scene.counted_as}, {COST_UNIT}, share of budget):"]
    width = max([len(c.label) for c in scene.categories] + [8])
    for c in scene.categories:
        share = "n/a" if c.share is None else f"{c.share:.1%}"
        lines.append(
            f"  {c.label:<{width}}  {c.counted:>3} {scene.counted_as}  {c.cost:>7}  {share:>6}"
            f"   of {c.offered} offered, {c.rejected} rejected"
        )
    return [*lines, ""]


def _admitted(scene: Scene) -> list[str]:
    lines = [f"admitted ({len(scene.admitted)}), in render order:"]
    width = max([len(i.id) for i in scene.admitted] + [4])
    for item in scene.admitted:
        lines.append(
            f"  {item.id:<{width}}  {item.form:<9} value {item.value:>5}  cost {item.cost:>6}"
            f"  {item.reason.value}: {item.detail}"
        )
    if not scene.admitted:
        lines.append("  (none)")
    return [*lines, ""]


def _rendered(scene: Scene) -> list[str]:
    rendered = scene.rendered
    if rendered is None:
        return []
    costs = "declared" if rendered.costs == "declared" else f"counted by {rendered.counter}"
    lines = [
        f"rendering: {rendered.size} bytes (UTF-8, {rendered.format}), costs {costs},"
        f" sha256 {rendered.sha256}",
    ]
    for form, kind, offset, length, tokens in rendered.items:
        lines.append(f"  {form}  {kind}  bytes {offset}..{offset + length}  cost {tokens}")
    return [*lines, ""]


def _rejected(scene: Scene) -> list[str]:
    count = sum(len(s.items) for s in scene.rejected)
    lines = [f"rejected ({count}), by reason:"]
    width = max([len(i.id) for s in scene.rejected for i in s.items] + [4])
    for section in scene.rejected:
        lines.append(f"  {section.title} ({section.reason.value}: {section.why}):")
        for item in section.items:
            lines.append(
                f"    {item.id:<{width}}  value {item.value:>5}  cost {item.cost:>6}  {item.detail}"
            )
    return [*lines, ""]


def _counterfactuals(explanation: Explanation) -> list[str]:
    answers = explanation.counterfactuals
    budget = explanation.request.task.budget
    if not answers.evaluated:
        return ["counterfactuals: not evaluated (top 0)", ""]
    reference = answers.reference
    against = "not available (the fresh exact solve did not finish)"
    if reference is not None:
        against = f"{reference.status.value} (trace {reference.trace_id[:12]})"
    lines = [f"counterfactuals (exact optima of derived requests; reference: {against}):"]
    if answers.mandatory is not None:
        lines.append(f"  {figure_phrase(answers.mandatory)}")
    for group in grouped(answers):
        lines.append(f"  {group.title}: {group.about}")
        for item in group.items:
            who = f"{item.identity}: " if item.identity else ""
            said = verdict(item, budget)
            lines.append(f"    {who}{item.question}" + (f" -> {said}" if said else ""))
            for figure in item.figures:
                lines.append(f"      {figure_phrase(figure)}")
            if item.entered or item.left:
                lines.append(
                    f"      enters: {', '.join(item.entered) or '-'}; leaves:"
                    f" {', '.join(item.left) or '-'}"
                )
            if item.note:
                lines.append(f"      {item.note}")
        if group.skipped:
            lines.append(
                f"    ({group.skipped} more not evaluated: beyond the top {answers.limits.top})"
            )
    return [*lines, ""]


def _lineage(scene: Scene) -> list[str]:
    lineage = scene.lineage
    lines = ["lineage and seals:"]
    for entry, hits in lineage.seals:
        gated = ", ".join(f"{form} (by {how})" for form, how in hits) or "no candidate"
        lines.append(f"  seal {entry!r}: {gated}")
    for form, ancestors, decided in lineage.derived:
        lines.append(f"  {form} derives from {', '.join(ancestors)}: {decided}")
    for form, origin, scope, decided in lineage.transfers:
        lines.append(f"  {form} transferred from {origin!r} (scope {scope!r}): {decided}")
    for source, current, forms in lineage.sources:
        now = "no current version given" if current is None else f"current {current!r}"
        listed = ", ".join(f"{f} {v!r}: {d}" for f, v, d in forms)
        lines.append(f"  source {source!r} ({now}): {listed}")
    if len(lines) == 1:
        lines.append("  (no seals, lineage, transfers or source versions in this request)")
    return [*lines, ""]
