"""Session deltas for the property tests, and what a delta means on a request dict.

Input: the current request (a dict in the stated model's JSON). Output: ``deltas``, a
Hypothesis strategy drawing a delta for that request (``models/session.md``), and
``applied(request, delta)``, the resulting request computed naively on the JSON: the
reference the session's answers are compared with (through a fresh ``assemble()``).

New candidates come from the shared generator (``assembler.hunt.generate``, through
Hypothesis' random so that examples shrink), their ids prefixed so that they are new,
their identities, resolvers and groups left as drawn so that they mix with the
request's own; tool calls come in pairs that later deltas may split (which the
request's rules refuse). Task, sources and policy patches set and reset fields.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from assembler.hunt.generate import Shape, generate

__all__ = ["applied", "deltas"]

_SCOPES = ["proj-a", "proj-b", None]
_CHANGES = ["cost", "relevance", "required", "scope", "content", "identity", "group",
            "depends_on", "lineage", "other"]  # fmt: skip
_SOURCES = ["src-0", "src-1", "src-2", "src-untracked"]
_VERSIONS = ["v1", "v2", "v3", "v4", None]


def applied(request: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    """``request`` after ``delta``, by the documented semantics, on plain JSON."""
    out = copy.deepcopy(request)
    for key, value in delta.get("task", {}).items():
        if value is None:
            out["task"].pop(key, None)
        else:
            out["task"][key] = copy.deepcopy(value)
    sources = out.setdefault("sources", {})
    for key, value in delta.get("sources", {}).items():
        if value is None:
            sources.pop(key, None)
        else:
            sources[key] = value
    if "policy" in delta:
        policy = delta["policy"]
        if policy is None or ("authority" in policy and policy["authority"] is None):
            out.pop("policy", None)
        elif "authority" in policy:
            table = out.setdefault("policy", {}).setdefault("authority", {})
            for key, value in policy["authority"].items():
                if value is None:
                    table.pop(key, None)
                else:
                    table[key] = value
    removed = set(delta.get("remove", []))
    updated = {c["id"]: c for c in delta.get("update", [])}
    for c in out["candidates"]:
        if c["id"] in delta.get("relevance", {}):
            updated[c["id"]] = {**c, "relevance": delta["relevance"][c["id"]]}
    out["candidates"] = [
        copy.deepcopy(updated.get(c["id"], c)) for c in out["candidates"] if c["id"] not in removed
    ]
    out["candidates"] += copy.deepcopy(delta.get("add", []))
    return out


@st.composite
def _fresh_candidates(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    rng = draw(st.randoms(use_true_random=False, note_method_calls=False))
    drawn = generate(rng, Shape.small(draw(st.integers(1, 5))))["candidates"]
    out = []
    for candidate in drawn:
        candidate = dict(candidate)
        # the identity stays as drawn ("item-0", ...): new forms join old identities
        candidate.setdefault("identity", candidate["id"])
        candidate["id"] = f"{prefix}{candidate['id']}"
        out.append(candidate)
    if draw(st.integers(0, 3)) == 0:
        call = f"{prefix}call"
        out.append({"id": f"{call}-use", "cost": draw(st.integers(0, 300)), "relevance": 0.7,
                    "kind": "tool_call", "tool_call_id": call, "tool_name": "lookup",
                    "content": '{"q": 1}'})  # fmt: skip
        out.append({"id": f"{call}-out", "cost": draw(st.integers(0, 300)), "relevance": 0.4,
                    "kind": "tool_result", "tool_call_id": call, "content": "42"})  # fmt: skip
    return out


@st.composite
def _changed(draw: st.DrawFn, candidate: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A new definition of ``candidate`` under the same id."""
    out = dict(candidate)
    what = draw(st.sampled_from(_CHANGES))
    if what == "cost":
        out["cost"] = draw(st.integers(0, 1500))
    elif what == "relevance":
        out["relevance"] = draw(st.sampled_from([0, 0.1, 0.5, 0.999, 1]))
    elif what == "required":
        out["required"] = not out.get("required", False)
    elif what == "scope":
        out["scope"] = draw(st.sampled_from(["proj-a", "proj-b", "shared", "unknown"]))
    elif what == "content":
        out["content"] = draw(st.sampled_from(["new words", "é ✓", f"{prefix} payload"]))
    elif what == "identity" and "tool_call_id" not in out:
        out["identity"] = draw(st.sampled_from(["item-0", "item-1", "resolver-0", f"{prefix}x"]))
    elif what == "group":
        out["group"] = draw(st.sampled_from(["group-0", "group-1", f"{prefix}g"]))
    elif what == "depends_on":
        out["depends_on"] = draw(st.lists(st.sampled_from(["item-0", "resolver-0", "ghost"]),
                                          max_size=2))  # fmt: skip
    elif what == "lineage":
        out["lineage"] = ["call-1"]
    else:
        # a whole new candidate under the old id (a tool end keeps its kind and call id)
        if "tool_call_id" in out:
            out["cost"] = draw(st.integers(0, 50))
        else:
            out = draw(_fresh_candidates(prefix))[0] | {"id": candidate["id"]}
            out.pop("tool_call_id", None)
            if out.get("kind") in ("tool_call", "tool_result"):
                out["kind"] = "evidence"
                out.pop("tool_name", None)
    return out


