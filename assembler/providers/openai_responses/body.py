"""The OpenAI Responses body: built from a layout's blocks, checked, counted as billed.

Input: the blocks of a layout (``Piece``), or a body (``{"input", "tools"?,
"instructions"?}``) or one of its items and a ``Meter``.
Output: ``body``: the ``Body`` (``{"input": [...], "tools": [...]}``, ``tools`` only
when a tool definition is selected, each ``{type: "function", name, description?,
parameters}``), checked by ``check``, or ``RenderError(RENDER_PROVIDER_RULE)``;
``tokens``: a body's tokens as billed (``item_tokens``: one item's).

``input`` holds, in block order: a ``system`` message with each run of the stable
section and a ``user`` message with each run of evidence (``{type: "message", role,
content}``), one message per conversation turn, a tool call as a ``function_call``
item (``call_id``, ``name``, ``arguments`` = the content; an assistant message with the
item's header before it when headers frame items), its result as the
``function_call_output`` item that follows (``output`` = the result's block), and the
query as the last ``user`` message. The body's texts, read in the order ``tools``
(each definition as its item block), then ``input`` (message contents, a call's
arguments, an output), concatenate to the rendered text.

Counting (figures and sources: ``assembler/facts/openai.json``): an input message as a
Chat Completions message, a ``function_call`` its framing plus its name and arguments,
a ``function_call_output`` its framing plus its output, any other item (``reasoning``
with its encrypted content, compaction, approvals, hosted tool calls) its JSON's count,
an over-estimate; the tools and the reply priming as in Chat Completions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from ...facts import RenderFormat, framing
from ...stages.identities import canonical_json
from ..interface import Body, Piece
from ..meter import Meter, json_text
from ..openai_chat.body import message_tokens, overheads, reply_tokens, tools_tokens
from ..pieces import arguments, call_of, messages_of, rule, tools_of

__all__ = [
    "FORMAT",
    "build",
    "check",
    "check_items",
    "item_tokens",
    "overheads",
    "tokens",
    "tool_definition",
]

FORMAT = RenderFormat.OPENAI_RESPONSES
_CALL = framing(FORMAT, "function_call")
_OUTPUT = framing(FORMAT, "function_call_output")
_CHAT_MESSAGE = framing(RenderFormat.OPENAI_CHAT, "message")


def _message(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": text}


def tool_definition(named: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's ``tools`` entry: a function with its JSON Schema as ``parameters``."""
    return {"type": "function", **named, "parameters": schema}


def build(blocks: Sequence[Piece], *, placed: bool = False) -> Body:
    """The body of ``blocks`` (the Responses API caches by itself: no breakpoints)."""
    # the value is made again when asked for, from the blocks (not kept meanwhile)
    return Body(canonical_json(_built(blocks)), (), partial(_built, tuple(blocks)))


def _built(blocks: Sequence[Piece]) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for block in messages_of(blocks):
        if isinstance(block, tuple):
            items.append(_message(*block))
        elif block.kind == "tool_call":
            call_id, name = call_of(block)
            arguments(block)
            if block.header:
                items.append(_message("assistant", block.header))
            items.append(
                {"type": "function_call", "call_id": call_id, "name": name,
                 "arguments": block.content}
            )  # fmt: skip
        elif block.kind == "tool_result":
            call_id, _ = call_of(block)
            items.append({"type": "function_call_output", "call_id": call_id, "output": block.text})
        else:
            role = "assistant" if block.kind == "assistant_turn" else "user"
            items.append(_message(role, block.text))
    check_items(items)
    tools = tools_of(blocks, tool_definition)
    return {"input": items, "tools": tools} if tools else {"input": items}


def _kind(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    return "message" if kind is None and "role" in item else str(kind)


def _produced(item: Mapping[str, Any]) -> bool:
    """An item the model produces in a turn (what a reasoning item may precede)."""
    kind = _kind(item)
    if kind == "message":
        return item.get("role") == "assistant"
    return kind.endswith("_call") or kind in ("reasoning", "mcp_list_tools", "mcp_approval_request")


def check(body: Mapping[str, Any], *, system_first: bool = True) -> None:
    check_items(body["input"], system_first=system_first)


def check_items(items: Sequence[Mapping[str, Any]], *, system_first: bool = True) -> None:
    """System messages first; every ``function_call_output`` after the
    ``function_call`` it answers, and every call answered before the next input
    message;
    a ``reasoning`` item followed by the item it produced (a message or a call).
    ``system_first`` is the rendering's layout rule: a caller's list may hold system
    and developer messages anywhere, as the API allows."""
    if not items:
        raise rule("input-non-empty", "there is no input item: give evidence or a query")
    seen_other = False
    open_calls: list[str] = []
    for index, item in enumerate(items):
        kind = _kind(item)
        role = item.get("role")
        if kind == "message" and role in ("system", "developer"):
            if seen_other and system_first:
                raise rule("system-first", f"a {role} message at input[{index}] follows others")
            continue
        if kind == "function_call_output":
            if not seen_other:
                raise rule("no-leading-tool", "the first input item after the system is an output")
            if item.get("call_id") not in open_calls:
                raise rule(
                    "tool-result-after-call",
                    f"input[{index}] answers {item.get('call_id')!r}, which no earlier"
                    " function_call made",
                )
            open_calls.remove(str(item.get("call_id")))
            continue
        seen_other = True
        if kind == "function_call":
            open_calls.append(str(item.get("call_id")))
            continue
        if kind == "reasoning":
            following = items[index + 1] if index + 1 < len(items) else None
            if following is None or not _produced(following):
                raise rule(
                    "reasoning-followed",
                    f"reasoning input[{index}] is not followed by the item it produced",
                )
            continue
        if open_calls and kind == "message" and role != "assistant":
            raise rule("tool-call-answered", f"function calls {open_calls} are not answered")
    if open_calls:
        raise rule("tool-call-answered", f"function calls {open_calls} are not answered")


# -- counting -------------------------------------------------------------------------


def item_tokens(meter: Meter, item: Mapping[str, Any]) -> int:
    """An input item's tokens: a message as a chat message, a call or an output its
    framing and its texts, any other item its JSON."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        return message_tokens(meter, {k: v for k, v in item.items() if k in ("role", "content")}
                                    | {"content": _content_parts(item.get("content"))})  # fmt: skip
    if kind == "function_call":
        text = meter.text(str(item.get("name", ""))) + meter.text(str(item.get("arguments", "")))
        return meter.scaled(_CALL + text)
    if kind == "function_call_output":
        output = item.get("output", "")
        if isinstance(output, str):
            return meter.scaled(_OUTPUT + meter.text(output))
        # its parts as a chat message's, less that message's framing
        parts = message_tokens(meter, {"content": _content_parts(output)}) - _CHAT_MESSAGE
        return meter.scaled(_OUTPUT) + parts
    return meter.scaled(meter.text(json_text(item)))


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


def tokens(meter: Meter, body: Mapping[str, Any]) -> int:
    """The whole body: its items, its instructions as a developer message, its tools
    and the reply priming, as in the chat format."""
    instructions = body.get("instructions")
    count = sum(item_tokens(meter, item) for item in body.get("input", []))
    if isinstance(instructions, str) and instructions:
        count += message_tokens(meter, {"role": "developer", "content": instructions})
    return count + tools_tokens(meter, body.get("tools", [])) + reply_tokens()
