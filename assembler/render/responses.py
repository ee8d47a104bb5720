"""The ``openai-responses`` format: a layout's blocks as an OpenAI Responses body.

Input: the ``Block`` tuple of a layout.
Output: ``{"input": [...], "tools": [...]}`` (``tools`` only when a tool definition is
selected, each ``{type: "function", name, description?, parameters}``), checked by
``check_responses``; or ``RenderError(RENDER_PROVIDER_RULE)``.

``input`` holds, in block order: a ``system`` message with each run of the stable
section and a ``user`` message with each run of evidence (``{type: "message", role,
content}``), one message per conversation turn, a tool call as a ``function_call``
item (``call_id``, ``name``, ``arguments`` = the content; an assistant message with the
item's header before it when headers frame items), its result as the
``function_call_output`` item that follows (``output`` = the result's block), and the
query as the last ``user`` message. The body's texts, read in the order ``tools``
(each definition as its item block), then ``input`` (message contents, a call's
arguments, an output), concatenate to the rendered text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .layout import Block
from .parts import arguments, call_of, messages_of, rule, tools_of

__all__ = ["build", "check_responses"]


def _message(role: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": text}


def build(blocks: tuple[Block, ...]) -> dict[str, Any]:
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
    check_responses(items)
    tools = tools_of(blocks, "responses")
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


def check_responses(items: Sequence[Mapping[str, Any]], *, system_first: bool = True) -> None:
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
