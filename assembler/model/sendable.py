"""Which selections a format can send: section 14's rules that depend on the forms selected.

Input: a validated ``Request`` and a ``RenderFormat`` (and, for a cache-aware layout,
the run of the previous call's blocks it may keep).
Output: ``selection_rules``: the constraints a selection must keep for the renderer to
send it, each named by its rule, over candidate ids: ``Clause`` (one of some forms is
selected, or one of others is left out) and ``Leading`` (the first selected form of an
order is one that may open the conversation); ``kept_lead``: the constraint a cached
layout adds. ``broken(rules, selected)`` names the first rule a selection breaks.

Which of these rules a format has is its provider's data (``facts/``: each
format's ``selection``, read off its body's checks; the text format has none of its
own), read through ``facts``. With the canonical layout of section 14 (stable items,
evidence, the conversation by ``(turn, id)`` with each tool result right after its
call, the query), the rules a selection can break are:

* a body with something to send (``body-non-empty``, ``RENDER_EMPTY``, every format): an
  item that is not a tool definition, unless the task has an instruction or a query;
  and in a format whose body must hold a message (its ``messages`` rule), an item
  outside the stable section that sends a block (evidence, a tool call or result, a
  turn that sends one), unless the task has a query;
* how the conversation opens (the format's ``lead`` rule): evidence opens the messages,
  else the first conversation item of the kinds the rule names decides, and it must be
  one that may open it (a tool result always follows its call, so it never decides; a
  turn whose empty content sends no block does not either);
* a form whose own content breaks a rule may not be selected: a tool call whose
  arguments are not a JSON object (``tool-call-arguments``), a tool definition that is
  not one (``tool-definition``), in a format that checks them (``tools``), and a tool
  call whose id the format does not take (``tool-id-pattern``).

Every other rule a body is checked for holds for every legal selection: a tool result
and its call are one coupled group (C5), and the layout puts the result right after
its call; the stable section comes first; neighbouring blocks of one role merge; an
empty turn sends no block where a block may not be empty; at most three breakpoints are
placed, or the cache's own count.

A cache-aware layout keeps the previous call's blocks first (``cache/prefix.py``). The
blocks it keeps before the run's first block that decides how the conversation opens
(its *first decisive* block) send nothing that decides, and every conversation item a
selection holds before a kept one is kept too (else the kept prefix would end earlier):
so a selection keeping the run through its first decisive block opens with that block,
and one keeping less is laid out, as far as the rule sees, canonically. When that block
may not open the conversation, keeping it is forbidden (``kept_lead``); when it may,
the canonical order opens with it or with evidence too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Generic, TypeVar

from ..facts import format_facts
from .rendering import RenderFormat
from .types import Candidate, Kind, Request

__all__ = [
    "BODY_NON_EMPTY",
    "TOOL_CALL_ARGUMENTS",
    "TOOL_DEFINITION",
    "TOOL_ID_PATTERN",
    "Clause",
    "Lead",
    "Leading",
    "Rule",
    "Selection",
    "broken",
    "kept_lead",
    "lead_of",
    "selection_of",
    "selection_rules",
]

K = TypeVar("K")

BODY_NON_EMPTY = "body-non-empty"
TOOL_CALL_ARGUMENTS = "tool-call-arguments"
TOOL_DEFINITION = "tool-definition"
TOOL_ID_PATTERN = "tool-id-pattern"

_STABLE = frozenset({Kind.SYSTEM, Kind.DEVELOPER, Kind.MEMORY, Kind.TOOL_DEFINITION})
_TURNS = frozenset({Kind.USER_TURN, Kind.ASSISTANT_TURN})


@dataclass(frozen=True, slots=True)
class Lead:
    """A format's rule on how the conversation opens: of the kinds it names, the first
    in layout order must be one of ``opens``, not one of ``closes``."""

    rule: str
    opens: frozenset[Kind]
    closes: frozenset[Kind]


@dataclass(frozen=True, slots=True)
class Selection:
    """A format's rules that a selection can break (its facts' ``selection``; the text
    format's are the defaults)."""

    tools: bool = False
    messages: str | None = None
    empty_turns_sent: bool = True
    lead: Lead | None = None
    tool_id_pattern: str | None = None

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules' names, in the order a body is checked for them."""
        names = [BODY_NON_EMPTY]
        if self.tools:
            names += [TOOL_CALL_ARGUMENTS, TOOL_DEFINITION]
        names += [n for n in (self.messages, None if self.lead is None else self.lead.rule) if n]
        return (*names, *((TOOL_ID_PATTERN,) if self.tool_id_pattern else ()))


