"""The format verifier: can a selection be sent in a format, as section 14's rules say?

Input: a validated request, a render format and the ids of a selection.
Output: a list of ``Violation`` of kind ``format-rule`` (empty when the format can send
it), each naming the rule in its detail.

It imports nothing from the renderer nor from the rules the decision keeps
(``model/sendable.py``): it lays the selection out by section 14 in its own words (the
blocks a cache section keeps first, by ``cache.kept_prefix``, then the stable
section, the evidence, the conversation by ``(turn, id)`` with each tool result after
its call, the query), writes down the messages each format would send (their roles,
whether a message is a function call, empty turns sending nothing in the formats that
drop them), and checks every rule that depends on the selection: a body with
something to send, Anthropic's first user message, Gemini's function call after a
user turn, and each form's own content (a tool call's arguments a JSON object, a tool
definition a definition, Anthropic's tool call ids).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..model.types import Candidate, Kind, Request, Violation
from .cache import kept_prefix

__all__ = ["FORMAT_RULE", "verify_sendable"]

FORMAT_RULE = "format-rule"

_CHAT = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
_ID = re.compile(r"[A-Za-z0-9_-]+")
_STABLE_ORDER = {Kind.TOOL_DEFINITION: 0, Kind.SYSTEM: 2, Kind.DEVELOPER: 3, Kind.MEMORY: 4}
_TALK = {Kind.USER_TURN, Kind.ASSISTANT_TURN, Kind.TOOL_CALL, Kind.TOOL_RESULT}


def verify_sendable(request: Request, fmt: str, selected: Iterable[str]) -> list[Violation]:
    """Every rule of ``fmt`` the selection ``selected`` breaks."""
    by_id = {c.id: c for c in request.candidates}
    chosen = [by_id[i] for i in sorted(set(selected)) if i in by_id]
    found: list[Violation] = []

    def flag(rule: str, detail: str, *forms: str) -> None:
        found.append(Violation(FORMAT_RULE, f"{rule}: {detail}", tuple(forms)))

    if fmt in _CHAT:
        for c in chosen:
            if c.kind is Kind.TOOL_CALL and not isinstance(_parsed(c.content), dict):
                flag("tool-call-arguments", "a tool call's content is not a JSON object", c.id)
            if c.kind is Kind.TOOL_DEFINITION and not _definition(_parsed(c.content)):
                flag("tool-definition", "a tool definition's content is not one", c.id)
            if (
                fmt == "anthropic-messages"
                and c.kind is Kind.TOOL_CALL
                and not _ID.fullmatch(str(c.tool_call_id))
            ):
                flag("tool-id-pattern", f"tool call id {c.tool_call_id!r}", c.id)
    task = request.task
    if fmt not in ("anthropic-messages", "gemini"):
        if task.instruction is None and task.query is None and all(
            c.kind is Kind.TOOL_DEFINITION for c in chosen
        ):
            flag("body-non-empty", "nothing but tool definitions, no instruction or query")
        return found
    # the messages, in layout order: (role, the form or None for the query, a call)
    messages: list[tuple[str, str | None, bool]] = []
    for c in _layout(request, chosen):
        if c.kind in _STABLE_ORDER:
            continue  # the system prompt and the tools are not messages
        if c.kind in (Kind.USER_TURN, Kind.ASSISTANT_TURN) and c.content == "":
            continue  # an empty turn sends no block
        talk = c.kind in (Kind.ASSISTANT_TURN, Kind.TOOL_CALL)
        messages.append(("model" if talk else "user", c.id, c.kind is Kind.TOOL_CALL))
    if task.query is not None:
        messages.append(("user", None, False))
    rule = "messages-non-empty" if fmt == "anthropic-messages" else "contents-non-empty"
    if not messages:
        flag(rule, "the body has no message")
        return found
    if fmt == "anthropic-messages":
        role, form, _ = messages[0]
        if role != "user":
            flag("first-message-user", "the first message is not a user turn", form or "")
        return found
    # Gemini merges neighbours of one role: the first content is the leading run
    opening = []
    for role, form, call in messages:
        if role != messages[0][0]:
            break
        opening.append((form, call))
    if messages[0][0] == "model" and any(call for _, call in opening):
        calls = [form or "" for form, call in opening if call]
        flag("function-call-turn", "a function call opens the contents", *calls)
    return found


def _layout(request: Request, chosen: list[Candidate]) -> list[Candidate]:
    """``chosen`` in section 14's order: the kept blocks, then the rest canonically."""
    kept = [c for c in kept_prefix(request, chosen) if c is not None]
    done = {c.id for c in kept}
    rest = [c for c in chosen if c.id not in done]
    stable = sorted(
        (c for c in rest if c.kind in _STABLE_ORDER), key=lambda c: (_STABLE_ORDER[c.kind], c.id)
    )
    evidence = [c for c in rest if c.kind is Kind.EVIDENCE]
    results = {c.tool_call_id: c for c in rest if c.kind is Kind.TOOL_RESULT}
    talk: list[Candidate] = []
    # a result whose call ends the kept blocks comes right after it
    if kept and kept[-1].kind is Kind.TOOL_CALL and kept[-1].tool_call_id in results:
        talk.append(results.pop(kept[-1].tool_call_id))
    for c in sorted(
        (c for c in rest if c.kind in _TALK and c.kind is not Kind.TOOL_RESULT),
        key=lambda c: (c.turn, c.id),
    ):
        talk.append(c)
        if c.kind is Kind.TOOL_CALL and c.tool_call_id in results:
            talk.append(results.pop(c.tool_call_id))
    dangling = talk[:1] if talk and talk[0].kind is Kind.TOOL_RESULT else []
    return [*kept, *dangling, *stable, *evidence, *talk[len(dangling) :]]


def _parsed(content: str | None) -> object:
    if content is None:
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return None


def _definition(value: object) -> bool:
    if isinstance(value, dict) and value.get("type") == "function" and "function" in value:
        value = value["function"]
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return False
    schema = value.get("parameters", value.get("input_schema", {"type": "object"}))
    return isinstance(schema, dict)
