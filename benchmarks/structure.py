"""The structural conformance suite run against the context packers users run.

Run ``python -m benchmarks.structure`` (peers from the ``bench`` extra; prompt-tsx
after ``npm ci`` in ``benchmarks/peers_node``). Output:
``benchmarks/results/STRUCTURE.md`` and ``structure.json``; exit 1 when ``fit``'s body
breaks a rule on any case (the same check as ``assembler conformance``).

Every accepted transcript of ``models/structure/`` is cut to a half and to a third of
its tokens (as billed, ``render.meters``) by each packer, and the list it keeps is
judged by ``assembler.verifiers.structure`` against the transcript it was cut from:

* ``fit``: ``assembler.fit`` on the provider body itself;
* ``trim_messages``: LangChain's ``trim_messages(strategy="last", include_system=True,
  start_on="human", allow_partial=False)``;
* ``SummarizationMiddleware cut``: the messages LangChain's summarisation middleware
  keeps (``_determine_cutoff_index`` with ``keep=("tokens", budget)``; the summary it
  would add does not change the structure of what follows it);
* ``ctxbudgeter`` and ``contextcram``: each message an item at its recency as priority
  (required ones required, where the packer has the notion);
* ``prompt-tsx``: each message a ``ChatMessage`` at its recency as priority (100 for
  the required ones), a call's results kept with it (``useKeepWith``).

The peers see the transcript as ``fit`` cuts it (the same units: one per message, one
per tool result, the same sizes), as LangChain messages, items or prompt elements
carrying the calls and results' ids; what each keeps is put back into the provider's
list in its order. A packer's answer is *valid* when the judge finds no rule broken.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assembler.adapters import fit  # noqa: E402
from assembler.adapters.fitting import FitRefused  # noqa: E402
from assembler.adapters.selection import recency, request_data  # noqa: E402
from assembler.conformance import SHARES, load_suite  # noqa: E402
from assembler.model.types import Kind  # noqa: E402
from assembler.providers.registry import named  # noqa: E402
from assembler.providers.units import Unit  # noqa: E402
from assembler.render.meters import meter_for  # noqa: E402
from assembler.verifiers.structure import judge  # noqa: E402
from benchmarks import machine  # noqa: E402
from benchmarks.peers import contextcram, ctxbudgeter  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
NODE = ROOT / "benchmarks" / "peers_node"
PEERS = ("fit", "trim_messages", "SummarizationMiddleware cut", "ctxbudgeter", "contextcram",
         "prompt-tsx")  # fmt: skip

Kept = set[str]  # unit keys


class Instance:
    """One accepted case cut to one share: its units, their request and budget."""

    def __init__(self, suite: dict[str, Any], case: dict[str, Any], share: float) -> None:
        self.fmt, self.model, self.case, self.share = suite["format"], suite["model"], case, share
        meter = meter_for(self.model)
        body = case["body"]
        self.api = api = named(self.fmt)
        self.key = api.LIST_KEY
        self.system = body.get(api.SYSTEM_KEY)
        self.listed = body[self.key]
        self.budget = int(api.tokens(meter, body) * share)
        self.units: list[Unit] = api.units(self.listed, [], self.system, meter, 10**9, self.key)
        fixed = sum(t for _, t in api.overheads(meter, False))
        weights = [1.0 if u.message < 0 else recency(u.message, len(self.listed))
                   for u in self.units]  # fmt: skip
        self.request = request_data(self.units, self.budget - fixed, weights)
        self.size = {u.key: u.forms[0].tokens for u in self.units}

    def body_of(self, kept: Kept) -> dict[str, Any]:
        chosen = {u.key: u.forms[0] for u in self.units if u.key in kept}
        body: dict[str, Any] = {self.key: self.api.back(self.listed, self.units, chosen)}
        return body

    def calls_of(self, unit: Unit) -> list[Unit]:
        """The result units answering an assistant unit's calls."""
        mine = f"calls:{unit.message}"
        return [u for u in self.units if u.group == mine and u.kind is Kind.USER_TURN]


