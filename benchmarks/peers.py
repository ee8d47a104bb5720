"""This project beside the context packers users run today, on the same agent transcripts.

Run ``python -m benchmarks.peers`` (``--help``; peers from the ``bench`` extra, and
prompt-tsx from npm in ``benchmarks/peers_node`` when ``npm install`` was run there).
Output: ``benchmarks/results/PEERS.md`` and ``peers.json``; exit 1 when our answer is
invalid or below another's value (it is exact, so that would be a bug).

The transcripts are ``benchmarks.agentcases``'s (40, 120 and 200 rounds of assistant
tool calls and results, a required system prompt, the budget 45% of the total), each
message's forms counted once with o200k_base: every packer gets the same sizes, known
in advance, so its time is its packing alone. The packers:

* ``ours``: ``assembler.assemble(request, render="openai-chat")`` (the exact optimum,
  rendered to the provider body), and ``ours, +1 turn``: a ``Session`` holding the
  transcript but its last round, applying the delta that adds it (also rendered);
* ``trim_messages``: LangChain's ``trim_messages(strategy="last", include_system=True,
  start_on="human", allow_partial=False)`` over the messages (full forms), its counter
  a lookup of the known sizes (a plain scan);
* ``ctxbudgeter``: ``compile_items`` with a counter of the known sizes, each message an
  item at its relevance as priority, required ones required, a long tool result
  compressible to its shortened form;
* ``contextcram``: ``Packer`` with the same counter, each message an item (drop, not
  truncate) at its relevance as priority;
* ``prompt-tsx``: ``@vscode/prompt-tsx`` under node: each message a ``ChatMessage`` at
  its relevance as priority, pruned to the budget by its renderer, sizes from the same
  table (run once per size in one node process, timed there).

One validity checker (at most one form of each message, every tool call with all of
its results and no result without its call, the required messages present, within the
budget) and one value function (the request's value of the forms kept: section 6 of
the model, recency relevance, a shortened form at half, a placeholder at 5%) judge
every packer's answer; value kept is against ours, which is the optimum.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
NODE = ROOT / "benchmarks" / "peers_node"

Picked = set[str]
# the violations the table counts by name
ORPHANED = "a tool call without all its results, or a result without its call"
REQUIRED = "a required message left out"


# -- one validity checker and one value function -------------------------------------


def value_of(request: dict[str, Any], picked: Picked) -> int:
    from assembler.model.objective import form_value

    return sum(form_value(c["relevance"], 0.0) for c in request["candidates"] if c["id"] in picked)


def violations(request: dict[str, Any], picked: Picked) -> list[str]:
    found: list[str] = []
    by_id = {c["id"]: c for c in request["candidates"]}
    unknown = picked - set(by_id)
    if unknown:
        found.append(f"unknown ids {sorted(unknown)[:3]}")
    chosen = [by_id[i] for i in picked if i in by_id]
    identities = [c["identity"] for c in chosen]
    if len(identities) != len(set(identities)):
        found.append("two forms of one message")
    held = set(identities)
    groups: dict[str, set[str]] = {}
    for c in request["candidates"]:
        if "group" in c:
            groups.setdefault(c["group"], set()).add(c["identity"])
    for members in groups.values():
        if members & held and not members <= held:
            found.append(ORPHANED)
            break
    required = {c["identity"] for c in request["candidates"] if c.get("required")}
    if not required <= held:
        found.append(REQUIRED)
    if sum(c["cost"] for c in chosen) > request["task"]["budget"]:
        found.append("over budget")
    return found


# -- the packers ------------------------------------------------------------------------


def _full(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The full form of each message, in message order (tools and system first)."""
    return [c for c in request["candidates"] if c["form"] == "full"]


def ours(request: dict[str, Any]) -> Callable[[], Picked]:
    import assembler

    def run() -> Picked:
        result = assembler.assemble(request, render="openai-chat")
        return set(result.selected)

    return run


def ours_turn(before: dict[str, Any], delta: dict[str, Any]) -> Callable[[], Picked]:
    import assembler

    session = assembler.Session(before, render="openai-chat")
    session.answer()

    def run() -> Picked:
        proposal = session.propose(delta)  # the session stays as it was: repeatable
        return set(proposal.result.selected)

    return run


def trim(request: dict[str, Any], messages: list[dict[str, Any]]) -> Callable[[], Picked]:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )

    full = _full(request)
    size = {c["id"]: c["cost"] for c in full}
    native: list[BaseMessage] = []
    for c in sorted(full, key=lambda c: c["turn"]):
        message = messages[c["turn"]]
        text = c["content"]
        if message["role"] == "system":
            native.append(SystemMessage(text, id=c["id"]))
        elif message["role"] == "tool":
            native.append(ToolMessage(text, id=c["id"], tool_call_id=message["tool_call_id"]))
        elif message["role"] == "assistant":
            calls = [
                {"name": call["function"]["name"], "args": {}, "id": call["id"]}
                for call in message.get("tool_calls") or []
            ]
            native.append(AIMessage(text, id=c["id"], tool_calls=calls))
        else:
            native.append(HumanMessage(text, id=c["id"]))
    return trim_runner(native, size, request["task"]["budget"])


