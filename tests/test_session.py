"""Sessions: every answer after any sequence of deltas is a fresh assemble()'s.

The property test drives random delta sequences (``tests/deltas.py``, built on the
shared generator) through a ``Session`` and compares, after every step, the answer
with ``assemble()`` of the resulting request computed naively on the JSON: selection,
``package_id``, ``trace_id``, decisions and, when a rendering is asked for, the
rendering and its manifest. Every bundle goes through the independent verifiers. A
delta the request's rules refuse leaves the session unchanged, and a fresh parse of
the resulting request refuses it too.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import judged_by_hook, judged_request
from deltas import applied, deltas
from drawn import cache_settings, requests, transcripts
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler.hunt.generate import Shape, generate
from assembler.render import Utf8Bytes
from assembler.session import RESET, Delta, Session, SessionConflict, delta_from_json, parse_delta
from benchmarks.scenarios.agentloop import agent_loop

EXAMPLES = Path(__file__).resolve().parents[1] / "models" / "examples"
TIME_LIMIT = 60.0


def _answer(result: assembler.Result) -> dict[str, Any]:
    data = result.to_dict()
    del data["timings"]
    return data


def _fresh(request: dict[str, Any], **options: Any) -> assembler.Result | Exception:
    try:
        return assembler.assemble(request, time_limit=TIME_LIMIT, **options)
    except (assembler.InvalidRequest, assembler.RenderError) as exc:
        return exc


def _verified(request: dict[str, Any], result: assembler.Result, counter: Any = None) -> None:
    if judged_by_hook(result.strategy):
        return  # judged on its way out of the session (conftest)
    judged = judged_request(request, result, counter)
    # dump is a baseline that ignores the rules: only its sameness is checked
    if result.strategy != "dump":
        assert assembler.verify(judged, result) == [], result.to_dict()
    if result.rendering is not None:
        assert assembler.verify_rendering(judged, result, result.rendering) == []


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(Shape.small(8)), st.data())
def test_any_sequence_of_deltas_answers_like_a_fresh_assemble(
    base: dict[str, Any], data: st.DataObject
) -> None:
    options: dict[str, Any] = {
        "strategy": data.draw(st.sampled_from(["exact", "exact", "exact", "dump", "greedy"])),
        "render": data.draw(
            st.sampled_from([None, None, *(f.value for f in assembler.RenderFormat)])
        ),
    }
    if options["render"] is not None and data.draw(st.integers(0, 3)) == 0:
        options["counter"] = Utf8Bytes()
    first = _fresh(base, **options)
    if isinstance(first, Exception):
        with pytest.raises(type(first)):
            Session(base, time_limit=TIME_LIMIT, **options).answer()
        return
    session = Session(base, time_limit=TIME_LIMIT, **options)
    assert _answer(session.answer()) == _answer(first)
    current = base
    for step in range(data.draw(st.integers(1, 5))):
        delta = data.draw(deltas(current, step))
        expected_request = applied(current, delta)
        expected = _fresh(expected_request, **options)
        before = session.state
        if isinstance(expected, Exception):
            event(f"refused: {type(expected).__name__}")
            with pytest.raises(type(expected)):
                session.apply(delta)
            assert session.state is before, "a failed delta changed the session"
            continue
        got = session.apply(delta)
        event(f"applied: {got.status.value}, {sorted(delta)}")
        # the kept path (gates, trace and proven solve carried over) is the exact
        # strategy's without a counter; a solve it skipped is timed 0
        kept = options["strategy"] == "exact" and "counter" not in options
        event(f"kept: {kept}, solve reused: {dict(got.timings).get('solve') == 0.0}")
        assert got == expected
        assert _answer(got) == _answer(expected)
        _verified(expected_request, got, options.get("counter"))
        # the session's own account of its request is the same request
        assert assembler.parse_request(session.to_dict()) == assembler.parse_request(
            expected_request
        )
        assert session.version == before.version + 1
        current = expected_request


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(Shape.small(14)), st.sampled_from([None, "text"]), st.data())
def test_long_sequences_through_the_kept_path_answer_like_fresh_assembles(
    base: dict[str, Any], render: str | None, data: st.DataObject
) -> None:
    """The kept gates, trace and solve carried over many deltas in a row: each answer
    still a fresh assemble()'s, whatever the earlier deltas left behind (a failed delta
    in between keeps what the last answer kept)."""
    if isinstance(_fresh(base, render=render), Exception):
        return

    def reused(got: assembler.Result, _: dict[str, Any]) -> str:
        return f"{got.status.value}, solve reused: {dict(got.timings).get('solve') == 0.0}"

    _each_delta_like_fresh(base, data, data.draw(st.integers(4, 10)), reused, render=render)


def _each_delta_like_fresh(
    base: dict[str, Any],
    data: st.DataObject,
    steps: int,
    label: Callable[[assembler.Result, dict[str, Any]], str],
    **options: Any,
) -> None:
    """``steps`` drawn deltas through one session, each answer compared with a fresh
    assemble() of the resulting request (a delta the request refuses must fail alike)."""
    session = Session(base, time_limit=TIME_LIMIT, **options)
    current = base
    for step in range(steps):
        delta = data.draw(deltas(current, step))
        expected_request = applied(current, delta)
        expected = _fresh(expected_request, **options)
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                session.apply(delta)
            continue
        got = session.apply(delta)
        event(label(got, expected_request))
        assert got == expected
        current = expected_request


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        lambda seed, forms: generate(random.Random(seed), Shape.scale(forms)),
        st.integers(0, 2**32),
        st.integers(24, 90),
    ),
    st.data(),
)
def test_sessions_large_enough_for_the_lp_answer_like_fresh_assembles(
    base: dict[str, Any], data: st.DataObject
) -> None:
    """Problems of a few dozen forms, where the reduction solves an LP: a solve's
    first LP can start from the basis the session's previous one left (LpMemory), after
    deltas that add, remove and update forms and move the budget; each answer is still
    a fresh assemble()'s (the start changes the simplex's path, never the optimum)."""
    if isinstance(_fresh(base), Exception):
        return

    def size(got: assembler.Result, request: dict[str, Any]) -> str:
        return f"{got.status.value}, forms: {len(request['candidates']) // 20 * 20}+"

    _each_delta_like_fresh(base, data, data.draw(st.integers(2, 6)), size)


def _with_content(request: dict[str, Any]) -> dict[str, Any]:
    for c in request["candidates"]:
        c.setdefault("content", f"content of {c['id']}")
    return request


@st.composite
def _rescoring(draw: st.DrawFn, request: dict[str, Any]) -> dict[str, Any]:
    """A re-scoring of a few candidates (the kind of delta a kept optimum may survive)."""
    ids = [c["id"] for c in request["candidates"]]
    if not ids:
        return {}
    chosen = draw(st.lists(st.sampled_from(ids), unique=True, min_size=1, max_size=3))
    return {"relevance": {i: draw(st.sampled_from([0, 0.3, 0.9, 1])) for i in chosen}}


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(transcripts(4), requests(Shape.small(8)).map(_with_content)),
    cache_settings(),
    st.sampled_from([None, *(f.value for f in assembler.RenderFormat)]),
    st.data(),
)
def test_a_cached_session_answers_each_delta_like_a_fresh_assemble(
    base: dict[str, Any], cache: dict[str, Any], render: str | None, data: st.DataObject
) -> None:
    """A session with a cache section, rendered or not, after every kind of delta (an
    empty one and re-scorings included: they leave the kept optimum standing), answers
    what a fresh assemble() of the request it stands for answers, its cache section
    included: the cache-aware order decides from the kept optimum as from a fresh one."""
    options: dict[str, Any] = {"render": render} if render is not None else {}
    _each_cached_delta_like_fresh(base, cache, data, data.draw(st.integers(1, 5)), **options)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.builds(
        lambda seed, forms: generate(random.Random(seed), Shape.scale(forms)),
        st.integers(0, 2**32),
        st.integers(24, 90),
    ),
    cache_settings(),
    st.data(),
)
def test_cached_sessions_large_enough_for_the_lp_answer_like_fresh_assembles(
    base: dict[str, Any], cache: dict[str, Any], data: st.DataObject
) -> None:
    """A cached session of a few dozen forms: the kept LP memory and trace beside the
    cache-aware decision, after every kind of delta, each answer a fresh call's."""
    _each_cached_delta_like_fresh(base, cache, data, data.draw(st.integers(2, 5)))


