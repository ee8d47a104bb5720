"""Layout: the canonical order and framing of a rendering (``render_version`` 3).

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

A conversation turn (user, assistant, tool call, tool result) is its content alone: the
message a provider body carries for it is what was said. Every other item is framed by
the ``Headers`` choice: ``none`` (the default) its content and a line break,
``minimal`` ``<item id=..>\\n`` + content + ``\\n</item>\\n``, ``provenance`` with the
kind, form, sha256 and byte length in the opening tag. A reference form renders as its
own content (the pointer text); its resolver is an item of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, cast

from ..cache.prefix import build_prefix, rank
from ..model.errors import RenderError
from ..model.rendering import CONVERSATIONAL, DEFAULT_HEADERS, Headers
from ..model.types import Candidate, Kind, Request
from ..stages.identities import content_digest

__all__ = [
    "SECTIONS",
    "Block",
    "Headers",
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
    """One framed piece of the rendering: an item (``candidate`` set) or the envelope;
    ``breakpoint``: a cache breakpoint ends it (a cache-aware layout places them)."""

    section: str
    # the candidate's kind, or "instruction" / "query" for the envelope
    kind: str
    candidate: Candidate | None
    header: str
    content: str
    footer: str
    breakpoint: bool = False
    # the content's UTF-8 sha256 when the header already names it (the manifest reads
    # it instead of hashing the content a second time)
    content_sha256: str | None = None
    # what a provider body made of this block (``formats.py``), by format: a block is
    # kept by a session's request (``Request.blocks``), so is its piece of a body. A
    # memo of values that follow from the block; never part of the value.
    pieces: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def text(self) -> str:
        return self.header + self.content + self.footer


# one encoder: json.dumps with an argument builds a new one on every call
_QUOTE = json.JSONEncoder(ensure_ascii=False).encode


def _quoted(text: str) -> str:
    return _QUOTE(text)


class _BlockShell:
    """Block's slots without its frozen ``__setattr__``: filled, then made the ``Block``
    it stands for (the same slots, so ``__class__`` may be assigned); a frozen
    dataclass's ``__init__`` makes one ``object.__setattr__`` call per field, and a
    rendering makes a block per selected form."""

    __slots__ = Block.__slots__


def _made_block(
    section: str,
    kind: str,
    candidate: Candidate | None,
    header: str,
    content: str,
    footer: str,
    breakpoint: bool,
    content_sha256: str | None,
    pieces: dict[str, Any],
) -> Block:
    """``Block(...)`` with these fields (and ``pieces``), filled through a shell (typed
    as what it becomes: its slots are ``Block``'s)."""
    shell: Any = _BlockShell()
    shell.section = section
    shell.kind = kind
    shell.candidate = candidate
    shell.header = header
    shell.content = content
    shell.footer = footer
    shell.breakpoint = breakpoint
    shell.content_sha256 = content_sha256
    shell.pieces = pieces
    shell.__class__ = Block
    return cast(Block, shell)


# each kind's section, its value, whether it is a turn (its content alone) and a call
_FRAMES = {
    kind: (section_of(kind), kind.value, kind.value in CONVERSATIONAL, kind is Kind.TOOL_CALL)
    for kind in Kind
}


def item_block(
    candidate: Candidate,
    headers: Headers = DEFAULT_HEADERS,
    digests: dict[int, tuple[str, str, int]] | None = None,
) -> Block:
    """``candidate``'s block; ``digests``: its request's memo of content digests."""
    content = candidate.content
    if content is None:
        raise RenderError(
            "RENDER_MISSING_CONTENT", "a selected form has no content", items=(candidate.id,)
        )
    section, kind, turn, call = _FRAMES[candidate.kind]
    digest = None
    if turn:
        # a turn is what was said: its message carries its content and nothing else
        header, footer = "", ""
    elif headers is Headers.PROVENANCE:
        digest, size = content_digest(content, digests)
        header = (
            f"<item id={_quoted(candidate.id)} kind={_quoted(kind)}"
            f" form={_quoted(candidate.form)} sha256={_quoted(digest)}"
            f" bytes={size}>\n"
        )
        footer = "" if call else _CLOSE
    elif headers is Headers.MINIMAL:
        header, footer = f"<item id={_quoted(candidate.id)}>\n", "" if call else _CLOSE
    else:
        header, footer = "", "" if call else "\n"
    return _made_block(section, kind, candidate, header, content, footer, False, digest, {})


def _block(
    candidate: Candidate,
    headers: Headers,
    digests: dict[int, tuple[str, str, int]],
    made: dict[str, tuple[Any, Any, Any]],
) -> Block:
    """``item_block``, made once per candidate and header choice (``made``: the
    request's memo by candidate id, which a session hands on). A candidate a delta
    re-scored or moved (another object, the same framed fields) gets the kept block's
    text and pieces, with itself as the block's candidate."""
    found = made.get(candidate.id)
    if found is not None and found[1] is headers:
        was: Candidate = found[0]
        if was is candidate:
            block: Block = found[2]
            return block
        if _framed_alike(was, candidate):
            block = _with_candidate(found[2], candidate)
            made[candidate.id] = (candidate, headers, block)
            return block
    block = item_block(candidate, headers, digests)
    made[candidate.id] = (candidate, headers, block)
    return block


def _framed_alike(a: Candidate, b: Candidate) -> bool:
    """Whether two candidates' blocks are alike but for the candidate: what a block and
    a body's piece of it read (its id, kind, form, content object and tool call)."""
    return (
        a.content is b.content
        and a.kind is b.kind
        and a.form == b.form
        and a.tool_call_id == b.tool_call_id
        and a.tool_name == b.tool_name
    )


def _with_candidate(block: Block, candidate: Candidate) -> Block:
    """``block`` with ``candidate`` as its candidate, sharing its pieces (they follow
    from what ``_framed_alike`` compares)."""
    return _made_block(
        block.section,
        block.kind,
        candidate,
        block.header,
        block.content,
        block.footer,
        block.breakpoint,
        block.content_sha256,
        block.pieces,
    )


def block_text(candidate: Candidate, headers: Headers = DEFAULT_HEADERS) -> str:
    """The exact text an item adds to a rendering: what a counter prices it at."""
    return item_block(candidate, headers).text


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


def layout(
    request: Request,
    selected: tuple[str, ...] | list[str],
    headers: Headers = DEFAULT_HEADERS,
) -> tuple[Block, ...]:
    """The blocks of a rendering of ``selected``, in order: with a cache section, the
    previous call's blocks kept first (``cache.prefix``), with the cache breakpoints."""
    by_id = {c.id: c for c in request.candidates}
    chosen = [by_id[i] for i in sorted(set(selected))]
    digests, made = request.digests, request.blocks
    missing = [c.id for c in chosen if c.content is None]
    if missing:
        raise RenderError(
            "RENDER_MISSING_CONTENT",
            "selected forms have no content: nothing unrenderable is prepared",
            items=tuple(missing),
        )
    _check_pairs(chosen)
    instruction, query = envelope_blocks(request)
    kept: list[Block] = []
    read_entry: int | None = None
    prefix = (
        None
        if request.cache is None
        else build_prefix(request, [c.id for c in chosen], [c.cost for c in chosen])
    )
    if prefix is not None:
        count = prefix.kept(range(len(chosen)))
        for form in prefix.forms[:count]:
            if form is not None:
                kept.append(_block(chosen[form], headers, digests, made))
            elif instruction is not None:  # the run holds it only when the task has one
                kept.append(instruction)
                instruction = None
        read_entry = prefix.read(count)[1]
        done = {b.candidate.id for b in kept if b.candidate is not None}
        chosen = [c for c in chosen if c.id not in done]
    blocks = kept + _canonical(chosen, instruction, kept, headers, digests, made)
    if query is not None:
        blocks.append(query)
    if prefix is not None and prefix.cache.breakpoints > 0:
        blocks = _with_breakpoints(blocks, read_entry, prefix.cache.breakpoints)
    return tuple(blocks)


def _check_pairs(chosen: list[Candidate]) -> None:
    calls: set[str | None] = set()
    answered: set[str | None] = set()
    for c in chosen:
        if c.kind is Kind.TOOL_CALL:
            calls.add(c.tool_call_id)
        elif c.kind is Kind.TOOL_RESULT:
            answered.add(c.tool_call_id)
    if calls == answered:
        return  # every call answered, every result called: nothing below can fail
    unanswered = tuple(
        c.id for c in chosen if c.kind is Kind.TOOL_CALL and c.tool_call_id not in answered
    )
    if unanswered:
        raise RenderError(
            "RENDER_PROVIDER_RULE",
            "a tool call is selected without its result",
            items=unanswered,
            rule="tool-call-answered",
        )
    orphans = tuple(
        c.id for c in chosen if c.kind is Kind.TOOL_RESULT and c.tool_call_id not in calls
    )
    raise RenderError(
        "RENDER_PROVIDER_RULE",
        "a tool result is selected without its tool call",
        items=orphans,
        rule="tool-result-after-call",
    )


_TURN = attrgetter("turn")
_RANK: dict[Kind, int] = {
    kind: rank for kind, rank in _STABLE_RANK.items() if kind is not Kind.TOOL_DEFINITION
}


def _canonical(
    chosen: list[Candidate],
    instruction: Block | None,
    kept: list[Block],
    headers: Headers,
    digests: dict[int, tuple[str, str, int]],
    made: dict[str, tuple[Any, Any, Any]],
) -> list[Block]:
    """The canonical order of what the kept blocks leave (``chosen``, in id order): tool
    definitions, the instruction, system, developer and memory items, evidence, then the
    conversation, each tool result right after its call (first, when its call ends the
    kept ones). One pass sorts the forms into their runs; a stable sort by the run's key
    keeps id order within equal keys."""
    tools: list[Candidate] = []
    system: list[Candidate] = []
    evidence: list[Candidate] = []
    conversation: list[Candidate] = []
    results: dict[str, list[Candidate]] = {}
    for c in chosen:
        kind = c.kind
        if kind is Kind.EVIDENCE:
            evidence.append(c)
        elif kind is Kind.TOOL_RESULT:
            results.setdefault(str(c.tool_call_id), []).append(c)
        elif kind is Kind.TOOL_DEFINITION:
            tools.append(c)
        elif kind in _RANK:
            system.append(c)
        else:
            conversation.append(c)
    system.sort(key=lambda c: _RANK[c.kind])
    conversation.sort(key=_TURN)
    last = kept[-1].candidate if kept else None
    dangling = (
        results.pop(str(last.tool_call_id), [])
        if last is not None and last.kind is Kind.TOOL_CALL
        else []
    )
    volatile: list[Candidate] = []
    if results:
        for c in conversation:
            volatile.append(c)
            if c.kind is Kind.TOOL_CALL:
                volatile.extend(results.pop(str(c.tool_call_id), []))
    else:
        volatile = conversation
    blocks = [_block(c, headers, digests, made) for c in (*dangling, *tools)]
    if instruction is not None:
        blocks.append(instruction)
    blocks.extend(_block(c, headers, digests, made) for c in (*system, *evidence, *volatile))
    return blocks


def _with_breakpoints(blocks: list[Block], read_entry: int | None, most: int) -> list[Block]:
    """Cache breakpoints where the next call is likeliest to read: the block whose entry
    this call reads, the end of the system prompt, and the last block before the
    query (at most ``most``, the last ones first)."""
    marks: list[int] = []
    content = [i for i, b in enumerate(blocks) if b.kind != "query"]
    if content:
        marks.append(content[-1])
    system = [i for i in content if _rank(blocks[i]) < 2]
    if system and system[-1] not in marks:
        marks.append(system[-1])
    if read_entry is not None and read_entry not in marks:
        marks.append(read_entry)
    chosen = set(marks[:most])
    # a block already marked as it should be is kept (most are: none is marked before)
    return [
        b if b.breakpoint is (i in chosen) else replace(b, breakpoint=i in chosen)
        for i, b in enumerate(blocks)
    ]


def _rank(block: Block) -> int:
    """A block's place in the provider's order (``cache.prefix.rank``)."""
    if block.candidate is None:
        return 1 if block.kind == "instruction" else 2
    return rank(block.candidate.kind)
