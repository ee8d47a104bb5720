"""``Session``: one agent's request kept between model calls; deltas in, answers out.

Input: the first request (a mapping or a typed ``Request``, validated once), the
call's ``Settings`` (or their fields as keyword arguments), then deltas
(``models/session.md``).
Output: after each delta, the ``Result`` that ``assemble()`` gives for the resulting
request with the same settings, identical in selection, ``package_id``, ``trace_id``,
decisions and rendering; or an error, after which the session is exactly as before.

A session is the pipeline (``assembler.pipeline``) with what each stage kept: the
state (``state.apply_delta``: pure, validating only what the delta brings) and the
``Kept`` of the last answer. With a cache section (the request's, or ``cache=`` a
provider's name or a section), the session writes into the request it solves what the
provider holds: the blocks its last rendering sent, when, and the time of this call;
``Session.to_dict()`` is that request, so nothing is hidden. With ``summariser=`` a
callable, the oldest span of turns an answer left out may be replaced by its summary
(``session.summaries``) when that answer is no dearer under the cache's prices and
keeps the value; the replacement is part of the state, so ``to_dict()`` shows it too.
``propose`` computes the next state and its answer without changing the session;
``commit`` makes it the session's state. ``apply`` does both under the session's lock,
so concurrent deltas to one session are applied one after the other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..api import settings_for
from ..deadline import Deadline
from ..errors import SessionConflict
from ..model.bugs import internal_errors
from ..model.cache import PreviousBlock, parse_cache
from ..model.limits import Limits
from ..model.parse import parse_request, vouched
from ..model.rendering import Rendering
from ..model.serialise import request_as_json
from ..model.types import Request, Result, Status
from ..pipeline import Kept, run
from ..recorder import Recorder
from ..settings import Settings
from .delta import Delta, parse_delta
from .state import State, apply_delta, hand_on_memos, initial_state
from .summaries import Summaries, Summariser

__all__ = ["Proposal", "Session", "SessionConflict"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """A delta's outcome before it is committed: the state it was applied to, the
    state it makes, that state's answer and what the answer's stages kept."""

    base: State
    state: State
    result: Result
    kept: Kept | None = None


class Session:
    """A request kept warm between model calls; ``apply(delta)`` returns the answer.

    ``Session(request, settings)`` or ``Session(request, strategy=..., render=...,
    ...)`` takes the settings once; each answer is that of ``assemble(session.request,
    settings)``. The request is validated here; each delta's new and changed parts when
    they arrive.
    """

    def __init__(
        self,
        request: Mapping[str, Any] | Request,
        settings: Settings | None = None,
        *,
        cache: str | Mapping[str, Any] | None = None,
        summariser: Summariser | None = None,
        **options: Any,
    ) -> None:
        # the settings are judged before the request, as assemble() judges them
        self.settings = settings_for(request, settings, options)
        with internal_errors("session"):
            parsed = parse_request(request, limits=self.settings.limits)
            if cache is not None:
                section = {"provider": cache} if isinstance(cache, str) else dict(cache)
                parsed = vouched(
                    replace(parsed, cache=parse_cache(section, self.settings.limits)),
                    self.settings.limits,
                )
        self._state = initial_state(parsed)
        # what the stages of the last answer kept (None: nothing yet)
        self._kept: Kept | None = None
        self._lock = threading.Lock()
        # the last answer sent (answer, or a committed proposal): what usage is for
        self._last: Result | None = None
        # a span of old turns may be replaced by its summary (``session.summaries``)
        self.summaries = None if summariser is None else Summaries(summariser)

    @classmethod
    def resumed(
        cls,
        request: Mapping[str, Any] | Request,
        settings: Settings,
        *,
        version: int,
        rendering: Rendering | None,
    ) -> Session:
        """The session whose last answer, its ``version``-th, solved ``request`` (as
        recorded: with a cache section, at that answer's time) and rendered
        ``rendering``: what the session that gave that answer holds, so that its next
        answer is the same (a server replica rebuilds a session from a ledger so)."""
        session = cls(request, settings)
        solved = session._state.request
        session._state = _held(
            replace(session._state, version=version), solved, rendering, session.settings.limits
        )
        return session

    @property
    def state(self) -> State:
        return self._state

    @property
    def request(self) -> Request:
        """The typed request the session stands for now."""
        return self._state.request

    @property
    def version(self) -> int:
        """How many deltas were applied since the session began."""
        return self._state.version

    def to_dict(self) -> dict[str, Any]:
        """The request as JSON (candidates in arrival order), with what the provider
        holds when it has a cache section: a fresh ``assemble(session.to_dict())``
        gives the session's answer."""
        return request_as_json(self._state.request)

    def answer(
        self, *, time_limit: float | None = None, deadline: Deadline | None = None
    ) -> Result:
        """The answer for the session's request as it is now (``time_limit`` and
        ``deadline`` as ``propose`` takes them)."""
        state, kept = self._state, self._kept
        result, after, sent = self._run(state, kept, time_limit, deadline, self.settings)
        with self._lock:
            # kept only if no delta was committed meanwhile
            if self._state is state:
                self._kept, self._state = after, sent
            self._last = result
        return result

    def propose(
        self,
        delta: Mapping[str, Any] | Delta,
        *,
        time_limit: float | None = None,
        deadline: Deadline | None = None,
        ledger: Recorder | None = None,
    ) -> Proposal:
        """The state ``delta`` makes and its answer, without changing the session.

        ``time_limit``: this call's, in seconds (default: the session's settings').
        ``deadline``: when the call is due, when it began before the session saw it (a
        served call's, from its arrival): the answer gets what is left of it once the
        delta is validated and applied (default: the time limit from now).
        ``ledger``: this call's recorder (default: the session's settings')."""
        base, kept = self._state, self._kept
        limits = self.settings.limits
        with internal_errors("session"):
            state = apply_delta(base, parse_delta(delta, limits=limits), limits)
        settings = self.settings if ledger is None else self.settings.but(ledger=ledger)
        result, after, sent = self._run(state, kept, time_limit, deadline, settings)
        return Proposal(base, sent, result, after)

    def commit(self, proposal: Proposal) -> None:
        """Make ``proposal``'s state the session's; it must have been made from the
        session's current state."""
        with self._lock:
            self._commit(proposal)

    def _commit(self, proposal: Proposal) -> None:
        if proposal.base is not self._state:
            raise SessionConflict(
                f"the session is at version {self._state.version}, the proposal was made"
                f" at version {proposal.base.version}: propose the delta again"
            )
        self._state = proposal.state
        self._kept = proposal.kept
        self._last = proposal.result

    def apply(self, delta: Mapping[str, Any] | Delta, *, time_limit: float | None = None) -> Result:
        """Apply ``delta`` and return the answer for the resulting request. Atomic: on
        any error (an invalid delta, a render error, a bug) the session is unchanged."""
        with self._lock:
            proposal = self.propose(delta, time_limit=time_limit)
            self._commit(proposal)
        return proposal.result

    def record_usage(self, ledger: Any, usage: Any, *, model: str,
                     at: float | None = None) -> Any:  # fmt: skip
        """Record the provider's ``usage`` for the last answer's body in ``ledger`` (an
        ``assembler.Ledger``), next to what the cache-aware decision predicted for it;
        returns the parsed ``BilledUsage``. ``assembler ledger cache`` reports it."""
        from ..cache.usage import record_result_usage

        if self._last is None:
            raise SessionConflict("the session has no answer yet: nothing was sent")
        cache = self._state.request.cache
        provider = None if cache is None else cache.provider.value
        return record_result_usage(ledger, self._last, usage, model=model, provider=provider,
                                   at=at)  # fmt: skip

    def _run(
        self,
        state: State,
        kept: Kept | None,
        time_limit: float | None,
        deadline: Deadline | None,
        settings: Settings,
    ) -> tuple[Result, Kept, State]:
        """The answer of ``state`` under ``settings``, the stages' kept work, and the
        state the next call starts from (with a cache section: what this answer's
        rendering sent). With a summariser, the oldest span the answer left out is
        tried as its summary, and kept when that answer is no dearer and keeps the
        value (``_summarised``)."""
        if time_limit is not None and time_limit != settings.time_limit:
            settings = settings.but(time_limit=time_limit)
        answered = self._solve(state, kept, settings, deadline)
        if self.summaries is not None:
            return self._summarised(state, kept, settings, deadline, answered)
        return answered

    def _summarised(
        self,
        state: State,
        kept: Kept | None,
        settings: Settings,
        deadline: Deadline | None,
        answered: tuple[Result, Kept, State],
    ) -> tuple[Result, Kept, State]:
        result = answered[0]
        assert self.summaries is not None
        if result.status is not Status.BUNDLE:
            return answered
        candidates = request_as_json(state.request)["candidates"]
        delta = self.summaries.delta(state.request, result, candidates)
        if delta is None:
            return answered
        limits = settings.limits
        with internal_errors("session"):
            other = apply_delta(state, parse_delta(delta, limits=limits), limits)
        tried = self._solve(other, kept, settings, deadline)
        if _cheaper(tried[0], result):
            return tried
        return answered

    def _solve(
        self, state: State, kept: Kept | None, settings: Settings, deadline: Deadline | None
    ) -> tuple[Result, Kept, State]:
        request = state.request
        cache = request.cache
        if cache is not None:
            # the time of this call decides whether the previous call's entries live
            now = replace(cache, now=time.time())
            request = hand_on_memos(request, vouched(replace(request, cache=now), settings.limits))
        result, after = run(request, settings, kept, keep=True, deadline=deadline)
        if request.cache is not None and result.rendering is not None:
            state = _held(state, request, result.rendering, settings.limits)
        return result, after, state


def _cheaper(tried: Result, result: Result) -> bool:
    """Whether the answer with a summary is kept: a bundle no dearer under the cache's
    prices (its cost without a cache section) whose value stays within the tolerance of
    the answer without it (at least its value without a cache section)."""
    if tried.status is not Status.BUNDLE:
        return False
    if tried.cache is None or result.cache is None or result.cache.blind_value is None:
        return tried.cost <= result.cost and tried.value >= result.value
    terms = result.cache.terms
    floor = result.cache.blind_value if terms is None else terms.rewrite_floor
    return tried.cache.price <= result.cache.price and tried.value >= floor


def _held(state: State, solved: Request, rendering: Rendering | None, limits: Limits) -> State:
    """``state`` once the answer that solved ``solved`` (with its cache section, at
    that answer's time) rendered ``rendering``: the provider holds what it sent."""
    cache = solved.cache
    if cache is None:
        return state
    held = (
        replace(cache, now=None)
        if rendering is None
        else replace(cache, previous=_sent(rendering), previous_at=cache.now, now=None)
    )
    request = vouched(replace(state.request, cache=held), limits)
    return replace(state, request=hand_on_memos(solved, request))


def _sent(rendering: Rendering) -> tuple[PreviousBlock, ...]:
    """The blocks a rendering sends, as the next call's cache section lists them."""
    return tuple(
        PreviousBlock(
            id=block.get("id"),
            form=block.get("form"),
            content_sha256=block["content_sha256"],
            tokens=block["tokens"],
            breakpoint=block.get("breakpoint", False),
        )
        for block in rendering.manifest.cache_blocks(rendering.text)
    )