def _each_cached_delta_like_fresh(
    base: dict[str, Any], cache: dict[str, Any], data: st.DataObject, steps: int, **options: Any
) -> None:
    """A session with ``cache``: its first answer and one after each of ``steps`` drawn
    deltas (an empty one and re-scorings among them) against a fresh assemble() of the
    request it stands for (``Session.to_dict``: what the provider holds after its last
    answer), cache record included."""
    if isinstance(_fresh({**base, "cache": cache}, **options), Exception):
        return
    session = Session(base, time_limit=TIME_LIMIT, cache=cache, **options)
    expected = _fresh(session.to_dict(), **options)
    assert not isinstance(expected, Exception)
    assert _answer(session.answer()) == _answer(expected)
    for step in range(steps):
        current = session.to_dict()
        delta = data.draw(st.just({}) | _rescoring(current) | deltas(current, step))
        expected_request = applied(current, delta)
        expected = _fresh(expected_request, **options)
        if isinstance(expected, Exception):
            with pytest.raises(type(expected)):
                session.apply(delta)
            continue
        got = session.apply(delta)
        timed = dict(got.timings)
        event(f"{'kept-optimum' if 'kept-optimum' in timed else 'solved'}, {got.status.value}")
        assert _answer(got) == _answer(expected)
        assert (got.cache is None) == (got.status is not assembler.Status.BUNDLE)


