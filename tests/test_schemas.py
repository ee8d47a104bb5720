"""The JSON Schemas in models/ against the examples, the corpus and the library.

Checks that both schemas are valid draft 2020-12 schemas; that every example
request and every ``request`` of a corpus case validates; that deliberately bad
requests fail; and that ``assemble(example).to_dict()`` validates against the
result schema, with the outcome each example is documented to have.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from assembler.model.rendering import RenderFormat

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
EXAMPLES = sorted((MODELS / "examples").glob("*.json"))
CORPUS = sorted((ROOT / "corpus").glob("*.json"))

# Outcome of each example as documented in models/README.md ("Examples").
EXPECTED = {
    "review-migration": ("bundle", None),
    "mandatory-over-budget": ("refused", "MANDATORY_OVER_BUDGET"),
    "shared-resolver": ("bundle", None),
    "tool-results": ("bundle", None),
    "historical-audit": ("bundle", None),
    "required-ineligible": ("refused", "REQUIRED_INELIGIBLE"),
    "agent-tool-call": ("bundle", None),
}


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _validator(name: str) -> Draft202012Validator:
    from referencing import Registry, Resource

    # the result schema names the rendering schema by its $id
    rendering = _load(MODELS / "rendering.schema.json")
    registry = Registry().with_resource(rendering["$id"], Resource.from_contents(rendering))
    return Draft202012Validator(_load(MODELS / f"{name}.schema.json"), registry=registry)


def _errors(validator: Draft202012Validator, instance: Any) -> list[str]:
    return [
        f"{'/'.join(str(part) for part in error.absolute_path) or '$'}: {error.message}"
        for error in validator.iter_errors(instance)
    ]


def _requests() -> list[tuple[str, Any]]:
    out = [(f"examples/{path.name}", _load(path)) for path in EXAMPLES]
    for path in CORPUS:
        case = _load(path)
        assert isinstance(case, dict) and "request" in case, f"{path.name}: no 'request' key"
        out.append((f"corpus/{path.name}", case["request"]))
    return out


REQUESTS = _requests()


@pytest.mark.parametrize("name", ["request", "result", "rendering"])
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = _load(MODELS / f"{name}.schema.json")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_examples_exist() -> None:
    names = {path.stem for path in EXAMPLES}
    assert len(EXAMPLES) >= 4
    assert {"review-migration", "mandatory-over-budget"} <= names
    assert names <= set(EXPECTED), f"document the outcome of {sorted(names - set(EXPECTED))}"


@pytest.mark.parametrize(("where", "request_data"), REQUESTS, ids=[name for name, _ in REQUESTS])
def test_request_validates(where: str, request_data: Any) -> None:
    assert _errors(_validator("request"), request_data) == [], where


def _base() -> dict[str, Any]:
    return {
        "task": {"id": "t", "budget": 100},
        "candidates": [
            {"id": "a", "cost": 10, "relevance": 0.5, "transfer": {"from": "p"}},
        ],
        "policy": {"authority": {"tool": "data"}},
    }


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = _base()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def _without(path: tuple[Any, ...]) -> dict[str, Any]:
    data = _base()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return data


BAD_REQUESTS = {
    "unknown top-level field": _with(("extra",), 1),
    "unknown task field": _with(("task", "deadline"), "today"),
    "unknown candidate field": _with(("candidates", 0, "dependson"), ["b"]),
    "unknown policy field": _with(("policy", "strict"), True),
    "unknown transfer field": _with(("candidates", 0, "transfer", "by"), "x"),
    "negative cost": _with(("candidates", 0, "cost"), -1),
    "cost as string": _with(("candidates", 0, "cost"), "10"),
    "fractional cost": _with(("candidates", 0, "cost"), 10.5),
    "cost above 2^53-1": _with(("candidates", 0, "cost"), 2**53),
    "boolean budget": _with(("task", "budget"), True),
    "relevance 1.5": _with(("candidates", 0, "relevance"), 1.5),
    "negative relevance": _with(("candidates", 0, "relevance"), -0.1),
    "min_relevance 2": _with(("task", "min_relevance"), 2),
    "missing task.budget": _without(("task", "budget")),
    "missing task.id": _without(("task", "id")),
    "missing task": _without(("task",)),
    "missing candidates": _without(("candidates",)),
    "missing candidate cost": _without(("candidates", 0, "cost")),
    "empty candidate id": _with(("candidates", 0, "id"), ""),
    "unknown role": _with(("candidates", 0, "role"), "system"),
    "unknown operation": _with(("task", "operation"), "latest"),
    "bad standing": _with(("policy", "authority", "tool"), "trusted"),
    "required not boolean": _with(("candidates", 0, "required"), "yes"),
    "depends_on not a list": _with(("candidates", 0, "depends_on"), "b"),
    "transfer without from": _with(("candidates", 0, "transfer"), {}),
    "source version not a string": _with(("sources",), {"adr": 5}),
}


def test_base_request_is_valid() -> None:
    # Guards the negative tests below: each one breaks exactly one thing.
    assert _errors(_validator("request"), _base()) == []


@pytest.mark.parametrize("case", sorted(BAD_REQUESTS))
def test_bad_request_fails(case: str) -> None:
    assert _errors(_validator("request"), BAD_REQUESTS[case]), f"{case} passed the schema"


def _sample_results() -> dict[str, dict[str, Any]]:
    """Hand-built results, one per shape the contract allows, via the lead's value types."""
    from assembler.model.types import (
        Decision,
        Reason,
        Refusal,
        RefusalCode,
        RequiredIdentity,
        Result,
        Status,
        Verdict,
    )

    h = "0123456789abcdef" * 4
    admitted = Decision("a", "a", Verdict.ADMITTED, Reason.REQUIRED, "")
    stale = Decision("b", "b", Verdict.REJECTED, Reason.STALE, "version 'C1' is not current")
    out = Decision("c", "c", Verdict.REJECTED, Reason.NOT_CHOSEN, "")
    refused = Decision("c", "c", Verdict.REJECTED, Reason.REFUSED, "")
    undecided = Decision("c", "c", Verdict.REJECTED, Reason.UNDECIDED, "")
    common: dict[str, Any] = {"strategy": "exact", "budget": 100, "trace_id": h}

    def refused_with(
        code: RefusalCode = RefusalCode.MANDATORY_OVER_BUDGET, **refusal: Any
    ) -> Result:
        """A refusal of budget 100 with ``code``, stating ``refusal``'s fields."""
        return Result(
            status=Status.REFUSED,
            selected=(),
            cost=0,
            value=0,
            optimal=False,
            decisions=(stale, refused),
            refusal=Refusal(code, budget=100, **refusal),
            **common,
        )

    results = {
        "optimal bundle": Result(
            status=Status.BUNDLE,
            selected=("a",),
            cost=40,
            value=900,
            optimal=True,
            decisions=(admitted, stale, out),
            package_id=h,
            bound=900,
            timings=(("gates", 0.001), ("solve", 0.02)),
            **common,
        ),
        "bundle at the time limit": Result(
            status=Status.BUNDLE,
            selected=("a",),
            cost=40,
            value=900,
            optimal=False,
            decisions=(admitted, stale, out),
            package_id=h,
            bound=1000,
            **common,
        ),
        "baseline bundle over budget": Result(
            status=Status.BUNDLE,
            selected=("a", "c"),
            cost=140,
            value=1300,
            optimal=False,
            decisions=(admitted, stale, Decision("c", "c", Verdict.ADMITTED, Reason.VALUE, "")),
            package_id=h,
            **{**common, "strategy": "dump"},
        ),
        "empty bundle": Result(
            status=Status.BUNDLE,
            selected=(),
            cost=0,
            value=0,
            optimal=True,
            decisions=(),
            package_id=h,
            bound=0,
            **common,
        ),
        "mandatory over budget": refused_with(
            mandatory_cost=130,
            excess=30,
            mandatory_cost_lower=130,
            mandatory_cost_upper=130,
            forms=("a", "c"),
            conflict=("a", "c"),
            message="required material costs 130",
        ),
        "over budget, closure not proven cheapest": refused_with(
            mandatory_cost_lower=101,
            mandatory_cost_upper=130,
            forms=("a", "c"),
            conflict=("a", "c"),
            message="required material costs between 101 and 130",
        ),
        "over budget, no closure priced": refused_with(
            mandatory_cost_lower=101, message="required material costs at least 101"
        ),
        "required missing": refused_with(
            RefusalCode.REQUIRED_MISSING,
            identities=(RequiredIdentity("z"),),
            message="no candidate for 'z'",
        ),
        "required ineligible": refused_with(
            RefusalCode.REQUIRED_INELIGIBLE,
            identities=(RequiredIdentity("b", (("b", Reason.STALE),)),),
            message="every form of 'b' fails a gate",
        ),
        "undecided": Result(
            status=Status.UNDECIDED,
            selected=(),
            cost=0,
            value=0,
            optimal=False,
            decisions=(stale, undecided),
            bound=1000,
            **common,
        ),
    }
    return {name: result.to_dict() for name, result in results.items()}


