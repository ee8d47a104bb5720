"""The official SDK clients on an in-process transport: the SDK builds and sends the
real request, and the transport keeps the bytes that would go on the wire.

Input: a provider body. Output: the request the SDK sent (``Sent``: its URL and the
JSON it carried), answered with a minimal valid reply whose ``usage`` the test sets.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass, field
from typing import Any

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

# the SDKs' HTTP client: httpx2 in their newer releases, httpx before
httpx2: Any = pytest.importorskip(
    "httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"
)

__all__ = ["Wire", "send_anthropic", "send_openai"]


@dataclass
class Wire:
    """What went out, and the usage the reply reports."""

    input_tokens: int = 10
    sent: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)

    def _openai(self, request: Any) -> Any:
        self.raw.append(request.content)
        self.sent.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": self.input_tokens, "completion_tokens": 1,
                      "total_tokens": self.input_tokens + 1},
        })  # fmt: skip

    def _anthropic(self, request: Any) -> Any:
        self.raw.append(request.content)
        self.sent.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": self.input_tokens, "output_tokens": 1},
        })  # fmt: skip


def send_openai(body: dict[str, Any], wire: Wire, model: str = "gpt-4o") -> Any:
    client = openai.OpenAI(
        api_key="test", max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(wire._openai)),
    )  # fmt: skip
    return client.chat.completions.create(model=model, **body)


def send_anthropic(body: dict[str, Any], wire: Wire, model: str = "claude-sonnet-4-5") -> Any:
    client = anthropic.Anthropic(
        api_key="test", max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(wire._anthropic)),
    )  # fmt: skip
    fields = {k: v for k, v in body.items() if k not in ("model", "max_tokens")}
    return client.messages.create(model=model, max_tokens=body.get("max_tokens", 1024), **fields)
