"""OpenAI Responses: the room of the ``openai-responses`` format.

Input: a layout's blocks (a rendering's body), or a caller's ``input`` item list with
its ``instructions`` and ``tools`` (``fit``).
Output: the ``Api`` of ``providers/interface.py``: ``body.py`` builds, checks and
counts the body (``{"input", "tools"?}``), ``fit.py`` cuts a caller's list into units
and puts the chosen ones back. Its messages, tools and reply are framed and counted as
the chat format's (``openai_chat``). Every figure: ``assembler/facts/openai.json``.
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
LIST_KEY = "input"
SYSTEM_KEY = "instructions"
LIST_NAME = "input"
ENTRY = "an OpenAI Responses input item"
