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
from .convert import read, tool_of, tools_as, write
from .ctok import CtokCounter
from .fit import assembled, back, check_entry, check_tools, claims, units
from .shape import BODY_FIELDS, OUTPUT_FIELDS, check_body, marks, tool_marks

__all__ = [
    "BODY_FIELDS",
    "COUNTERS",
    "ENTRY",
    "FORMAT",
    "LIST_KEY",
    "LIST_NAME",
    "NAME",
    "OUTPUT_FIELDS",
    "SYSTEM_KEY",
    "TITLE",
    "assembled",
    "back",
    "build",
    "check",
    "check_body",
    "check_entry",
    "check_tools",
    "claims",
    "marks",
    "overheads",
    "read",
    "tokens",
    "tool_marks",
    "tool_of",
    "tools_as",
    "units",
    "write",
]

# the counters this room offers by name (``fit(counter="ctok")``, ``counter_named``)
COUNTERS = {"ctok": CtokCounter.named}

NAME = FORMAT.value
LIST_KEY = "messages"
SYSTEM_KEY = "system"
LIST_NAME = "messages"
# the API's name in a fault's message
TITLE = "Anthropic Messages"
ENTRY = "an Anthropic Messages message"
