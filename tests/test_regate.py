"""Gates kept between calls equal the gates of the whole request, after any change.

A session's gate state (``stages/regate.py``) is updated from what each delta took away
and brought; after every step of a random delta sequence its report must equal
``apply_gates`` of the resulting request, entry for entry (verdicts, reasons, notes,
groups), and ``changed`` must name exactly the ids whose entry differs.
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
from assembler.session.delta import parse_delta
from assembler.session.state import State, apply_delta, initial_state
from assembler.stages.gates import GateReport, apply_gates
from assembler.stages.regate import GateState, regate
from assembler.tooling.generate import Shape


def _first(state: State, require_content: bool) -> GateState:
    request = state.request
    return regate(
        None,
        request,
        state.by_id,
        state.forms_of,
        (),
        request.candidates,
        require_content=require_content,
    )


def _next(gates: GateState, before: State, after: State, require_content: bool) -> GateState:
    touched = after.touched
    gone = [before.by_id[i] for i in (*touched.removed, *touched.updated)]
    new = [after.by_id[i] for i in (*touched.updated, *touched.added)]
    return regate(
        gates,
        after.request,
        after.by_id,
        after.forms_of,
        gone,
        new,
        require_content=require_content,
    )


def _differing(a: GateReport, b: GateReport) -> set[str]:
    ids = {*a.rejected, *a.notes, *b.rejected, *b.notes}
    return {
        i for i in ids if a.rejected.get(i) != b.rejected.get(i) or a.notes.get(i) != b.notes.get(i)
    }


@settings(
    max_examples=int(os.environ.get("REGATE_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(requests(Shape.small(10)), st.booleans(), st.data())
def test_gates_kept_between_deltas_equal_the_gates_of_the_whole_request(
    base: dict[str, Any], require_content: bool, data: st.DataObject
) -> None:
    state = initial_state(parse_request(base))
    gates = _first(state, require_content)
    assert gates.report == apply_gates(state.request, require_content=require_content)
    current = base
    for step in range(data.draw(st.integers(1, 6))):
        delta = data.draw(deltas(current, step))
        try:
            after = apply_delta(state, parse_delta(delta))
        except InvalidRequest:
            continue
        following = _next(gates, state, after, require_content)
        expected = apply_gates(after.request, require_content=require_content)
        assert following.report == expected
        assert following.changed == _differing(gates.report, expected)
        event(f"derived removals: {len(following.dead) > 0}, changed: {len(following.changed)}")
        # the state the change was applied to is left as it was
        assert gates.report == apply_gates(state.request, require_content=require_content)
        state, gates, current = after, following, applied(current, delta)
