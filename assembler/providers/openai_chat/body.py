"""The Chat Completions body: built from a layout's blocks, checked, and counted as billed.

Input: the blocks of a layout (``Piece``), or a body (``{"messages", "tools"?}``) and a
``Meter``.
Output: ``body``: the ``Body`` (``{"messages": [...], "tools": [...]}``, ``tools`` only
when a tool definition is selected), checked by ``check``, or
``RenderError(RENDER_PROVIDER_RULE)`` naming the rule and the items; ``tokens``: a body's
tokens as billed; ``message_tokens``, ``tools_tokens``, ``reply_tokens``: its parts'.

The body: each tool definition in ``tools`` as a function with its JSON Schema
``parameters``; one ``system`` message with the rest of the stable section, one
``user`` message with the evidence, then one message per conversation item (a tool call
is an ``assistant`` message whose content is the item's header and whose ``tool_calls``
carries the content as ``arguments``; its result a ``tool`` message), the query as the
last ``user`` message. Its parts, read in the order ``tools``, system, messages (each
tool definition as its whole item block, message contents, a call's ``arguments``),
concatenate to the rendered text. One function makes each message (``_message``); the
body's canonical JSON is written from each message's, a conversation item's made once
per block (``Piece.pieces``), so that a session's next call writes only the new items'.

Counting, OpenAI's published recipe (the figures and their sources:
``assembler/facts/openai.json``): per message its framing plus the tokens of each of its
string values (role, content, name, tool_call_id), ``name`` one more; each tool call its
name and arguments plus its framing; the reply priming; text parts counted with the
model's encoding, images by the vision formula; the tool definitions as the encoding's
count of their JSON plus a figure per tool and one for them all (an upper bound on the
recipe's count of the same schema, which drops the JSON punctuation).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import Any

import orjson

from ...facts import ModelProfile, Provider, RenderFormat, framing, provider_facts
from ...stages.identities import canonical_json
from ..images import image_size
from ..interface import Body, Piece
from ..meter import Meter, json_text
from ..pieces import call_of, messages_of, rule, tool_entry

__all__ = [
    "FORMAT",
    "build",
    "check",
    "check_messages",
    "image_tokens",
    "message_tokens",
    "reply_tokens",
    "tokens",
    "tool_definition",
    "tools_tokens",
]

FORMAT = RenderFormat.OPENAI_CHAT
_MESSAGE = framing(FORMAT, "message")
_NAME = framing(FORMAT, "name")
_REPLY = framing(FORMAT, "reply")
_TOOL_CALL = framing(FORMAT, "tool_call")
_TOOL = framing(FORMAT, "tool")
_TOOLS = framing(FORMAT, "tools")
_IMAGES = provider_facts(Provider.OPENAI).images


def tool_definition(named: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``tools`` entry: a function with its JSON Schema as ``parameters``."""
    return {"type": "function", "function": {**named, "parameters": schema}}


def _message(block: tuple[str, str] | Piece) -> dict[str, Any]:
    """The message of a run of system or evidence blocks, or of a conversation item;
    its keys in canonical (sorted) order, so that its JSON is written without sorting."""
    if isinstance(block, tuple):
        return {"content": block[1], "role": block[0]}
    if block.kind == "tool_call":
        call_id, name = call_of(block)
        call = {"function": {"arguments": block.content, "name": name}, "id": call_id,
                "type": "function"}  # fmt: skip
        return {"content": block.header or None, "role": "assistant", "tool_calls": [call]}
    if block.kind == "tool_result":
        call_id, _ = call_of(block)
        return {"content": block.text, "role": "tool", "tool_call_id": call_id}
    role = "assistant" if block.kind == "assistant_turn" else "user"
    return {"content": block.text, "role": role}


def _made(block: tuple[str, str] | Piece) -> tuple[bytes, dict[str, Any]]:
    """A message's canonical JSON and the message; a conversation item's made once."""
    if isinstance(block, tuple):
        message = _message(block)
        return orjson.dumps(message), message
    made: tuple[bytes, dict[str, Any]] | None = block.pieces.get(FORMAT)
    if made is None:
        message = _message(block)
        made = block.pieces[FORMAT] = (orjson.dumps(message), message)
    return made


def _tool(block: Piece) -> bytes:
    """A tool definition's ``tools`` entry as canonical JSON, made once per block."""
    made: bytes | None = block.pieces.get(FORMAT)
    if made is None:
        made = block.pieces[FORMAT] = canonical_json(tool_entry(block, tool_definition)).encode()
    return made


def build(blocks: Sequence[Piece], *, placed: bool = False) -> Body:
    """The body of ``blocks`` (Chat Completions caches by itself: no breakpoints)."""
    tools = [_tool(b) for b in blocks if b.kind == "tool_definition"]
    made = [_made(block) for block in messages_of(blocks)]
    check_messages([message for _, message in made])
    listed = b",".join(text for text, _ in made)
    ending = b'],"tools":[' + b",".join(tools) + b"]}" if tools else b"]}"
    text = (b'{"messages":[' + listed + ending).decode("utf-8")
    return Body(text, (), partial(_value, tuple(blocks)))


def _value(blocks: tuple[Piece, ...]) -> dict[str, Any]:
    """The body as plain values, made anew from the blocks (what ``body``'s JSON says)."""
    messages = [_message(block) for block in messages_of(blocks)]
    tools = [tool_entry(b, tool_definition) for b in blocks if b.kind == "tool_definition"]
    return {"messages": messages, "tools": tools} if tools else {"messages": messages}


