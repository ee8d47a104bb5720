"""The peers' bake-off of issue 32: four workloads, every packer on the same inputs.

Run ``python -m benchmarks.bakeoff`` (``--help``; the peers come with the ``bench``
extra, prompt-tsx after ``npm ci`` in ``benchmarks/peers_node``).
Output: ``benchmarks/results/BAKEOFF.md`` and ``bakeoff.json``; exit 1 when our answer
is invalid or below another packer's value (it is exact, so that would be a bug).

The workloads, each a list of cases with every form's size known in advance (the same
table for every packer, so a time is its packing alone):

* ``transcripts``: ``benchmarks.agentcases``'s agent transcripts (40, 120, 200 rounds):
  tool calls coupled with their results, long results also offered shortened, the
  system prompt and the first and last user turns required;
* ``rag``: retrieval packs: chunks of documents (a full form and a one-sentence
  summary each) at a retrieval score, a required instruction and question, the budget
  a fifth of the full chunks' cost;
* ``traps``: the same packs with a third of the chunks traps a packer must not send
  (a stale version of a document, a chunk derived from a sealed one, another
  project's, an instruction from a tool's channel), each scored among the highest;
* ``loop``: 50 calls of an agent loop, each one round longer than the last: ours as a
  ``Session`` applying each round's delta, the others packing each call afresh.

The packers: ``ours`` (``assemble(request, render="openai-chat")``: the exact optimum,
rendered to the provider body; in the loop ``Session.apply``); LangChain's
``trim_messages`` (``strategy="last"``, the most relevant last); ``ctxbudgeter``
(``compile_items``, the summary as a chunk's compressed form); ``contextcram``
(``Packer``, drop); ``prompt-tsx`` under node (``PromptRenderer``, priorities). One
validity checker (``benchmarks.peers.violations``, plus: no trap sent) and one value
function (the request's value of the forms kept) judge every answer. Times are the
median of ``--repeats`` calls (the loop: the median call of the 50, over the repeats),
interleaved by case; the load average is read before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .peers import _known, contextcram_runner, ctxbudgeter_runner, trim_runner, violations_seen

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
NODE = ROOT / "benchmarks" / "peers_node"
TRAP = "a trap sent (a gated form)"
# what pack.mjs reads of a message
_NODE_FIELDS = ("id", "role", "content", "tokens", "priority", "calls", "call")
Picked = set[str]
_WORDS = (
    "cache", "migration", "index", "replica", "shard", "lease", "quorum", "schema",
    "backfill", "rollout", "token", "budget", "latency", "queue", "retry", "timeout",
    "vector", "embedding", "chunk", "ranking", "window", "context", "tool", "result",
    "deploy", "canary", "metric", "alert", "incident", "owner", "review", "policy", "version",
    "source", "project",
)


# -- the workloads ----------------------------------------------------------------------


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _rag(seed: int, chunks: int, traps: bool) -> dict[str, Any]:
    """A retrieval pack of ``chunks`` chunks (a third traps when ``traps``), as a request
    and as the peers' items."""
    rng = random.Random(seed)
    candidates: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    trap_ids: set[str] = set()

    def item(c: dict[str, Any], role: str, short: str | None = None) -> None:
        items.append(
            {
                "id": c["id"],
                "identity": c["identity"],
                "role": role,
                "content": c["content"],
                "tokens": c["cost"],
                "priority": round(100 * c.get("relevance", 1.0)),
                "relevance": c.get("relevance", 1.0),
                "required": bool(c.get("required")),
                "short": short,
            }
        )

    system = {
        "id": "instruction",
        "identity": "instruction",
        "cost": 120,
        "kind": "system",
        "channel": "system",
        "scope": "shared",
        "required": True,
        "relevance": 1.0,
        "content": _sentence(rng, 60),
    }
    candidates.append(system)
    item(system, "system")
    seal = ["incident-draft-0"]
    total = 0
    for k in range(chunks):
        doc = f"doc-{k // 4}"
        identity = f"{doc}-chunk-{k % 4}"
        score = round(rng.uniform(0.05, 0.95), 3)
        body = " ".join(_sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(8, 30)))
        cost = max(20, len(body) // 4)
        total += cost
        full = {
            "id": f"{identity}-full",
            "identity": identity,
            "form": "full",
            "cost": cost,
            "relevance": score,
            "scope": "project-a",
            "source": doc,
            "version": "v2",
            "content": body,
        }
        summary = {
            **full,
            "id": f"{identity}-summary",
            "form": "summary",
            "cost": max(8, cost // 8),
            "relevance": round(score * 0.4, 3),
            "content": body.split(".")[0] + ".",
        }
        trap = traps and k % 3 == 2
        if trap:
            score = round(rng.uniform(0.9, 1.0), 3)
            full["relevance"], summary["relevance"] = score, round(score * 0.4, 3)
            how = (k // 3) % 4
            for c in (full, summary):
                if how == 0:
                    c["version"] = "v1"  # stale
                elif how == 1:
                    c["lineage"] = seal  # derived from a sealed draft
                elif how == 2:
                    c["scope"] = "project-b"  # another project's
                else:
                    c.update(role="instruction", kind="developer", channel="tool")
            trap_ids.update((full["id"], summary["id"]))
        candidates += [full, summary]
        item(full, "user", summary["id"])
        item(summary, "user")
    question = {
        "id": "question",
        "identity": "question",
        "cost": 40,
        "kind": "user_turn",
        "scope": "shared",
        "required": True,
        "relevance": 1.0,
        "turn": 1,
        "content": _sentence(rng, 25),
    }
    candidates.append(question)
    item(question, "user")
    sources = {f"doc-{k // 4}": "v2" for k in range(chunks)}
    request = {
        "task": {"id": "rag", "budget": total // 5, "scope": "project-a", "seal": seal},
        "candidates": candidates,
        "sources": sources,
    }
    return {"request": request, "items": items, "traps": trap_ids, "order": "relevance"}


def _transcript_case(rounds: int, seed: int) -> dict[str, Any]:
    from benchmarks.agentcases import transcript

    t = transcript(rounds, seed)
    request = t.request()
    return {"request": request, "items": _transcript_items(request, t.messages), "traps": set()}


def _transcript_items(request: dict[str, Any], messages: list[dict[str, Any]]) -> list[Any]:
    shorter = {c["identity"]: c["id"] for c in request["candidates"] if c["form"] == "trimmed"}
    items = []
    for c in sorted(
        (c for c in request["candidates"] if c["form"] == "full"), key=lambda c: c["turn"]
    ):
        message = messages[c["turn"]]
        entry = {
            "id": c["id"],
            "identity": c["identity"],
            "role": message["role"],
            "content": c["content"],
            "tokens": c["cost"],
            "priority": round(100 * c["relevance"]),
            "relevance": c["relevance"],
            "required": bool(c.get("required")),
            "short": shorter.get(c["identity"]),
        }
        if message.get("tool_calls"):
            entry["calls"] = [{"id": x["id"], "name": x["function"]["name"]}
                              for x in message["tool_calls"]]  # fmt: skip
        if message["role"] == "tool":
            entry["call"] = message["tool_call_id"]
        items.append(entry)
    return items


def _loop(calls: int, start: int, seed: int) -> list[dict[str, Any]]:
    """``calls`` requests of one transcript, each a round longer, with each one's delta."""
    from benchmarks.agentcases import transcript

    t = transcript(start + calls, seed)
    steps = []
    previous: dict[str, Any] | None = None
    for rounds in range(start, start + calls + 1):
        request = t.request(rounds)
        step = {"request": request, "items": _transcript_items(request, t.messages)}
        if previous is not None:
            known = {c["id"] for c in previous["candidates"]}
            step["delta"] = {"add": [c for c in request["candidates"] if c["id"] not in known]}
        steps.append(step)
        previous = request
    return steps


# -- the packers over the neutral items --------------------------------------------------


def ours(case: dict[str, Any]) -> Callable[[], Picked]:
    import assembler

    request = case["request"]

    def run() -> Picked:
        return set(assembler.assemble(request, render="openai-chat").selected)

    return run


def _sent(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The items a message-list packer is handed: each unit's full form, in message order
    (a retrieval pack: the least relevant first, so that keeping the last keeps the best)."""
    full = [i for i in case["items"] if i["short"] is not None or i["id"] not in _shorts(case)]
    if case.get("order") == "relevance":
        head = [i for i in full if i["role"] == "system"]
        tail = [i for i in full if i["id"] == "question"]
        middle = sorted(
            (i for i in full if i not in head and i not in tail), key=lambda i: i["relevance"]
        )
        return head + middle + tail
    return full


def _shorts(case: dict[str, Any]) -> set[str]:
    return {i["short"] for i in case["items"] if i["short"] is not None}


def trim(case: dict[str, Any]) -> Callable[[], Picked]:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )

    sent = _sent(case)
    native: list[BaseMessage] = []
    for i in sent:
        if i["role"] == "system":
            native.append(SystemMessage(i["content"], id=i["id"]))
        elif i["role"] == "tool":
            native.append(ToolMessage(i["content"], id=i["id"], tool_call_id=i["call"]))
        elif i["role"] == "assistant":
            calls = [{"name": x["name"], "args": {}, "id": x["id"]} for x in i.get("calls", [])]
            native.append(AIMessage(i["content"], id=i["id"], tool_calls=calls))
        else:
            native.append(HumanMessage(i["content"], id=i["id"]))
    size = {i["id"]: i["tokens"] for i in sent}
    return trim_runner(native, size, case["request"]["task"]["budget"])


def ctxbudgeter(case: dict[str, Any]) -> Callable[[], Picked]:
    size, text = _known(case["request"])
    entries = [
        {
            "name": i["id"],
            "content": text[i["id"]],
            "priority": i["priority"],
            "relevance": i["relevance"],
            "required": i["required"],
            "compressible": i["short"] is not None,
            "compressed_content": text.get(i["short"] or ""),
        }
        for i in _sent(case)
    ]
    return ctxbudgeter_runner(entries, size, text, case["request"]["task"]["budget"])


def contextcram(case: dict[str, Any]) -> Callable[[], Picked]:
    size, text = _known(case["request"])
    entries: list[tuple[str, str | int, str]] = [
        (text[i["id"]], "required" if i["required"] else i["priority"], i["id"])
        for i in _sent(case)
    ]
    return contextcram_runner(entries, size, case["request"]["task"]["budget"])


PACKERS: dict[str, Callable[[dict[str, Any]], Callable[[], Picked]]] = {
    "ours": ours,
    "trim_messages": trim,
    "ctxbudgeter": ctxbudgeter,
    "contextcram": contextcram,
}


def _prompt_tsx(cases: list[dict[str, Any]], repeats: int) -> dict[str, Any] | None:
    if shutil.which("node") is None or not (NODE / "node_modules" / "@vscode").exists():
        return None
    payload = [
        {
            "name": case["name"],
            "budget": case["request"]["task"]["budget"],
            "messages": [
                {k: i[k] for k in _NODE_FIELDS if k in i} for i in _sent(case)
            ],
        }
        for case in cases
    ]
    done = subprocess.run(
        ["node", str(NODE / "pack.mjs"), str(repeats)],
        input=json.dumps(payload), capture_output=True, text=True, cwd=NODE, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"prompt-tsx failed:\n{done.stderr[-2000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


# -- judging and running ------------------------------------------------------------------


def _judged(case: dict[str, Any], picked: Picked) -> tuple[int, list[str]]:
    from benchmarks.peers import value_of, violations

    wrong = violations(case["request"], picked)
    if picked & case["traps"]:
        wrong.append(TRAP)
    return value_of(case["request"], picked), wrong


def _timed(run: Callable[[], Picked], repeats: int) -> tuple[Picked, list[float], list[float]]:
    """The answer, each call's wall time and the process's CPU time over it (which the
    machine's other load moves far less)."""
    picked = run()
    times, cpu = [], []
    for _ in range(repeats):
        started, spent = time.perf_counter(), time.process_time()
        picked = run()
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - spent)
    return picked, times, cpu


def _loop_rows(steps: list[dict[str, Any]], repeats: int, seed: int) -> list[dict[str, Any]]:
    """Each packer over the loop's calls: per call times (ours through one Session)."""
    import assembler

    rows = []
    calls = steps[1:]
    for name, packer in {"ours": None, **{k: v for k, v in PACKERS.items() if k != "ours"}}.items():
        times: list[float] = []
        cpu: list[float] = []
        answers: list[Picked] = []
        for _ in range(max(1, repeats // 3)):
            answers = []
            if packer is None:
                session = assembler.Session(steps[0]["request"], render="openai-chat")
                session.answer()
                for step in calls:
                    started, spent = time.perf_counter(), time.process_time()
                    picked = set(session.apply(step["delta"]).selected)
                    times.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - spent)
                    answers.append(picked)
            else:
                for step in calls:
                    # its inputs built untimed, as a caller holding its messages would
                    run = packer({**step, "traps": set()})
                    started, spent = time.perf_counter(), time.process_time()
                    picked = run()
                    times.append(time.perf_counter() - started)
                    cpu.append(time.process_time() - spent)
                    answers.append(picked)
        judged = [_judged({**s, "traps": set()}, p) for s, p in zip(calls, answers, strict=True)]
        rows.append(
            {
                "workload": "loop",
                "case": f"loop-{seed}",
                "size": len(calls),
                "packer": name,
                "forms": len(calls[-1]["request"]["candidates"]),
                "median_s": statistics.median(times),
                "cpu_s": statistics.median(cpu),
                "value": sum(v for v, _ in judged),
                "violations": sorted({w for _, ws in judged for w in ws}),
                "valid": sum(not ws for _, ws in judged),
                "calls": len(calls),
            }
        )
    best = rows[0]["value"]
    for row in rows:
        row["optimum"] = best
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bakeoff", description=__doc__)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks import machine

    load_before = os.getloadavg()[0]
    cases: list[dict[str, Any]] = []
    rounds = (40, 120) if args.quick else (40, 120, 200)
    chunks = (100,) if args.quick else (100, 400)
    for seed in range(args.seeds):
        for n in rounds:
            cases.append({"workload": "transcripts", "size": n, "name": f"transcript-{n}-{seed}",
                          **_transcript_case(n, seed)})  # fmt: skip
        for n in chunks:
            cases.append({"workload": "rag", "size": n, "name": f"rag-{n}-{seed}",
                          **_rag(seed, n, traps=False)})  # fmt: skip
            cases.append({"workload": "traps", "size": n, "name": f"traps-{n}-{seed}",
                          **_rag(seed, n, traps=True)})  # fmt: skip
    rows: list[dict[str, Any]] = []
    failed = False
    for case in cases:
        best = None
        for name, packer in PACKERS.items():
            picked, times, cpu = _timed(packer(case), args.repeats)
            value, wrong = _judged(case, picked)
            if name == "ours":
                best = value
                failed = failed or bool(wrong)
            elif best is not None and value > best and not wrong:
                failed = True
            rows.append(
                {"workload": case["workload"], "case": case["name"], "size": case["size"],
                 "packer": name, "forms": len(case["request"]["candidates"]),
                 "median_s": statistics.median(times), "cpu_s": statistics.median(cpu),
                 "value": value, "optimum": best,
                 "violations": wrong, "valid": int(not wrong), "calls": 1}
            )  # fmt: skip
    tsx = _prompt_tsx(cases, args.repeats)
    if tsx is not None:
        for case in cases:
            answer = tsx[case["name"]]
            value, wrong = _judged(case, set(answer["ids"]))
            optimum = next(r["value"] for r in rows if r["case"] == case["name"])
            rows.append(
                {"workload": case["workload"], "case": case["name"], "size": case["size"],
                 "packer": "prompt-tsx", "forms": len(case["request"]["candidates"]),
                 "median_s": answer["median_s"], "value": value, "optimum": optimum,
                 "violations": wrong, "valid": int(not wrong), "calls": 1}
            )  # fmt: skip
    for seed in range(args.seeds):
        loop = _loop_rows(_loop(50, 70, seed), args.repeats, seed)
        failed = failed or bool(loop[0]["violations"])
        rows += loop
    load_after = os.getloadavg()[0]
    record = {
        "machine": machine.describe(),
        "load": [round(load_before, 2), round(load_after, 2)],
        "repeats": args.repeats,
        "seeds": args.seeds,
        "rows": rows,
    }
    text = _markdown(record)
    print(text)
    if not args.no_write:
        (RESULTS / "bakeoff.json").write_text(json.dumps(record, indent=1) + "\n", "utf-8")
        (RESULTS / "BAKEOFF.md").write_text(text + "\n", encoding="utf-8")
    return 1 if failed else 0


def _markdown(record: dict[str, Any]) -> str:
    rows = record["rows"]
    machine = record["machine"]
    lines = [
        "# The peers' bake-off: four workloads, side by side",
        "",
        f"`python -m benchmarks.bakeoff` on commit {machine.get('commit')}, "
        f"{machine.get('cpu')}, load average {record['load'][0]} before and "
        f"{record['load'][1]} after; {record['seeds']} seeds per size, median of "
        f"{record['repeats']} calls per packer and case (the loop: the median of its 50 "
        "calls), sizes known in advance. *it / ours* is the peer's time over ours: below "
        "1 the peer is faster (0.25 = 4x faster); the CPU columns are the process's CPU "
        "time over each call, which other load on the machine moves far less than wall "
        "time (prompt-tsx runs in node and reports wall time only).",
        "",
        "| workload | size | forms | packer | median time | it / ours | CPU time | CPU it / ours |"
        " valid | value kept |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = list(dict.fromkeys((r["workload"], r["size"]) for r in rows))
    for workload, size in keys:
        mine = [r for r in rows if r["workload"] == workload and r["size"] == size]
        ours_time = statistics.median(r["median_s"] for r in mine if r["packer"] == "ours")
        ours_cpu = statistics.median(r["cpu_s"] for r in mine if r["packer"] == "ours")
        for packer in dict.fromkeys(r["packer"] for r in mine):
            theirs = [r for r in mine if r["packer"] == packer]
            median = statistics.median(r["median_s"] for r in theirs)
            valid = sum(r["valid"] for r in theirs)
            calls = sum(r["calls"] for r in theirs)
            kept = statistics.mean(r["value"] / r["optimum"] for r in theirs if r["optimum"])
            forms = round(statistics.mean(r["forms"] for r in theirs))
            spent = [r["cpu_s"] for r in theirs if "cpu_s" in r]
            cpu = (
                f"{statistics.median(spent) * 1000:.3f} ms | "
                f"{statistics.median(spent) / ours_cpu:.2f}"
                if spent
                else "- | -"
            )
            lines.append(
                f"| {workload} | {size} | {forms} | {packer} | {median * 1000:.3f} ms | "
                f"{median / ours_time:.2f} | {cpu} | {valid}/{calls} | {100 * kept:.1f}% |"
            )
    return "\n".join(lines + violations_seen(rows))


if __name__ == "__main__":
    raise SystemExit(main())
