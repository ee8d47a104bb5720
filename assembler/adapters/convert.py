"""A list in one provider API's format converted to another's, when the caller asks
(``fit(..., source=FORMAT)``).

Input: the list as given in ``source``'s format (validated by its room), its system
prompt and tools; the format of the model's API.
Output: the same conversation as that format's list, system prompt and tools.

Through one neutral form: messages of role ``system``, ``user`` or ``assistant``, each
a list of parts: ``text``, ``image`` (a URL or a data URL), ``call`` (id, name,
arguments as an object) and ``result`` (the id and name of the call it answers, its
text). What is bound to the provider that produced it cannot travel and is left out:
thinking and redacted-thinking blocks, reasoning items, thought parts and thought
signatures (the next model reasons anew). A part with no equivalent (a hosted tool's
call, a document, audio) is one ``InvalidRequest`` naming it. Gemini calls without ids
get ids by position (``call_<content>_<n>``), as Gemini pairs them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest
from ..providers.interface import Api

__all__ = ["converted"]

Neutral = list[dict[str, Any]]


def converted(
    source: Api, target: Api, listed: Sequence[Any], system: Any, tools: Sequence[Any], where: str
) -> tuple[list[Any], Any, list[Any]]:
    """``listed`` (with ``system`` and ``tools``) of ``source``'s format as ``target``'s."""
    messages, instructions = _READ[source.NAME](listed, system, where)
    neutral_tools = [_tool_of(source.NAME, tool, n) for n, tool in enumerate(tools)]
    out, prompt = _WRITE[target.NAME](messages, instructions)
    return out, prompt, _tools_as(target.NAME, neutral_tools)


# -- reading ------------------------------------------------------------------------------


def _arguments(raw: Any, path: str) -> dict[str, Any]:
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            value = None
    if not isinstance(value, dict):
        raise InvalidRequest(path, "a call's arguments must be a JSON object to be converted")
    return value


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p
        )
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _system_text(system: Any) -> str:
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    parts = system.get("parts", []) if isinstance(system, Mapping) else system
    return _text_of(parts)


def _read_chat(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    names: dict[str, str] = {}
    out: Neutral = []
    prompts = [_system_text(system)] if system else []
    for index, message in enumerate(listed):
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            prompts.append(_text_of(content))
            continue
        if role == "tool":
            call = str(message["tool_call_id"])
            part = {"result": {"id": call, "name": names.get(call, ""), "text": _text_of(content)}}
            _add(out, "user", [part])
            continue
        parts: list[dict[str, Any]] = []
        for number, piece in enumerate(content if isinstance(content, list) else []):
            at = f"{where}[{index}].content[{number}]"
            if piece.get("type") in ("text", "input_text", "output_text"):
                parts.append({"text": piece["text"]})
            elif piece.get("type") == "image_url":
                parts.append({"image": piece["image_url"]["url"]})
            elif piece.get("type") != "refusal":
                raise _no_equivalent(at, f"a {piece.get('type')} part")
        if isinstance(content, str) and content:
            parts.append({"text": content})
        for number, call in enumerate(message.get("tool_calls") or []):
            at = f"{where}[{index}].tool_calls[{number}]"
            names[str(call["id"])] = call["function"]["name"]
            arguments = _arguments(call["function"]["arguments"], at + ".function.arguments")
            parts.append({"call": {"id": str(call["id"]), "name": call["function"]["name"],
                                   "args": arguments}})  # fmt: skip
        _add(out, "assistant" if role == "assistant" else "user", parts)
    return out, "\n\n".join(p for p in prompts if p)


def _read_responses(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    names: dict[str, str] = {}
    out: Neutral = []
    prompts = [_system_text(system)] if system else []
    for index, item in enumerate(listed):
        kind = item.get("type", "message")
        at = f"{where}[{index}]"
        if kind == "reasoning":
            continue  # bound to the model that produced it
        if kind == "function_call":
            names[str(item["call_id"])] = item["name"]
            call = {"id": str(item["call_id"]), "name": item["name"],
                    "args": _arguments(item["arguments"], at + ".arguments")}  # fmt: skip
            _add(out, "assistant", [{"call": call}])
        elif kind == "function_call_output":
            call_id = str(item["call_id"])
            result = {
                "id": call_id,
                "name": names.get(call_id, ""),
                "text": _text_of(item["output"]),
            }
            _add(out, "user", [{"result": result}])
        elif kind == "message":
            role = item["role"]
            if role in ("system", "developer"):
                prompts.append(_text_of(item.get("content")))
                continue
            content = item.get("content")
            parts: list[dict[str, Any]] = []
            if isinstance(content, str):
                parts.append({"text": content})
            for number, piece in enumerate(content if isinstance(content, list) else []):
                if piece.get("type") in ("input_text", "output_text", "text"):
                    parts.append({"text": piece["text"]})
                elif piece.get("type") == "input_image" and piece.get("image_url"):
                    parts.append({"image": piece["image_url"]})
                elif piece.get("type") != "refusal":
                    raise _no_equivalent(f"{at}.content[{number}]", f"a {piece.get('type')} part")
            _add(out, "assistant" if role == "assistant" else "user", parts)
        else:
            raise _no_equivalent(at, f"an item of type {kind}")
    return out, "\n\n".join(p for p in prompts if p)


def _read_anthropic(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    names: dict[str, str] = {}
    out: Neutral = []
    for index, message in enumerate(listed):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts: list[dict[str, Any]] = []
        for number, block in enumerate(blocks):
            kind, at = block.get("type"), f"{where}[{index}].content[{number}]"
            if kind == "text":
                parts.append({"text": block["text"]})
            elif kind in ("thinking", "redacted_thinking"):
                continue  # signed for the model that thought it
            elif kind == "tool_use":
                names[str(block["id"])] = block["name"]
                parts.append({"call": {"id": str(block["id"]), "name": block["name"],
                                       "args": dict(block["input"])}})  # fmt: skip
            elif kind == "tool_result":
                call = str(block["tool_use_id"])
                text = _text_of(block.get("content", ""))
                parts.append({"result": {"id": call, "name": names.get(call, ""), "text": text}})
            elif kind == "image" and isinstance(block.get("source"), Mapping):
                parts.append({"image": _image_url(block["source"], at)})
            else:
                raise _no_equivalent(at, f"a {kind} block")
        _add(out, message["role"], parts)
    return out, _system_text(system)


def _image_url(source: Mapping[str, Any], at: str) -> str:
    if source.get("type") == "url":
        return str(source["url"])
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    raise _no_equivalent(at, f"an image of source type {source.get('type')}")


def _read_gemini(listed: Sequence[Any], system: Any, where: str) -> tuple[Neutral, str]:
    out: Neutral = []
    pending: dict[str, list[str]] = {}  # function name -> the ids of its open calls, in order
    for index, content in enumerate(listed):
        parts: list[dict[str, Any]] = []
        called = 0
        for number, part in enumerate(content["parts"]):
            at = f"{where}[{index}].parts[{number}]"
            if part.get("thought"):
                continue  # a thought summary, bound to the model that thought it
            if isinstance(part.get("text"), str):
                parts.append({"text": part["text"]})
            elif "functionCall" in part:
                call = part["functionCall"]
                called += 1
                call_id = str(call.get("id") or f"call_{index}_{called}")
                pending.setdefault(call["name"], []).append(call_id)
                parts.append({"call": {"id": call_id, "name": call["name"],
                                       "args": dict(call.get("args", {}))}})  # fmt: skip
            elif "functionResponse" in part:
                answer = part["functionResponse"]
                open_ids = pending.get(answer["name"], [])
                call_id = str(answer.get("id") or (open_ids[0] if open_ids else answer["name"]))
                if call_id in open_ids:
                    open_ids.remove(call_id)
                response = answer.get("response", {})
                text = (str(response.get("output", "")) if set(response) <= {"output"}
                        else json.dumps(response, ensure_ascii=False, sort_keys=True))  # fmt: skip
                parts.append({"result": {"id": call_id, "name": answer["name"], "text": text}})
            elif isinstance(part.get("inlineData"), Mapping):
                data = part["inlineData"]
                parts.append({"image": f"data:{data.get('mimeType')};base64,{data.get('data')}"})
            elif isinstance(part.get("fileData"), Mapping):
                parts.append({"image": str(part["fileData"].get("fileUri"))})
            else:
                raise _no_equivalent(at, "a part with " + ", ".join(sorted(part)))
        _add(out, "assistant" if content["role"] == "model" else "user", parts)
    return out, _system_text(system)


def _add(out: Neutral, role: str, parts: list[dict[str, Any]]) -> None:
    """A message of ``role``, merged into the last one when that is the same role."""
    if not parts:
        return
    if out and out[-1]["role"] == role:
        out[-1]["parts"].extend(parts)
    else:
        out.append({"role": role, "parts": list(parts)})


def _no_equivalent(at: str, what: str) -> InvalidRequest:
    return InvalidRequest(at, f"{what} has no equivalent in the model's format: not converted")


_READ: dict[str, Callable[[Sequence[Any], Any, str], tuple[Neutral, str]]] = {
    "openai-chat": _read_chat, "openai-responses": _read_responses,
    "anthropic-messages": _read_anthropic, "gemini": _read_gemini,
}  # fmt: skip


# -- writing ------------------------------------------------------------------------------


def _split(message: dict[str, Any]) -> tuple[list[Any], list[Any], list[Any]]:
    parts = message["parts"]
    results = [p["result"] for p in parts if "result" in p]
    calls = [p["call"] for p in parts if "call" in p]
    others = [p for p in parts if "text" in p or "image" in p]
    return results, calls, others


def _write_chat(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[Any] = []
    for message in messages:
        results, calls, others = _split(message)
        out.extend({"role": "tool", "tool_call_id": r["id"], "content": r["text"]} for r in results)
        if message["role"] == "assistant":
            text = "\n".join(p["text"] for p in others if "text" in p)
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in calls
                ]  # fmt: skip
            out.append(entry)
        elif others:
            out.append({"role": "user", "content": _chat_content(others)})
    return out, system or None


def _chat_content(parts: list[Any]) -> Any:
    if all("text" in p for p in parts):
        return "\n".join(p["text"] for p in parts)
    return [
        {"type": "text", "text": p["text"]} if "text" in p
        else {"type": "image_url", "image_url": {"url": p["image"]}}
        for p in parts
    ]  # fmt: skip


def _write_responses(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[Any] = []
    for message in messages:
        results, calls, others = _split(message)
        out.extend({"type": "function_call_output", "call_id": r["id"], "output": r["text"]}
                   for r in results)  # fmt: skip
        if message["role"] == "assistant":
            text = "\n".join(p["text"] for p in others if "text" in p)
            if text:
                out.append({"role": "assistant", "content": text})
            out.extend({"type": "function_call", "call_id": c["id"], "name": c["name"],
                        "arguments": json.dumps(c["args"])} for c in calls)  # fmt: skip
        elif others:
            content = (
                "\n".join(p["text"] for p in others) if all("text" in p for p in others)
                else [{"type": "input_text", "text": p["text"]} if "text" in p
                      else {"type": "input_image", "image_url": p["image"]} for p in others]
            )  # fmt: skip
            out.append({"role": "user", "content": content})
    return out, system or None


def _write_anthropic(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[dict[str, Any]] = []
    for message in messages:
        results, calls, others = _split(message)
        blocks: list[Any] = [
            {"type": "tool_result", "tool_use_id": r["id"], "content": r["text"]} for r in results
        ]
        for part in others:
            if "text" in part:
                if part["text"]:
                    blocks.append({"type": "text", "text": part["text"]})
            else:
                blocks.append({"type": "image", "source": _image_source(part["image"])})
        blocks.extend({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
                      for c in calls)  # fmt: skip
        if not blocks:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message["role"], "content": blocks})
    return out, system or None


def _image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "base64", "media_type": media, "data": data}
    return {"type": "url", "url": url}


def _write_gemini(messages: Neutral, system: str) -> tuple[list[Any], Any]:
    out: list[dict[str, Any]] = []
    for message in messages:
        results, calls, others = _split(message)
        parts: list[Any] = [
            {
                "functionResponse": {
                    "id": r["id"],
                    "name": r["name"],
                    "response": {"output": r["text"]},
                }
            }
            for r in results
        ]
        for part in others:
            if "text" in part:
                if part["text"]:
                    parts.append({"text": part["text"]})
            elif part["image"].startswith("data:") and ";base64," in part["image"]:
                media, data = part["image"][5:].split(";base64,", 1)
                parts.append({"inlineData": {"mimeType": media, "data": data}})
            else:
                parts.append({"fileData": {"fileUri": part["image"]}})
        parts.extend({"functionCall": {"id": c["id"], "name": c["name"], "args": c["args"]}}
                     for c in calls)  # fmt: skip
        if not parts:
            continue
        role = "model" if message["role"] == "assistant" else "user"
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})
    return out, system or None


_WRITE: dict[str, Callable[[Neutral, str], tuple[list[Any], Any]]] = {
    "openai-chat": _write_chat, "openai-responses": _write_responses,
    "anthropic-messages": _write_anthropic, "gemini": _write_gemini,
}  # fmt: skip


# -- tools --------------------------------------------------------------------------------


def _tool_of(fmt: str, tool: Mapping[str, Any], number: int) -> dict[str, Any]:
    """A function tool's name, description and JSON Schema (a list of Gemini
    declarations: each of them)."""
    at = f"tools[{number}]"
    if fmt == "openai-chat" and isinstance(tool.get("function"), Mapping):
        f = tool["function"]
        return _declared(f["name"], f.get("description"), f.get("parameters"))
    if fmt == "openai-responses" and tool.get("type") == "function":
        return _declared(tool["name"], tool.get("description"), tool.get("parameters"))
    if fmt == "anthropic-messages" and "input_schema" in tool:
        return _declared(tool["name"], tool.get("description"), tool["input_schema"])
    if fmt == "gemini":
        declared = tool.get("functionDeclarations", tool.get("function_declarations"))
        if isinstance(declared, list) and set(tool) <= {
            "functionDeclarations",
            "function_declarations",
        }:
            return {"many": [_declared(d["name"], d.get("description"),
                                       d.get("parameters", d.get("parametersJsonSchema")))
                             for d in declared]}  # fmt: skip
    raise _no_equivalent(at, "a built-in or hosted tool")


def _declared(name: str, description: Any, schema: Any) -> dict[str, Any]:
    parameters = schema if isinstance(schema, Mapping) else {"type": "object"}
    return {"name": name, "description": description, "parameters": parameters}


def _tools_as(fmt: str, tools: list[dict[str, Any]]) -> list[Any]:
    flat = [d for t in tools for d in t.get("many", [t])]
    described = [{k: v for k, v in d.items() if v is not None} for d in flat]
    if fmt == "openai-chat":
        return [{"type": "function", "function": d} for d in described]
    if fmt == "openai-responses":
        return [{"type": "function", **d} for d in described]
    if fmt == "anthropic-messages":
        return [
            {**{k: v for k, v in d.items() if k != "parameters"}, "input_schema": d["parameters"]}
            for d in described
        ]
    return [{"functionDeclarations": described}] if described else []