def check(body: Mapping[str, Any], *, system_first: bool = True) -> None:
    check_messages(body["messages"], system_first=system_first)


def check_messages(messages: Sequence[Mapping[str, Any]], *, system_first: bool = True) -> None:
    """System material first (``system_first``: the rendering's layout rule; the API
    takes system messages anywhere), no leading tool message, every tool message
    directly after the assistant message that made its call, every call answered."""
    seen_other = False
    open_calls: list[str] = []
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "system" and seen_other and system_first:
            raise rule("system-first", f"a system message at position {index} follows others")
        if role != "system" and not seen_other:
            seen_other = True
            if role == "tool":
                raise rule("no-leading-tool", "the first message after the system is a tool one")
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                raise rule(
                    "tool-result-after-call",
                    f"tool message {message['tool_call_id']!r} does not answer the call before it",
                )
            open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            raise rule("tool-call-answered", f"tool calls {open_calls} are not answered")
        open_calls = [call["id"] for call in message.get("tool_calls", [])]
    if open_calls:
        raise rule("tool-call-answered", f"tool calls {open_calls} are not answered")


# -- counting -------------------------------------------------------------------------


def message_tokens(meter: Meter, message: Mapping[str, Any]) -> int:
    """A message's tokens: its framing, its string values (``name`` one more), its
    parts and its tool calls."""
    tokens = _MESSAGE
    for key, value in message.items():
        if isinstance(value, str):
            tokens += meter.text(value) + (_NAME if key == "name" else 0)
        elif key == "content" and isinstance(value, list):
            tokens += sum(_part(meter, part) for part in value)
        elif key == "tool_calls" and isinstance(value, list):
            for call in value:
                function = call.get("function", {})
                tokens += _TOOL_CALL + meter.text(str(function.get("name", "")))
                tokens += meter.text(str(function.get("arguments", "")))
    return meter.scaled(tokens)


def _part(meter: Meter, part: Mapping[str, Any]) -> int:
    kind = part.get("type")
    if kind == "text" or kind == "refusal":
        return meter.text(str(part.get(kind, "")))
    if kind == "image_url":
        image = part.get("image_url", {})
        url = str(image.get("url", ""))
        size = image_size(url) if url.startswith("data:") else None
        return image_tokens(meter.profile, size, str(image.get("detail", "auto")))
    # audio, files and parts not priced here: their JSON, an over-estimate
    return meter.text(json_text(part))


def tools_tokens(meter: Meter, tools: Iterable[Mapping[str, Any]]) -> int:
    """The tool definitions' tokens: each one's JSON and framing, and the framing of all."""
    tools = list(tools)
    if not tools:
        return 0
    return meter.scaled(sum(_TOOL + meter.text(json_text(t.get("function", t))) for t in tools)
                        + _TOOLS)  # fmt: skip


def tool_tokens(meter: Meter, tool: Mapping[str, Any]) -> int:
    """One tool definition's own tokens (the framing of them all is an overhead)."""
    return tools_tokens(meter, [tool]) - _TOOLS


def reply_tokens() -> int:
    """Tokens every body pays beside its messages and tools: the reply priming."""
    return _REPLY


def tokens(meter: Meter, body: Mapping[str, Any]) -> int:
    """The whole body: ``{"messages", "tools"?}``."""
    messages = body.get("messages", [])
    return (
        sum(message_tokens(meter, m) for m in messages)
        + tools_tokens(meter, body.get("tools", []))
        + reply_tokens()
    )


def overheads(meter: Meter, with_tools: bool) -> list[tuple[str, int]]:
    """The framing a body pays beside its parts, named."""
    out = [("the reply priming", reply_tokens())]
    return [*out, ("the tool definitions' framing", _TOOLS)] if with_tools else out


def image_tokens(profile: ModelProfile, size: tuple[int, int] | None, detail: str) -> int:
    """An image's input tokens on ``profile`` (tiles, or patches for a patch model);
    ``size`` None prices the largest image."""
    fit, shortest, tile = _IMAGES["fit"], _IMAGES["shortest_side"], _IMAGES["tile"]
    patch, most = int(_IMAGES["patch"]), int(_IMAGES["most_patches"])
    multiplier = profile.image_patches
    if multiplier is not None:
        if size is None:
            patches = most
        else:
            width, height = size
            patches = math.ceil(width / patch) * math.ceil(height / patch)
            if patches > most:
                shrink = math.sqrt(patch * patch * most / (width * height))
                width_p = width * shrink / patch
                height_p = height * shrink / patch
                # shrink again so whole patches fit, as the published procedure does
                shrink *= min(math.floor(width_p) / width_p, math.floor(height_p) / height_p)
                patches = min(
                    most, math.ceil(width * shrink / patch) * math.ceil(height * shrink / patch)
                )
        return math.ceil(patches * multiplier)
    base, per_tile = profile.image_base, profile.image_tile
    if detail == "low":
        return base
    if size is None:
        # the most tiles an image can have after scaling
        return base + per_tile * int(_IMAGES["most_tiles"])
    w, h = float(size[0]), float(size[1])
    if max(w, h) > fit:
        scale = fit / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > shortest:
        scale = shortest / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / tile) * math.ceil(h / tile)
    return base + per_tile * tiles
