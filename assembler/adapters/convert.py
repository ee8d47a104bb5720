"""A list in one provider API's format converted to another's, when the caller asks
(``fit(..., source=FORMAT)``).

Input: the list as given in ``source``'s format (validated by its room), its system
prompt and tools; the room of the model's API.
Output: the same conversation as that format's list, system prompt and tools.

Through one neutral form (``providers/neutral.py``): the source's room reads the list
into it (``read``, ``tool_of``), the model's room writes it out (``write``,
``tools_as``). What is bound to the provider that produced it cannot travel and is
left out: thinking blocks, reasoning items, thought parts and signatures (the next
model reasons anew). A part with no equivalent (a hosted tool's call, a document,
audio) is one ``InvalidRequest`` naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..providers.interface import Api

__all__ = ["converted"]


def converted(
    source: Api, target: Api, listed: Sequence[Any], system: Any, tools: Sequence[Any], where: str
) -> tuple[list[Any], Any, list[Any]]:
    """``listed`` (with ``system`` and ``tools``) of ``source``'s format as ``target``'s."""
    messages, instructions = source.read(listed, system, where)
    functions = [f for number, tool in enumerate(tools) for f in source.tool_of(tool, number)]
    out, prompt = target.write(messages, instructions)
    return out, prompt, target.tools_as(functions)
