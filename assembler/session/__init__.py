"""Sessions: an agent's request kept between model calls, changed by deltas.

``Session(request)`` validates the request once; ``session.apply(delta)`` applies a
delta (``models/session.md``: add, remove and update candidates; patch the task,
the sources and the policy) and returns the answer ``assemble()`` gives for the
resulting request. Modules: ``delta`` (the delta format and its validation),
``state`` (a delta applied to a state, as a pure function), ``session`` (``Session``
and ``answer``, the one place an answer is produced).
"""

from __future__ import annotations

from .delta import DELTA_KEYS, RESET, Delta, delta_from_json, parse_delta
from .session import Proposal, Session, SessionConflict
from .state import State, apply_delta, initial_state

__all__ = [
    "DELTA_KEYS",
    "RESET",
    "Delta",
    "Proposal",
    "Session",
    "SessionConflict",
    "State",
    "apply_delta",
    "delta_from_json",
    "initial_state",
    "parse_delta",
]
