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
from .convert import read, tool_of, tools_as, write
from .fit import assembled, back, check_entry, check_tools, claims, units
from .shape import BODY_FIELDS, OUTPUT_FIELDS, check_body, marks, tool_marks

__all__ = [
    "BODY_FIELDS",
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

NAME = FORMAT.value
LIST_KEY = "input"
SYSTEM_KEY = "instructions"
LIST_NAME = "input"
# the API's name in a fault's message
TITLE = "OpenAI Responses"
ENTRY = "an OpenAI Responses input item"