def trim_runner(native: list[Any], size: dict[str, int], budget: int) -> Callable[[], Picked]:
    """``trim_messages`` over ``native`` (LangChain messages whose ids are form ids),
    counting each by ``size``; what it keeps, by id."""
    from langchain_core.messages import BaseMessage, trim_messages

    def counter(kept: list[BaseMessage]) -> int:
        return sum(size[str(m.id)] for m in kept)

    def run() -> Picked:
        kept = trim_messages(
            native,
            max_tokens=budget,
            token_counter=counter,
            strategy="last",
            include_system=True,
            start_on="human",
            allow_partial=False,
        )
        return {str(m.id) for m in kept}

    return run


def _known(request: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    """Each form's text (made unique by its id) and its known size."""
    size: dict[str, int] = {}
    text: dict[str, str] = {}
    for c in request["candidates"]:
        body = f"{c['id']}\n{c['content']}"
        size[body], text[c["id"]] = c["cost"], body
    return size, text


def ctxbudgeter(request: dict[str, Any]) -> Callable[[], Picked]:
    size, text = _known(request)
    shorter = {c["identity"]: c["id"] for c in request["candidates"] if c["form"] == "trimmed"}
    entries = [
        {
            "name": c["id"],
            "content": text[c["id"]],
            "priority": round(100 * c["relevance"]),
            "relevance": c["relevance"],
            "required": bool(c.get("required")),
            "compressible": c["identity"] in shorter,
            "compressed_content": text.get(shorter.get(c["identity"], "")),
        }
        for c in _full(request)
    ]
    return ctxbudgeter_runner(entries, size, text, request["task"]["budget"])


def ctxbudgeter_runner(
    entries: list[dict[str, Any]], size: dict[str, int], text: dict[str, str], budget: int
) -> Callable[[], Picked]:
    """ctxbudgeter's ``compile_items`` over ``entries`` (``ContextItem`` fields), each
    text counted by ``size``; what it keeps, by form id (a compressed item: its form's)."""
    from ctxbudgeter import ContextItem, TokenCounter, compile_items

    class Known(TokenCounter):
        def count(self, body: str) -> int:
            return size[body] if body in size else len(body) // 4

    counter = Known("gpt-4o")
    items = [ContextItem.model_validate(entry) for entry in entries]
    back = {body: key for key, body in text.items()}

    def run() -> Picked:
        pack = compile_items(
            items,
            model="gpt-4o",
            token_budget=budget + 1,
            reserved_output_tokens=1,
            counter=counter,
        )
        return {back.get(pack.content_for(i.name), i.name) for i in pack.included_in_input_order()}

    return run


def contextcram(request: dict[str, Any]) -> Callable[[], Picked]:
    size, text = _known(request)
    entries: list[tuple[str, str | int, str]] = [
        (text[c["id"]], "required" if c.get("required") else round(100 * c["relevance"]), c["id"])
        for c in _full(request)
    ]
    return contextcram_runner(entries, size, request["task"]["budget"])


def contextcram_runner(
    entries: list[tuple[str, str | int, str]], size: dict[str, int], budget: int
) -> Callable[[], Picked]:
    """contextcram's ``Packer`` (drop, not truncate) over ``entries`` (text, priority,
    name), each text counted by ``size``; what it keeps, by name."""
    from contextcram import CallableTokenizer, Packer, Strategy

    tokenizer = CallableTokenizer(lambda body: size[body] if body in size else len(body) // 4)

    def run() -> Picked:
        packer = Packer(budget, tokenizer=tokenizer)
        for body, priority, name in entries:
            packer.add(body, priority=priority, name=name, strategy=Strategy.DROP)
        result = packer.fit()
        return {str(item.name) for item in result.items}

    return run


# -- running ------------------------------------------------------------------------------


def _timed(run: Callable[[], Picked], repeats: int) -> tuple[Picked, list[float]]:
    picked = run()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        picked = run()
        times.append(time.perf_counter() - started)
    return picked, times


def _node_message(candidate: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    out = {
        "id": candidate["id"],
        "role": message["role"],
        "content": candidate["content"],
        "tokens": candidate["cost"],
        "priority": round(100 * candidate["relevance"]),
    }
    if message.get("tool_calls"):
        calls = message["tool_calls"]
        out["calls"] = [{"id": c["id"], "name": c["function"]["name"]} for c in calls]
    if message["role"] == "tool":
        out["call"] = message["tool_call_id"]
    return out


def _prompt_tsx(cases: list[dict[str, Any]], repeats: int) -> dict[str, Any] | None:
    script = NODE / "pack.mjs"
    if shutil.which("node") is None or not (NODE / "node_modules" / "@vscode").exists():
        return None
    payload = [
        {
            "name": case["name"],
            "budget": case["request"]["task"]["budget"],
            "messages": [
                _node_message(c, case["messages"][c["turn"]])
                for c in sorted(_full(case["request"]), key=lambda c: c["turn"])
            ],
        }
        for case in cases
    ]
    done = subprocess.run(
        ["node", str(script), str(repeats)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=NODE,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"prompt-tsx failed:\n{done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__)
    parser.add_argument("--rounds", type=int, nargs="*", default=[40, 120, 200])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks import machine
    from benchmarks.agentcases import transcript

    load_before = os.getloadavg()[0]
    cases: list[dict[str, Any]] = []
    for rounds in args.rounds:
        for seed in range(args.seeds):
            t = transcript(rounds, seed)
            request = t.request()
            before, delta = t.next_turn()
            cases.append(
                {
                    "name": f"{rounds}-{seed}",
                    "rounds": rounds,
                    "request": request,
                    "before": before,
                    "delta": delta,
                    "messages": t.messages,
                }
            )
    rows: list[dict[str, Any]] = []
    failed = False
    for case in cases:
        request = case["request"]
        packers = {
            "ours": ours(request),
            "ours, +1 turn": ours_turn(case["before"], case["delta"]),
            "trim_messages": trim(request, case["messages"]),
            "ctxbudgeter": ctxbudgeter(request),
            "contextcram": contextcram(request),
        }
        best = None
        for name, run in packers.items():
            picked, times = _timed(run, args.repeats)
            value = value_of(request, picked)
            if name == "ours":
                best = value
            wrong = violations(request, picked)
            rows.append(
                {
                    "case": case["name"],
                    "rounds": case["rounds"],
                    "packer": name,
                    "forms": len(request["candidates"]),
                    "median_s": statistics.median(times),
                    "value": value,
                    "optimum": best,
                    "violations": wrong,
                }
            )
            if name.startswith("ours") and (wrong or (best is not None and value != best)):
                failed = True
    tsx = _prompt_tsx(cases, args.repeats)
    if tsx is not None:
        for case in cases:
            answer = tsx[case["name"]]
            picked = set(answer["ids"])
            optimum = next(
                r["value"] for r in rows if r["case"] == case["name"] and r["packer"] == "ours"
            )
            rows.append(
                {
                    "case": case["name"],
                    "rounds": case["rounds"],
                    "packer": "prompt-tsx",
                    "forms": len(case["request"]["candidates"]),
                    "median_s": answer["median_s"],
                    "value": value_of(case["request"], picked),
                    "optimum": optimum,
                    "violations": violations(case["request"], picked),
                }
            )
    load_after = os.getloadavg()[0]
    record = {
        "machine": machine.describe(),
        "load": [round(load_before, 2), round(load_after, 2)],
        "repeats": args.repeats,
        "rows": rows,
    }
    text = _markdown(record)
    print(text)
    if not args.no_write:
        (RESULTS / "peers.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        (RESULTS / "PEERS.md").write_text(text + "\n", encoding="utf-8")
    return 1 if failed else 0


def _markdown(record: dict[str, Any]) -> str:
    rows = record["rows"]
    machine = record["machine"]
    packers = list(dict.fromkeys(r["packer"] for r in rows))
    sizes = sorted({r["rounds"] for r in rows})
    lines = [
        "# Context packers on agent transcripts, side by side",
        "",
        f"`python -m benchmarks.peers` on commit {machine.get('commit')}, "
        f"{machine.get('cpu')}, load average {record['load'][0]} before and "
        f"{record['load'][1]} after; median of {record['repeats']} calls per packer and "
        "transcript (3 seeds per size), interleaved by transcript. Sizes known in advance "
        "(o200k_base counts, the same table for every packer). The collector as the "
        "library leaves it (Python's defaults).",
        "",
        "| rounds | forms | packer | median time | ours / it | valid | orphaned tool messages |"
        " required left out | value kept |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        ours_time = statistics.median(
            r["median_s"] for r in rows if r["rounds"] == size and r["packer"] == "ours"
        )
        for packer in packers:
            mine = [r for r in rows if r["rounds"] == size and r["packer"] == packer]
            if not mine:
                continue
            median = statistics.median(r["median_s"] for r in mine)
            valid = sum(not r["violations"] for r in mine)
            kept = statistics.mean(r["value"] / r["optimum"] for r in mine if r["optimum"])
            forms = round(statistics.mean(r["forms"] for r in mine))
            orphaned = sum(ORPHANED in r["violations"] for r in mine)
            missing = sum(REQUIRED in r["violations"] for r in mine)
            lines.append(
                f"| {size} | {forms} | {packer} | {median * 1000:.3f} ms | "
                f"{ours_time / median:.1f}x | {valid}/{len(mine)} | {orphaned} | {missing} | "
                f"{100 * kept:.1f}% |"
            )
    return "\n".join(lines + violations_seen(rows))


def violations_seen(rows: list[dict[str, Any]]) -> list[str]:
    """The lines that close a table: every violation any row shows, once."""
    problems = sorted({v for r in rows for v in r["violations"]})
    return ["", "Violations seen: " + "; ".join(problems) + "."] if problems else []


if __name__ == "__main__":
    raise SystemExit(main())
