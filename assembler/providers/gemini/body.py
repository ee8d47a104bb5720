"""The Gemini ``generateContent`` body: built from a layout's blocks, checked, counted.

Input: the blocks of a layout (``Piece``), or a body (``{"contents",
"systemInstruction"?, "tools"?}``) or one of its contents and a ``Meter``.
Output: ``body``: the ``Body`` (``{"systemInstruction": {"parts": [...]}, "contents":
[...], "tools": [{"functionDeclarations": [...]}]}``, the system instruction and tools
only when present), checked by ``check``, or ``RenderError(RENDER_PROVIDER_RULE)``;
``tokens``: a body's tokens as billed, and its parts' (``content_tokens``,
``system_tokens``, ``tools_tokens``, ``image_tokens``).

Every block is one part: the stable section's in ``systemInstruction``, the rest in
``contents`` (evidence, user turns, tool results and the query as ``user``, assistant
turns and tool calls as ``model``), consecutive parts of one role merged into one
content. A tool call is a ``functionCall`` part (``id`` = its tool call id, ``name``,
``args`` parsed from the content; a text part with the item's header before it when
headers frame items); its result a ``functionResponse`` part (``id``, ``name``,
``response: {"output": block}``) opening the next user content. Each tool definition
is a function declaration with its JSON Schema as ``parametersJsonSchema``. The
body's texts, in the order ``tools``, ``systemInstruction``, ``contents`` (text parts,
a call's arguments, a response's output), concatenate to the rendered text; Gemini
caches prefixes by itself, so the body has no breakpoints.

Counting (figures and sources: ``assembler/facts/gemini.json``): an estimate (the
model's encoding times its ``estimate_factor``): each content its framing and each text
part's text, a ``functionCall`` its framing plus its name and arguments' JSON, a
``functionResponse`` its framing plus its name and response's JSON, an image by the
tile rule, any other part its JSON's count; the system instruction's texts; the
function declarations' JSON.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

from ...facts import Provider, RenderFormat, framing, provider_facts
from ...stages.identities import canonical_json
from ..images import image_size
from ..interface import Body, Piece
from ..meter import Meter, json_text
from ..pieces import arguments, call_of, rule, tools_of

__all__ = [
    "FORMAT",
    "build",
    "check",
    "content_tokens",
    "image_tokens",
    "overheads",
    "system_tokens",
    "tokens",
    "tool_definition",
    "tools_tokens",
]

FORMAT = RenderFormat.GEMINI
_CONTENT = framing(FORMAT, "content")
_CALL = framing(FORMAT, "function_call")
_IMAGES = provider_facts(Provider.GEMINI).images


def tool_definition(named: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's function declaration, its JSON Schema as ``parametersJsonSchema``."""
    return {**named, "parametersJsonSchema": schema}


def build(blocks: Sequence[Piece], *, placed: bool = False) -> Body:
    """The body of ``blocks`` (Gemini caches prefixes by itself: no breakpoints)."""
    # the value is made again when asked for, from the blocks (not kept meanwhile)
    return Body(canonical_json(_built(blocks)), (), partial(_built, tuple(blocks)))


def _built(blocks: Sequence[Piece]) -> dict[str, Any]:
    system: list[dict[str, Any]] = []
    entries: list[tuple[str, dict[str, Any]]] = []
    # a result names its function as its call does (a result item has no tool_name)
    names = dict(call_of(b) for b in blocks if b.kind == "tool_call")
    for block in blocks:
        if block.kind == "tool_definition":
            continue
        if block.section == "stable":
            system.append({"text": block.text})
        elif block.kind == "tool_call":
            call_id, name = call_of(block)
            if block.header:
                entries.append(("model", {"text": block.header}))
            call = {"id": call_id, "name": name, "args": arguments(block)}
            entries.append(("model", {"functionCall": call}))
        elif block.kind == "tool_result":
            call_id, _ = call_of(block)
            answer = {"id": call_id, "name": names.get(call_id, ""),
                      "response": {"output": block.text}}  # fmt: skip
            entries.append(("user", {"functionResponse": answer}))
        elif block.text:  # a part may not be empty: an empty turn sends nothing
            entries.append(("model" if block.kind == "assistant_turn" else "user",
                            {"text": block.text}))  # fmt: skip
    contents: list[dict[str, Any]] = []
    for role, part in entries:
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].append(part)
        else:
            contents.append({"role": role, "parts": [part]})
    body: dict[str, Any] = {}
    if system:
        body["systemInstruction"] = {"parts": system}
    body["contents"] = contents
    declarations = tools_of(blocks, tool_definition)
    if declarations:
        body["tools"] = [{"functionDeclarations": declarations}]
    check(body)
    return body


