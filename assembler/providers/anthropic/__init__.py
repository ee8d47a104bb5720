"""Anthropic Messages: the room of the ``anthropic-messages`` format.

Input: a layout's blocks (a rendering's body), or a caller's ``messages`` list with its
``system`` and ``tools`` (``fit``).
Output: the ``Api`` of ``providers/interface.py``: ``body.py`` builds (with its cache
breakpoints), checks and counts the body (``{"system", "messages", "tools"?}``),
``fit.py`` cuts a caller's list into units and puts the chosen ones back. Every figure
(models, windows, tool-use prompts, framing, images, cache rules, prices, usage
fields): ``assembler/facts/anthropic.json``.
"""

from __future__ import annotations

from .body import FORMAT, build, check, overheads, tokens
from .fit import assembled, back, check_entry, check_tools, claims, looks_like, units

__all__ = [
    "ENTRY",
    "FORMAT",
    "LIST_KEY",
    "LIST_NAME",
    "NAME",
    "SYSTEM_KEY",
    "assembled",
    "back",
    "build",
    "check",
    "check_entry",
    "check_tools",
    "claims",
    "looks_like",
    "overheads",
    "tokens",
    "units",
]

NAME = FORMAT.value
LIST_KEY = "messages"
SYSTEM_KEY = "system"
LIST_NAME = "messages"
ENTRY = "an Anthropic Messages message"
