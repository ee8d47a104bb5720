"""What the property tests draw: requests, problems and transcripts, for Hypothesis.

(Hypothesis calls a source of examples a "strategy"; in this project a strategy is a way
of choosing a bundle, ``assembler.strategies``, so this module is named for what it
draws.)

Input: an optional ``assembler.hunt.generate.Shape``. Output: strategies drawing request
dicts (stated-model JSON) from the same generator the hunts and the benchmarks use,
so the property tests and the hunts explore the same space.

``mutated_requests`` and ``mutated_json`` turn those requests hostile, for the fuzz
tests: structural mutations (types, sizes, Unicode, nesting, keys) and damaged bytes.

Every choice of the generator is drawn through Hypothesis' own random
(``use_true_random=False``), so a failing example shrinks: the generator writes its
coin flips so that Hypothesis' shrink direction (towards 0) turns optional traps
and structures off.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from assembler.exact.closure import Problem, build_problem
from assembler.hunt.cachesessions import turn
from assembler.hunt.conversations import conversation
from assembler.hunt.generate import Shape, generate
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates

__all__ = [
    "conversations",
    "hostile_values",
    "mutated_json",
    "mutated_requests",
    "problem_of",
    "problems",
    "requests",
]


def requests(shape: Shape | None = None) -> st.SearchStrategy[dict[str, Any]]:
    """Request dicts drawn from ``generate`` with ``shape`` (default ``Shape.small()``)."""
    chosen = shape or Shape.small()
    return st.randoms(use_true_random=False, note_method_calls=False).map(
        lambda rng: generate(rng, chosen)
    )


# ---------------------------------------------------------------------------
# hostile input: mutations of valid requests (tests/test_fuzz.py)

# Values a field should never hold, by family; JSON_HOSTILE can be written as JSON,
# PYTHON_HOSTILE only reaches the API from a Python caller.
_LONG = "n" * 5000
JSON_HOSTILE: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2,
    2**53,
    2**64,
    10**400,
    -(10**400),
    0.5,
    -0.0,
    1.5,
    1e308,
    -1e-308,
    float("nan"),
    float("inf"),
    float("-inf"),
    "",
    " ",
    "\n",
    "a\nb",
    "\x1b[31mred",
    "\u202eevil",
    "\ud800",
    "x\udfff",
    "\ufeff",
    "shared",
    "unknown",
    "instruction",
    "evidence",
    "data",
    "current",
    "historical",
    "full",
    "item-0",
    "item-1.full",
    _LONG,
    "é" * 50,
    "system",
    "developer",
    "tool_call",
    "tool_result",
    "user_turn",
    "call-1",
    [],
    [1],
    ["a", "a"],
    [""],
    ["\ud800"],
    [None],
    [[[[[[[[]]]]]]]],
    [{}],
    {},
    {"from": "p"},
    {"from": ""},
    {"a": 1},
    {"from": "p", "by": 1},
    {"authority": {}},
]


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


class _List(list):  # type: ignore[type-arg]
    pass


PYTHON_HOSTILE: list[Any] = [
    _Str("item-0"),
    _Str("instruction"),
    _Int(3),
    _Float(0.5),
    _List(["a"]),
    _List(),
    ("a",),
    {"a"},
    b"bytes",
    bytearray(b"x"),
    object(),
    1j,
    range(3),
    __import__("decimal").Decimal("0.5"),
    __import__("fractions").Fraction(1, 3),
]
_KEYS: list[Any] = [
    "id",
    "cost",
    "relevance",
    "identity",
    "depends_on",
    "group",
    "role",
    "transfer",
    "task",
    "candidates",
    "sources",
    "policy",
    "authority",
    "extra",
    "",
    "\n",
    "x\ud800",
    "dependson",
    "Cost",
    "from",
    "kind",
    "tool_call_id",
    "tool_name",
    "turn",
    "instruction",
    "query",
]


@functools.cache
def hostile_values(python: bool) -> st.SearchStrategy[Any]:
    """A value from the hostile families, or a freshly drawn odd one."""
    pool = JSON_HOSTILE + (PYTHON_HOSTILE if python else [])
    drawn: st.SearchStrategy[Any] = st.one_of(
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(st.characters(codec=None if python else "utf-8"), max_size=30),
        st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                     max_leaves=8),
    )  # fmt: skip
    if python:
        # lone surrogates only a Python str (or a JSON escape) can carry
        surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
        drawn = drawn | st.text(surrogates, min_size=1, max_size=3)
    # copies: a mutation must never change the pool that later examples draw from
    return (st.sampled_from(pool) | drawn).map(copy.deepcopy)


@functools.cache
def _bases() -> list[dict[str, Any]]:
    # Valid requests to mutate, drawn once: a fuzz example then costs a copy rather
    # than a generator run through Hypothesis' random (~50 ms each, measured)
    generated = [generate(random.Random(seed), Shape.small(2 + seed % 11)) for seed in range(200)]
    # and the shipped examples, which use every field (tool calls, instructions, policy)
    examples = sorted((Path(__file__).resolve().parents[1] / "models" / "examples").glob("*.json"))
    return generated + [json.loads(path.read_text(encoding="utf-8")) for path in examples]


def _containers(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a list or an object in ``node``, the document included."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, dict | list):
                found += _containers(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, dict | list):
                found += _containers(value, (*path, index))
    return found


def _at(node: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        node = node[step]
    return node


_OPERATIONS = st.sampled_from(["replace", "replace", "delete", "add", "double", "wrap", "root"])
_JSON_KEYS = st.sampled_from(_KEYS)
_PYTHON_KEYS = st.sampled_from([*_KEYS, 1, -(10**5000), None, ("t",), 1.5])


@st.composite
def mutated_requests(draw: st.DrawFn, *, python: bool = False, max_mutations: int = 3) -> Any:
    """A valid request (about one in five draws) or one with a few structural mutations:
    a value replaced by a hostile one, a key removed or added, a candidate doubled, a
    value wrapped or nested, the whole document swapped. With ``python``, values that
    only a Python caller can pass (tuples, bytes, objects, non-string keys) too."""
    request: Any = copy.deepcopy(draw(st.sampled_from(_bases())))
    for _ in range(draw(st.integers(0, max_mutations))):
        paths = _containers(request) if isinstance(request, dict | list) else []
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        node = _at(request, path)
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        op = draw(
            st.sampled_from(["replace", "replace", "delete", "add", "double", "wrap", "root"])
        )
        if op == "root":
            request = draw(hostile_values(python))
        elif op == "add" and isinstance(node, dict):
            node[draw(_PYTHON_KEYS if python else _JSON_KEYS)] = draw(hostile_values(python))
        elif op == "add":
            node.append(draw(hostile_values(python)))
        elif not keys:
            continue
        elif op == "delete":
            del node[draw(st.sampled_from(keys))]
        elif op == "double":
            key = draw(st.sampled_from(keys))
            if isinstance(node, list):
                node.append(copy.deepcopy(node[key]))
            else:
                node[key] = [node[key], node[key]]
        elif op == "wrap":
            key = draw(st.sampled_from(keys))
            node[key] = draw(st.sampled_from([[node[key]], {"value": node[key]}, [[[node[key]]]]]))
        else:
            node[draw(st.sampled_from(keys))] = draw(hostile_values(python))
    tuples = python and isinstance(request, dict) and isinstance(request.get("candidates"), list)
    if tuples and draw(st.integers(0, 9)) == 0:
        # a caller's tuple where JSON has a list
        request["candidates"] = tuple(request["candidates"])
    return request


# byte-level damage for JSON text: each snippet is a family of broken inputs
_SNIPPETS: list[bytes] = [
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\x00",
    b"\xef\xbb\xbf",
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b"NaN",
    b"-Infinity",
    b"1" * 5000,
    b"-" + b"9" * 400,
    b"[" * 200,
    b"]" * 3,
    b"{" * 40 + b"}" * 40,
    b'{"a":1,"a":2}',
    b'"',
    b"\\",
    b",",
    b":",
    b"1e999",
    b"0.1e-999",
    b"true",
    b"null",
    b'"\x1b[31m"',
    b'"\\n"',
    b'"\xe2\x80\xae"',
]


_DAMAGE = st.sampled_from(["snippet", "snippet", "cut", "double"])
_SNIPPET = st.sampled_from(_SNIPPETS)
_JSON_REQUESTS = mutated_requests()


@st.composite
def mutated_json(draw: st.DrawFn) -> bytes:
    """JSON text of a (possibly mutated) request, then possibly damaged byte-wise:
    a span replaced by a hostile snippet, cut, or doubled."""
    import json as _json

    value = draw(_JSON_REQUESTS)
    try:
        text = _json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):  # pragma: no cover - JSON values only
        text = b"{}"
    for _ in range(draw(st.integers(0, 2))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 8)))
        op = draw(_DAMAGE)
        if op == "snippet":
            text = text[:start] + draw(_SNIPPET) + text[end:]
        elif op == "cut":
            text = text[:start]
        else:
            text = text[:end] + text[start:]
    return text


def problem_of(request: dict[str, Any]) -> Problem:
    """The solver-neutral problem of a request dict (parse, gates, closure)."""
    parsed = parse_request(request)
    return build_problem(parsed, apply_gates(parsed))


def problems(shape: Shape | None = None) -> st.SearchStrategy[Problem]:
    """Problems of the requests drawn by ``requests(shape)``."""
    return requests(shape).map(problem_of)


# ---------------------------------------------------------------------------
# agent transcripts and cache settings (tests/test_cached.py)

_TOOL = json.dumps({"name": "read", "description": "read a file", "parameters": {"type": "object"}})


@st.composite
def transcripts(draw: st.DrawFn, most_turns: int = 3) -> dict[str, Any]:
    """A small agent transcript as a request: a required system prompt, sometimes a
    tool definition and evidence, a required user turn, then turns of an assistant
    message and a tool call with its result (sometimes also offered compact); every
    form has content, so every request renders."""
    cost = st.integers(1, 60)
    relevance = st.integers(0, 10).map(lambda n: n / 10)
    candidates: list[dict[str, Any]] = [
        {"id": "sys", "kind": "system", "cost": draw(cost), "relevance": 1.0,
         "required": True, "channel": "system", "content": "be brief"},
        {"id": "user", "kind": "user_turn", "turn": 0, "cost": draw(cost), "relevance": 1.0,
         "required": True, "content": "fix it"},
    ]  # fmt: skip
    if draw(st.booleans()):
        candidates.append({"id": "tool", "kind": "tool_definition", "cost": draw(cost),
                           "relevance": draw(relevance), "content": _TOOL})  # fmt: skip
    if draw(st.booleans()):
        candidates.append({"id": "doc", "kind": "evidence", "cost": draw(cost),
                           "relevance": draw(relevance), "content": "a document"})  # fmt: skip
    for t in range(draw(st.integers(0, most_turns))):
        candidates += turn(t, draw(cost), draw(cost), draw(relevance), draw(st.booleans()))
    total = sum(c["cost"] for c in candidates)
    budget = draw(st.integers(total // 3, total + 10))
    task: dict[str, Any] = {"id": "t", "budget": budget}
    if draw(st.booleans()):
        # the task's own instruction: a block the rendering sends after the tools
        task["instruction"] = "answer in English"
    return {"task": task, "candidates": candidates}


def conversations(most: int = 7) -> st.SearchStrategy[dict[str, Any]]:
    """Small conversation requests whose selection decides what a format can send (the
    render-rule hunts' draws, ``hunt/conversations.py``): turns that may come
    first, empty turns, calls with bad arguments or ids, malformed tool definitions,
    sometimes a query, an instruction, a cache section in any order."""
    return st.randoms(use_true_random=False, note_method_calls=False).map(
        lambda rng: conversation(rng, most)
    )


def cache_settings() -> st.SearchStrategy[dict[str, Any]]:
    """A request's cache section without its previous blocks: Anthropic's breakpoints
    or OpenAI's automatic caching, small minimum prefixes so that small requests read,
    any tolerance and headroom."""
    return st.fixed_dictionaries(
        {
            "provider": st.sampled_from(["anthropic", "openai"]),
            "min_prefix_tokens": st.integers(1, 80),
            "tolerance": st.sampled_from([0.0, 0.05, 0.2, 0.5]),
            "headroom": st.sampled_from([0.0, 0.25, 0.5]),
        }
    ).map(lambda c: {**c, "step_tokens": 16} if c["provider"] == "openai" else c)


def agent_head() -> list[dict[str, Any]]:
    """A required 1,200-token system prompt and the user's 40-token task: the head a
    cache entry is read from in the cache tests."""
    return [
        {"id": "sys", "kind": "system", "cost": 1200, "relevance": 1.0, "required": True,
         "channel": "system", "content": "be brief"},
        {"id": "user", "kind": "user_turn", "turn": 0, "cost": 40, "relevance": 1.0,
         "required": True, "content": "fix it"},
    ]  # fmt: skip
