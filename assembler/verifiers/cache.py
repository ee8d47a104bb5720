"""The cache verifier: is a cache-aware result's prefix and price what the rules say?

Input: a request with a ``cache`` section and a bundle result (its JSON dict).
Output: a list of ``Violation`` (empty when the record is honest).

It imports nothing from the objective's modules: from ``models/README.md`` section 6b
it re-derives, for the result's selection, the previous blocks the layout keeps (each
selected with the same content, up to the first change, such that what follows keeps
the provider's order: tool definitions, system prompt, messages, and the conversation
in ``(turn, id)`` order), the entry read, the tokens read, written and sent uncached and
the price, and checks them against ``result.cache``; and it checks that the selection
is in the feasible set the record states (appended within the append floor, or within
the rewrite budget and floor), that the append floor follows from the cache-blind
optimum's value and the tolerance, and the rewrite budget from the headroom. It does
not judge optimality: the tests compare with the brute-force oracle for that.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from decimal import ROUND_CEILING, Decimal
from typing import Any

from ..model.cache import Cache
from ..model.types import Candidate, Kind, Request, Violation

__all__ = ["kept_prefix", "verify_cache"]

_MICRO = 1_000_000
_TOOLS = {Kind.TOOL_DEFINITION}
_SYSTEM = {Kind.SYSTEM, Kind.DEVELOPER, Kind.MEMORY}
_TALK = {Kind.USER_TURN, Kind.ASSISTANT_TURN, Kind.TOOL_CALL, Kind.TOOL_RESULT}


def verify_cache(request: Request, result: dict[str, Any]) -> list[Violation]:
    """Every way ``result``'s cache record departs from the rules (section 6b)."""
    cache = request.cache
    found: list[Violation] = []
    record = result.get("cache")
    if cache is None:
        if record is not None:
            found.append(Violation("cache", "a cache record for a request without a cache"))
        return found
    if result.get("status") != "bundle":
        if record is not None:
            found.append(Violation("cache", "a cache record on a result with no bundle"))
        return found
    if not isinstance(record, dict):
        found.append(Violation("cache", "a cache-aware bundle without its cache record"))
        return found
    by_id = {c.id: c for c in request.candidates}
    selected = [by_id[i] for i in result.get("selected", []) if i in by_id]
    derived = _derive(request, cache, selected)
    for key, truth in derived.items():
        if record.get(key) != truth:
            found.append(Violation("cache", f"{key} is {record.get(key)!r}, rules say {truth!r}"))
    value = int(result.get("value", 0))
    cost = int(result.get("cost", 0))
    blind = record.get("blind_value")
    if blind is None and record.get("rewrite_budget") is None:
        return found  # a baseline's record: its prefix and price only
    if not isinstance(blind, int) or value > blind:
        found.append(Violation("cache", f"blind_value {blind!r} is below the bundle's value"))
        return found
    floor = _ceil((1 - Decimal(repr(cache.tolerance))) * blind)
    if record.get("append_floor") not in (floor, None) or record.get("rewrite_floor") != floor:
        found.append(Violation("cache", f"a value floor is not ceil((1 - tolerance) x {blind})"))
    budget = request.task.budget
    rewrite = budget - _ceil(Decimal(repr(cache.headroom)) * budget)
    if record.get("rewrite_budget") not in (rewrite, budget):
        found.append(Violation("cache", f"rewrite_budget is neither {rewrite} nor {budget}"))
    appended = record.get("appended") is True and record.get("append_floor") is not None
    within_append = appended and value >= int(record["append_floor"])
    within_rewrite = cost <= int(record.get("rewrite_budget", -1)) and value >= int(
        record.get("rewrite_floor", 1 << 62)
    )
    if not (within_append or within_rewrite):
        found.append(Violation("cache", "the bundle is outside the feasible set its record states"))
    if record.get("value_given_up") != blind - value:
        found.append(Violation("cache", "value_given_up is not blind_value - value"))
    return found


def _ceil(number: Decimal) -> int:
    return int(number.to_integral_value(rounding=ROUND_CEILING))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _place(c: Candidate) -> int:
    return 0 if c.kind in _TOOLS else 1 if c.kind in _SYSTEM else 2


def kept_prefix(request: Request, selected: list[Candidate]) -> list[Candidate | None]:
    """The previous blocks a rendering of ``selected`` keeps first, in order (None: the
    task's instruction); empty without a cache section."""
    if request.cache is None:
        return []
    run, kept, _ = _kept(request, request.cache, selected)
    return [held for held, _, _ in run[:kept]]


