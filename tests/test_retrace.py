"""A trace kept between calls equals the trace of the whole request, after any change.

A session's trace state (``stages/retrace.py``) is updated from what each delta took
away and brought and from how the selection moved; after every step of a random delta
sequence, for a random selection of eligible forms (at most one per identity, as the
exact strategy's), its result must equal ``bundle_result`` on the whole request in
every field: selection, package_id, trace_id, decisions word for word.
"""

from __future__ import annotations

import os
from typing import Any

from deltas import applied, deltas
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import requests

from assembler.model.errors import InvalidRequest
from assembler.model.parse import parse_request
from assembler.model.types import Result
from assembler.session.delta import parse_delta
from assembler.session.state import State, apply_delta, initial_state
from assembler.stages.regate import GateState, regate
from assembler.stages.retrace import TraceState, retrace
from assembler.stages.trace import bundle_result
from assembler.tooling.generate import Shape


def _selection(data: st.DataObject, state: State, gates: GateState) -> list[str]:
    """Eligible forms, at most one per identity; sometimes the previous selection's
    survivors are kept, so that most of a selection stays put as a session's does."""
    by_identity: dict[str, list[str]] = {}
    for c in state.request.candidates:
        if c.id in gates.report.notes:
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
    previous: TraceState | None,
    gates: GateState,
    state: State,
    gone: list[Any],
    new: list[Any],
) -> tuple[Result, TraceState]:
    selection = _selection(data, state, gates)
    optimal = data.draw(st.booleans(), label="optimal")
    bound = None if optimal else data.draw(st.none() | st.integers(0, 10**6), label="bound")
    got, kept = retrace(
        previous,
        state.request,
        gates,
        "exact",
        selection,
        optimal=optimal,
        bound=bound,
        by_id=state.by_id,
        forms_of=state.forms_of,
        gone=gone,
        new=new,
    )
    expected = bundle_result(
        state.request, gates.report, "exact", selection, optimal=optimal, bound=bound
    )
    assert got == expected
    assert got.to_dict() == expected.to_dict()
    return got, kept


@settings(
    max_examples=int(os.environ.get("RETRACE_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(requests(Shape.small(10)), st.booleans(), st.data())
def test_a_trace_kept_between_deltas_equals_the_trace_of_the_whole_request(
    base: dict[str, Any], require_content: bool, data: st.DataObject
) -> None:
    state = initial_state(parse_request(base))
    request = state.request
    gates = regate(
        None, request, state.by_id, state.forms_of, (), request.candidates,
        require_content=require_content,
    )  # fmt: skip
    _, trace = _step(data, None, gates, state, [], list(request.candidates))
    current = base
    for step in range(data.draw(st.integers(1, 6))):
        delta = data.draw(deltas(current, step))
        try:
            after = apply_delta(state, parse_delta(delta))
        except InvalidRequest:
            continue
        touched = after.touched
        gone = [state.by_id[i] for i in (*touched.removed, *touched.updated)]
        new = [after.by_id[i] for i in (*touched.updated, *touched.added)]
        gates = regate(
            gates, after.request, after.by_id, after.forms_of, gone, new,
            require_content=require_content,
        )  # fmt: skip
        # a kept threshold is what takes the incremental path (a new one rewords all)
        kept = after.request.task.min_relevance == state.request.task.min_relevance
        result, trace = _step(data, trace, gates, after, gone, new)
        event(f"threshold kept: {kept}, selected: {min(len(result.selected), 3)}")
        state, current = after, applied(current, delta)