def test_sample_results_validate() -> None:
    for name, result in _sample_results().items():
        assert _errors(_validator("result"), result) == [], name


def _broken_results() -> dict[str, dict[str, Any]]:
    samples = _sample_results()
    bundle, refused = samples["optimal bundle"], samples["mandatory over budget"]
    broken: dict[str, dict[str, Any]] = {}

    def derive(name: str, base: dict[str, Any], change: Any) -> None:
        data = copy.deepcopy(base)
        change(data)
        broken[name] = data

    derive("unknown field", bundle, lambda d: d.update(extra=1))
    derive("unknown status", bundle, lambda d: d.update(status="partial"))
    derive("bundle without package_id", bundle, lambda d: d.update(package_id=None))
    derive("uppercase package_id", bundle, lambda d: d.update(package_id="AB" * 32))
    derive("bundle with a refusal", bundle, lambda d: d.update(refusal=refused["refusal"]))
    derive("optimal with a gap", bundle, lambda d: d.update(gap=0.1))
    derive("slack not an integer", bundle, lambda d: d.update(slack=1.5))
    derive("refused claiming optimal", refused, lambda d: d.update(optimal=True))
    derive(
        "admitted as not-chosen", bundle, lambda d: d["decisions"][0].update(reason="not-chosen")
    )
    derive("rejected as value", bundle, lambda d: d["decisions"][1].update(reason="value"))
    derive("unknown reason", bundle, lambda d: d["decisions"][1].update(reason="budget"))
    derive("decision without detail", bundle, lambda d: d["decisions"][0].pop("detail"))
    derive("bundle decision refused", bundle, lambda d: d["decisions"][2].update(reason="refused"))
    derive("refused with selection", refused, lambda d: d.update(selected=["a"]))
    derive("refused without refusal", refused, lambda d: d.update(refusal=None))
    derive(
        "refused with admitted",
        refused,
        lambda d: d["decisions"][1].update(verdict="admitted", reason="required"),
    )
    derive("refusal unknown code", refused, lambda d: d["refusal"].update(code="TOO_BIG"))
    derive("over budget without excess", refused, lambda d: d["refusal"].update(excess=None))
    unproven = samples["over budget, closure not proven cheapest"]
    unpriced = samples["over budget, no closure priced"]
    derive("unproven stating the excess", unproven, lambda d: d["refusal"].update(excess=29))
    derive(
        "unproven without a lower bound",
        unproven,
        lambda d: d["refusal"].update(mandatory_cost_lower=None),
    )
    derive(
        "unpriced with an upper bound",
        unpriced,
        lambda d: d["refusal"].update(mandatory_cost_upper=130),
    )
    derive("unpriced with a conflict", unpriced, lambda d: d["refusal"].update(conflict=["a"]))
    derive(
        "missing with a lower bound",
        samples["required missing"],
        lambda d: d["refusal"].update(mandatory_cost_lower=5),
    )
    derive("over budget zero excess", refused, lambda d: d["refusal"].update(excess=0))
    derive(
        "missing with mandatory cost",
        samples["required missing"],
        lambda d: d["refusal"].update(mandatory_cost=5),
    )
    derive(
        "missing with gated forms",
        samples["required missing"],
        lambda d: d["refusal"]["identities"][0].update(forms=[{"id": "z", "gate": "stale"}]),
    )
    derive(
        "ineligible with unknown gate",
        samples["required ineligible"],
        lambda d: d["refusal"]["identities"][0]["forms"][0].update(gate="not-chosen"),
    )
    derive("undecided claiming optimal", samples["undecided"], lambda d: d.update(optimal=True))
    derive("timing not a number", bundle, lambda d: d["timings"].update(solve="fast"))
    return broken


