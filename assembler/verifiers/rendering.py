"""The render verifier: are these bytes exactly the rendering of this bundle?

Input: a request (mapping or ``Request``; for counted costs, the priced request),
a result (``Result`` or its JSON dict) and a rendering (``Rendering`` or its JSON
dict: format, text, body, manifest).
Output: a list of ``Violation`` (empty when the rendering is faithful).

It imports nothing from the renderer or the provider rooms (``assembler.providers``):
the layout, the framing, the provider bodies and their rules are re-derived here from
``models/README.md`` section 14 (a second copy, on purpose), so that a bug in the
renderer is not shared by its judge. It checks that

* the manifest names the result (package_id, trace_id) and exactly its selected
  forms, each with its identity, form, kind and the sha256 of its content, and that
  the bytes at each recorded offset are that content, preceded by its exact header;
* the items are in the canonical layout order, tool results directly after calls;
* every byte is accounted for: the text equals the re-derived framing around the
  selected contents and the task's instruction and query. A rejected or sealed
  candidate's content may therefore appear only where it coincides with that
  material (a substring of a selected item, of the envelope or of the framing); an
  occurrence that touches an unaccounted byte is reported naming that candidate;
* ``rendered_sha256`` and ``request_body_sha256`` hash the text and the body;
* the body's text parts, in order, concatenate to the text, and the provider rules
  hold (system first, no leading tool message, results after their calls, every call
  answered; Anthropic's alternation, tool results opening user turns, at most four
  cache breakpoints, each at the end of a section).
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ..model.parse import parse_request
from ..model.rendering import Headers, Rendering
from ..model.types import Candidate, Request, Result, Violation
from .bodies import tool_entry, walk
from .cache import kept_prefix

__all__ = ["verify_rendering"]

_STABLE = ("system", "developer", "tool_definition", "memory")
_CONVERSATION = ("user_turn", "assistant_turn", "tool_call", "tool_result")


def verify_rendering(
    request: Mapping[str, Any] | Request,
    result: Result | Mapping[str, Any],
    rendering: Rendering | Mapping[str, Any],
) -> list[Violation]:
    """Every way ``rendering`` is not the faithful rendering of ``result``."""
    req = parse_request(request)
    res = result.to_dict() if isinstance(result, Result) else dict(result)
    ren = rendering.to_dict() if isinstance(rendering, Rendering) else dict(rendering)
    return _Judge(req, res, ren).run()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _section(kind: str) -> str:
    if kind in _STABLE:
        return "stable"
    return "evidence" if kind == "evidence" else "volatile"


# the kinds version 3 renders as their content alone, whatever the headers
_TURNS = ("user_turn", "assistant_turn", "tool_call", "tool_result")


def _header(c: Candidate, headers: Headers = Headers.PROVENANCE, version: int = 3) -> bytes:
    if headers is Headers.NONE or (version >= 3 and c.kind.value in _TURNS):
        return b""
    if headers is Headers.MINIMAL:
        return f"<item id={json.dumps(c.id, ensure_ascii=False)}>\n".encode()
    content = (c.content or "").encode("utf-8")
    fields = [
        ("id", json.dumps(c.id, ensure_ascii=False)),
        ("kind", json.dumps(c.kind.value)),
        ("form", json.dumps(c.form, ensure_ascii=False)),
        ("sha256", json.dumps(_sha(content))),
        ("bytes", str(len(content))),
    ]
    return ("<item " + " ".join(f"{k}={v}" for k, v in fields) + ">\n").encode("utf-8")


def _footer(c: Candidate, headers: Headers = Headers.PROVENANCE, version: int = 3) -> bytes:
    if c.kind.value == "tool_call" or (version >= 3 and c.kind.value in _TURNS):
        return b""
    return b"\n" if headers is Headers.NONE else b"\n</item>\n"


def _runs_of_zeros(marks: bytearray) -> list[tuple[int, int]]:
    """The maximal runs of zero bytes in ``marks``, as (start, end) pairs."""
    runs = []
    start = marks.find(0)
    while start != -1:
        end = marks.find(1, start)
        end = len(marks) if end == -1 else end
        runs.append((start, end))
        start = marks.find(0, end)
    return runs


class _Judge:
    def __init__(self, request: Request, result: dict[str, Any], rendering: dict[str, Any]):
        self.request = request
        self.result = result
        self.rendering = rendering
        self.found: list[Violation] = []
        self.by_id = {c.id: c for c in request.candidates}
        self.text = str(rendering.get("text", ""))
        self.data = self.text.encode("utf-8")
        self.manifest: dict[str, Any] = dict(rendering.get("manifest") or {})
        self.items: list[dict[str, Any]] = list(self.manifest.get("items", []))
        self.accounted = bytearray(len(self.data))
        # version 2 framed conversation turns as every item; 3 sends them as they are
        version = self.manifest.get("render_version")
        self.version = version if isinstance(version, int) else 3
        named = self.manifest.get("headers", Headers.PROVENANCE.value)
        self.headers = Headers.PROVENANCE
        if named in {h.value for h in Headers}:
            self.headers = Headers(named)
        else:
            self.flag("render-record", f"unknown headers {named!r}")

    def _head(self, c: Candidate) -> bytes:
        return _header(c, self.headers, self.version)

    def _foot(self, c: Candidate) -> bytes:
        return _footer(c, self.headers, self.version)

    def flag(self, kind: str, detail: str, *forms: str) -> None:
        self.found.append(Violation(kind, detail, tuple(forms)))

    def run(self) -> list[Violation]:
        if self.result.get("status") != "bundle":
            self.flag("render-record", "only a bundle has a rendering")
            return self.found
        self._check_record()
        expected = self._expected_order()
        self._check_items(expected)
        self._check_envelope()
        self._check_accounting(expected)
        self._check_tools()
        self._check_body()
        return self.found

    # -- the manifest names the result ------------------------------------------------

    def _check_record(self) -> None:
        m = self.manifest
        for key in ("package_id", "trace_id"):
            if m.get(key) != self.result.get(key):
                self.flag("render-record", f"the manifest's {key} is not the result's")
        if m.get("format") != self.rendering.get("format"):
            self.flag("render-record", "the manifest's format is not the rendering's")
        if m.get("render_version") not in (2, 3):
            self.flag("render-record", f"unknown render_version {m.get('render_version')!r}")
        if m.get("rendered_sha256") != _sha(self.data):
            self.flag("render-hash", "rendered_sha256 does not hash the rendered text")
        if m.get("request_body_sha256") != _sha(
            _canonical(self.rendering.get("body")).encode("utf-8")
        ):
            self.flag("render-hash", "request_body_sha256 does not hash the provider body")
        ids = [item.get("id") for item in self.items]
        selected = list(self.result.get("selected", []))
        if sorted(map(str, ids)) != sorted(selected) or len(set(ids)) != len(ids):
            self.flag(
                "render-items",
                "the manifest items are not exactly the selected forms",
                *sorted(set(map(str, ids)) ^ set(selected)),
            )

    # -- the layout, re-derived -------------------------------------------------------

    def _expected_blocks(self) -> list[Candidate | None]:
        """The blocks in layout order (None: the task's instruction): with a cache
        section the previous blocks kept first (``cache.kept_prefix``), then the rest
        in canonical order, a tool result whose call ends the kept blocks first."""
        chosen = [self.by_id[i] for i in sorted(set(self.result.get("selected", [])))]
        chosen = [c for c in chosen if c.content is not None]
        kept = kept_prefix(self.request, chosen)
        done = {c.id for c in kept if c is not None}
        chosen = [c for c in chosen if c.id not in done]
        stable = sorted(
            (c for c in chosen if c.kind.value in _STABLE),
            key=lambda c: (_STABLE.index(c.kind.value), c.id),
        )
        evidence = [c for c in chosen if c.kind.value == "evidence"]
        turns = sorted(
            (c for c in chosen if c.kind.value in _CONVERSATION[:3]), key=lambda c: (c.turn, c.id)
        )
        results: dict[str | None, list[Candidate]] = {}
        for c in chosen:
            if c.kind.value == "tool_result":
                results.setdefault(c.tool_call_id, []).append(c)
        last = kept[-1] if kept else None
        dangling = (
            results.pop(last.tool_call_id, [])
            if last is not None and last.kind.value == "tool_call"
            else []
        )
        volatile: list[Candidate] = []
        for c in turns:
            volatile.append(c)
            if c.kind.value == "tool_call":
                volatile.extend(results.pop(c.tool_call_id, []))
        # version 2: tool definitions lead (the bodies' tools field comes first)
        tools = [c for c in stable if c.kind.value == "tool_definition"]
        rest = [c for c in stable if c.kind.value != "tool_definition"]
        instruction: list[Candidate | None] = (
            [None] if self.request.task.instruction is not None and None not in kept else []
        )
        return [*kept, *dangling, *tools, *instruction, *rest, *evidence, *volatile]

    def _expected_order(self) -> list[Candidate]:
        return [c for c in self._expected_blocks() if c is not None]

    def _check_items(self, expected: list[Candidate]) -> None:
        previous_end = 0
        for item in self.items:
            form_id = str(item.get("id"))
            c = self.by_id.get(form_id)
            if c is None:
                self.flag("render-items", "the manifest names a form the request lacks", form_id)
                continue
            if c.content is None:
                self.flag("render-items", "a rendered form has no content", c.id)
                continue
            content = c.content.encode("utf-8")
            claims = {
                "identity": c.identity,
                "form": c.form,
                "kind": c.kind.value,
                "content_sha256": _sha(content),
                "length": len(content),
            }
            for key, truth in claims.items():
                if item.get(key) != truth:
                    self.flag("render-items", f"{key} is {item.get(key)!r}, not {truth!r}", c.id)
            offset = item.get("offset")
            if not isinstance(offset, int) or offset < previous_end:
                self.flag("render-order", "items overlap or run backwards", c.id)
                continue
            end = offset + len(content)
            if self.data[offset:end] != content:
                self.flag("render-bytes", "its content is not at its recorded offset", c.id)
                continue
            head, foot = self._head(c), self._foot(c)
            if self.data[offset - len(head) : offset] != head or offset < len(head):
                self.flag("render-bytes", "its header is not the exact header of its content", c.id)
                continue
            if self.data[end : end + len(foot)] != foot:
                self.flag("render-bytes", "its closing line is missing", c.id)
                continue
            self.accounted[offset - len(head) : end + len(foot)] = b"\x01" * (
                len(head) + len(content) + len(foot)
            )
            previous_end = end + len(foot)
        got = [str(item.get("id")) for item in self.items]
        if got != [c.id for c in expected] and set(got) == {c.id for c in expected}:
            self.flag("render-order", "the items are not in the canonical layout order", *got)

    def _envelope_parts(self) -> list[tuple[str, bytes, bytes, bytes]]:
        task = self.request.task
        parts = []
        if task.instruction is not None:
            parts.append(
                (
                    "instruction",
                    b"<instruction>\n",
                    task.instruction.encode(),
                    b"\n</instruction>\n",
                )
            )
        if task.query is not None:
            parts.append(("query", b"<query>\n", task.query.encode(), b"\n</query>\n"))
        return parts

    def _check_envelope(self) -> None:
        recorded = {e.get("part"): e for e in self.manifest.get("envelope", [])}
        for part, head, body, foot in self._envelope_parts():
            entry = recorded.get(part, {})
            offset = entry.get("offset")
            if not isinstance(offset, int) or self.data[offset : offset + len(body)] != body:
                self.flag("render-bytes", f"the task's {part} is not at its recorded offset")
                continue
            start, end = offset - len(head), offset + len(body) + len(foot)
            if start < 0 or self.data[start:offset] + self.data[offset + len(body) : end] != (
                head + foot
            ):
                self.flag("render-bytes", f"the task's {part} is not framed")
                continue
            self.accounted[start:end] = b"\x01" * (end - start)

    def _check_accounting(self, expected: list[Candidate]) -> None:
        parts = {p: h + b + f for p, h, b, f in self._envelope_parts()}
        pieces = [
            parts.get("instruction", b"")
            if c is None
            else self._head(c) + (c.content or "").encode() + self._foot(c)
            for c in self._expected_blocks()
        ]
        pieces.append(parts.get("query", b""))
        expected_bytes = b"".join(pieces)
        if expected_bytes != self.data:
            first = next(
                (
                    i
                    for i, (a, b) in enumerate(zip(expected_bytes, self.data, strict=False))
                    if a != b
                ),
                min(len(expected_bytes), len(self.data)),
            )
            self.flag(
                "render-bytes", f"the text is not the rendering of the selection from byte {first}"
            )
        selected = set(self.result.get("selected", []))
        unaccounted = _runs_of_zeros(self.accounted)
        if not unaccounted:
            # every byte is material verified in place: no occurrence can touch another
            return
        # candidates sharing a content share its search; flags keep the request's order
        first_bad: dict[str, int | None] = {}
        for c in self.request.candidates:
            if c.id in selected or not c.content:
                continue
            if c.content not in first_bad:
                first_bad[c.content] = self._foreign_at(c.content.encode("utf-8"), unaccounted)
            start = first_bad[c.content]
            if start is not None:
                self.flag(
                    "render-foreign",
                    f"the content of rejected {c.id!r} appears at byte {start},"
                    " outside the selected material",
                    c.id,
                )

    def _foreign_at(self, needle: bytes, unaccounted: list[tuple[int, int]]) -> int | None:
        """The first occurrence of ``needle`` touching an unaccounted byte, if any. Such
        an occurrence lies within ``len(needle) - 1`` bytes of an unaccounted run, so
        only those windows (merged where they overlap) are searched."""
        reach = len(needle) - 1
        starts = [run_start for run_start, _ in unaccounted]
        windows: list[list[int]] = []
        for run_start, run_end in unaccounted:
            low, high = max(0, run_start - reach), run_end + reach
            if windows and low <= windows[-1][1]:
                windows[-1][1] = high
            else:
                windows.append([low, high])
        for low, high in windows:
            at = self.data.find(needle, low, high)
            while at != -1:
                # the last run starting before the occurrence ends: does it reach into it?
                index = bisect.bisect_left(starts, at + len(needle)) - 1
                if index >= 0 and unaccounted[index][1] > at:
                    return at
                at = self.data.find(needle, at + 1, high)
        return None

    # -- tool calls, results, and the provider body -----------------------------------

    def _check_tools(self) -> None:
        order = [self.by_id[str(i["id"])] for i in self.items if str(i.get("id")) in self.by_id]
        selected = set(self.result.get("selected", []))
        # the last item before this one that is not a tool result
        last_other: Candidate | None = None
        for c in order:
            if c.kind.value == "tool_result":
                if last_other is None or last_other.tool_call_id != c.tool_call_id:
                    self.flag("render-tool", "a tool result is not directly after its call", c.id)
            else:
                last_other = c
        kinds_selected: dict[str, set[str]] = {}  # tool_call_id -> kinds of selected forms
        for c in self.request.candidates:
            if c.id in selected and c.tool_call_id is not None:
                kinds_selected.setdefault(c.tool_call_id, set()).add(c.kind.value)
        for c in self.request.candidates:
            tool = c.tool_call_id
            if c.id in selected and tool is not None and not kinds_selected[tool] - {c.kind.value}:
                self.flag("render-tool", "a tool call or result is rendered alone", c.id)

    def _check_body(self) -> None:
        fmt = self.rendering.get("format")
        body: Any = self.rendering.get("body")
        if fmt == "text":
            if body != self.text:
                self.flag("render-body", "the text body is not the rendered text")
            return
        calls = {
            self.by_id[str(i["id"])].tool_call_id: i
            for i in self.items
            if str(i.get("id")) in self.by_id and i.get("kind") == "tool_call"
        }
        cursor = 0
        ends: list[int] = []
        marks: list[int] = []
        definitions = [
            i
            for i in self.items
            if i.get("kind") == "tool_definition" and str(i.get("id")) in self.by_id
        ]

        def tool_part(position: int, entry: Any, provider: str) -> None:
            nonlocal cursor
            if position >= len(definitions):
                self.flag("render-body", f"tools[{position}] is not a selected tool definition")
                return
            item = definitions[position]
            c = self.by_id[str(item["id"])]
            block = self._head(c) + (c.content or "").encode("utf-8") + self._foot(c)
            if self.data[cursor : cursor + len(block)] != block:
                self.flag("render-body", f"tools[{position}] is not at its place in the text", c.id)
            bare = {k: v for k, v in entry.items() if k != "cache_control"}
            if bare != tool_entry(c.content or "", provider):
                self.flag("render-body", f"tools[{position}] is not its item's definition", c.id)
            cursor += len(block)

        def text_part(part: Any) -> None:
            nonlocal cursor
            data = str(part).encode("utf-8")
            if self.data[cursor : cursor + len(data)] != data:
                self.flag("render-body", f"the body's text differs from the text at byte {cursor}")
            cursor += len(data)

        def call_part(call_id: Any, arguments: Any, parsed: bool) -> None:
            nonlocal cursor
            item = calls.get(call_id)
            if item is None or item.get("offset") != cursor:
                self.flag("render-body", f"tool call {call_id!r} is not its manifest item")
                return
            raw = self.data[cursor : cursor + int(item["length"])]
            if (json.loads(raw) if parsed else raw.decode("utf-8")) != arguments:
                self.flag("render-body", f"tool call {call_id!r} does not carry its content")
            cursor += len(raw)

        try:
            if fmt == "openai-chat":
                for position, entry in enumerate(body.get("tools", [])):
                    tool_part(position, entry, "openai")
                if len(body.get("tools", [])) != len(definitions):
                    self.flag("render-body", "the body's tools are not the selected definitions")
                body = body["messages"]
                for message in body:
                    if isinstance(message.get("content"), str):
                        text_part(message["content"])
                    for call in message.get("tool_calls", []):
                        call_part(call["id"], call["function"]["arguments"], parsed=False)
                self._openai_rules(body)
            elif fmt == "anthropic-messages":
                for position, entry in enumerate(body.get("tools", [])):
                    tool_part(position, entry, "anthropic")
                    if "cache_control" in entry:
                        marks.append(cursor)
                    # a tool's block ends here: where a cache-aware layout may mark it
                    ends.append(cursor)
                if len(body.get("tools", [])) != len(definitions):
                    self.flag("render-body", "the body's tools are not the selected definitions")
                blocks = [("system", b) for b in body["system"]]
                blocks += [(m["role"], b) for m in body["messages"] for b in m["content"]]
                for _, block in blocks:
                    if block["type"] == "tool_use":
                        call_part(block["id"], block["input"], parsed=True)
                    else:
                        text_part(block["text"] if block["type"] == "text" else block["content"])
                    if "cache_control" in block:
                        marks.append(cursor)
                    ends.append(cursor)
                self._anthropic_rules(body, marks, ends)
            elif fmt in ("openai-responses", "gemini"):
                parts, broken = walk(fmt, body)
                tools = [part for part in parts if part.kind == "tool"]
                for position, part in enumerate(tools):
                    tool_part(position, part.value, "responses" if fmt != "gemini" else fmt)
                if len(tools) != len(definitions):
                    self.flag("render-body", "the body's tools are not the selected definitions")
                for part in parts:
                    if part.kind == "text":
                        text_part(part.value)
                    elif part.kind == "call":
                        call_part(part.key, part.value, parsed=part.parsed)
                for line in broken:
                    self.flag("render-rule", line)
            else:
                self.flag("render-record", f"unknown format {fmt!r}")
                return
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            self.flag("render-body", f"the provider body is malformed: {exc!r}")
            return
        if cursor != len(self.data):
            self.flag("render-body", "the body's text parts do not cover the rendered text")

    def _section_ends(self) -> set[int]:
        ends: set[int] = set()
        previous: tuple[str, int] | None = None
        spans: list[tuple[str, int]] = []
        for item in self.items:
            c = self.by_id.get(str(item.get("id")))
            if c is not None and isinstance(item.get("offset"), int):
                end = int(item["offset"]) + int(item.get("length", 0)) + len(self._foot(c))
                spans.append((_section(c.kind.value), end))
        for e in self.manifest.get("envelope", []):
            if e.get("part") == "instruction" and isinstance(e.get("offset"), int):
                spans.append(("stable", int(e["offset"]) + int(e["length"]) + 16))
        spans.sort(key=lambda s: s[1])
        for span in spans:
            if previous is not None and previous[0] != span[0]:
                ends.add(previous[1])
            previous = span
        if previous is not None:
            ends.add(previous[1])
        return ends

    def _openai_rules(self, messages: list[dict[str, Any]]) -> None:
        roles = [m["role"] for m in messages]
        first_other = next((i for i, r in enumerate(roles) if r != "system"), len(roles))
        if "system" in roles[first_other:]:
            self.flag("render-rule", "system-first: a system message follows other messages")
        if first_other < len(roles) and roles[first_other] == "tool":
            self.flag("render-rule", "no-leading-tool: the first non-system message is a tool one")
        pending: set[str] = set()
        for m in messages:
            if m["role"] == "tool":
                if m["tool_call_id"] not in pending:
                    self.flag("render-rule", "tool-result-after-call: a tool message is orphaned")
                pending.discard(m["tool_call_id"])
                continue
            if pending:
                self.flag("render-rule", "tool-call-answered: a tool call is not answered")
            pending = {c["id"] for c in m.get("tool_calls", [])}
        if pending:
            self.flag("render-rule", "tool-call-answered: a tool call is not answered")

    def _anthropic_rules(self, body: dict[str, Any], marks: list[int], ends: list[int]) -> None:
        messages = body["messages"]
        if not messages or messages[0]["role"] != "user":
            self.flag("render-rule", "first-message-user: the messages must open with a user turn")
        called: set[str] = set()
        for index, m in enumerate(messages):
            if index and messages[index - 1]["role"] == m["role"]:
                self.flag("render-rule", "roles-alternate: two turns of one role in a row")
            kinds = [b["type"] for b in m["content"]]
            results = [b["tool_use_id"] for b in m["content"] if b["type"] == "tool_result"]
            if results and (
                m["role"] != "user" or kinds[: len(results)] != ["tool_result"] * len(results)
            ):
                self.flag("render-rule", "tool-result-first: a tool result must open a user turn")
            if m["role"] == "user" and set(results) != called:
                self.flag("render-rule", "tool-result-after-call: results do not answer the calls")
            called = {b["id"] for b in m["content"] if b["type"] == "tool_use"}
        if called:
            self.flag("render-rule", "tool-call-answered: a tool call is not answered")
        if len(marks) > 4:
            self.flag("render-rule", f"cache-breakpoints: {len(marks)} breakpoints, at most 4")
        if sorted(marks) != list(self.manifest.get("breakpoints", [])):
            self.flag("render-rule", "the manifest's breakpoints are not the body's")
        cache = self.request.cache
        if cache is not None:
            # a cache-aware layout places its own (at most the section's limit), each
            # at the end of a block
            if len(marks) > cache.breakpoints:
                self.flag("render-rule", f"cache-breakpoints: more than {cache.breakpoints}")
            boundaries = set(ends)
        else:
            boundaries = self._section_ends()
        for mark in marks:
            if mark not in boundaries:
                self.flag("render-rule", f"a cache breakpoint at byte {mark} is not a section end")