@cache
def selection_of(fmt: RenderFormat) -> Selection:
    """``fmt``'s rules that a selection can break (its format's facts; the text format
    has none of its own)."""
    facts = format_facts(fmt)
    found = None if facts is None else facts.selection
    if found is None:
        return Selection()
    return Selection(
        tools=found.tools,
        messages=found.messages,
        empty_turns_sent=found.empty_turns_sent,
        lead=None if found.lead is None else _lead(*found.lead),
        tool_id_pattern=found.tool_id_pattern,
    )


def _lead(rule: str, opens: Iterable[str], closes: Iterable[str]) -> Lead:
    return Lead(rule, frozenset(map(Kind, opens)), frozenset(map(Kind, closes)))


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
    facts = selection_of(fmt)
    out: list[Rule[str]] = []
    # only a tool call's or a tool definition's own content can break a rule
    for c in forms if facts.tools else ():
        if c.kind is Kind.TOOL_CALL or c.kind is Kind.TOOL_DEFINITION:
            rule = _content_rule(c, facts)
            if rule is not None:
                out.append(Clause(rule, (), (c.id,)))
    if task.query is None and task.instruction is None:
        some = tuple(c.id for c in forms if c.kind is not Kind.TOOL_DEFINITION)
        out.append(Clause(BODY_NON_EMPTY, some))
    if facts.messages is not None and task.query is None:
        sends = tuple(c.id for c in forms if _sends_message(c, facts))
        out.append(Clause(facts.messages, sends))
    lead = lead_of(fmt)
    if lead is not None:
        name, decides = lead
        ranked = [(c, good) for c in forms if (good := decides(c)) is not None]
        # evidence first (any order: all of it may open), then the conversation by turn
        ranked.sort(key=lambda cg: (cg[0].kind is not Kind.EVIDENCE, cg[0].turn, cg[0].id))
        if any(good is False for _, good in ranked):
            out.append(Leading(name, tuple(c.id for c, _ in ranked), tuple(g for _, g in ranked)))
    return tuple(out)


def lead_of(fmt: RenderFormat) -> tuple[str, Callable[[Candidate], bool | None]] | None:
    """The format's rule on how the conversation opens and, for a form, whether it may
    open it (True), may not (False) or does not decide (None); None for a format
    without one."""
    facts = selection_of(fmt)
    lead = facts.lead
    if lead is None:
        return None

    def decides(c: Candidate) -> bool | None:
        if c.kind is Kind.EVIDENCE:
            return True  # evidence opens the messages as the user's
        if c.kind in _TURNS and not c.content and not facts.empty_turns_sent:
            return None  # an empty turn sends no block
        if c.kind in lead.opens:
            return True
        return False if c.kind in lead.closes else None

    return lead.rule, decides


def kept_lead(fmt: RenderFormat, run: Sequence[Candidate | None]) -> tuple[str, int] | None:
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


def _sends_message(c: Candidate, facts: Selection) -> bool:
    if c.kind in _STABLE:
        return False
    return bool(c.content) or facts.empty_turns_sent if c.kind in _TURNS else True


def _content_rule(c: Candidate, facts: Selection) -> str | None:
    """The rule ``c``'s own content breaks in a format of ``facts``, or None."""
    if not facts.tools:
        return None
    if c.kind is Kind.TOOL_CALL:
        if not isinstance(_json(c.content), dict):
            return TOOL_CALL_ARGUMENTS
        pattern = facts.tool_id_pattern
        if pattern is not None and not re.fullmatch(pattern, str(c.tool_call_id)):
            return TOOL_ID_PATTERN
    elif c.kind is Kind.TOOL_DEFINITION and not _is_definition(_json(c.content)):
        return TOOL_DEFINITION
    return None


def _is_definition(value: object) -> bool:
    """A tool definition: a JSON object with a string name and, when it gives one, a
    JSON Schema object as ``parameters`` or ``input_schema``, or those wrapped in ``{type:
    "function", function: {...}}``."""
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
