"""Which selections a format can send: section 14's rules that depend on the forms selected.

Input: a validated ``Request`` and a ``RenderFormat`` (and, for a cache-aware layout,
the run of the previous call's blocks it may keep).
Output: ``selection_rules``: the constraints a selection must keep for the renderer to
send it, each named by its rule, over candidate ids: ``Clause`` (one of some forms is
selected, or one of others is left out) and ``Leading`` (the first selected form of an
order is one that may open the conversation); ``kept_lead``: the constraint a cached
layout adds. ``broken(rules, selected)`` names the first rule a selection breaks.

The rules, read off the renderers (``render/``) and ``models/structure/`` for each
format, with the canonical layout of section 14 (stable items, evidence, the
conversation by ``(turn, id)`` with each tool result right after its call, the query):

* a body with something to send. ``text``, ``openai-chat``, ``openai-responses``
  (``body-non-empty``: ``RENDER_EMPTY``, and Responses' ``input-non-empty``): an item
  that is not a tool definition, unless the task has an instruction or a query.
  ``anthropic-messages`` (``messages-non-empty``) and ``gemini``
  (``contents-non-empty``): a message, so an item outside the stable section that
  sends a block (evidence, a tool call or result, a turn with text: an empty turn
  sends nothing), unless the task has a query;
* ``first-message-user`` (Anthropic): the first message is a user turn. Evidence opens
  the messages as a user message; without evidence the first conversation item that
  sends a block decides (a user turn may, an assistant turn or a tool call may not; a
  tool result always follows its call);
* ``function-call-turn`` (Gemini): a model turn holding a function call comes right
  after a user turn. Contents of one role merge and alternate, so only the first
  content can break it: without evidence, the first of the user turns and tool calls
  decides (assistant turns merge into the model turn either way);
* a form whose content breaks a format's rule may not be selected in that format:
  ``tool-call-arguments`` (a tool call's content is a JSON object) and
  ``tool-definition`` (a tool definition's content is a definition) in every format
  but ``text``; ``tool-id-pattern`` (Anthropic: a tool call id is ``[A-Za-z0-9_-]+``).

Every other rule a renderer checks holds for every legal selection: a tool result and
its call are one coupled group (C5), and the layout puts the result right after its
call (``tool-call-answered``, ``tool-result-after-call``, ``tool-result-first``,
``no-leading-tool``, ``single-result``); the stable section comes first
(``system-first``); consecutive blocks of one role merge (``roles-alternate``); an
empty turn sends no block (``non-empty-text``, ``parts-non-empty``); at most three
breakpoints are placed, or the cache's own count (``cache-breakpoints``).

A cache-aware layout keeps the previous call's blocks first (``cache/prefix.py``). The
blocks it keeps before the run's first block that takes part in a leading rule (its
*first decisive* block) send no message or none that decides, and every conversation
item a selection holds before a kept one is kept too (else the kept prefix would end
earlier): so a selection keeping the run through its first decisive block opens with
that block, and one keeping less is laid out, as far as the rule sees, canonically.
When that block may not open the conversation, keeping it is forbidden (``kept_lead``);
when it may, the canonical order opens with it or with evidence too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .rendering import RenderFormat
from .types import Candidate, Kind, Request

__all__ = [
    "BODY_NON_EMPTY",
    "CONTENTS_NON_EMPTY",
    "FIRST_MESSAGE_USER",
    "FUNCTION_CALL_TURN",
    "MESSAGES_NON_EMPTY",
    "RULES",
    "TOOL_CALL_ARGUMENTS",
    "TOOL_DEFINITION",
    "TOOL_ID_PATTERN",
    "Clause",
    "Leading",
    "broken",
    "kept_lead",
    "lead_of",
    "selection_rules",
]

K = TypeVar("K")

BODY_NON_EMPTY = "body-non-empty"
MESSAGES_NON_EMPTY = "messages-non-empty"
CONTENTS_NON_EMPTY = "contents-non-empty"
FIRST_MESSAGE_USER = "first-message-user"
FUNCTION_CALL_TURN = "function-call-turn"
TOOL_CALL_ARGUMENTS = "tool-call-arguments"
TOOL_DEFINITION = "tool-definition"
TOOL_ID_PATTERN = "tool-id-pattern"

_CONTENT_RULES = (TOOL_CALL_ARGUMENTS, TOOL_DEFINITION)
# each format's selection rules, in the order its renderer checks them
RULES: dict[RenderFormat, tuple[str, ...]] = {
    RenderFormat.TEXT: (BODY_NON_EMPTY,),
    RenderFormat.OPENAI_CHAT: (BODY_NON_EMPTY, *_CONTENT_RULES),
    RenderFormat.OPENAI_RESPONSES: (BODY_NON_EMPTY, *_CONTENT_RULES),
    RenderFormat.ANTHROPIC_MESSAGES: (
        *_CONTENT_RULES,
        MESSAGES_NON_EMPTY,
        FIRST_MESSAGE_USER,
        TOOL_ID_PATTERN,
    ),
    RenderFormat.GEMINI: (*_CONTENT_RULES, CONTENTS_NON_EMPTY, FUNCTION_CALL_TURN),
}

_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]+$")
_STABLE = frozenset({Kind.SYSTEM, Kind.DEVELOPER, Kind.MEMORY, Kind.TOOL_DEFINITION})
_TURNS = frozenset({Kind.USER_TURN, Kind.ASSISTANT_TURN})


@dataclass(frozen=True, slots=True)
class Clause(Generic[K]):
    """Kept when one of ``some`` is selected or one of ``unless`` is not."""

    rule: str
    some: tuple[K, ...]
    unless: tuple[K, ...] = ()

    def kept(self, selected: Collection[K]) -> bool:
        return any(k in selected for k in self.some) or any(k not in selected for k in self.unless)


@dataclass(frozen=True, slots=True)
class Leading(Generic[K]):
    """Kept when the first selected form of ``order`` is ``good`` (or none is selected):
    the forms that decide how the conversation opens, in the order they are laid out."""

    rule: str
    order: tuple[K, ...]
    good: tuple[bool, ...]

    def kept(self, selected: Collection[K]) -> bool:
        for k, good in zip(self.order, self.good, strict=True):
            if k in selected:
                return good
        return True


Rule = Clause[K] | Leading[K]


def broken(rules: Iterable[Rule[K]], selected: Collection[K]) -> str | None:
    """The first rule of ``rules`` a selection breaks, or None when it keeps them all."""
    for rule in rules:
        if not rule.kept(selected):
            return rule.rule
    return None


def selection_rules(
    request: Request, fmt: RenderFormat, eligible: Callable[[str], bool] | None = None
) -> tuple[Rule[str], ...]:
    """The rules a selection of ``request``'s forms (those ``eligible``, default all)
    keeps to be sent in ``fmt``, laid out canonically; a rule no selection can break is
    left out."""
    forms = [c for c in request.candidates if eligible is None or eligible(c.id)]
    task = request.task
    out: list[Rule[str]] = []
    if fmt is not RenderFormat.TEXT:
        for c in forms:
            rule = _content_rule(c, fmt)
            if rule is not None:
                out.append(Clause(rule, (), (c.id,)))
    if fmt in (RenderFormat.ANTHROPIC_MESSAGES, RenderFormat.GEMINI):
        if task.query is None:
            name = MESSAGES_NON_EMPTY if fmt is RenderFormat.ANTHROPIC_MESSAGES else (
                CONTENTS_NON_EMPTY
            )  # fmt: skip
            out.append(Clause(name, tuple(c.id for c in forms if _sends_message(c))))
        lead = lead_of(fmt)
        assert lead is not None
        name, decides = lead
        decisive = [(c, decides(c)) for c in forms]
        ranked = [(c, good) for c, good in decisive if good is not None]
        # evidence first (any order: all of it may open), then the conversation by turn
        ranked.sort(key=lambda cg: (cg[0].kind is not Kind.EVIDENCE, cg[0].turn, cg[0].id))
        if any(good is False for _, good in ranked):
            out.append(Leading(name, tuple(c.id for c, _ in ranked), tuple(g for _, g in ranked)))
    elif task.query is None and task.instruction is None:
        some = tuple(c.id for c in forms if c.kind is not Kind.TOOL_DEFINITION)
        out.append(Clause(BODY_NON_EMPTY, some))
    return tuple(out)


def lead_of(fmt: RenderFormat) -> tuple[str, Callable[[Candidate], bool | None]] | None:
    """The format's leading rule and, for a form, whether it may open the conversation
    (True), may not (False) or does not decide (None); None for a format without one."""
    if fmt is RenderFormat.ANTHROPIC_MESSAGES:
        return FIRST_MESSAGE_USER, _anthropic_lead
    if fmt is RenderFormat.GEMINI:
        return FUNCTION_CALL_TURN, _gemini_lead
    return None


def kept_lead(
    fmt: RenderFormat, run: Sequence[Candidate | None]
) -> tuple[str, int] | None:
    """For a cache-aware layout whose kept prefix may run through ``run`` (the previous
    call's blocks this call could keep, None for the instruction): the rule and the
    index of the run's first decisive block when keeping it breaks that rule (the
    selection may then not keep the run through it); None otherwise."""
    lead = lead_of(fmt)
    if lead is None:
        return None
    name, decides = lead
    for index, candidate in enumerate(run):
        if candidate is None:
            continue
        good = decides(candidate)
        if good is not None:
            return None if good else (name, index)
    return None


def _anthropic_lead(c: Candidate) -> bool | None:
    if c.kind is Kind.EVIDENCE:
        return True
    if c.kind in _TURNS:
        # an empty turn sends no block
        return None if not c.content else c.kind is Kind.USER_TURN
    if c.kind is Kind.TOOL_CALL:
        return False
    return None  # stable items, and tool results (right after their calls)


def _gemini_lead(c: Candidate) -> bool | None:
    if c.kind is Kind.EVIDENCE:
        return True
    if c.kind is Kind.USER_TURN:
        return True if c.content else None
    if c.kind is Kind.TOOL_CALL:
        return False
    return None  # assistant turns merge into the model turn; results follow calls


def _sends_message(c: Candidate) -> bool:
    if c.kind in _STABLE:
        return False
    return bool(c.content) if c.kind in _TURNS else True


def _content_rule(c: Candidate, fmt: RenderFormat) -> str | None:
    """The rule ``c``'s own content breaks in ``fmt`` (not ``text``), or None."""
    if c.kind is Kind.TOOL_CALL:
        if not isinstance(_json(c.content), dict):
            return TOOL_CALL_ARGUMENTS
        if fmt is RenderFormat.ANTHROPIC_MESSAGES and not _TOOL_ID.match(str(c.tool_call_id)):
            return TOOL_ID_PATTERN
    elif c.kind is Kind.TOOL_DEFINITION and not _is_definition(_json(c.content)):
        return TOOL_DEFINITION
    return None


def _is_definition(value: object) -> bool:
    """A tool definition: a JSON object with a string name and, when it gives one, a
    JSON Schema object as ``parameters`` or ``input_schema`` (OpenAI's ``{type:
    "function", function: {...}}`` wrapping it)."""
    if isinstance(value, dict) and value.get("type") == "function" and "function" in value:
        value = value["function"]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    return isinstance(value.get("parameters", value.get("input_schema", {})), dict)


def _json(content: str | None) -> object:
    try:
        return None if content is None else json.loads(content)
    except (ValueError, RecursionError):
        return None