def _langchain(instance: Instance) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    out: list[Any] = []
    for unit in sorted(instance.units, key=lambda u: (u.message if u.message >= 0 else -9,
                                                      u.part)):  # fmt: skip
        if unit.kind in (Kind.SYSTEM, Kind.DEVELOPER):
            out.append(SystemMessage(unit.text or "system", id=unit.key))
        elif unit.kind is Kind.ASSISTANT_TURN:
            calls = [{"name": "tool", "args": {}, "id": r.key} for r in instance.calls_of(unit)]
            out.append(AIMessage(unit.text, id=unit.key, tool_calls=calls))
        elif unit.group is not None and unit.kind is Kind.USER_TURN:
            out.append(ToolMessage(unit.text, id=unit.key, tool_call_id=unit.key))
        else:
            out.append(HumanMessage(unit.text, id=unit.key))
    return out


def _trim(instance: Instance) -> Kept:
    from langchain_core.messages import trim_messages

    messages = _langchain(instance)
    kept = trim_messages(
        messages, max_tokens=instance.request["task"]["budget"],
        token_counter=lambda ms: sum(instance.size[str(m.id)] for m in ms),
        strategy="last", include_system=True, start_on="human", allow_partial=False,
    )  # fmt: skip
    return {str(m.id) for m in kept}


def _summarisation_cut(instance: Instance) -> Kept:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    messages = _langchain(instance)
    middleware = SummarizationMiddleware(
        GenericFakeChatModel(messages=iter([])),
        keep=("tokens", instance.request["task"]["budget"]),
        token_counter=lambda ms: sum(instance.size[str(m.id)] for m in ms),
    )
    cut = middleware._determine_cutoff_index(messages)
    system = [m for m in messages if m.type == "system"]
    return {str(m.id) for m in [*system, *messages[max(cut, 0):]]}


def _picked_units(instance: Instance, picked: set[str]) -> Kept:
    """Form ids a packer picked -> the units they belong to."""
    return {f.split(":")[0] for f in picked}


def _fit(instance: Instance) -> dict[str, Any] | None:
    try:
        fitted = fit(instance.case["body"], model=instance.model, format=instance.fmt,
                     budget=instance.budget)  # fmt: skip
    except FitRefused:
        return None
    return fitted.body()


def _prompt_tsx(instances: list[Instance]) -> dict[str, Kept] | None:
    if shutil.which("node") is None or not (NODE / "node_modules" / "@vscode").exists():
        return None
    payload = []
    for number, instance in enumerate(instances):
        messages = []
        for unit in sorted(instance.units, key=lambda u: (u.message if u.message >= 0 else -9,
                                                          u.part)):  # fmt: skip
            candidate = next(c for c in instance.request["candidates"] if c["identity"] == unit.key)
            role = ("system" if unit.kind in (Kind.SYSTEM, Kind.DEVELOPER) else "assistant"
                    if unit.kind is Kind.ASSISTANT_TURN else "tool"
                    if unit.group is not None else "user")  # fmt: skip
            message: dict[str, Any] = {"id": unit.key, "role": role, "content": unit.text,
                                       "tokens": unit.forms[0].tokens,
                                       "priority": 100 if candidate.get("required") else
                                       round(99 * candidate["relevance"])}
            if role == "assistant":
                message["calls"] = [{"id": r.key, "name": "tool"} for r in instance.calls_of(unit)]
            if role == "tool":
                message["call"] = unit.key
            messages.append(message)
        payload.append({"name": str(number), "budget": instance.request["task"]["budget"],
                        "messages": messages})  # fmt: skip
    done = subprocess.run(["node", str(NODE / "pack.mjs"), "1"], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=NODE, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"prompt-tsx failed:\n{done.stderr[-2000:]}")
    answer = json.loads(done.stdout)
    return {name: set(value["ids"]) for name, value in answer.items()}


