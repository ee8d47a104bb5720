"""The neutral form a list crosses from one provider API's format to another's in.

Input: nothing. Output: what every room's ``convert`` module shares: ``Neutral`` (a
list of messages of role ``system``, ``user`` or ``assistant``, each a list of parts:
``text``, ``image`` (a URL or a data URL), ``call`` (id, name, arguments as an object)
and ``result`` (the id and name of the call it answers, its text)), and the helpers
reading and writing it: a call's arguments as an object, a content's text, a message
added (merged into the last of its role), a message's parts split by kind, an image's
source, a declared function, and the fault of a part with no equivalent.

``adapters/convert.py`` reads a list with its room's ``read`` and writes it with the
model's room's ``write`` (``fit(..., source=FORMAT)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..model.errors import InvalidRequest

__all__ = [
    "Neutral", "add", "arguments", "declared", "image_source", "no_equivalent", "split",
    "system_text", "text_of",
]  # fmt: skip

Neutral = list[dict[str, Any]]


def arguments(raw: Any, path: str) -> dict[str, Any]:
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise InvalidRequest(path, "a call's arguments must be a JSON object to be converted")
    return value


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def system_text(system: Any) -> str:
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    parts = system.get("parts", []) if isinstance(system, Mapping) else system
    return text_of(parts)


def add(out: Neutral, role: str, parts: list[dict[str, Any]]) -> None:
    """A message of ``role``, merged into the last one when that is the same role."""
    if not parts:
        return
    if out and out[-1]["role"] == role:
        out[-1]["parts"].extend(parts)
    else:
        out.append({"role": role, "parts": list(parts)})


def no_equivalent(at: str, what: str) -> InvalidRequest:
    return InvalidRequest(at, f"{what} has no equivalent in the model's format: not converted")


def split(message: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    parts = message["parts"]
    results = [p["result"] for p in parts if "result" in p]
    calls = [p["call"] for p in parts if "call" in p]
    others = [p for p in parts if "text" in p or "image" in p]
    return results, calls, others


def image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media, data = url.removeprefix("data:").split(";base64,", 1)
        return {"type": "base64", "media_type": media, "data": data}
    return {"type": "url", "url": url}


def declared(name: str, description: Any, schema: Any) -> dict[str, Any]:
    parameters = schema if isinstance(schema, Mapping) else {"type": "object"}
    return {"name": name, "description": description, "parameters": parameters}