# ---------------------------------------------------------------------------
# the delta format and its errors


def _example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    return loaded


_LONE_CALL = {"id": "c", "cost": 1, "kind": "tool_call", "tool_call_id": "z", "tool_name": "f"}


def test_a_delta_names_the_field_and_the_candidate() -> None:
    session = Session(_example("agent-tool-call.json"))
    cases = [
        ({"add": [{"id": "x", "cost": -1}]}, "add[0].cost", "x"),
        ({"update": [{"id": "x", "cost": 1}]}, "update[0].id", "x"),
        ({"remove": ["nope"]}, "remove[0]", "nope"),
        ({"remove": [3]}, "remove[0]", None),
        ({"remove": "ticket-note"}, "remove", None),
        ({"add": [{"id": "ticket-note", "cost": 1}]}, "add[0].id", "ticket-note"),
        ({"task": {"budget": None}}, "task.budget", None),
        ({"task": {"budget": 1.5}}, "task.budget", None),
        ({"task": {"deadline": 3}}, "task.deadline", None),
        ({"sources": {"s": 3}}, "sources.s", None),
        ({"policy": {"authority": {"tool": "boss"}}}, "policy.authority.tool", None),
        ({"policy": {"other": 1}}, "policy.other", None),
        ({"adds": []}, "adds", None),
        (
            {"remove": ["ticket-note"], "update": [{"id": "ticket-note", "cost": 1}]},
            "update[0].id",
            "ticket-note",
        ),
        ({"remove": ["call-lookup-4471"]}, "remove", "result-lookup-4471"),
        ({"relevance": {"nope": 0.5}}, "relevance.nope", "nope"),
        ({"relevance": {"ticket-note": 2}}, "relevance.ticket-note", None),
        ({"remove": ["ticket-note"], "relevance": {"ticket-note": 0.1}}, "relevance.ticket-note",
         "ticket-note"),
        ({"add": [_LONE_CALL]}, "add[0].tool_call_id", "c"),
    ]
    for delta, field, candidate in cases:
        before = session.state
        with pytest.raises(assembler.InvalidRequest) as caught:
            session.apply(delta)
        assert (caught.value.field, caught.value.candidate) == (field, candidate), delta
        assert "\n" not in str(caught.value)
        assert session.state is before


def test_limits_bound_what_a_session_can_grow_to() -> None:
    limits = assembler.Limits(max_candidates=3, max_request_bytes=100)
    session = Session({"task": {"id": "t", "budget": 10}, "candidates": []}, limits=limits)
    session.apply({"add": [{"id": "a", "cost": 1, "content": "x" * 60}]})
    with pytest.raises(assembler.RequestTooLarge) as caught:
        session.apply({"add": [{"id": "b", "cost": 1, "content": "é" * 30}]})
    assert caught.value.limit == "max_request_bytes" and caught.value.actual == 120
    with pytest.raises(assembler.RequestTooLarge) as caught:
        session.apply({"add": [{"id": f"n{i}", "cost": 1} for i in range(3)]})
    assert caught.value.limit == "max_candidates" and caught.value.actual == 4
    # removing makes room
    session.apply({"remove": ["a"], "add": [{"id": "b", "cost": 1, "content": "é" * 30}]})
    assert [c.id for c in session.request.candidates] == ["b"]


