"""OpenAI Chat Completions: the room of the ``openai-chat`` format.

Input: a layout's blocks (a rendering's body), or a caller's ``messages`` list (``fit``).
Output: the ``Api`` of ``providers/interface.py``: ``body.py`` builds, checks and counts
the body (``{"messages", "tools"?}``), ``fit.py`` cuts a caller's list into units and
puts the chosen ones back; ``langchain.py`` fits LangChain's messages as the chat
messages LangChain converts them to. Every figure (models, windows, framing, images,
cache rules, prices, usage fields): ``assembler/facts/openai.json``.
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
# where a body holds its list and its system prompt (given apart, it is a message)
LIST_KEY = "messages"
SYSTEM_KEY = "system"
# what a bare list is called, and one entry of it, in a fault's message
LIST_NAME = "messages"
ENTRY = "an OpenAI Chat Completions message"
