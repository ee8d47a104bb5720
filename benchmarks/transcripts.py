"""Seeded agent transcripts in the shapes of real traffic, for the adapter tests and rows.

Input: a seed and a number of rounds. Output: an OpenAI Chat Completions transcript
(``openai_transcript``: system, a task, rounds of assistant tool calls (1-3 in
parallel) and tool results from a few words to thousands, follow-ups with images,
a last question) with its ``tools``; an OpenAI Responses body (``responses_body``: the
same rounds as ``reasoning`` items with encrypted content before ``function_call``
items, their outputs, ``input_image`` parts); a Gemini body (``gemini_body``: model
turns with thought parts and signed ``functionCall`` parts, ``functionResponse`` parts
opening user turns, inline images); or an Anthropic Messages body
(``anthropic_body``: the same rounds with signed thinking blocks before each call,
``tool_result`` blocks opening user turns (some holding an image), base64 images);
and small real PNG images (``png``). Nothing is random beyond the seed.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from typing import Any

__all__ = [
    "TOOLS",
    "anthropic_body",
    "anthropic_tools",
    "gemini_body",
    "openai_transcript",
    "png",
    "responses_body",
]

TOOLS = [
    ("search_orders", "Search orders by customer or number", {"query": "string"}),
    (
        "read_log",
        "Read the service log for a time window",
        {"service": "string", "minutes": "integer"},
    ),
    ("fetch_doc", "Fetch a policy document by id", {"doc_id": "string"}),
]
_WORDS = [
    "order",
    "refund",
    "shipment",
    "delayed",
    "customer",
    "ticket",
    "invoice",
    "warehouse",
    "carrier",
    "tracking",
    "status",
    "pending",
    "approved",
    "error",
    "timeout",
    "retry",
    "queue",
    "latency",
    "p99",
    "window",
    "policy",
    "tier",
]


def png(width: int, height: int) -> bytes:
    """A real, valid PNG of ``width`` x ``height`` grey pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _schema(params: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": t, "description": f"the {k}"} for k, t in params.items()},
        "required": list(params),
    }


def openai_tools() -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": n, "description": d, "parameters": _schema(p)}}
        for n, d, p in TOOLS
    ]


def anthropic_tools() -> list[dict[str, Any]]:
    return [{"name": n, "description": d, "input_schema": _schema(p)} for n, d, p in TOOLS]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _result(rng: random.Random) -> str:
    size = rng.choice((8, 30, 120, 600, 2500))
    rows = [{"id": rng.randrange(10**6), "note": _text(rng, 6)} for _ in range(max(1, size // 8))]
    return (
        json.dumps(rows)
        if rng.random() < 0.5
        else "\n".join(f"{r['id']} {r['note']}" for r in rows)
    )


def _image(rng: random.Random) -> bytes:
    return png(rng.choice((64, 300, 900)), rng.choice((48, 400, 700)))


def openai_transcript(
    seed: int, rounds: int = 12
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support operations agent. " + _text(rng, 40)},
        {"role": "user", "content": "Task: " + _text(rng, 30)},
    ]
    for turn in range(rounds):
        calls = [
            {
                "id": f"call_{seed}_{turn}_{k}",
                "type": "function",
                "function": {
                    "name": rng.choice(TOOLS)[0],
                    "arguments": json.dumps({"query": _text(rng, 3)}),
                },
            }
            for k in range(rng.choice((1, 1, 1, 2, 3)))
        ]
        assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
        if rng.random() < 0.4:
            assistant["content"] = _text(rng, 20)
        messages.append(assistant)
        messages += [
            {"role": "tool", "tool_call_id": c["id"], "content": _result(rng)} for c in calls
        ]
        if rng.random() < 0.2:
            data = base64.b64encode(_image(rng)).decode()
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "Here is a screenshot: " + _text(rng, 10)},
                        {
                            "type": "image_url",
                            "image_url": {
                                "url": f"data:image/png;base64,{data}",
                                "detail": rng.choice(("low", "high", "auto")),
                            },
                        },
                    ],
                }
            )
            messages.append({"role": "assistant", "content": _text(rng, 25)})
    messages.append({"role": "user", "content": "So what should we do now? " + _text(rng, 12)})
    return messages, openai_tools()


