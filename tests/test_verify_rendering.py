"""The render verifier: faithful renderings pass, each seeded corruption is rejected.

Each corruption edits the JSON form of a faithful rendering (text, body, manifest)
the way a broken or dishonest renderer would, recomputing whatever hashes and
offsets it can to hide the change; the verifier must still name it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import solve

import assembler
from assembler.model.rendering import CONVERSATIONAL
from assembler.verifiers.rendering import verify_rendering

EXAMPLE = Path(__file__).resolve().parent.parent / "models" / "examples" / "agent-tool-call.json"
FORMATS = ("text", "openai-chat", "anthropic-messages", "openai-responses", "gemini")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _faithful(fmt: str) -> tuple[dict[str, Any], assembler.Result, dict[str, Any]]:
    req = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    # the corruptions below forge and move headers: the framing that has them
    result = solve(req, render=fmt, headers="provenance")
    assert result.rendering is not None
    return req, result, copy.deepcopy(result.rendering.to_dict())


def _replace_text(r: dict[str, Any], old: str, new: str) -> None:
    """Rewrite the text and every text part of the body alike, re-hash, re-offset."""
    r["text"] = r["text"].replace(old, new, 1)

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return node.replace(old, new, 1)
        if isinstance(node, list):
            return [walk(n) for n in node]
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return node

    r["body"] = walk(r["body"])
    _rehash(r)


def _rehash(r: dict[str, Any]) -> None:
    data = r["text"].encode("utf-8")
    for item in r["manifest"]["items"]:
        needle = f'<item id="{item["id"]}"'.encode()
        at = data.find(needle)
        if at != -1:
            item["offset"] = data.index(b">\n", at) + 2
    for part in r["manifest"]["envelope"]:
        tag = f"<{part['part']}>\n".encode()
        if tag in data:
            part["offset"] = data.index(tag) + len(tag)
    r["manifest"]["rendered_sha256"] = _sha(r["text"])
    r["manifest"]["request_body_sha256"] = _sha(_canonical(r["body"]))


def _item(r: dict[str, Any], form_id: str) -> dict[str, Any]:
    return next(i for i in r["manifest"]["items"] if i["id"] == form_id)


def _block(r: dict[str, Any], form_id: str) -> str:
    item = _item(r, form_id)
    data = r["text"].encode("utf-8")
    if item["kind"] in CONVERSATIONAL:  # a turn is its content alone
        return data[item["offset"] : item["offset"] + item["length"]].decode("utf-8")
    start = data.rfind(b"<item ", 0, item["offset"])
    end = item["offset"] + item["length"] + len(b"\n</item>\n")
    return data[start:end].decode("utf-8")


def remove_item_bytes(req: dict[str, Any], r: dict[str, Any]) -> None:
    item = _item(r, "refund-policy-full")
    content = req["candidates"][3]["content"]
    assert content.encode()[:10] == r["text"].encode()[item["offset"] : item["offset"] + 10]
    _replace_text(r, content, "")


def insert_sealed_content(req: dict[str, Any], r: dict[str, Any]) -> None:
    sealed = next(c for c in req["candidates"] if c["id"] == "crm-export-raw")["content"]
    # appended inside a selected item's block, after its content, with every hash and
    # offset recomputed so nothing but the bytes themselves betrays it
    block = _block(r, "turn-1-user")
    _replace_text(r, block, block + sealed)


def shift_offsets(req: dict[str, Any], r: dict[str, Any]) -> None:
    for item in r["manifest"]["items"]:
        item["offset"] += 1


def swap_two_items(req: dict[str, Any], r: dict[str, Any]) -> None:
    a, b = _block(r, "agent-policy"), _block(r, "lookup-order-tool")
    _replace_text(r, a + b, b + a)
    items = r["manifest"]["items"]
    items[0], items[1] = items[1], items[0]


def forge_header_hash(req: dict[str, Any], r: dict[str, Any]) -> None:
    item = _item(r, "memory-customer-tier")
    _replace_text(r, f'sha256="{item["content_sha256"]}"', f'sha256="{"0" * 64}"')


def orphan_tool_result(req: dict[str, Any], r: dict[str, Any]) -> None:
    call = _block(r, "call-lookup-4471")
    # the call's block has no closing line: it ends with its arguments
    call = call[: call.index("}") + 1]
    r["text"] = r["text"].replace(call, "", 1)
    r["manifest"]["items"] = [i for i in r["manifest"]["items"] if i["id"] != "call-lookup-4471"]
    body = r["body"]
    if isinstance(body, dict) and "input" in body:
        body["input"] = [
            i for i in body["input"]
            if i.get("type") != "function_call" and "call-lookup-4471" not in i.get("content", "")
        ]  # fmt: skip
    elif isinstance(body, dict) and "contents" in body:
        for c in body["contents"]:
            c["parts"] = [
                p for p in c["parts"]
                if "functionCall" not in p and "call-lookup-4471" not in p.get("text", "")
            ]  # fmt: skip
        body["contents"] = [c for c in body["contents"] if c["parts"]]
    elif isinstance(body, dict) and "system" not in body:
        body["messages"] = [m for m in body["messages"] if not m.get("tool_calls")]
    elif isinstance(body, dict):
        for m in body["messages"]:
            m["content"] = [
                b
                for b in m["content"]
                if b.get("type") != "tool_use" and "call-lookup-4471" not in b.get("text", "")
            ]
        body["messages"] = [m for m in body["messages"] if m["content"]]
    else:
        r["body"] = r["text"]
    _rehash(r)


def rewrite_payload(req: dict[str, Any], r: dict[str, Any]) -> None:
    old = next(c for c in req["candidates"] if c["id"] == "turn-1-user")["content"]
    new = old.replace("41 days", "12 days")
    _replace_text(r, old, new)
    item = _item(r, "turn-1-user")
    item["content_sha256"] = _sha(new)
    _replace_text(r, _sha(old), _sha(new))


CORRUPTIONS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "item-bytes-removed": remove_item_bytes,
    "sealed-content-inserted": insert_sealed_content,
    "offsets-shifted": shift_offsets,
    "two-items-swapped": swap_two_items,
    "forged-header-hash": forge_header_hash,
    "tool-result-orphaned": orphan_tool_result,
    "payload-rewritten-under-same-id": rewrite_payload,
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_faithful_renderings_pass(fmt: str) -> None:
    req, result, rendering = _faithful(fmt)
    assert verify_rendering(req, result, rendering) == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_seeded_corruption_is_rejected(name: str, fmt: str) -> None:
    req, result, rendering = _faithful(fmt)
    CORRUPTIONS[name](req, rendering)
    found = verify_rendering(req, result, rendering)
    assert found, f"{name} in {fmt} went unnoticed"


def test_sealed_content_is_named() -> None:
    req, result, rendering = _faithful("anthropic-messages")
    insert_sealed_content(req, rendering)
    foreign = [v for v in verify_rendering(req, result, rendering) if v.kind == "render-foreign"]
    assert [v.forms for v in foreign] == [("crm-export-raw",)]


def test_the_orphaned_result_is_named() -> None:
    req, result, rendering = _faithful("openai-chat")
    orphan_tool_result(req, rendering)
    found = verify_rendering(req, result, rendering)
    assert any(v.kind == "render-tool" and v.forms == ("result-lookup-4471",) for v in found)
    assert any("tool-result-after-call" in v.detail for v in found)


def test_rejected_content_repeated_inside_selected_material_is_allowed() -> None:
    # a rejected form whose content is a substring of a selected one: the repeat lies
    # wholly inside accounted bytes, so it is not foreign
    req = {
        "task": {"id": "t", "budget": 100},
        "candidates": [
            {"id": "long", "identity": "x", "cost": 50, "relevance": 0.9, "content": "abc def"},
            {"id": "short", "identity": "x", "cost": 10, "relevance": 0.1, "content": "def"},
            {"id": "tag", "cost": 500, "relevance": 0.9, "content": "item"},
        ],
    }
    result = solve(req, render="text")
    assert result.selected == ("long",)
    assert result.rendering is not None and "def" in result.rendering.text


def test_a_cache_aware_breakpoint_on_a_tool_definition_ends_a_block() -> None:
    # a tool definition alone before the query, with a cache section: the layout marks
    # the tool's block, which the verifier took for no block's end (issue 47's hunt)
    req = {
        "task": {"id": "t", "budget": 10, "query": "What next?"},
        "candidates": [{"id": "tool", "kind": "tool_definition", "cost": 0, "relevance": 0.1,
                        "content": '{"name": "read", "parameters": {"type": "object"}}'},
                       {"id": "gone", "cost": 0, "content": "gone"}],
        "cache": {"provider": "anthropic", "min_prefix_tokens": 1, "previous": {"blocks": [
            {"id": "gone", "content_sha256": hashlib.sha256(b"was").hexdigest(),
             "tokens": 0, "breakpoint": True}]}},
    }  # fmt: skip
    result = assembler.assemble(req, render="anthropic-messages")
    assert result.rendering is not None and result.rendering.manifest.breakpoints
    assert assembler.verify_rendering(req, result, result.rendering) == []
