"""Same answers before and after a change: ``python -m benchmarks.compare --before REV``.

Input: a git revision to compare the working tree with (``--before``), and how many
generated requests and session sequences to run (defaults: 10,000 and 200).
Output: a line per family on stderr, ``benchmarks/results/compare.json`` (every count
and the first differences), exit 0 when every answer matches, 1 otherwise.

One set of inputs is generated here, with this checkout's generator, and handed to two
child processes: one importing the package as it is at ``REV`` (checked out with
``git worktree`` into a temporary directory), one importing the working tree. Each
answers through the public API only (``assemble``, ``Session.apply``), so any revision
with that API can be compared. Compared per answer: status, selection, ``package_id``,
``trace_id`` and the sha256 of the rendered bytes, of the provider body and of the
manifest's JSON.

* the corpus: every case of ``corpus/`` with the exact strategy and greedy;
* generated requests (``Shape.small`` and ``Shape.scale`` at a few sizes), some with
  content, rendered in every format;
* session sequences: a first request and random deltas (add, remove, update, task
  patches), each step's ``Session.apply`` answer and a fresh ``assemble`` of the same
  request; every other sequence with content on every candidate, rendered (each format
  in turn);
* agent transcripts (``benchmarks.agentcases``, 3-80 rounds): the request rendered to
  ``openai-chat``, the same with a ``cache`` section naming what the request before its
  last round sent (Anthropic's breakpoints, at several tolerances), and a ``Session``
  holding that earlier request applying the delta that adds the round.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "compare.json"
FORMATS = ("text", "openai-chat", "anthropic-messages", "openai-responses", "gemini")
_LIMIT = 30.0


# -- the inputs (this checkout's generator) ------------------------------------------


def _requests(count: int, seed: int) -> list[dict[str, Any]]:
    from assembler.hunt.generate import Shape, generate

    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 50 == 49:
            shape = Shape.scale(rng.choice((100, 300, 1000)))
        else:
            shape = Shape.small(rng.randint(1, 14))
        request = generate(rng, shape)
        if i % 4 == 0:
            # content on every form, so that each format renders it
            for c in request["candidates"]:
                c.setdefault("content", f"content of {c['id']}")
        out.append(request)
    return out


def _sessions(count: int, seed: int) -> list[dict[str, Any]]:
    from assembler.hunt.generate import Shape, generate

    rng = random.Random(seed)
    out = []
    for k in range(count):
        first = generate(rng, Shape.small(rng.randint(2, 14)))
        sequence = {"first": first, "deltas": _deltas(rng, first, rng.randint(1, 8))}
        if k % 2:
            # rendered, every candidate with content: each delta's blocks and body pieces
            sequence["render"] = FORMATS[k // 2 % len(FORMATS)]
            for c in (*first["candidates"], *_added(sequence["deltas"])):
                c.setdefault("content", f"content of {c['id']}")
        out.append(sequence)
    return out


def _added(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for delta in deltas for c in delta.get("add", [])]


def _deltas(rng: random.Random, first: dict[str, Any], steps: int) -> list[dict[str, Any]]:
    from assembler.hunt.generate import Shape, generate

    ids = [c["id"] for c in first["candidates"] if "tool_call_id" not in c]
    deltas = []
    for step in range(steps):
        delta: dict[str, Any] = {}
        kind = rng.random()
        if kind < 0.4:
            fresh = generate(rng, Shape.small(rng.randint(1, 4)))["candidates"]
            fresh = [c for c in fresh if "tool_call_id" not in c]
            for c in fresh:
                c["id"] = f"s{step}-{c['id']}"
            delta["add"] = fresh
            ids += [c["id"] for c in fresh]
        elif kind < 0.6 and ids:
            gone = rng.choice(ids)
            ids.remove(gone)
            delta["remove"] = [gone]
        elif kind < 0.85 and ids:
            # a re-scoring: the candidate as it was, with another relevance
            target = rng.choice(ids)
            delta["rescore"] = (target, round(rng.random(), 3))
        else:
            delta["task"] = {"budget": rng.randint(0, 3000)}
        deltas.append(delta)
    return deltas


def _agents(count: int, seed: int) -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from benchmarks.agentcases import transcript

    rng = random.Random(seed)
    out = []
    for k in range(count):
        t = transcript(rng.randint(3, 80), seed=k, share=rng.uniform(0.3, 0.6))
        before, delta = t.next_turn()
        tolerance = rng.choice((0.0, 0.02, 0.05, 0.1))
        out.append(
            {"request": t.request(), "before": before, "delta": delta, "tolerance": tolerance}
        )
    return out


# -- one side's answers (a child process) --------------------------------------------


def _digest(result: Any) -> dict[str, Any]:
    rendering = result.rendering
    return {
        "status": result.status.value,
        "selected": list(result.selected),
        "package_id": result.package_id,
        "trace_id": result.trace_id,
        "rendered": None if rendering is None else _sha(rendering.text),
        "body": None if rendering is None else _sha(rendering.body_json),
        "manifest": None if rendering is None else _sha(json.dumps(rendering.manifest.to_dict())),
    }


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _answer(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    import assembler

    try:
        return _digest(call(*args, **kwargs))
    except assembler.AssemblerError as error:
        return {"error": type(error).__name__}


def _side(inputs: Path) -> None:
    import assembler

    data = json.loads(inputs.read_text(encoding="utf-8"))
    out: dict[str, Any] = {
        "package": assembler.__file__,
        "corpus": [],
        "requests": [],
        "sessions": [],
    }
    for case in data["corpus"]:
        for strategy in ("exact", "greedy"):
            out["corpus"].append(
                _answer(assembler.assemble, case, strategy=strategy, time_limit=_LIMIT)
            )
    for i, request in enumerate(data["requests"]):
        fmt = FORMATS[i % len(FORMATS)] if i % 4 == 0 else None
        out["requests"].append(_answer(assembler.assemble, request, time_limit=_LIMIT, render=fmt))
    for sequence in data["sessions"]:
        out["sessions"].append(_session_answers(sequence))
    out["agents"] = [_agent_answers(case) for case in data.get("agents", [])]
    json.dump(out, sys.stdout)


def _agent_answers(case: dict[str, Any]) -> list[Any]:
    import assembler

    answers = [
        _answer(assembler.assemble, case["request"], time_limit=_LIMIT, render="openai-chat")
    ]
    previous = assembler.assemble(case["before"], time_limit=_LIMIT, render="anthropic-messages")
    if previous.rendering is not None:
        blocks = previous.rendering.manifest.cache_blocks(previous.rendering.text)
        cache = {
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "tolerance": case["tolerance"],
            "previous": {"blocks": blocks},
        }
        cached = {**case["request"], "cache": cache}
        answers.append(
            _answer(assembler.assemble, cached, time_limit=_LIMIT, render="anthropic-messages")
        )
    session = assembler.Session(case["before"], time_limit=_LIMIT, render="openai-chat")
    session.answer()
    answers.append(_answer(session.apply, case["delta"]))
    return answers


def _session_answers(sequence: dict[str, Any]) -> list[Any]:
    import assembler

    fmt = sequence.get("render")
    session = assembler.Session(sequence["first"], time_limit=_LIMIT, render=fmt)
    request = json.loads(json.dumps(sequence["first"]))
    answers = [_answer(session.answer)]
    for delta in sequence["deltas"]:
        delta = _concrete(delta, request)
        try:
            session.apply(delta)
        except assembler.AssemblerError as error:
            answers.append({"error": type(error).__name__})
            continue
        request = session.to_dict()
        answers.append(_answer(session.answer))
        answers.append(_answer(assembler.assemble, request, time_limit=_LIMIT, render=fmt))
    return answers


def _concrete(delta: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    """A re-scoring becomes an update of the candidate as the session has it."""
    if "rescore" not in delta:
        return delta
    target, relevance = delta["rescore"]
    for c in request["candidates"]:
        if c["id"] == target:
            return {"update": [{**c, "relevance": relevance}]}
    return {}


# -- both sides ----------------------------------------------------------------------


def _parts(pairs: Any) -> dict[str, int]:
    """How many differing answers differ in each key (an answer list: each answer)."""
    counts: dict[str, int] = {}
    for before, after in pairs:
        for a, b in zip(*((x if isinstance(x, list) else [x]) for x in (before, after)),
                        strict=False):  # fmt: skip
            if a == b:
                continue
            keys = set(a) | set(b) if isinstance(a, dict) and isinstance(b, dict) else {"answer"}
            for key in sorted(k for k in keys if not isinstance(a, dict) or a.get(k) != b.get(k)):
                counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__)
    parser.add_argument("--before", required=True, help="the git revision to compare with")
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--agents", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    # here, not at the top: a side's child loads this file beside its own benchmarks/
    from benchmarks.revisions import call_in, checked_out

    corpus = [json.loads(p.read_text()) for p in sorted((ROOT / "corpus").glob("*.json"))]
    inputs = {
        "corpus": [case.get("request", case) for case in corpus],
        "requests": _requests(args.requests, args.seed),
        "sessions": _sessions(args.sessions, args.seed + 1),
        "agents": _agents(args.agents, args.seed + 2),
    }
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch, checked_out(args.before, None) as sides:
        given = Path(scratch) / "inputs.json"
        given.write_text(json.dumps(inputs), encoding="utf-8")
        old, new = (call_in(side, Path(__file__), "_side", given) for side in sides)
    report: dict[str, Any] = {
        "before": args.before,
        "packages": [old["package"], new["package"]],
        "seconds": time.monotonic() - started,
    }
    if old["package"] == new["package"]:
        raise SystemExit(f"both sides imported {old['package']}: nothing was compared")
    failed = False
    for family in ("corpus", "requests", "sessions", "agents"):
        pairs = list(zip(old[family], new[family], strict=True))
        differ = [i for i, (a, b) in enumerate(pairs) if a != b]
        answers = sum(len(a) if isinstance(a, list) else 1 for a, _ in pairs)
        report[family] = {
            "inputs": len(pairs),
            "answers": answers,
            "differ": len(differ),
            # which parts of an answer differ, counted over every differing answer
            "parts": _parts(pairs[i] for i in differ),
            "first": [
                {"index": i, "before": old[family][i], "after": new[family][i]} for i in differ[:5]
            ],
        }
        failed |= bool(differ)
        parts = report[family]["parts"]
        print(
            f"{family}: {len(pairs)} inputs, {answers} answers, {len(differ)} differ"
            + (f" ({', '.join(f'{k} {n}' for k, n in parts.items())})" if parts else ""),
            file=sys.stderr,
        )
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
