"""Layout: the canonical order and framing of a rendering (``render_version`` 2).

Input: a validated ``Request`` and the ids of the selected forms.
Output: a tuple of ``Block`` in rendering order; ``"".join(b.text for b in blocks)``
is the rendered text of every format.

The order depends only on the set of selected forms, never on the order the
candidates were offered, and puts stable material first so that a later call that
adds material changes as little of the leading bytes as possible (prompt caches key
on a prefix):

1. ``stable``: ``tool_definition`` items, then the task's instruction, then
   ``system``, ``developer`` and ``memory`` items (in that kind order, by id within a
   kind); tool definitions lead because providers put ``tools`` before the system
   prompt (and cache them in that order);
2. ``evidence``: by id;
3. ``volatile``: conversation turns and tool calls by ``(turn, id)``, each tool call
   directly followed by its result;
4. ``query``: the task's query, last.

Each item is framed as ``<item id=.. kind=.. form=.. sha256=.. bytes=..>\\n`` +
content + ``\\n</item>\\n`` (a tool call has no closing line: its content is the
call's arguments, which providers carry in a field of their own). A reference form
renders as its own content (the pointer text); its resolver is an item of its own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..model.errors import RenderError
from ..model.types import Candidate, Kind, Request

__all__ = [
    "SECTIONS",
    "Block",
    "block_text",
    "envelope_blocks",
    "item_block",
    "layout",
    "section_of",
]

SECTIONS = ("stable", "evidence", "volatile", "query")
_STABLE_RANK = {Kind.SYSTEM: 0, Kind.DEVELOPER: 1, Kind.TOOL_DEFINITION: 2, Kind.MEMORY: 3}
_CLOSE = "\n</item>\n"


def section_of(kind: Kind) -> str:
    if kind in _STABLE_RANK:
        return "stable"
    return "evidence" if kind is Kind.EVIDENCE else "volatile"


@dataclass(frozen=True, slots=True)
class Block:
    """One framed piece of the rendering: an item (``candidate`` set) or the envelope."""

    section: str
    # the candidate's kind, or "instruction" / "query" for the envelope
    kind: str
    candidate: Candidate | None
    header: str
    content: str
    footer: str

    @property
    def text(self) -> str:
        return self.header + self.content + self.footer


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def item_block(candidate: Candidate) -> Block:
    content = candidate.content
    if content is None:
        raise RenderError(
            "RENDER_MISSING_CONTENT", "a selected form has no content", items=(candidate.id,)
        )
    data = content.encode("utf-8")
    header = (
        f"<item id={_quoted(candidate.id)} kind={_quoted(candidate.kind.value)}"
        f" form={_quoted(candidate.form)} sha256={_quoted(hashlib.sha256(data).hexdigest())}"
        f" bytes={len(data)}>\n"
    )
    footer = "" if candidate.kind is Kind.TOOL_CALL else _CLOSE
    return Block(
        section_of(candidate.kind), candidate.kind.value, candidate, header, content, footer
    )


def block_text(candidate: Candidate) -> str:
    """The exact text an item adds to a rendering: what a counter prices it at."""
    return item_block(candidate).text


def envelope_blocks(request: Request) -> tuple[Block | None, Block | None]:
    """The task's instruction and query blocks (None when the task has none)."""
    task = request.task
    instruction = (
        None
        if task.instruction is None
        else Block(
            "stable", "instruction", None, "<instruction>\n", task.instruction, "\n</instruction>\n"
        )
    )
    query = (
        None
        if task.query is None
        else Block("query", "query", None, "<query>\n", task.query, "\n</query>\n")
    )
    return instruction, query


def layout(request: Request, selected: tuple[str, ...] | list[str]) -> tuple[Block, ...]:
    """The blocks of a rendering of ``selected``, in order."""
    by_id = {c.id: c for c in request.candidates}
    chosen = [by_id[i] for i in sorted(set(selected))]
    missing = [c.id for c in chosen if c.content is None]
    if missing:
        raise RenderError(
            "RENDER_MISSING_CONTENT",
            "selected forms have no content: nothing unrenderable is prepared",
            items=tuple(missing),
        )
    stable = sorted(
        (c for c in chosen if c.kind in _STABLE_RANK), key=lambda c: (_STABLE_RANK[c.kind], c.id)
    )
    evidence = [c for c in chosen if c.kind is Kind.EVIDENCE]
    results: dict[str, list[Candidate]] = {}
    for c in chosen:
        if c.kind is Kind.TOOL_RESULT:
            results.setdefault(str(c.tool_call_id), []).append(c)
    conversation = sorted(
        (c for c in chosen if section_of(c.kind) == "volatile" and c.kind is not Kind.TOOL_RESULT),
        key=lambda c: (c.turn, c.id),
    )
    volatile: list[Candidate] = []
    unanswered: list[str] = []
    for c in conversation:
        volatile.append(c)
        if c.kind is Kind.TOOL_CALL:
            answers = results.pop(str(c.tool_call_id), [])
            volatile.extend(answers)
            if not answers:
                unanswered.append(c.id)
    if unanswered:
        raise RenderError(
            "RENDER_PROVIDER_RULE",
            "a tool call is selected without its result",
            items=tuple(unanswered),
            rule="tool-call-answered",
        )
    if results:
        orphans = tuple(r.id for rs in results.values() for r in rs)
        raise RenderError(
            "RENDER_PROVIDER_RULE",
            "a tool result is selected without its tool call",
            items=orphans,
            rule="tool-result-after-call",
        )
    instruction, query = envelope_blocks(request)
    # version 2: tool definitions before the instruction, as the bodies' tools field
    tools = [c for c in stable if c.kind is Kind.TOOL_DEFINITION]
    blocks: list[Block] = [item_block(c) for c in tools]
    if instruction is not None:
        blocks.append(instruction)
    blocks.extend(
        item_block(c)
        for c in (*(c for c in stable if c.kind is not Kind.TOOL_DEFINITION), *evidence, *volatile)
    )
    if query is not None:
        blocks.append(query)
    return tuple(blocks)
