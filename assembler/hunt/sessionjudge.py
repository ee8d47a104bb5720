"""Judging a session: its answers after deltas against fresh calls of the same requests.

Input: a request (the cache hunt's: a ``cache`` section whose previous blocks a call
before sent) and a strategy name.
Output: a ``Judgement``: ``session-disagreement`` when a ``Session`` holding the request
(rendered in the format its provider is read with) answers differently from a fresh
``assemble()`` of the request it stands for, at its first answer or after a delta;
None when every answer agrees (``Result.to_dict()`` without timings).

The deltas are the ones a kept optimum survives and those it does not: an empty one, a
re-scoring that raises every selected form and lowers the others (the kept optimum
stands), and one that lowers a selected form (a fresh solve). The request the session
stands for is ``Session.to_dict()`` (with a cache section: what the provider holds after
its last answer) with the delta applied; its time fields are left out so that the
entries live in both calls, as the session's own clock says.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from ..api import assemble
from ..facts import formats_of
from ..model.errors import AssemblerError
from ..model.types import Result
from ..session import Session
from .verdicts import FindingKind, Judgement

__all__ = ["judge_session"]


def judge_session(request: Mapping[str, Any], strategy: str) -> Judgement:
    """``session-disagreement`` when a session's answer differs from a fresh call's."""
    start = _timeless(request)
    section = start.get("cache")
    # the provider's own format: the one its caching (breakpoints or not) is read with
    fmt = None if section is None else formats_of(str(section.get("provider")))[0].value
    options: dict[str, Any] = {"strategy": strategy, "render": fmt}
    try:
        fresh = assemble(start, **options)
    except AssemblerError:
        return Judgement(None, "the request has no answer in its format", skipped=True)
    session = Session(start, **options)
    steps: list[tuple[str, Mapping[str, Any]]] = [("its first answer", {})]
    answers: dict[str, Mapping[str, Any]] = {}
    for number, (name, delta) in enumerate(steps):
        if number:
            current = session.to_dict()
            expected_request = _applied(current, delta)
            try:
                fresh = assemble(expected_request, **options)
            except AssemblerError:
                continue
            got = session.apply(delta)
        else:
            got = session.answer()
        answers[f"session {number}"], answers[f"fresh {number}"] = _answer(got), _answer(fresh)
        if _answer(got) != _answer(fresh):
            differs = [k for k in _answer(got) if _answer(got)[k] != _answer(fresh)[k]]
            return Judgement(
                FindingKind.SESSION_DISAGREEMENT,
                f"after {name}, the session's answer differs from a fresh call's in"
                f" {', '.join(differs)} ({fmt or 'not rendered'})",
                answers,
            )
        if number == 0:
            steps += list(_deltas(got))
    return Judgement(None, "every answer agrees", answers)


def _deltas(first: Result) -> Iterator[tuple[str, Mapping[str, Any]]]:
    chosen = set(first.selected)
    yield "an empty delta", {}
    rescored = {d.id: 1.0 if d.id in chosen else 0.0 for d in first.decisions}
    if rescored:
        yield "a re-scoring that keeps the optimum", {"relevance": rescored}
    if first.selected:
        yield "a re-scoring of a selected form", {"relevance": {first.selected[-1]: 0.0}}


def _applied(request: Mapping[str, Any], delta: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` after a delta of re-scorings (the only kind drawn here)."""
    out = _timeless(request)
    scores = delta.get("relevance", {})
    for candidate in out["candidates"]:
        if candidate["id"] in scores:
            candidate["relevance"] = scores[candidate["id"]]
    return out


def _timeless(request: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` without the cache section's clock: its entries live."""
    out = copy.deepcopy(dict(request))
    section = out.get("cache")
    if isinstance(section, dict):
        section.pop("now", None)
        if isinstance(section.get("previous"), dict):
            section["previous"].pop("at", None)
    return out


def _answer(result: Result) -> dict[str, Any]:
    data = result.to_dict()
    data.pop("timings", None)
    return data
