"""``Session``: one agent's request kept between model calls; deltas in, answers out.

Input: the first request (a mapping or a typed ``Request``, validated once), the
call's settings (strategy, workers, render format and counter, recorder, limits,
default time limit), then deltas (``models/session.md``).
Output: after each delta, the ``Result`` that ``assemble()`` gives for the resulting
request, identical in selection, ``package_id``, ``trace_id``, decisions and
rendering; or an error, after which the session is exactly as before the delta.

The work is split so that each part redoes only what a delta touches:
``state.apply_delta`` (pure: state + delta -> state, validating only what the delta
brings) and ``answer`` (state -> result), the one function that produces an answer,
from what the previous answer kept (``warm``: gates, trace and a proven solve).
``propose`` computes the next state and its answer without changing the session;
``commit`` makes it the session's state. ``apply`` does both under the session's lock,
so concurrent deltas to one session are applied one after the other.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..api import assemble_validated
from ..model.arguments import call_arguments
from ..model.bugs import internal_errors
from ..model.errors import AssemblerError
from ..model.limits import DEFAULT_LIMITS, Limits
from ..model.parse import parse_request
from ..model.rendering import RenderFormat
from ..model.serialise import request_as_json
from ..model.types import Request, Result
from ..recorder import Recorder
from ..strategies import load_strategy
from .delta import Delta, parse_delta
from .state import State, apply_delta, initial_state
from .warm import Options, Warm, warm_answer

if TYPE_CHECKING:
    from ..render import Counter

__all__ = ["Options", "Proposal", "Session", "SessionConflict", "answer", "seconds_left"]

_LEAST_LIMIT = 0.001


@dataclass(frozen=True, slots=True)
class Proposal:
    """A delta's outcome before it is committed: the state it was applied to, the
    state it makes, that state's answer and what the answer keeps for the next."""

    base: State
    state: State
    result: Result
    warm: Warm | None = None


def seconds_left(deadline: float) -> float:
    """What is left until ``deadline`` (``time.monotonic()``), as a time limit (which
    must be positive: a call already late gets the least, and answers what it can)."""
    return max(_LEAST_LIMIT, deadline - time.monotonic())


class SessionConflict(AssemblerError):
    """A proposal was committed to a session that had changed since it was made."""


def answer(
    state: State,
    options: Options,
    time_limit: float | None = None,
    kept: Warm | None = None,
    base: State | None = None,
) -> tuple[Result, Warm | None]:
    """THE answer of a session's state: what every delta's result comes from, and what
    it keeps for the next delta's answer.

    With the exact strategy (and no token counter) it is ``warm.warm_answer``: gates,
    trace and the proven solve kept from ``kept`` (the answer of ``base``, the state
    the delta was applied to, or of ``state`` itself) and redone where the delta
    reaches. Otherwise it runs the whole chain on the state's request (not validated
    again: every part of it was, when it arrived). Either way the result is identical
    to ``assemble(state.request)``'s.
    """
    warm = warm_answer(state, options, time_limit, kept, base)
    if warm is not None:
        return warm
    result = assemble_validated(
        state.request,
        strategy=options.strategy,
        time_limit=options.time_limit if time_limit is None else time_limit,
        workers=options.workers,
        render=options.render,
        counter=options.counter,
        ledger=options.ledger,
        limits=options.limits,
    )
    return result, None


class Session:
    """A request kept warm between model calls; ``apply(delta)`` returns the answer.

    ``Session(request, strategy=..., workers=..., render=..., counter=..., ledger=...,
    limits=..., time_limit=...)`` takes ``assemble``'s settings once; each answer is
    that of ``assemble(session.request, <the same settings>)``. The request is
    validated here; each delta's new and changed parts when they arrive.
    """

    def __init__(
        self,
        request: Mapping[str, Any] | Request,
        *,
        strategy: str = "cpsat",
        time_limit: float | None = None,
        workers: int | None = None,
        render: str | RenderFormat | None = None,
        counter: Counter | None = None,
        ledger: Recorder | None = None,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        # the settings are judged before the request, as assemble() judges them
        call_arguments(strategy, time_limit, workers)
        load_strategy(strategy)
        fmt = None
        if render is not None:
            # the renderer is loaded only for a session that renders, as assemble() does
            from ..render import render_format

            fmt = render_format(render)
        self.options = Options(
            strategy=strategy,
            workers=workers,
            render=fmt,
            counter=counter,
            ledger=ledger,
            limits=limits,
            time_limit=time_limit,
        )
        self._state = initial_state(parse_request(request, limits=limits))
        # what the last answer of the current state kept (None: nothing yet)
        self._warm: Warm | None = None
        self._lock = threading.Lock()

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
        """The request as JSON (candidates in arrival order): a fresh
        ``assemble(session.to_dict())`` gives the session's answer."""
        return request_as_json(self._state.request)

    def answer(self, *, time_limit: float | None = None) -> Result:
        """The answer for the session's request as it is now."""
        state, kept = self._state, self._warm
        result, warm = answer(state, self.options, time_limit, kept)
        if warm is not None:
            with self._lock:
                # kept only if no delta was committed meanwhile
                if self._state is state:
                    self._warm = warm
        return result

    def propose(
        self,
        delta: Mapping[str, Any] | Delta,
        *,
        time_limit: float | None = None,
        deadline: float | None = None,
    ) -> Proposal:
        """The state ``delta`` makes and its answer, without changing the session.

        ``deadline`` (a ``time.monotonic()`` instant) instead of ``time_limit``: the
        answer gets what is left of it once the delta is validated and applied."""
        base, kept = self._state, self._warm
        limits = self.options.limits
        with internal_errors("session"):
            state = apply_delta(base, parse_delta(delta, limits=limits), limits)
        if deadline is not None:
            time_limit = seconds_left(deadline)
        result, warm = answer(state, self.options, time_limit, kept, base)
        return Proposal(base, state, result, warm)

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
        self._warm = proposal.warm

    def apply(self, delta: Mapping[str, Any] | Delta, *, time_limit: float | None = None) -> Result:
        """Apply ``delta`` and return the answer for the resulting request. Atomic: on
        any error (an invalid delta, a render error, a bug) the session is unchanged."""
        with self._lock:
            proposal = self.propose(delta, time_limit=time_limit)
            self._commit(proposal)
        return proposal.result
