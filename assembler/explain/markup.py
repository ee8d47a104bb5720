"""The small pieces of markup every section of the inspector page uses.

Input: text and figures. Output: escaped HTML fragments; ``ROW_LIMIT``, the rows a
table shows at most.
"""

from __future__ import annotations

from html import escape

__all__ = ["ROW_LIMIT", "cls", "e", "figure"]

# rows per table; a request of 100k candidates would otherwise make a page no one reads
ROW_LIMIT = 500


def e(text: object) -> str:
    return escape(str(text), quote=True)


def cls(text: str) -> str:
    return text.replace(" ", "-")


def figure(name: str, label: str, value: int | str | None, unit: str, extra: str = "") -> str:
    """A key figure, findable in the DOM by its ``data-figure`` name."""
    shown = "unknown" if value is None else str(value)
    return (
        f'<div><dt>{e(label)}</dt><dd><span class="num" data-figure="{name}">{e(shown)}</span>'
        f" {e(unit)}{e(extra)}</dd></div>"
    )
