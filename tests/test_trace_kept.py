"""A trace kept between calls equals the trace of the whole request, after any change.

The trace stage (``stages/trace.py``) rewords only the decisions a change may reach,
from what it kept of the previous bundle; after every step of a random delta sequence,
for a random selection of eligible forms (at most one per identity, as the exact
strategy's), its result must equal ``bundle_result`` on the whole request in every
field: selection, package_id, trace_id, decisions word for word (read after some steps
only: the words are made when read, and a kept trace keeps only those made).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from deltas import applied, deltas
from drawn import requests
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

from assembler.hunt.generate import Shape
from assembler.model.errors import InvalidRequest
from assembler.model.parse import parse_request
from assembler.model.types import Result
from assembler.session.delta import parse_delta
from assembler.session.state import State, apply_delta, initial_state
from assembler.stages.choice import Choice
from assembler.stages.gates import GateReport, apply_gates
from assembler.stages.trace import TraceKept, bundle_result, trace


def _selection(data: st.DataObject, state: State, gates: GateReport) -> list[str]:
    """Eligible forms, at most one per identity; sometimes the previous selection's
    survivors are kept, so that most of a selection stays put as a session's does."""
    by_identity: dict[str, list[str]] = {}
    for c in state.request.candidates:
        if c.id in gates.notes:
            by_identity.setdefault(c.identity, []).append(c.id)
    chosen = []
    for identity in sorted(by_identity):
        forms = by_identity[identity]
        pick = data.draw(st.integers(-len(forms), len(forms) - 1), label=identity)
        if pick >= 0:
            chosen.append(forms[pick])
    return chosen


def _step(
    data: st.DataObject,
    previous: TraceKept | None,
    gates: GateReport,
    state: State,
    last: bool = False,
) -> tuple[Result, TraceKept]:
    selection = _selection(data, state, gates)
    optimal = data.draw(st.booleans(), label="optimal")
    bound = None if optimal else data.draw(st.none() | st.integers(0, 10**6), label="bound")
    choice = Choice.bundle(tuple(selection), optimal=optimal, bound=bound)
    got, kept = trace(state.request, gates, "exact", choice, previous, keep=True)
    expected = bundle_result(state.request, gates, "exact", selection, optimal=optimal, bound=bound)
    # every field but the decisions (replacing them reads none of them)
    assert replace(got, decisions=()) == replace(expected, decisions=())
    # a result's words are made when read: a step whose decisions nobody reads leaves
    # the next step a kept trace with only some decisions worded
    if last or data.draw(st.booleans(), label="read the decisions"):
        assert got == expected
        assert got.to_dict() == expected.to_dict()
    assert kept is not None
    return got, kept


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(requests(Shape.small(10)), st.booleans(), st.data())
def test_a_trace_kept_between_deltas_equals_the_trace_of_the_whole_request(
    base: dict[str, Any], require_content: bool, data: st.DataObject
) -> None:
    state = initial_state(parse_request(base))
    gates = apply_gates(state.request, require_content=require_content)
    _, kept_trace = _step(data, None, gates, state)
    current = base
    steps = data.draw(st.integers(1, 6))
    for step in range(steps):
        delta = data.draw(deltas(current, step))
        try:
            after = apply_delta(state, parse_delta(delta))
        except InvalidRequest:
            continue
        gates = apply_gates(after.request, require_content=require_content)
        # a kept threshold is what takes the incremental path (a new one rewords all)
        kept = after.request.task.min_relevance == state.request.task.min_relevance
        result, kept_trace = _step(data, kept_trace, gates, after, step == steps - 1)
        event(f"threshold kept: {kept}, selected: {min(len(result.selected), 3)}")
        state, current = after, applied(current, delta)