def _derive(request: Request, cache: Cache, selected: list[Candidate]) -> dict[str, Any]:
    """The record's prefix and price fields, re-derived for ``selected``."""
    run, kept, instruction_tokens = _kept(request, cache, selected)
    instruction = request.task.instruction
    tokens = [count for _, _, count in run]
    total = sum(c.cost for c in selected)
    if instruction is not None:
        total += instruction_tokens or 0
    alive = (
        cache.now is None
        or cache.previous_at is None
        or 0 <= cache.now - cache.previous_at <= cache.ttl
    )
    read, entry_read = 0, None
    running = 0
    for j in range(kept if alive else 0):
        running += tokens[j]
        if running < cache.min_prefix_tokens:
            continue
        if cache.breakpoints > 0:
            if cache.previous[j].breakpoint:
                read, entry_read = running, j
        elif j == kept - 1:
            least, step = cache.min_prefix_tokens, cache.step_tokens
            read, entry_read = least + step * ((running - least) // step), j
    written = total - read if cache.writes and total >= cache.min_prefix_tokens else 0
    uncached = total - read - written
    pricing = cache.pricing
    price = pricing.read * read + pricing.write * written + pricing.input * uncached
    return {
        "kept": kept,
        "previous": len(cache.previous),
        "entry": entry_read,
        "read_tokens": read,
        "written_tokens": written,
        "uncached_tokens": uncached,
        "price_micro": price,
        "appended": len(run) == len(cache.previous) and kept == len(run),
    }


def _kept(
    request: Request, cache: Cache, selected: list[Candidate]
) -> tuple[list[tuple[Candidate | None, int, int]], int, int | None]:
    """The run of previous blocks this call could keep ((candidate or None for the
    instruction, place, tokens) each), how many of them ``selected`` keeps, and the
    instruction's tokens."""
    everyone = {c.id: c for c in request.candidates}
    chosen = {c.id for c in selected}
    calls: dict[str | None, tuple[int, str]] = {}
    for c in request.candidates:
        if c.kind is Kind.TOOL_CALL:
            calls[c.tool_call_id] = min(calls.get(c.tool_call_id, (c.turn, c.id)), (c.turn, c.id))

    def key(c: Candidate) -> tuple[int, str, int]:
        if c.kind is Kind.TOOL_RESULT:
            return (*calls.get(c.tool_call_id, (c.turn, c.id)), 1)
        return c.turn, c.id, 0

    instruction = request.task.instruction
    # the run of previous blocks this call could keep: (candidate or None, place, tokens)
    run: list[tuple[Candidate | None, int, int]] = []
    instruction_tokens = cache.instruction_tokens
    talk: list[tuple[tuple[int, str, int], int]] = []
    # a tool call is directly followed by its result: the call the run's last block made
    calling: str | None = None
    for block in cache.previous:
        held = None if block.id is None else everyone.get(block.id)
        answers = None if held is None or held.kind is not Kind.TOOL_RESULT else held.tool_call_id
        if calling is not None and answers != calling:
            break
        calling = held.tool_call_id if held is not None and held.kind is Kind.TOOL_CALL else None
        if block.id is None:
            if instruction is None or _sha(instruction) != block.content_sha256:
                break
            if instruction_tokens is None:
                instruction_tokens = block.tokens
            entry: tuple[Candidate | None, int, int] = (None, 1, instruction_tokens)
        else:
            form = everyone.get(block.id)
            if (
                form is None
                or form.content is None
                or _sha(form.content) != block.content_sha256
                or (block.form is not None and block.form != form.form)
            ):
                break
            entry = (form, _place(form), form.cost)
            if form.kind in _TALK:
                if talk and key(form) <= talk[-1][0]:
                    break
                talk.append((key(form), len(run)))
        if run and entry[1] < run[-1][1]:
            break
        run.append(entry)
    if instruction is not None and all(held is not None for held, _, _ in run):
        # a new instruction opens the system prompt: nothing of the messages is kept
        run = [e for e in run if e[1] < 2]
        talk = []
    places = [place for _, place, _ in run]
    in_run = {held.id for held, _, _ in run if held is not None}
    # what follows the kept blocks must keep the order: each selected form outside the
    # run stops the prefix before the first block that must come after it
    limit = len(run)
    talk_keys = [k for k, _ in talk]
    for c in selected:
        if c.id in in_run:
            continue
        place = _place(c)
        if place < 2:
            limit = min(limit, bisect_right(places, place))
        elif c.kind in _TALK:
            later = bisect_right(talk_keys, key(c))
            if later < len(talk):
                limit = min(limit, talk[later][1])
    kept = 0
    for held, _, _ in run[:limit]:
        if held is not None and held.id not in chosen:
            break
        kept += 1
    return run, kept, instruction_tokens
