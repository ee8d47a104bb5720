"""Gemini: the room of the ``gemini`` format (``generateContent``).

Input: a layout's blocks (a rendering's body), or a caller's ``contents`` with its
``systemInstruction`` and ``tools`` (``fit``).
Output: the ``Api`` of ``providers/interface.py``: ``body.py`` builds, checks and
counts the body (``{"systemInstruction"?, "contents", "tools"?}``), ``fit.py`` cuts a
caller's list into units and puts the chosen ones back. Every figure (models, windows,
framing, images, cache rules, prices, usage fields): ``assembler/facts/gemini.json``.
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
LIST_KEY = "contents"
SYSTEM_KEY = "systemInstruction"
LIST_NAME = "messages"
ENTRY = "a Gemini content"
