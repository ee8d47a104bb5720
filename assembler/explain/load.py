"""Reading a result back and checking that it belongs to its request.

Input: a result as ``Result.to_dict()`` wrote it (``models/result.schema.json``) or
a ``Result``, and the validated ``Request`` it claims to answer.
Output: the ``Result`` (with its ``Rendering`` when it carries one), or
``InvalidResult`` naming the field that is wrong: a result that is not one, or one
whose budget or candidates are not the request's (an explanation of a result against
the wrong request would explain nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..errors import InvalidResult
from ..ledger.documents import result_from_dict as stored_result
from ..model.lookalikes import not_a_result
from ..model.rendering import Headers, Manifest, ManifestItem, RenderFormat, Rendering
from ..model.types import Request, Result
from ..stages.identities import canonical_json

__all__ = ["InvalidResult", "paired", "rendering_from_dict", "result_from_dict"]


def result_from_dict(data: Mapping[str, Any]) -> Result:
    """A ``Result`` rebuilt from its JSON contract, its rendering included (the
    ledger's reader rebuilds the rest, as it does for a stored result)."""
    if not isinstance(data, Mapping):
        raise InvalidResult("$", f"a result must be a JSON object, not {type(data).__name__}")
    looks = not_a_result(data)
    if looks is not None:
        raise InvalidResult("$", looks)
    try:
        result = stored_result(dict(data))
        rendering = data.get("rendering")
        if rendering is None:
            return result
        return replace(result, rendering=rendering_from_dict(rendering))
    except KeyError as missing:
        raise InvalidResult(str(missing.args[0]), "is required") from None
    except (TypeError, ValueError, AttributeError) as wrong:
        raise InvalidResult("$", f"does not follow the result format: {wrong}") from None


def rendering_from_dict(data: Mapping[str, Any]) -> Rendering:
    """A ``Rendering`` from its JSON form (``Rendering.to_dict()``)."""
    m = data["manifest"]
    counter = m["counter"]
    manifest = Manifest(
        render_version=int(m["render_version"]),
        format=RenderFormat(m["format"]),
        package_id=str(m["package_id"]),
        trace_id=str(m["trace_id"]),
        items=tuple(
            ManifestItem(
                i["id"],
                i["identity"],
                i["form"],
                i["kind"],
                i["content_sha256"],
                int(i["offset"]),
                int(i["length"]),
                int(i["tokens"]),
            )
            for i in m["items"]
        ),
        envelope=tuple((e["part"], int(e["offset"]), int(e["length"])) for e in m["envelope"]),
        breakpoints=tuple(int(b) for b in m["breakpoints"]),
        rendered_sha256=str(m["rendered_sha256"]),
        request_body_sha256=str(m["request_body_sha256"]),
        costs=str(m["costs"]),
        counter_name=None if counter is None else str(counter["name"]),
        counter_version=None if counter is None else str(counter["version"]),
        budget=int(m["budget"]),
        total_tokens=m["total_tokens"],
        envelope_tokens=m["envelope_tokens"],
        # a manifest written before it named its framing was framed with provenance
        headers=Headers(str(m.get("headers", "provenance"))),
    )
    return Rendering(
        format=RenderFormat(data["format"]),
        text=str(data["text"]),
        body_json=canonical_json(data["body"]),
        manifest=manifest,
        body=data["body"],
    )


def paired(request: Request, result: Result | Mapping[str, Any]) -> Result:
    """The result, once it is known to answer ``request``: same budget, a decision for
    exactly its candidates (by id and identity), selected forms it offers."""
    answer = result if isinstance(result, Result) else result_from_dict(result)
    rendering = answer.rendering
    if rendering is not None and rendering.manifest.costs == "counted":
        counter = rendering.manifest.counter_name
        raise InvalidResult(
            "rendering.manifest.costs",
            f"were counted by {counter}: the result answers the priced request"
            " (assembler.render.priced_request), so explain that request with it",
        )
    if answer.budget != request.task.budget:
        raise InvalidResult(
            "budget", f"is {answer.budget}, but the request's budget is {request.task.budget}"
        )
    offered = {c.id: c.identity for c in request.candidates}
    decided = {d.id: d.identity for d in answer.decisions}
    if decided.keys() != offered.keys():
        extra = sorted(decided.keys() - offered.keys())[:3]
        missing = sorted(offered.keys() - decided.keys())[:3]
        raise InvalidResult(
            "decisions",
            f"do not match the request's candidates (unknown {extra}, missing {missing}):"
            " is this the result of another request?",
        )
    for form, identity in decided.items():
        if offered[form] != identity:
            raise InvalidResult(
                "decisions", f"{form!r} has identity {identity!r}, not {offered[form]!r}"
            )
    unknown = [form for form in answer.selected if form not in offered]
    if unknown:
        raise InvalidResult("selected", f"names forms the request does not offer: {unknown[:3]}")
    return answer
