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
genai = pytest.importorskip("google.genai")
# google-genai sends through httpx itself
httpx: Any = pytest.importorskip("httpx")

# the SDKs' HTTP client: httpx2 in their newer releases, httpx before
httpx2: Any = pytest.importorskip(
    "httpx2" if importlib.util.find_spec("httpx2") is not None else "httpx"
)

__all__ = ["Wire", "gemini_wire", "send_anthropic", "send_gemini", "send_openai", "send_responses"]


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

    def _responses(self, request: Any) -> Any:
        self.raw.append(request.content)
        self.sent.append(json.loads(request.content))
        return httpx2.Response(200, json={
            "id": "resp_1", "object": "response", "created_at": 0, "model": "gpt-4o",
            "status": "completed", "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "output": [{"type": "message", "id": "msg_1", "role": "assistant",
                                     "status": "completed", "content": [
                                         {"type": "output_text", "text": "ok",
                                          "annotations": []}]}],
            "usage": {"input_tokens": self.input_tokens, "output_tokens": 1,
                      "total_tokens": self.input_tokens + 1,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}},
        })  # fmt: skip

    def _gemini(self, request: Any) -> Any:
        self.raw.append(request.content)
        self.sent.append(json.loads(request.content))
        return httpx.Response(200, json={
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": self.input_tokens, "candidatesTokenCount": 1,
                              "totalTokenCount": self.input_tokens + 1},
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


def send_responses(body: dict[str, Any], wire: Wire, model: str = "gpt-4o") -> Any:
    """An ``openai-responses`` body through ``client.responses.create``."""
    client = openai.OpenAI(
        api_key="test", max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(wire._responses)),
    )  # fmt: skip
    return client.responses.create(model=model, **body)


def send_gemini(body: dict[str, Any], wire: Wire, model: str = "gemini-2.5-flash") -> Any:
    """A ``gemini`` body through ``client.models.generate_content``: the SDK's own
    types (which forbid unknown fields) read it, and its converters write the wire."""
    from google.genai import types

    client = genai.Client(
        api_key="test",
        http_options=types.HttpOptions(
            httpx_client=httpx.Client(transport=httpx.MockTransport(wire._gemini))
        ),
    )
    config = types.GenerateContentConfig(
        system_instruction=body.get("systemInstruction"), tools=body.get("tools")
    )
    contents = [types.Content.model_validate(c) for c in body["contents"]]
    return client.models.generate_content(model=model, contents=contents, config=config)


def gemini_wire(sent: dict[str, Any]) -> dict[str, Any]:
    """The wire request's body fields with the REST names the body uses: the SDK writes
    a few field names in snake case (``mime_type``, ``parameters_json_schema``), which
    the API reads as well."""
    renamed = {"mime_type": "mimeType", "parameters_json_schema": "parametersJsonSchema",
               "file_uri": "fileUri", "display_name": "displayName"}  # fmt: skip

    def walk(value: Any, inside_data: bool = False) -> Any:
        if isinstance(value, dict):
            return {
                renamed.get(k, k): v if k in ("args", "response") else walk(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return {k: walk(sent[k]) for k in ("systemInstruction", "contents", "tools") if k in sent}