def test_deltas_parse_from_json_text_and_merge_patches_reset() -> None:
    delta = delta_from_json(b'{"task": {"scope": null, "budget": 5}, "sources": {"s": null}}')
    assert delta.task == (("scope", RESET), ("budget", 5))
    assert delta.sources == (("s", None),)
    assert parse_delta(delta) is delta
    with pytest.raises(assembler.InvalidRequest) as caught:
        delta_from_json(b'{"add": [')
    assert caught.value.field == "$"
    session = Session(_example("review-migration.json"))
    session.apply(
        {"task": {"scope": None, "query": "why?"}, "policy": {"authority": {"tool": None}}}
    )
    assert session.request.task.scope is None and session.request.task.query == "why?"
    assert session.request.has_authority_table
    session.apply({"policy": None})
    assert not session.request.has_authority_table


def test_an_update_keeps_arrival_order_and_an_add_comes_last() -> None:
    request = {
        "task": {"id": "t", "budget": 30},
        "candidates": [{"id": "b", "cost": 10}, {"id": "a", "cost": 10}, {"id": "c", "cost": 10}],
    }
    session = Session(request, strategy="dump")
    session.apply({"update": [{"id": "a", "cost": 20}], "add": [{"id": "0", "cost": 5}]})
    assert [c["id"] for c in session.to_dict()["candidates"]] == ["b", "a", "c", "0"]
    # dump takes arrival order: b (10) and a (20) fill the budget, in either request
    result = session.answer()
    assert result == assembler.assemble(session.to_dict(), strategy="dump")
    assert set(result.selected) == {"a", "b"}


def test_a_failing_answer_leaves_the_session_unchanged() -> None:
    # a selected tool call whose arguments are not a JSON object breaks a provider rule
    # (a baseline blind to the format's rules selects it; the exact strategy would not)
    session = Session(_example("agent-tool-call.json"), render="openai-chat", strategy="greedy")
    before = session.state
    broken = dict(session.to_dict()["candidates"][0])
    call = next(c for c in session.to_dict()["candidates"] if c.get("kind") == "tool_call")
    with pytest.raises(assembler.RenderError):
        session.apply({"update": [call | {"content": "[1, 2]", "relevance": 1}]})
    assert session.state is before and broken


def test_proposals_commit_only_onto_the_state_they_were_made_from() -> None:
    session = Session(_example("shared-resolver.json"))
    first = session.propose({"task": {"budget": 100}})
    second = session.propose({"task": {"budget": 200}})
    session.commit(second)
    with pytest.raises(SessionConflict):
        session.commit(first)
    assert session.request.task.budget == 200


def test_concurrent_deltas_to_one_session_are_applied_one_after_the_other() -> None:
    session = Session({"task": {"id": "t", "budget": 1000}, "candidates": []})
    errors: list[BaseException] = []

    def add(n: int) -> None:
        try:
            for i in range(10):
                session.apply({"add": [{"id": f"w{n}-{i}", "cost": 1, "relevance": 0.5}]})
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert session.version == 40 and len(session.request.candidates) == 40
    assert session.answer() == assembler.assemble(session.to_dict())


def test_a_typed_delta_is_accepted_as_is() -> None:
    session = Session(_example("shared-resolver.json"))
    result = session.apply(Delta(task=(("budget", 100),)))
    assert result == assembler.assemble(session.to_dict())
    _verified(session.to_dict(), result)


# ---------------------------------------------------------------------------
# the delta schema (models/delta.schema.json)