@pytest.mark.parametrize("case", sorted(_broken_results()))
def test_broken_result_fails(case: str) -> None:
    assert _errors(_validator("result"), _broken_results()[case]), f"{case} passed the schema"


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_example_result_validates(path: Path) -> None:
    from assembler import assemble

    request_data = _load(path)
    from assembler import verify

    answer = assemble(copy.deepcopy(request_data))
    assert verify(request_data, answer) == []
    result = answer.to_dict()
    # The result must survive a JSON round trip unchanged (it is the CLI's output).
    assert json.loads(json.dumps(result, ensure_ascii=False)) == result
    assert _errors(_validator("result"), result) == []

    candidate_ids = sorted(candidate["id"] for candidate in request_data["candidates"])
    assert [decision["id"] for decision in result["decisions"]] == candidate_ids
    admitted = {d["id"] for d in result["decisions"] if d["verdict"] == "admitted"}
    assert set(result["selected"]) == admitted

    status, code = EXPECTED[path.stem]
    assert result["status"] == status
    assert (result["refusal"] or {}).get("code") == code


@pytest.mark.parametrize("fmt", [f.value for f in RenderFormat])
@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_example_rendering_validates(path: Path, fmt: str) -> None:
    from assembler import assemble, verify, verify_rendering

    request_data = _load(path)
    answer = assemble(copy.deepcopy(request_data), render=fmt)
    assert verify(request_data, answer) == []
    result = answer.to_dict()
    assert json.loads(json.dumps(result, ensure_ascii=False)) == result
    assert _errors(_validator("result"), result) == []
    if answer.rendering is None:
        assert result["status"] != "bundle"
        return
    assert verify_rendering(request_data, answer, answer.rendering) == []
    assert _errors(_validator("rendering"), answer.rendering.to_dict()) == []
    broken = answer.rendering.to_dict()
    broken["manifest"]["items"][0]["offset"] = -1
    assert _errors(_validator("rendering"), broken)


@pytest.mark.parametrize(
    ("change", "value"),
    [
        ("kind", "chat"),
        ("tool_call_id", "x"),
        ("tool_name", "f"),
        ("turn", -1),
    ],
)
def test_bad_render_fields_fail(change: str, value: Any) -> None:
    data = _base()
    data["candidates"][0][change] = value
    assert _errors(_validator("request"), data)
