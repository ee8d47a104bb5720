"""Issue 47's figures, before and after: ``python -m benchmarks.sendable --before REV``.

Input: a git revision to measure beside the working tree (``--before``), how many
requests, sessions and repeats.
Output: ``benchmarks/results/sendable.json`` and a table on stderr, each figure for both
sides (``benchmarks.revisions``: each side's child imports its own package, through
the public API only):

* **renderings refused by a format rule while a sendable bundle exists**: generated
  requests (``generate`` with content on every form, and the render-rule hunt's
  conversations) rendered by ``exact`` in each of the five formats and three header
  styles; a rendering that raises ``RenderError`` for a format rule (or
  ``RENDER_EMPTY``) counts when the after side sends a bundle for it (a rendering it
  made: proof that one exists);
* **cached-session deltas equal to a fresh assemble()**: sessions with a cache section
  (each provider, rendered in its format or not) applying an empty delta, re-scorings
  (one that keeps the optimum, one that does not), an added and a removed candidate and
  a new budget; each answer compared, timings aside, with ``assemble()`` of the request
  the session stands for;
* **the 2,082-form tie-break case** (``tests/cases/tiebreak-2082.json.gz``): proven or
  not at a 10 s limit, and the wall time (least of ``--repeat``);
* **909 required identities twelve times over the budget** (the issue's shape,
  ``tests/test_refusal.py``): the status and the wall time of the refusal's stages
  (closure and refusal, of the call's timings) at limits of 1 s and 10 s;
* **oracle mismatches**: the conversations' answers by ``exact`` and ``enumerate`` in
  each format (selection, package and trace ids, refusal).

Wall times on this shared machine are noisy: the load average is recorded beside them.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "sendable.json"
FORMATS = ("text", "openai-chat", "anthropic-messages", "openai-responses", "gemini")
HEADERS = ("none", "minimal", "provenance")
PROVIDERS = {"anthropic": "anthropic-messages", "openai": "openai-chat", "gemini": "gemini"}
CASE = ROOT / "tests" / "cases" / "tiebreak-2082.json.gz"


# -- the inputs (this checkout's generators) ------------------------------------------


def _requests(count: int, seed: int) -> list[dict[str, Any]]:
    from assembler.hunt.conversations import conversation
    from assembler.hunt.generate import Shape, generate

    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 2:
            out.append(conversation(rng, rng.randint(2, 9)))
            continue
        request = generate(rng, Shape.small(rng.randint(1, 12)))
        for c in request["candidates"]:
            c.setdefault("content", f"content of {c['id']}")
        out.append(request)
    return out


def _sessions(count: int, seed: int) -> list[dict[str, Any]]:
    from assembler.hunt.conversations import conversation
    from assembler.hunt.generate import Shape, generate

    rng = random.Random(seed)
    out = []
    for k in range(count):
        if k % 2:
            first = conversation(rng, rng.randint(3, 9))
            first.pop("cache", None)
        else:
            first = generate(rng, Shape.small(rng.randint(2, 12)))
            for c in first["candidates"]:
                c.setdefault("content", f"content of {c['id']}")
        provider = rng.choice(sorted(PROVIDERS))
        cache = {"provider": provider, "min_prefix_tokens": rng.choice((1, 16, 64))}
        if provider == "openai":
            cache["step_tokens"] = 8
        render = PROVIDERS[provider] if rng.random() < 0.75 else None
        out.append({"first": first, "cache": cache, "render": render, "seed": k})
    return out


def _many_required() -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_refusal import _many_required as built

    request: dict[str, Any] = built(909, 3000, 909, 12)
    return request


# -- one side (a child process) ----------------------------------------------------------


def _rendered(request: dict[str, Any], fmt: str, headers: str, strategy: str = "exact") -> str:
    import assembler

    try:
        result = assembler.assemble(request, render=fmt, headers=headers, strategy=strategy,
                                    time_limit=30)  # fmt: skip
    except assembler.RenderError as error:
        rule = getattr(error, "rule", None)
        return f"render-error:{rule or error.code}"
    except assembler.AssemblerError as error:
        return f"error:{type(error).__name__}"
    if result.rendering is not None:
        return "rendered"
    refusal = result.refusal
    return f"{result.status.value}:{'' if refusal is None else refusal.code.value}"


def _answer(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.to_dict()
    data.pop("timings", None)
    return data


def _session_steps(case: dict[str, Any]) -> list[bool | None]:
    """Whether each of the session's answers is a fresh call's (None: the request has
    no answer in its format, or the delta is refused)."""
    import assembler

    options = {"render": case["render"], "time_limit": 30}
    rng = random.Random(case["seed"])
    try:
        session = assembler.Session(case["first"], cache=case["cache"], **options)
        # the request its first answer stands for (after it, what the provider holds)
        current = session.to_dict()
        first = session.answer()
    except assembler.AssemblerError:
        return [None]
    out: list[bool | None] = [_answer(first) == _fresh(current, options)]
    for delta in _deltas(rng, session.to_dict(), first):
        before = session.to_dict()
        expected = _fresh(_applied(before, delta), options)
        try:
            got = session.apply(delta)
        except assembler.AssemblerError:
            out.append(None if expected is None else False)
            continue
        out.append(_answer(got) == expected)
    return out


def _fresh(request: dict[str, Any], options: dict[str, Any]) -> dict[str, Any] | None:
    import assembler

    try:
        return _answer(assembler.assemble(request, **options))
    except assembler.AssemblerError:
        return None


def _deltas(rng: random.Random, request: dict[str, Any], first: Any) -> list[dict[str, Any]]:
    ids = [c["id"] for c in request["candidates"]]
    chosen = set(first.selected)
    deltas: list[dict[str, Any]] = [{}]
    if ids:
        deltas.append({"relevance": {i: 1.0 if i in chosen else 0.0 for i in ids}})
        deltas.append({"relevance": {rng.choice(ids): rng.choice((0.0, 0.4, 1.0))}})
    deltas.append({"add": [{"id": "added-0", "cost": rng.randint(1, 40), "relevance": 0.9,
                            "content": "a new document"}]})  # fmt: skip
    plain = [i for i in ids if "tool_call_id" not in _by_id(request)[i]]
    if plain:
        deltas.append({"remove": [rng.choice(plain)]})
    deltas.append({"task": {"budget": rng.randint(0, 400)}})
    return deltas


def _by_id(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in request["candidates"]}


def _applied(request: dict[str, Any], delta: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(request)
    for key, value in delta.get("task", {}).items():
        out["task"][key] = value
    scores = delta.get("relevance", {})
    removed = set(delta.get("remove", []))
    out["candidates"] = [
        {**c, "relevance": scores[c["id"]]} if c["id"] in scores else c
        for c in out["candidates"]
        if c["id"] not in removed
    ]
    out["candidates"] += copy.deepcopy(delta.get("add", []))
    return out


def _timed(request: dict[str, Any], limit: float, repeat: int) -> dict[str, Any]:
    import assembler

    best: dict[str, Any] | None = None
    for _ in range(repeat):
        started = time.perf_counter()
        result = assembler.assemble(request, time_limit=limit)
        wall = time.perf_counter() - started
        timings = dict(result.timings)
        row = {
            "status": result.status.value,
            "optimal": result.optimal,
            "code": None if result.refusal is None else result.refusal.code.value,
            "wall": round(wall, 3),
            "solve": round(timings.get("solve", 0.0), 3),
            "refusal_stages": round(timings.get("closure", 0.0) + timings.get("refusal", 0.0), 4),
            "load": os.getloadavg()[0],
        }
        if best is None or row["wall"] < best["wall"]:
            best = row
    assert best is not None
    return best


def _side(inputs: Path) -> None:
    import assembler

    data = json.loads(inputs.read_text(encoding="utf-8"))
    out: dict[str, Any] = {"package": assembler.__file__}
    out["renderings"] = [
        [_rendered(request, fmt, headers) for fmt in FORMATS for headers in HEADERS]
        for request in data["requests"]
    ]
    out["oracle"] = [
        [
            _rendered(request, fmt, "none") == _rendered(request, fmt, "none", "enumerate")
            for fmt in FORMATS
        ]
        for request in data["requests"]
        if len(request["candidates"]) <= 12
    ]
    out["sessions"] = [_session_steps(case) for case in data["sessions"]]
    repeat = data["repeat"]
    out["tiebreak"] = _timed(data["tiebreak"], 10.0, repeat)
    out["required"] = {
        str(limit): _timed(data["required"], limit, repeat) for limit in (1.0, 10.0)
    }
    json.dump(out, sys.stdout)


# -- the figures -----------------------------------------------------------------------


def _figures(side: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    renderings = [r for rows in side["renderings"] for r in rows]
    sendable = [r for rows in after["renderings"] for r in rows]
    refused = sum(
        1
        for mine, theirs in zip(renderings, sendable, strict=True)
        if mine.startswith("render-error") and theirs == "rendered"
    )
    steps = [s for steps in side["sessions"] for s in steps if s is not None]
    oracle = [same for rows in side["oracle"] for same in rows]
    return {
        "renderings": len(renderings),
        "refused_by_a_rule_while_sendable": refused,
        "render_errors": sum(r.startswith("render-error") for r in renderings),
        "unsendable_refusals": sum(r == "refused:UNSENDABLE" for r in renderings),
        "session_answers": len(steps),
        "session_answers_equal": sum(steps),
        "oracle_answers": len(oracle),
        "oracle_mismatches": len(oracle) - sum(oracle),
        "tiebreak": side["tiebreak"],
        "required": side["required"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sendable", description=__doc__)
    parser.add_argument("--before", required=True, help="the git revision to measure beside")
    parser.add_argument("--requests", type=int, default=550)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from benchmarks.revisions import call_in, checked_out

    inputs = {
        "requests": _requests(args.requests, args.seed),
        "sessions": _sessions(args.sessions, args.seed + 1),
        "tiebreak": json.loads(gzip.decompress(CASE.read_bytes())),
        "required": _many_required(),
        "repeat": args.repeat,
    }
    with tempfile.TemporaryDirectory() as scratch, checked_out(args.before, None) as sides:
        given = Path(scratch) / "inputs.json"
        given.write_text(json.dumps(inputs), encoding="utf-8")
        old, new = (call_in(side, Path(__file__), "_side", given) for side in sides)
    report = {
        "before": args.before,
        "load_at_end": os.getloadavg(),
        "kernels": os.environ.get("ASSEMBLER_KERNELS", "compiled when built"),
        "sides": {"before": _figures(old, new), "after": _figures(new, new)},
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for name, figures in report["sides"].items():
        print(f"{name}: {json.dumps(figures)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
