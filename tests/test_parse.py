"""Bad input: every case is a documented behaviour with a clear, located error."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import form, request, solve
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import InvalidRequest, kernels, parse_request, request_from_json
from assembler.model.errors import AssemblerError
from assembler.model.rules import MAX_INTEGER


def _with(candidate: dict[str, Any], **task: Any) -> dict[str, Any]:
    req = request(**task)
    req["candidates"] = [form("ok", 1), candidate]
    return req


@pytest.mark.parametrize(
    ("candidate", "field"),
    [
        ({"id": "x", "cost": -1}, "candidates[1].cost"),
        ({"id": "x", "cost": 1.5}, "candidates[1].cost"),
        ({"id": "x", "cost": "10"}, "candidates[1].cost"),
        ({"id": "x", "cost": True}, "candidates[1].cost"),
        ({"id": "x", "cost": MAX_INTEGER + 1}, "candidates[1].cost"),
        ({"id": "x", "cost": 1, "relevance": math.nan}, "candidates[1].relevance"),
        ({"id": "x", "cost": 1, "relevance": math.inf}, "candidates[1].relevance"),
        ({"id": "x", "cost": 1, "relevance": 1.5}, "candidates[1].relevance"),
        ({"id": "x", "cost": 1, "relevance": -0.1}, "candidates[1].relevance"),
        ({"id": "x", "cost": 1, "depends_on": "y"}, "candidates[1].depends_on"),
        ({"id": "x", "cost": 1, "depends_on": [3]}, "candidates[1].depends_on[0]"),
        ({"id": "x", "cost": 1, "role": "boss"}, "candidates[1].role"),
        ({"id": "x", "cost": 1, "required": "yes"}, "candidates[1].required"),
        ({"id": "x", "cost": 1, "transfer": "p"}, "candidates[1].transfer"),
        ({"id": "x", "cost": 1, "depend_on": ["y"]}, "candidates[1].depend_on"),
        ({"id": "x"}, "candidates[1].cost"),
        ({"id": "", "cost": 1}, "candidates[1].id"),
        ({"id": "x", "cost": 1, "identity": ""}, "candidates[1].identity"),
        ({"id": "x", "cost": 1, "content": 5}, "candidates[1].content"),
    ],
)
def test_bad_candidate_names_field_and_candidate(candidate: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(_with(candidate))
    assert caught.value.field == field
    if candidate.get("id"):
        assert caught.value.candidate == "x"
        assert "'x'" in str(caught.value)
    assert field in str(caught.value)


def test_invalid_request_is_both_assembler_error_and_value_error() -> None:
    with pytest.raises(ValueError):
        parse_request({"task": {}, "candidates": []})
    with pytest.raises(AssemblerError):
        parse_request({"task": {}, "candidates": []})


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([], "$"),
        ({"candidates": []}, "task"),
        ({"task": {"id": "t", "budget": 1}}, "candidates"),
        ({"task": {"id": "t"}, "candidates": []}, "task.budget"),
        ({"task": {"budget": 1}, "candidates": []}, "task.id"),
        ({"task": {"id": "t", "budget": -1}, "candidates": []}, "task.budget"),
        ({"task": {"id": "t", "budget": 2**64}, "candidates": []}, "task.budget"),
        (
            {"task": {"id": "t", "budget": 1, "operation": "now"}, "candidates": []},
            "task.operation",
        ),
        (
            {"task": {"id": "t", "budget": 1, "min_relevance": 2}, "candidates": []},
            "task.min_relevance",
        ),
        ({"task": {"id": "t", "budget": 1, "required": "a"}, "candidates": []}, "task.required"),
        ({"task": {"id": "t", "budget": 1, "extra": 1}, "candidates": []}, "task.extra"),
        ({"task": {"id": "t", "budget": 1}, "candidates": {}}, "candidates"),
        ({"task": {"id": "t", "budget": 1}, "candidates": [], "x": 1}, "x"),
        ({"task": {"id": "t", "budget": 1}, "candidates": [], "sources": {"s": 1}}, "sources.s"),
        (
            {
                "task": {"id": "t", "budget": 1},
                "candidates": [],
                "policy": {"authority": {"tool": "god"}},
            },
            "policy.authority.tool",
        ),
        ({"task": {"id": "t", "budget": 1}, "candidates": [3]}, "candidates[0]"),
    ],
)
def test_bad_request_shape(data: Any, field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(data)
    assert caught.value.field == field


def test_duplicate_ids_are_an_error_naming_both_positions() -> None:
    req = request()
    req["candidates"] = [form("a", 1), form("b", 1), form("a", 2)]
    with pytest.raises(InvalidRequest) as caught:
        parse_request(req)
    assert caught.value.field == "candidates[2].id"
    assert caught.value.candidate == "a"
    assert "candidates[0]" in str(caught.value)


def test_costs_whose_sum_overflows_exact_arithmetic_are_refused() -> None:
    req = request()
    req["candidates"] = [form("a", MAX_INTEGER), form("b", 1)]
    with pytest.raises(InvalidRequest) as caught:
        parse_request(req)
    assert caught.value.field == "candidates[*].cost"


def test_malformed_json_and_nan_literal() -> None:
    with pytest.raises(InvalidRequest, match="malformed JSON"):
        request_from_json("{not json")
    text = json.dumps(request()).replace(
        '"candidates": []', '"candidates": [{"id": "a", "cost": 1, "relevance": NaN}]'
    )
    with pytest.raises(InvalidRequest, match="NaN"):
        request_from_json(text)


def test_whole_floats_are_accepted_as_integers() -> None:
    req = request(budget=10.0)  # type: ignore[arg-type]
    req["candidates"] = [form("a", 3.0)]  # type: ignore[arg-type]
    parsed = parse_request(req)
    assert parsed.task.budget == 10 and parsed.candidates[0].cost == 3


def test_defaults_follow_the_stated_model() -> None:
    parsed = parse_request(
        {"task": {"id": "t", "budget": 5}, "candidates": [{"id": "a", "cost": 1}]}
    )
    (a,) = parsed.candidates
    assert (a.identity, a.form, a.relevance, a.scope, a.role.value) == (
        "a",
        "full",
        0.0,
        "unknown",
        "evidence",
    )
    assert parsed.task.operation.value == "current" and parsed.task.min_relevance == 0


def test_empty_candidate_list_gives_an_empty_bundle() -> None:
    result = solve(request())
    assert result.status.value == "bundle" and result.selected == () and result.optimal


def test_empty_candidate_list_with_a_requirement_is_required_missing() -> None:
    result = solve(request(required=["x"]))
    assert result.refusal is not None and result.refusal.code.value == "REQUIRED_MISSING"


def test_budget_zero_admits_only_free_material() -> None:
    req = request(budget=0)
    req["candidates"] = [form("free", 0, 0.9), form("paid", 1, 1.0)]
    result = solve(req)
    assert result.selected == ("free",) and result.slack == 0


def test_unknown_dependency_is_unavailable_not_an_error() -> None:
    req = request()
    req["candidates"] = [form("a", 1, 0.9, depends_on=["ghost"]), form("b", 1, 0.1)]
    result = solve(req)
    decision = result.decision("a")
    assert decision.reason.value == "dependency-unavailable"
    assert "no candidate offers" in decision.detail
    assert result.selected == ("b",)


def test_dependency_cycles_are_valid_both_or_neither() -> None:
    req = request(budget=10)
    req["candidates"] = [
        form("a", 4, 0.9, depends_on=["b"]),
        form("b", 4, 0.0, depends_on=["a"]),
    ]
    assert solve(req).selected == ("a", "b")
    req["task"]["budget"] = 7
    assert solve(req).selected == ()


@pytest.mark.parametrize("name", ["source", "version", "channel", "group", "content", "scope"])
def test_explicit_null_is_refused_like_the_schema_does(name: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(_with({"id": "x", "cost": 1, name: None}))
    assert caught.value.field == f"candidates[1].{name}"


@pytest.mark.parametrize("scope", ["shared", "unknown", None])
def test_task_scope_must_name_a_project(scope: str | None) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(request(scope=scope))
    assert caught.value.field == "task.scope"


def test_json_nested_too_deeply_is_a_clear_error() -> None:
    with pytest.raises(InvalidRequest, match="nested too deeply"):
        request_from_json("[" * 200_000 + "]" * 200_000)


def test_duplicate_json_keys_are_an_error_not_a_silent_choice() -> None:
    text = '{"task": {"id": "t", "budget": 1}, "candidates": [], "task": {"id": "u", "budget": 2}}'
    with pytest.raises(InvalidRequest, match="duplicate key 'task'"):
        request_from_json(text)


def test_a_typed_request_built_by_hand_is_checked_and_put_in_canonical_order() -> None:
    from dataclasses import replace

    parsed = parse_request(
        {"task": {"id": "t", "budget": 9}, "candidates": [form("a", 1), form("b", 2)]}
    )
    reordered = replace(parsed, candidates=tuple(reversed(parsed.candidates)))
    assert [c.id for c in parse_request(reordered).candidates] == ["a", "b"]
    doubled = replace(parsed, candidates=(parsed.candidates[0], parsed.candidates[0]))
    with pytest.raises(InvalidRequest, match="duplicate id"):
        parse_request(doubled)
    negative = replace(parsed, candidates=(replace(parsed.candidates[0], cost=-1),))
    with pytest.raises(InvalidRequest) as caught:
        parse_request(negative)
    assert caught.value.field == "candidates[0].cost"


# -- the fields a renderer needs ------------------------------------------------------


def _tool_request(*extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "task": {"id": "t", "budget": 10, "instruction": "Do it.", "query": "Now?"},
        "candidates": [
            {"id": "c", "cost": 1, "kind": "tool_call", "tool_call_id": "k", "tool_name": "f"},
            {"id": "r", "cost": 1, "kind": "tool_result", "tool_call_id": "k", "turn": 2},
            *extra,
        ],
    }


def test_render_fields_parse_with_their_defaults() -> None:
    from assembler import Kind, parse_request

    parsed = parse_request(_tool_request({"id": "s", "cost": 1, "role": "instruction"}))
    assert parsed.task.instruction == "Do it." and parsed.task.query == "Now?"
    by_id = {c.id: c for c in parsed.candidates}
    assert by_id["s"].kind is Kind.SYSTEM
    assert by_id["r"].turn == 2 and by_id["c"].tool_name == "f"
    dev = parse_request(_tool_request({"id": "d", "cost": 1, "kind": "developer"}))
    assert dev.candidate("d").role.value == "instruction"


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"id": "x", "cost": 1, "kind": "system", "role": "evidence"}, "candidates[2].kind"),
        ({"id": "x", "cost": 1, "kind": "memory", "role": "instruction"}, "candidates[2].kind"),
        ({"id": "x", "cost": 1, "kind": "chat"}, "candidates[2].kind"),
        ({"id": "x", "cost": 1, "tool_call_id": "k"}, "candidates[2].tool_call_id"),
        ({"id": "x", "cost": 1, "kind": "tool_result"}, "candidates[2].tool_call_id"),
        (
            {"id": "x", "cost": 1, "kind": "tool_result", "tool_call_id": "z"},
            "candidates[2].tool_call_id",
        ),
        (
            {"id": "x", "cost": 1, "kind": "tool_result", "tool_call_id": "k"},
            "candidates[2].tool_call_id",
        ),
        ({"id": "x", "cost": 1, "identity": "r"}, "candidates[2].tool_call_id"),
        ({"id": "x", "cost": 1, "turn": -1}, "candidates[2].turn"),
    ],
)
def test_render_fields_are_validated(extra: dict[str, Any], field: str) -> None:
    from assembler import InvalidRequest, parse_request

    with pytest.raises(InvalidRequest) as caught:
        parse_request(_tool_request(extra))
    assert caught.value.field == field and caught.value.candidate == "x"


# ---------------------------------------------------------------------------
# hardening (issue 14): every class of input that escaped as a traceback


@pytest.mark.parametrize(
    ("candidate", "field"),
    [
        ({"id": "x", "cost": 1, "role": ["instruction"]}, "candidates[1].role"),
        ({"id": "x", "cost": 1, "role": {"a": 1}}, "candidates[1].role"),
        ({"id": "x", "cost": 1, "relevance": 10**400}, "candidates[1].relevance"),
        ({"id": "x", "cost": 10**400}, "candidates[1].cost"),
        ({"id": "x", "cost": -(10**5000)}, "candidates[1].cost"),
        ({"id": "x", "cost": 1, "content": "a\ud800"}, "candidates[1].content"),
        ({"id": "x", "cost": 1, "group": "g\udfff"}, "candidates[1].group"),
        ({"id": "x", "cost": 1, "labels": ["ok", "\ud800"]}, "candidates[1].labels[1]"),
        ({"id": "x", "cost": 1, "depends_on": ["a", 3]}, "candidates[1].depends_on[1]"),
        ({"id": "x", "cost": 1, "transfer": {"from": "\ud800"}}, "candidates[1].transfer.from"),
        ({"id": "x", "cost": 1, "x\ny": 1}, "candidates[1]['x\\ny']"),
        ({"id": "x", "cost": 1, "": 1}, "candidates[1]['']"),
        ({"id": "x", "cost": 1, 7: 1}, "candidates[1][7]"),
        ({"id": "x", "cost": 1, 10**5000: 1}, "candidates[1][an integer of about 5001 digits]"),
    ],
)
def test_hostile_values_are_located_errors(candidate: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(_with(candidate))
    message = str(caught.value)
    assert caught.value.field == field and caught.value.candidate == "x"
    assert message.isprintable() and len(message) < 300, message


@pytest.mark.parametrize(
    ("task", "field", "needle"),
    [
        ({"operation": ["current"]}, "task.operation", "not a list"),
        ({"min_relevance": 10**400}, "task.min_relevance", "digits"),
        ({"id": "t\ud800"}, "task.id", "surrogate"),
        ({"required": ["a\ud800"]}, "task.required[0]", "surrogate"),
        ({"seal": ("a",)}, "task.seal", "not a tuple"),
    ],
)
def test_hostile_task_values_are_located_errors(
    task: dict[str, Any], field: str, needle: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        parse_request(request(**task))
    assert caught.value.field == field and needle in str(caught.value)


def test_a_tuple_of_candidates_is_named_as_a_tuple() -> None:
    with pytest.raises(InvalidRequest, match="must be a list, not a tuple"):
        parse_request({"task": {"id": "t", "budget": 1}, "candidates": (form("a", 1),)})


def test_non_string_keys_of_sources_are_errors_not_coerced() -> None:
    with pytest.raises(InvalidRequest, match="keys must be strings") as caught:
        parse_request({**request(), "sources": {1: "v1"}})
    assert caught.value.field == "sources[1]"


def test_an_integer_literal_of_5000_digits_is_named_by_its_field() -> None:
    text = '{"task": {"id": "t", "budget": 1}, "candidates": [{"id": "a", "cost": %s}]}'
    with pytest.raises(InvalidRequest) as caught:
        request_from_json(text % ("9" * 5000))
    assert caught.value.field == "candidates[0].cost" and "5000 digits" in str(caught.value)
    assert "set_int_max_str_digits" not in str(caught.value)


def test_surrogates_in_json_escapes_and_in_bytes_are_refused() -> None:
    escaped = '{"task": {"id": "t", "budget": 1}, "candidates": [{"id": "\\ud800", "cost": 1}]}'
    with pytest.raises(InvalidRequest) as caught:
        request_from_json(escaped)
    assert caught.value.field == "candidates[0].id"
    encoded = escaped.replace("\\ud800", "x").encode().replace(b'"x"', b'"\xed\xa0\x80"')
    with pytest.raises(InvalidRequest, match="not valid UTF-8") as caught:
        request_from_json(encoded)
    assert caught.value.field == "$"
    # a surrogate pair written as escapes is one valid character
    pair = escaped.replace("\\ud800", "\\ud83d\\ude00")
    assert request_from_json(pair).candidates[0].id == "\U0001f600"


def test_limits_refuse_with_their_name_and_are_configurable() -> None:
    from assembler import Limits, RequestTooLarge

    req = request()
    req["candidates"] = [form("a", 1), form("b", 1), form("c" * 50, 1)]
    with pytest.raises(RequestTooLarge) as caught:
        parse_request(req, limits=Limits(max_candidates=2))
    assert (caught.value.limit, caught.value.maximum, caught.value.actual) == (
        "max_candidates",
        2,
        3,
    )
    assert caught.value.field == "candidates" and "--max-candidates" in str(caught.value)
    with pytest.raises(RequestTooLarge) as caught:
        parse_request(req, limits=Limits(max_name_length=49))
    assert caught.value.field == "candidates[2].id" and caught.value.limit == "max_name_length"
    assert len(parse_request(req, limits=Limits(max_name_length=50)).candidates) == 3
    text = json.dumps(req)
    with pytest.raises(RequestTooLarge) as caught:
        request_from_json(text, limits=Limits(max_request_bytes=len(text) - 1))
    assert caught.value.limit == "max_request_bytes" and caught.value.actual == len(text)
    assert request_from_json(text, limits=Limits(max_request_bytes=len(text))).task.id == "t"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10", None])
def test_limits_themselves_are_checked(bad: Any) -> None:
    from assembler import Limits

    with pytest.raises(InvalidRequest) as caught:
        Limits(max_depth=bad)
    assert caught.value.field == "limits.max_depth"


def test_every_field_is_a_row_of_the_tables_and_builds_a_plain_candidate() -> None:
    # the parser's fast construction must give exactly what Candidate(...) gives
    from dataclasses import fields

    from assembler import Candidate
    from assembler.model.fields import CANDIDATE_SPEC, TASK_SPEC

    assert {attribute for attribute, _ in CANDIDATE_SPEC.values()} | {"position"} == {
        f.name for f in fields(Candidate)
    }
    assert {attribute for attribute, _ in TASK_SPEC.values()} == {
        f.name for f in fields(assembler_task())
    }
    full = {
        "id": "x", "identity": "doc", "form": "compact", "cost": 3, "relevance": 0.25,
        "required": True, "scope": "p", "transfer": {"from": "q"}, "source": "s",
        "version": "v", "channel": "user", "role": "instruction", "depends_on": ["b", "a", "b"],
        "group": "g", "lineage": ["l2", "l1"], "content": "text", "labels": ["", "tag"],
        "kind": "developer", "turn": 3,
    }  # fmt: skip
    (parsed,) = parse_request({**request(), "candidates": [full]}).candidates
    from assembler.model.types import Kind, Role

    expected = Candidate(
        id="x", identity="doc", cost=3, form="compact", relevance=0.25, required=True,
        scope="p", transfer_from="q", source="s", version="v", channel="user",
        role=Role.INSTRUCTION, depends_on=("a", "b"), group="g", lineage=("l2", "l1"),
        content="text", labels=("", "tag"), kind=Kind.DEVELOPER, turn=3, position=0,
    )  # fmt: skip
    assert type(parsed) is Candidate and parsed == expected and hash(parsed) == hash(expected)
    with pytest.raises(AttributeError):
        parsed.cost = 4  # type: ignore[misc]


def assembler_task() -> type:
    from assembler import Task

    return Task


def test_a_typed_request_is_judged_by_the_same_rules() -> None:
    from dataclasses import replace

    parsed = parse_request({**request(), "candidates": [form("a", 1), form("b", 2)]})
    bad = replace(parsed.candidates[0], group="g\ud800")
    with pytest.raises(InvalidRequest) as caught:
        parse_request(replace(parsed, candidates=(bad, parsed.candidates[1])))
    assert caught.value.field == "candidates[0].group" and caught.value.candidate == "a"
    weird = replace(parsed.candidates[0], role="boss")  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest):
        parse_request(replace(parsed, candidates=(weird,)))
    # the arrival order recorded in a typed request is kept
    kept = parse_request(parsed)
    assert [c.position for c in kept.candidates] == [c.position for c in parsed.candidates]


def test_subclasses_of_the_json_types_are_read_as_their_values() -> None:
    # a caller's numpy float64 (a float subclass) or str subclass is a value, not an error
    import numpy as np

    class Name(str):
        pass

    parsed = parse_request(
        {
            "task": {"id": Name("t"), "budget": 5},
            "candidates": [
                {
                    "id": Name("a"),
                    "cost": 1,
                    "relevance": np.float64(0.5),
                    "role": Name("instruction"),
                }
            ],
        }
    )
    (a,) = parsed.candidates
    assert type(a.id) is str and a.relevance == 0.5 and type(a.relevance) is float
    assert a.role.value == "instruction"


def test_a_parsed_request_passes_again_unchecked_and_an_edited_one_is_checked() -> None:
    import dataclasses

    from assembler import Limits

    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.5), form("b", 4, 0.5)]
    parsed = parse_request(req)
    assert parsed.validated_under == assembler.DEFAULT_LIMITS
    assert parse_request(parsed) is parsed
    # other limits: judged again under them
    stricter = Limits(max_candidates=1)
    with pytest.raises(assembler.RequestTooLarge):
        parse_request(parsed, limits=stricter)
    # an edit yields an unmarked request, which is judged like any hand-built one
    bad = dataclasses.replace(
        parsed, candidates=(dataclasses.replace(parsed.candidates[0], cost=-1),)
    )  # fmt: skip
    assert bad.validated_under is None
    with pytest.raises(InvalidRequest, match="cost"):
        parse_request(bad)
    # and the answer is the same whichever form of the request assemble() is given
    assert assembler.assemble(parsed) == assembler.assemble(req)


def test_a_request_read_from_json_text_is_marked_like_a_parsed_one() -> None:
    from assembler import Limits

    req = request(budget=10)
    req["candidates"] = [form("a", 3, 0.5), form("b", 4, 0.5)]
    parsed = request_from_json(json.dumps(req))
    assert parsed.validated_under == assembler.DEFAULT_LIMITS
    assert parse_request(parsed) is parsed
    looser = Limits(max_candidates=5)
    marked = request_from_json(json.dumps(req), limits=looser)
    assert marked.validated_under == looser
    assert parse_request(marked, limits=looser) is marked
    assert assembler.assemble(parsed) == assembler.assemble(req)


def test_decoded_candidates_are_plain_frozen_candidates_by_kernel_and_twin() -> None:
    from dataclasses import replace

    from assembler.model import decode_twin
    from assembler.model.types import Candidate

    req = request()
    req["candidates"] = [form("a", 3, depends_on=["b", "b", "a"]), form("b", 1)]
    parsed = parse_request(req)
    built = [replace(c) for c in parsed.candidates]  # through Candidate's own __init__
    assert [type(c) for c in parsed.candidates] == [Candidate, Candidate]
    assert list(parsed.candidates) == built
    assert parsed.candidates[0].depends_on == ("a", "b")
    with pytest.raises(AttributeError):
        parsed.candidates[0].cost = 5  # type: ignore[misc]  # frozen: the test's point
    # the twin's copy with one field changed, and the kernel's (when compiled)
    for module in {decode_twin, kernels.kernel("assembler.model.decode_twin")}:
        copy = module.replaced(parsed.candidates[0], Candidate.__slots__.index("relevance"), 0.5)
        assert type(copy) is Candidate and copy == replace(parsed.candidates[0], relevance=0.5)
        assert copy.position == parsed.candidates[0].position


def test_the_decode_kernel_still_pays() -> None:
    # The decode kernel fills each Candidate's slots because a frozen dataclass's
    # __init__ sets every field through a call of object.__setattr__; were Candidate's
    # constructor to stop making those calls, the kernel's filling should go.
    import dis

    from assembler.model.types import Candidate

    calls = [i for i in dis.get_instructions(Candidate.__init__) if i.argval == "__setattr__"]
    assert len(calls) == len(Candidate.__slots__)


def test_a_candidates_fields_and_defaults_have_one_home() -> None:
    # Candidate (model/types.py) declares each field, its default and its JSON key; the
    # parser, the typed decoder and the serialiser read them there. A module that names
    # most of Candidate's fields again, as declarations (annotations), assignments to
    # attributes or rows (a tuple opening with the name), is a second home, which
    # drifts. (A request's JSON written as a dict names keys, not fields; the request
    # generators of tooling/ draft requests in records of their own.)
    import ast
    from dataclasses import fields

    from assembler.model.types import Candidate

    names = {f.name for f in fields(Candidate)}
    homes = []
    package = Path(assembler.__file__).parent
    modules = [p for p in package.rglob("*.py") if p.parts[len(package.parts)] != "tooling"]
    for path in sorted(modules):
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                named.add(node.attr)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                named.add(node.target.id)
            elif (
                isinstance(node, ast.Tuple)
                and node.elts
                and isinstance(node.elts[0], ast.Constant)
                and isinstance(node.elts[0].value, str)
            ):
                named.add(node.elts[0].value)
        if len(named & names) > len(names) // 2:
            homes.append(path.relative_to(package).as_posix())
    assert homes == ["model/types.py"]


# -- the typed decoding (model/decode.py) against the rules ---------------------------

_ODD_VALUES = (
    None, "", "\ud800", "x" * 5000, -1, 0, 1, 2, 1.5, 0.25, 120.0, True, False, [], {},
    ["a", "a"], ["\udfff"], [""], {"from": "p"}, {"from": ""}, {"to": "p"}, 2**53, 2**60,
    "tool_call", "system", "instruction", "evidence", math.nan, -0.0,
)  # fmt: skip


@contextlib.contextmanager
def _twin(name: str) -> Iterator[None]:
    """The kernel's twin answers in the block, whatever the mode."""
    import importlib

    held = kernels._LOADED.get(name)
    kernels._LOADED[name] = importlib.import_module(name)
    try:
        yield
    finally:
        if held is None:
            del kernels._LOADED[name]
        else:
            kernels._LOADED[name] = held


