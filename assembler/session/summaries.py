"""Summaries as forms that keep the cache: a span of old turns replaced by its summary.

Input: a caller's summariser (a callable from the span's candidates, as JSON dicts in
conversation order, to the summary's text, or a mapping with ``content`` and
optionally ``cost`` and ``relevance``), a session's request and its last answer.
Output: ``Summaries.delta``: the delta that replaces the oldest span of conversation
(whole units: a tool call with its results; at most ``span_units`` of them, through
the last the answer left something of out) by one summary candidate, or None when
the answer left none of them out.

* **Placed so the prefix before it stays.** The span is the oldest run of
  conversation after the required head; its summary takes the place of the span's
  first item (its ``turn``), so everything before it (tools, system prompt, task, the
  required turns) renders the same bytes and its cache entries are read.
* **Made once, reused.** A span's summary is memoised by the span's ids and contents:
  the summariser runs once per span, and once the span is replaced the summary is a
  candidate like any other, the same bytes on every later call.
* **Priced with the cache.** The session solves both requests (the span as it is, and
  the span replaced) and keeps the summary only when its answer is no dearer under the
  cache's prices and keeps the value within the tolerance (``Session``).

Costs: a summary's ``cost`` is the caller's, else its UTF-8 length / 4 rounded up;
its ``relevance`` the caller's, else the highest of the span's.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest
from ..model.numbers import is_number, is_whole
from ..model.types import Kind, Request, Result

__all__ = ["SUMMARY_PREFIX", "Summaries", "Summariser"]

Summariser = Callable[[Sequence[Mapping[str, Any]]], "str | Mapping[str, Any]"]

SUMMARY_PREFIX = "summary:"
_CONVERSATION = frozenset({Kind.USER_TURN, Kind.ASSISTANT_TURN, Kind.TOOL_CALL, Kind.TOOL_RESULT})


class Summaries:
    """A session's summariser and the summaries it made (``span_units``: how many
    conversation units one summary replaces at most)."""

    def __init__(self, summariser: Summariser, *, span_units: int = 8) -> None:
        if not callable(summariser):
            raise InvalidRequest("summariser", "must be a callable")
        if span_units < 1:
            raise InvalidRequest("summariser", f"span_units must be >= 1, not {span_units}")
        self.summariser = summariser
        self.span_units = span_units
        self._made: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        self.calls = 0

    def delta(
        self, request: Request, result: Result, as_json: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any] | None:
        """The delta replacing the oldest span the answer left out, or None. ``as_json``
        is the request's candidates as JSON (the summariser is handed those)."""
        span = self._span(request, result)
        if not span:
            return None
        by_id = {str(c["id"]): c for c in as_json}
        given = [by_id[i] for i in span]
        summary = self._summary(given)
        return {"remove": list(span), "add": [summary]}

    def _span(self, request: Request, result: Result) -> list[str]:
        selected = set(result.selected)
        talk = [c for c in request.candidates if c.kind in _CONVERSATION and not c.required
                and not c.id.startswith(SUMMARY_PREFIX)]  # fmt: skip
        if not talk:
            return []
        # units in conversation order: a tool call with its results, else one item
        calls: dict[str, tuple[int, str]] = {}
        for c in talk:
            if c.kind is Kind.TOOL_CALL:
                calls[str(c.tool_call_id)] = min(calls.get(str(c.tool_call_id), (c.turn, c.id)),
                                                 (c.turn, c.id))  # fmt: skip
        units: dict[tuple[int, str], list[str]] = {}
        for c in talk:
            if c.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT) and str(c.tool_call_id) in calls:
                key = calls[str(c.tool_call_id)]
            else:
                key = (c.turn, c.id)
            units.setdefault(key, []).append(c.id)
        oldest = [units[k] for k in sorted(units)][: self.span_units]
        # the oldest units through the last of them the answer left something of out
        dropped = [j for j, unit in enumerate(oldest) if any(i not in selected for i in unit)]
        if not dropped:
            return []
        return [i for unit in oldest[: dropped[-1] + 1] for i in unit]

    def _summary(self, span: list[Mapping[str, Any]]) -> dict[str, Any]:
        key = tuple((str(c["id"]), _sha(str(c.get("content", "")))) for c in span)
        made = self._made.get(key)
        if made is not None:
            return made
        self.calls += 1
        given = self.summariser(span)
        if isinstance(given, str):
            content, cost, relevance = given, None, None
        elif isinstance(given, Mapping) and isinstance(given.get("content"), str):
            content, cost, relevance = given["content"], given.get("cost"), given.get("relevance")
        else:
            raise InvalidRequest("summariser", "must return a text or {content, cost?, "
                                 "relevance?}")  # fmt: skip
        first = span[0]
        summary: dict[str, Any] = {
            "id": f"{SUMMARY_PREFIX}{first['id']}..{span[-1]['id']}",
            "kind": "user_turn",
            "channel": "user",
            "turn": int(first.get("turn", 0)),
            "scope": "shared",
            "content": content,
            "cost": int(cost) if is_whole(cost)
            else max(1, math.ceil(len(content.encode("utf-8")) / 4)),
            "relevance": float(relevance) if is_number(relevance)
            else max(float(c.get("relevance", 0.0)) for c in span),
        }  # fmt: skip
        self._made[key] = summary
        return summary


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