def _calls(parts: Sequence[Mapping[str, Any]], key: str) -> list[str]:
    out = []
    for part in parts:
        value = part.get(key)
        if isinstance(value, Mapping):
            out.append(str(value.get("id") or value.get("name")))
    return out


def check(body: Mapping[str, Any], *, system_first: bool = True) -> None:
    """Contents are not empty, roles are ``user`` or ``model`` and alternate, a model
    turn with function calls comes right after a user turn, and the next content
    answers each of its calls (by id, else by name) with function responses first
    (``system_first``: the system instruction has its own field, always first)."""
    contents = body.get("contents") or []
    if not contents:
        raise rule("contents-non-empty", "there is no content: give evidence or a query")
    pending: list[str] = []
    for index, content in enumerate(contents):
        role = content.get("role")
        if role not in ("user", "model"):
            raise rule("content-role", f"contents[{index}] has role {role!r}, not user or model")
        if index and contents[index - 1].get("role") == role:
            raise rule("roles-alternate", f"two {role} contents in a row at contents[{index}]")
        parts = content.get("parts") or []
        if not parts or any(part.get("text") == "" for part in parts):
            raise rule("parts-non-empty", f"contents[{index}] has an empty part or no part")
        answers = _calls(parts, "functionResponse")
        if answers and (role != "user" or _calls(parts[: len(answers)], "functionResponse")
                        != answers):  # fmt: skip
            raise rule("tool-result-first", "function responses must open a user content")
        if role == "user" and sorted(answers) != sorted(pending):
            raise rule(
                "tool-result-after-call",
                f"contents[{index}] answers {answers}, the turn before called {pending}",
            )
        calls = _calls(parts, "functionCall")
        if calls and role == "model" and index == 0:
            raise rule(
                "function-call-turn",
                "a function call turn must come right after a user turn or function responses",
            )
        pending = calls if role == "model" else []
    if pending:
        raise rule("tool-call-answered", f"function calls {pending} are not answered")


# -- counting -------------------------------------------------------------------------


def image_tokens(size: tuple[int, int] | None) -> int:
    """An image's tokens: one tile's when both sides are small, else a tile's per tile;
    ``size`` None prices an image of the most tiles the data allows."""
    per_tile, small, tile = int(_IMAGES["tokens"]), _IMAGES["small_side"], _IMAGES["tile"]
    if size is None:
        return per_tile * int(_IMAGES["unknown_tiles"])
    width, height = size
    if width <= small and height <= small:
        return per_tile
    return per_tile * math.ceil(width / tile) * math.ceil(height / tile)


def _part(meter: Meter, part: Mapping[str, Any]) -> int:
    if "text" in part and isinstance(part["text"], str):
        return meter.text(part["text"])
    call = part.get("functionCall")
    if isinstance(call, Mapping):
        name = meter.text(str(call.get("name", "")))
        return _CALL + name + meter.text(json_text(call.get("args", {})))
    answer = part.get("functionResponse")
    if isinstance(answer, Mapping):
        name = meter.text(str(answer.get("name", "")))
        return _CALL + name + meter.text(json_text(answer.get("response", {})))
    inline = part.get("inlineData")
    if isinstance(inline, Mapping) and str(inline.get("mimeType", "")).startswith("image/"):
        return image_tokens(image_size(str(inline.get("data", ""))))
    if isinstance(part.get("fileData"), Mapping):
        return image_tokens(None)
    # a signature alone, code and its results, other parts: their JSON, an over-estimate
    return meter.text(json_text({k: v for k, v in part.items() if k != "thoughtSignature"}))


def content_tokens(meter: Meter, content: Mapping[str, Any]) -> int:
    parts = content.get("parts") or []
    return meter.scaled(_CONTENT + sum(_part(meter, p) for p in parts if isinstance(p, Mapping)))


def system_tokens(meter: Meter, system: Any) -> int:
    if not system:
        return 0
    if isinstance(system, str):
        return meter.scaled(meter.text(system))
    parts = system.get("parts", []) if isinstance(system, Mapping) else system
    return meter.scaled(sum(_part(meter, p) for p in parts if isinstance(p, Mapping)))


def tools_tokens(meter: Meter, tools: Iterable[Mapping[str, Any]]) -> int:
    return meter.scaled(sum(meter.text(json_text(tool)) for tool in tools))


def tokens(meter: Meter, body: Mapping[str, Any]) -> int:
    return (
        system_tokens(meter, body.get("systemInstruction"))
        + sum(content_tokens(meter, c) for c in body.get("contents", []))
        + tools_tokens(meter, body.get("tools", []))
    )


def overheads(meter: Meter, with_tools: bool) -> list[tuple[str, int]]:
    """The framing a body pays beside its parts: none."""
    return []