class _Named(str):
    """A str subclass: the rules keep it as a plain str."""


def _judged_both_ways(candidates: list[Any]) -> None:
    from assembler.model.decode import decoded_candidates
    from assembler.model.limits import DEFAULT_LIMITS
    from assembler.model.parse import parse_candidate

    decoded = decoded_candidates(candidates, DEFAULT_LIMITS.max_name_length)
    with _twin("assembler.model.decode_twin"):
        # the decode kernel's pure-Python twin: the same candidates, or None alike
        twin = decoded_candidates(candidates, DEFAULT_LIMITS.max_name_length)
    assert twin == decoded
    if decoded is not None:
        assert twin is not None
        for a, b in zip(decoded, twin, strict=True):
            assert a.position == b.position
            assert all(type(getattr(a, f)) is type(getattr(b, f)) for f in a.__slots__)
    try:
        ruled = [parse_candidate(c, i, DEFAULT_LIMITS) for i, c in enumerate(candidates)]
    except InvalidRequest:
        assert decoded is None, "decoded what the rules refuse"
        return
    if decoded is not None:
        assert decoded == ruled
        for a, b in zip(decoded, ruled, strict=True):
            assert a.position == b.position
            assert all(type(getattr(a, f)) is type(getattr(b, f)) for f in a.__slots__)


@given(st.integers(0, 2**32), st.integers(0, 40))
@settings(max_examples=examples(300))
def test_decoding_gives_the_rules_candidates_or_leaves_them_the_judging(
    seed: int, mutations: int
) -> None:
    import random as _random

    from assembler.hunt.generate import Shape, generate
    from assembler.model.decode import decoded_candidates
    from assembler.model.fields import CANDIDATE_FIELDS

    rng = _random.Random(seed)
    candidates = generate(rng, Shape.small(rng.randint(1, 14)))["candidates"]
    # a generated request is plainly valid: the typed decoding takes it
    assert decoded_candidates(candidates, 4096) is not None
    _judged_both_ways(candidates)
    for _ in range(mutations % 4):
        c = rng.choice(candidates)
        key = rng.choice([*CANDIDATE_FIELDS, "unknown", "cosst"])
        value = rng.choice(_ODD_VALUES)
        c[key] = _Named(value) if isinstance(value, str) and rng.random() < 0.2 else value
    _judged_both_ways(candidates)