def _delta_validator() -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    models = EXAMPLES.parent
    request = json.loads((models / "request.schema.json").read_text(encoding="utf-8"))
    registry = Registry().with_resource(request["$id"], Resource.from_contents(request))
    schema = json.loads((models / "delta.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry)


def test_the_scenario_s_deltas_follow_the_schema() -> None:
    validator = _delta_validator()
    for delta in agent_loop(seed=0, forms=50, calls=20, content=True).deltas:
        assert list(validator.iter_errors(delta)) == []


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(Shape.small(6)), st.data())
def test_drawn_deltas_follow_the_schema(base: dict[str, Any], data: st.DataObject) -> None:
    delta = data.draw(deltas(base, 0))
    assert list(_delta_validator().iter_errors(delta)) == []


@pytest.mark.parametrize(
    "delta",
    [
        {"adds": []},
        {"add": [{"id": "x"}]},
        {"remove": [""]},
        {"task": {"budget": None}},
        {"task": {"id": None}},
        {"task": {"scope": "shared"}},
        {"task": {"deadline": 1}},
        {"sources": {"s": 3}},
        {"policy": {"authority": {"tool": "boss"}}},
        {"policy": {"extra": {}}},
    ],
)
def test_bad_deltas_fail_the_schema_and_the_parser(delta: dict[str, Any]) -> None:
    assert list(_delta_validator().iter_errors(delta)) != []
    with pytest.raises(assembler.InvalidRequest):
        parse_delta(delta)


def test_an_agent_loop_answers_like_fresh_assembles_call_after_call() -> None:
    """The named scenario end to end through the kept path, with content rendered."""
    loop = agent_loop(seed=3, forms=300, calls=12, content=True)
    session = Session(loop.first, time_limit=TIME_LIMIT, render="anthropic-messages")
    for delta, request in zip(loop.deltas, loop.requests(), strict=True):
        got = session.apply(delta)
        expected = assembler.assemble(request, time_limit=TIME_LIMIT, render="anthropic-messages")
        assert got == expected
        _verified(request, got)


def test_a_delta_that_leaves_the_problem_as_it_was_reuses_the_proven_solve() -> None:
    """A sealed newcomer changes the decisions, not the problem: the proven optimum is
    the new request's too, found without a backend (its solve is timed 0)."""
    base = _example("agent-tool-call.json")
    session = Session(base)
    first = session.answer()
    assert first.optimal
    delta = {"task": {"seal": [*base["task"].get("seal", []), "sealed"]},
             "add": [{"id": "sealed", "cost": 1, "relevance": 1.0}]}  # fmt: skip
    got = session.apply(delta)
    assert ("solve", 0.0) in got.timings
    assert got == assembler.assemble(session.to_dict())
    assert got.trace_id != first.trace_id
    # a change to the problem solves again, and still answers like a fresh call
    fresh = {"id": "free", "cost": 1, "relevance": 1.0, "scope": "support"}
    moved = session.apply({"add": [fresh]})
    assert "free" in moved.selected
    assert ("solve", 0.0) not in moved.timings
    assert moved == assembler.assemble(session.to_dict())
    # answering the same state again is the same problem, proven
    again = session.answer()
    assert again == moved and ("solve", 0.0) in again.timings


def test_a_rescored_or_placed_candidate_is_the_one_replace_makes() -> None:
    import dataclasses

    from assembler.model.parse import parse_request
    from assembler.session.state import _but

    request = parse_request(generate(random.Random(3), Shape.small(8)))
    for candidate in request.candidates:
        for name, value in (("relevance", 0.25), ("position", 7)):
            made = _but(candidate, name, value)
            assert made == dataclasses.replace(candidate, **{name: value})
            assert type(made) is type(candidate) and made is not candidate


def test_a_rescoring_that_cannot_reorder_the_optimum_is_proven_by_the_kept_one() -> None:
    """Selected forms more relevant, the others less: the kept optimum is the new one's
    (timed ``kept-optimum``, no backend); any other rescoring solves afresh (timed
    ``fresh-solve``). Either way the answer is a fresh call's."""
    request = generate(random.Random(7), Shape.scale(300))
    session = Session(request, time_limit=TIME_LIMIT)
    first = session.answer()
    chosen = set(first.selected)
    relevance = {c["id"]: c.get("relevance", 0.0) for c in request["candidates"]}
    calm = {
        i: round(min(1.0, r + 0.05), 3) if i in chosen else round(r * 0.5, 3)
        for i, r in relevance.items()
    }
    kept = session.apply({"relevance": calm})
    timed = dict(kept.timings)
    assert "kept-optimum" in timed and timed["solve"] == 0.0 and "fresh-solve" not in timed
    assert kept.selected == first.selected and kept.value > first.value
    assert kept == assembler.assemble(session.to_dict(), time_limit=TIME_LIMIT)
    # an unselected form gaining value may overtake it: solved again
    left_out = sorted(set(relevance) - chosen)
    moved = session.apply({"relevance": {i: 1.0 for i in left_out[:20]}})
    timed = dict(moved.timings)
    assert "fresh-solve" in timed and "kept-optimum" not in timed
    assert moved == assembler.assemble(session.to_dict(), time_limit=TIME_LIMIT)
