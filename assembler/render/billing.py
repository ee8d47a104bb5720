"""Counting OpenAI Responses and Gemini bodies as the providers bill them.

Input: a ``Meter`` (``render.registry``: the model's profile and text counter) and a
body: ``{"input", "tools"?, "instructions"?}`` for the Responses API, ``{"contents",
"systemInstruction"?, "tools"?}`` for Gemini; or one of their items.
Output: tokens, calibration (``meter.factor``) included.

The framing figures are those of ``models/framing.json`` (each with its source):

* Responses: an input message as a Chat Completions message (3 plus its texts), a
  ``function_call`` 3 plus its name and arguments, a ``function_call_output`` 3 plus
  its output, any other item (``reasoning`` with its encrypted content, compaction,
  approvals, hosted tool calls) its JSON's count, an over-estimate; the tools as in
  Chat Completions; 3 priming the reply.
* Gemini: 4 per content, each text part's text, a ``functionCall`` 3 plus its name and
  arguments' JSON, a ``functionResponse`` 3 plus its name and response's JSON, an
  image 258 per 768-pixel tile (258 in all when both sides are at most 384), any
  other part its JSON's count; the system instruction's texts; the function
  declarations' JSON.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .images import image_size

if TYPE_CHECKING:
    from .registry import Meter

__all__ = [
    "GEMINI_IMAGE_TOKENS",
    "gemini_body",
    "gemini_content",
    "gemini_image_tokens",
    "gemini_system",
    "gemini_tools",
    "responses_body",
    "responses_item",
]

# a Gemini image's tokens per 768 x 768 tile (one in all when it fits 384 x 384)
GEMINI_IMAGE_TOKENS = 258
# an image of unknown size: priced as 3072 x 3072, 16 tiles
_GEMINI_UNKNOWN_TILES = 16


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def responses_item(meter: Meter, item: Mapping[str, Any]) -> int:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return meter.openai_message({k: v for k, v in item.items() if k in ("role", "content")}
                                    | {"content": _content_parts(item.get("content"))})  # fmt: skip
    if kind == "function_call":
        text = meter.text(str(item.get("name", ""))) + meter.text(str(item.get("arguments", "")))
        return meter._scaled(3 + text)
    if kind == "function_call_output":
        output = item.get("output", "")
        if isinstance(output, str):
            return meter._scaled(3 + meter.text(output))
        return meter._scaled(3) + meter.openai_message({"content": _content_parts(output)}) - 3
    return meter._scaled(meter.text(_json(item)))


def _content_parts(content: Any) -> Any:
    """Responses content parts as the Chat Completions parts the meter prices."""
    if not isinstance(content, list):
        return content
    parts: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("input_text", "output_text"):
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image":
            image = {"url": part.get("image_url") or "", "detail": part.get("detail", "auto")}
            parts.append({"type": "image_url", "image_url": image})
        else:
            parts.append(part)
    return parts


def responses_body(meter: Meter, body: Mapping[str, Any]) -> int:
    instructions = body.get("instructions")
    tokens = sum(responses_item(meter, item) for item in body.get("input", []))
    if isinstance(instructions, str) and instructions:
        tokens += meter.openai_message({"role": "developer", "content": instructions})
    return tokens + meter.openai_tools(body.get("tools", [])) + meter.openai_overhead()


def gemini_image_tokens(size: tuple[int, int] | None) -> int:
    if size is None:
        return GEMINI_IMAGE_TOKENS * _GEMINI_UNKNOWN_TILES
    width, height = size
    if width <= 384 and height <= 384:
        return GEMINI_IMAGE_TOKENS
    return GEMINI_IMAGE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


def _gemini_part(meter: Meter, part: Mapping[str, Any]) -> int:
    if "text" in part and isinstance(part["text"], str):
        return meter.text(part["text"])
    call = part.get("functionCall")
    if isinstance(call, Mapping):
        return 3 + meter.text(str(call.get("name", ""))) + meter.text(_json(call.get("args", {})))
    answer = part.get("functionResponse")
    if isinstance(answer, Mapping):
        name = meter.text(str(answer.get("name", "")))
        return 3 + name + meter.text(_json(answer.get("response", {})))
    inline = part.get("inlineData")
    if isinstance(inline, Mapping) and str(inline.get("mimeType", "")).startswith("image/"):
        return gemini_image_tokens(image_size(str(inline.get("data", ""))))
    if isinstance(part.get("fileData"), Mapping):
        return gemini_image_tokens(None)
    # a signature alone, code and its results, other parts: their JSON, an over-estimate
    return meter.text(_json({k: v for k, v in part.items() if k != "thoughtSignature"}))


def gemini_content(meter: Meter, content: Mapping[str, Any]) -> int:
    parts = content.get("parts") or []
    return meter._scaled(4 + sum(_gemini_part(meter, p) for p in parts if isinstance(p, Mapping)))


def gemini_system(meter: Meter, system: Any) -> int:
    if not system:
        return 0
    if isinstance(system, str):
        return meter._scaled(meter.text(system))
    parts = system.get("parts", []) if isinstance(system, Mapping) else system
    return meter._scaled(sum(_gemini_part(meter, p) for p in parts if isinstance(p, Mapping)))


def gemini_tools(meter: Meter, tools: Iterable[Mapping[str, Any]]) -> int:
    return meter._scaled(sum(meter.text(_json(tool)) for tool in tools))


def gemini_body(meter: Meter, body: Mapping[str, Any]) -> int:
    return (
        gemini_system(meter, body.get("systemInstruction"))
        + sum(gemini_content(meter, c) for c in body.get("contents", []))
        + gemini_tools(meter, body.get("tools", []))
    )