def anthropic_body(seed: int, rounds: int = 12) -> dict[str, Any]:
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Task: " + _text(rng, 30)}]
    for turn in range(rounds):
        calls = [
            {
                "type": "tool_use",
                "id": f"toolu_{seed}_{turn}_{k}",
                "name": rng.choice(TOOLS)[0],
                "input": {"query": _text(rng, 3)},
            }
            for k in range(rng.choice((1, 1, 2)))
        ]
        signature = base64.b64encode(rng.randbytes(48)).decode()
        thinking = {
            "type": "thinking",
            "thinking": _text(rng, rng.choice((15, 80))),
            "signature": signature,
        }
        messages.append({"role": "assistant", "content": [thinking, *calls]})
        results: list[dict[str, Any]] = []
        for call in calls:
            content: Any = _result(rng)
            if rng.random() < 0.15:
                data = base64.b64encode(_image(rng)).decode()
                content = [
                    {"type": "text", "text": content},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": data},
                    },
                ]
            results.append({"type": "tool_result", "tool_use_id": call["id"], "content": content})
        if rng.random() < 0.2:
            results.append({"type": "text", "text": "Also: " + _text(rng, 10)})
        messages.append({"role": "user", "content": results})
    messages.append({"role": "assistant", "content": [{"type": "text", "text": _text(rng, 30)}]})
    messages.append({"role": "user", "content": "So what should we do now? " + _text(rng, 12)})
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "system": [
            {"type": "text", "text": "You are a support operations agent. " + _text(rng, 40)}
        ],
        "messages": messages,
        "tools": anthropic_tools(),
    }


def responses_tools() -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": n, "description": d, "parameters": _schema(p)}
        for n, d, p in TOOLS
    ]


def responses_body(seed: int, rounds: int = 12) -> dict[str, Any]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "You are a support operations agent. " + _text(rng, 40)},
        {"role": "user", "content": "Task: " + _text(rng, 30)},
    ]
    for turn in range(rounds):
        items.append({
            "type": "reasoning", "id": f"rs_{seed}_{turn}",
            "summary": [{"type": "summary_text", "text": _text(rng, rng.choice((10, 40)))}],
            "encrypted_content": base64.b64encode(rng.randbytes(96)).decode(),
        })  # fmt: skip
        calls = [
            {"type": "function_call", "id": f"fc_{seed}_{turn}_{k}",
             "call_id": f"call_{seed}_{turn}_{k}", "name": rng.choice(TOOLS)[0],
             "arguments": json.dumps({"query": _text(rng, 3)})}
            for k in range(rng.choice((1, 1, 2, 3)))
        ]  # fmt: skip
        if rng.random() < 0.3:
            items.append({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": _text(rng, 20), "annotations": []}]})  # fmt: skip
        items += calls
        items += [
            {"type": "function_call_output", "call_id": c["call_id"], "output": _result(rng)}
            for c in calls
        ]
        if rng.random() < 0.2:
            data = base64.b64encode(_image(rng)).decode()
            items.append({"role": "user", "content": [
                {"type": "input_text", "text": "Here is a screenshot: " + _text(rng, 10)},
                {"type": "input_image", "image_url": f"data:image/png;base64,{data}",
                 "detail": rng.choice(("low", "high", "auto"))},
            ]})  # fmt: skip
    items.append({"role": "user", "content": "So what should we do now? " + _text(rng, 12)})
    return {"model": "gpt-4o", "input": items, "tools": responses_tools()}


def gemini_tools() -> list[dict[str, Any]]:
    return [{"functionDeclarations": [
        {"name": n, "description": d, "parametersJsonSchema": _schema(p)} for n, d, p in TOOLS
    ]}]  # fmt: skip


def gemini_body(seed: int, rounds: int = 12) -> dict[str, Any]:
    rng = random.Random(seed)
    contents: list[dict[str, Any]] = [
        {"role": "user", "parts": [{"text": "Task: " + _text(rng, 30)}]}
    ]
    for turn in range(rounds):
        calls = [
            {"functionCall": {"id": f"fc_{seed}_{turn}_{k}", "name": rng.choice(TOOLS)[0],
                              "args": {"query": _text(rng, 3)}}}
            for k in range(rng.choice((1, 1, 2)))
        ]  # fmt: skip
        # the first call of a turn carries the turn's thought signature (URL-safe
        # base64, as google-genai writes bytes on the wire)
        calls[0]["thoughtSignature"] = base64.urlsafe_b64encode(rng.randbytes(48)).decode()
        thought = {"text": _text(rng, rng.choice((15, 60))), "thought": True}
        contents.append({"role": "model", "parts": [thought, *calls]})
        answers: list[dict[str, Any]] = [
            {"functionResponse": {"id": c["functionCall"]["id"], "name": c["functionCall"]["name"],
                                  "response": {"output": _result(rng)}}}
            for c in calls
        ]  # fmt: skip
        if rng.random() < 0.2:
            data = base64.urlsafe_b64encode(_image(rng)).decode()
            answers.append({"inlineData": {"mimeType": "image/png", "data": data}})
        contents.append({"role": "user", "parts": answers})
    contents.append({"role": "model", "parts": [{"text": _text(rng, 30)}]})
    contents.append({"role": "user", "parts": [{"text": "So what now? " + _text(rng, 12)}]})
    return {
        "systemInstruction": {"parts": [{"text": "You are a support agent. " + _text(rng, 40)}]},
        "contents": contents,
        "tools": gemini_tools(),
    }