def run() -> dict[str, Any]:
    instances = [Instance(suite, case, share) for suite in load_suite()
                 for case in suite["cases"] if case["verdict"] == "accepted"
                 for share in SHARES]  # fmt: skip
    packers: dict[str, Callable[[Instance], Kept]] = {
        "trim_messages": _trim,
        "SummarizationMiddleware cut": _summarisation_cut,
        "ctxbudgeter": lambda i: _picked_units(i, ctxbudgeter(i.request)()),
        "contextcram": lambda i: _picked_units(i, contextcram(i.request)()),
    }
    tsx = _prompt_tsx(instances)
    rows: dict[str, dict[str, list[bool]]] = {}
    broken: dict[str, Counter[str]] = {name: Counter() for name in PEERS}
    refused: Counter[str] = Counter()
    for number, instance in enumerate(instances):
        answers: dict[str, dict[str, Any] | None] = {"fit": _fit(instance)}
        for name, packer in packers.items():
            answers[name] = instance.body_of(packer(instance))
        if tsx is not None:
            answers["prompt-tsx"] = instance.body_of(tsx[str(number)])
        for name, body in answers.items():
            if body is None:
                refused[name] += 1
                found: list[tuple[str, str]] = []
            else:
                found = judge(instance.fmt, body, instance.case["body"])
            for rule in {r for r, _ in found}:
                broken[name][rule] += 1
            topic = f"{instance.fmt}: {instance.case['topic']}"
            rows.setdefault(topic, {}).setdefault(name, []).append(not found)
    table = {topic: {name: f"{sum(v)}/{len(v)}" for name, v in cells.items()}
             for topic, cells in sorted(rows.items())}  # fmt: skip
    totals = {name: sum(sum(cells.get(name, [])) for cells in rows.values()) for name in PEERS}
    count = len(instances)
    ran = {name for cells in rows.values() for name in cells}
    described = machine.describe()
    load = os.getloadavg()[0]
    return {
        "machine": f"commit {described['commit']}, {described['cpu']}, {described['cores']}"
                   f" cores, load average {load:.2f}",
        "instances": count,
        "valid": {name: f"{totals[name]}/{count}" for name in PEERS if name in ran},
        "refused": dict(refused),
        "by_topic": table,
        "broken_rules": {name: dict(c) for name, c in broken.items() if c},
    }


def _markdown(report: dict[str, Any]) -> str:
    names = list(report["valid"])
    lines = [
        "# Structural validity on the conformance suite",
        "",
        "`python -m benchmarks.structure`: every accepted transcript of `models/structure/`"
        f" cut to 1/2 and 1/3 of its tokens by each packer ({report['instances']} cuts), each"
        " kept list judged by `assembler.verifiers.structure` against the transcript it was"
        " cut from. A cut is valid when no provider rule is broken (a refusal is valid: no"
        " body is sent).",
        "",
        f"Machine: {report['machine']}",
        "",
        "| packer | valid cuts |",
        "|---|---|",
        *[f"| {name} | {report['valid'][name]} |" for name in names],
        "",
        "Valid cuts by format and topic:",
        "",
        "| format: topic | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
        *[f"| {topic} | " + " | ".join(cells.get(n, "-") for n in names) + " |"
          for topic, cells in report["by_topic"].items()],
        "",
        "Rules broken (cuts breaking each rule at least once):",
        "",
        "| packer | rules |",
        "|---|---|",
        *[f"| {name} | " + ", ".join(f"{rule} {n}" for rule, n in sorted(rules.items())) + " |"
          for name, rules in report["broken_rules"].items()],
        "",
        "`fit` refused (the required part alone over the budget):"
        f" {report['refused'].get('fit', 0)} cuts.",
        "",
    ]  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    report = run()
    options.out.mkdir(parents=True, exist_ok=True)
    (options.out / "structure.json").write_text(json.dumps(report, indent=1) + "\n")
    (options.out / "STRUCTURE.md").write_text(_markdown(report))
    print(_markdown(report))
    fit_valid, _, count = report["valid"]["fit"].partition("/")
    return 0 if fit_valid == count else 1


if __name__ == "__main__":
    raise SystemExit(main())