@st.composite
def _task_patch(draw: st.DrawFn, request: dict[str, Any]) -> dict[str, Any]:
    identities = sorted({c.get("identity", c["id"]) for c in request["candidates"]})
    ids = sorted(c["id"] for c in request["candidates"])
    patch: dict[str, Any] = {}
    total = sum(c["cost"] for c in request["candidates"])
    for key in draw(st.sets(st.sampled_from(["budget", "required", "seal", "scope", "operation",
                                             "min_relevance", "instruction", "query", "id"]),
                            max_size=3)):  # fmt: skip
        if key == "budget":
            patch[key] = draw(st.integers(0, max(total, 1)))
        elif key == "required":
            pool = [*identities, "absent-0"]
            patch[key] = draw(st.none() | st.lists(st.sampled_from(pool), max_size=3))
        elif key == "seal":
            pool = [*ids, *identities, "call-1"]
            patch[key] = draw(st.none() | st.lists(st.sampled_from(pool), max_size=3))
        elif key == "scope":
            patch[key] = draw(st.sampled_from(_SCOPES))
        elif key == "operation":
            patch[key] = draw(st.sampled_from(["current", "historical", None]))
        elif key == "min_relevance":
            patch[key] = draw(st.sampled_from([0, 0.3, 0.5, None]))
        elif key in ("instruction", "query"):
            patch[key] = draw(st.sampled_from(["Answer briefly.", "Which order?", None]))
        else:
            patch[key] = draw(st.sampled_from(["task-a", "task-b"]))
    return patch


@st.composite
def deltas(draw: st.DrawFn, request: dict[str, Any], step: int) -> dict[str, Any]:
    """A delta for ``request``: ids it removes and updates exist, ids it adds are new
    (so the only errors left are the request's own rules, such as a split tool call)."""
    prefix = f"s{step}-"
    ids = [c["id"] for c in request["candidates"]]
    delta: dict[str, Any] = {}
    chosen = draw(st.lists(st.sampled_from(ids), unique=True, max_size=4)) if ids else []
    split = draw(st.integers(0, len(chosen)))
    if chosen[:split]:
        delta["remove"] = chosen[:split]
    by_id = {c["id"]: c for c in request["candidates"]}
    kept = chosen[split:]
    scored = draw(st.integers(0, len(kept)))
    if kept[:scored]:
        # a re-scoring: those candidates keep every field but their relevance
        delta["relevance"] = {i: draw(st.sampled_from([0, 0.2, 0.5, 1])) for i in kept[:scored]}
    if kept[scored:]:
        delta["update"] = [draw(_changed(by_id[i], prefix)) for i in kept[scored:]]
    if draw(st.booleans()):
        delta["add"] = draw(_fresh_candidates(prefix))
    if draw(st.integers(0, 2)) == 0:
        delta["task"] = draw(_task_patch(request))
    if draw(st.integers(0, 3)) == 0:
        keys = st.sampled_from(_SOURCES)
        delta["sources"] = draw(st.dictionaries(keys, st.sampled_from(_VERSIONS), max_size=2))
    if draw(st.integers(0, 4)) == 0:
        delta["policy"] = draw(
            st.sampled_from([None, {}, {"authority": None}, {"authority": {}}])
            | st.builds(
                lambda k, v: {"authority": {k: v}},
                st.sampled_from(["tool", "user", "retrieved"]),
                st.sampled_from(["instruction", "data", None]),
            )
        )
    return delta
