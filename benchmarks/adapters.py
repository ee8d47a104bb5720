"""The adapter goals of issues 26 and 35, and ``fit`` against LangChain's trimming.

Input: ``python -m benchmarks.adapters [--transcripts N] [--repeats R]``.
Output: ``benchmarks/results/ADAPTERS.md`` (and ``adapters.json``): for N seeded
transcripts per format (Chat Completions, Responses with reasoning items, Anthropic
with thinking, Gemini with thought signatures; tools and images) through ``fit`` at
40% of their full count: accepted by the SDKs' request building (sent through the
official clients on an in-process transport), bodies with an orphaned tool message,
with thinking, reasoning or a signature edited (``verifiers.structure``), bodies
over budget; then on the OpenAI transcripts as LangChain messages, ``fit`` against
``trim_messages`` and ``SummarizationMiddleware``'s cut (the messages it keeps; its
summary needs a model call and is not made): valid bodies, value kept (recency
value, a shortened form at its share), time; and the 200-turn timing, every peer in
the same run, interleaved, with the load average recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from sdk_clients import (  # noqa: E402
    Wire,
    gemini_wire,
    send_anthropic,
    send_gemini,
    send_openai,
    send_responses,
)

import assembler  # noqa: E402
from assembler.adapters.selection import recency  # noqa: E402
from assembler.providers import openai_chat  # noqa: E402
from assembler.providers.openai_chat.body import check_messages  # noqa: E402
from assembler.providers.registry import named  # noqa: E402
from assembler.render.meters import meter_for  # noqa: E402
from assembler.verifiers.structure import judge  # noqa: E402
from benchmarks.machine import describe  # noqa: E402
from benchmarks.transcripts import (  # noqa: E402
    anthropic_body,
    gemini_body,
    openai_transcript,
    responses_body,
)

RESULTS = ROOT / "benchmarks" / "results"


FORMATS = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")
_MODEL = {"openai-chat": "gpt-4o", "openai-responses": "gpt-4o",
          "anthropic-messages": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}  # fmt: skip
_ORPHANS = {"tool-call-answered", "tool-result-after-call"}
_EDITS = {"thinking-unedited", "reasoning-with-call", "signature-kept"}


def goals(count: int) -> dict[str, Any]:
    return {fmt: _goal_row(count, fmt) for fmt in FORMATS}


def _transcript(fmt: str, seed: int, rounds: int) -> dict[str, Any]:
    if fmt == "openai-chat":
        messages, tools = openai_transcript(seed, rounds)
        return {"messages": messages, "tools": tools}
    if fmt == "openai-responses":
        return {k: v for k, v in responses_body(seed, rounds).items() if k != "model"}
    if fmt == "anthropic-messages":
        return anthropic_body(seed, rounds)
    return gemini_body(seed, rounds)


def _sent(fmt: str, body: dict[str, Any], model: str) -> dict[str, Any]:
    """The body the official SDK put on the wire (its request building on the way)."""
    wire = Wire()
    if fmt == "openai-chat":
        send_openai(body, wire)
    elif fmt == "openai-responses":
        send_responses(body, wire)
    elif fmt == "anthropic-messages":
        send_anthropic(body, wire)
    else:
        send_gemini(body, wire)
        return gemini_wire(wire.sent[0])
    return wire.sent[0]


def _goal_row(count: int, fmt: str) -> dict[str, Any]:
    model = _MODEL[fmt]
    meter = meter_for(model)
    key = named(fmt).LIST_KEY
    accepted = orphans = edited = over = 0
    seconds: list[float] = []
    for seed in range(count):
        given = _transcript(fmt, seed, 6 + seed % 15)
        full = named(fmt).tokens(meter, given)
        started = time.perf_counter()
        fitted = assembler.fit(given, model=model, budget=full * 2 // 5)
        seconds.append(time.perf_counter() - started)
        try:
            sent = _sent(fmt, fitted.body(), model)
        except Exception:
            continue
        accepted += sent[key] == fitted.messages
        broken = {rule for rule, _ in judge(fmt, sent, given)}
        orphans += bool(broken & _ORPHANS)
        edited += bool(broken & _EDITS)
        over += named(fmt).tokens(meter, sent) > fitted.budget
    return {
        "transcripts": count,
        "counter": meter.counter.name,
        "accepted": accepted,
        "orphaned": orphans,
        "edited_thinking": edited,
        "over_budget": over,
        "fit_ms_median": round(1000 * statistics.median(seconds), 1),
    }


def _as_langchain(messages: list[dict[str, Any]]) -> list[Any]:
    from langchain_core.messages import convert_to_messages

    return list(convert_to_messages(messages))


def _value(given: list[Any], kept: list[Any]) -> float:
    """Recency value kept: each message at its relevance, a shortened one at half."""
    total = sum(recency(i, len(given)) for i in range(len(given)))
    kept_ids = {id(m) for m in kept}
    value = 0.0
    for i, m in enumerate(given):
        if id(m) in kept_ids:
            value += recency(i, len(given))
        elif any(getattr(k, "tool_call_id", None) == getattr(m, "tool_call_id", "-") for k in kept):
            value += 0.5 * recency(i, len(given))
    return value / total


def _valid(kept: list[Any], budget: int, meter: Any) -> tuple[bool, int]:
    from langchain_core.messages import convert_to_openai_messages

    dicts = convert_to_openai_messages(kept)
    try:
        check_messages(dicts)
    except assembler.RenderError:
        return False, openai_chat.tokens(meter, {"messages": dicts})
    count = openai_chat.tokens(meter, {"messages": dicts})
    return count <= budget, count


def peers(count: int, repeats: int) -> dict[str, Any]:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import convert_to_openai_messages, trim_messages

    meter = meter_for("gpt-4o")

    def counted(messages: list[Any]) -> int:
        return openai_chat.tokens(meter, {"messages": convert_to_openai_messages(list(messages))})

    out: dict[str, dict[str, list[float]]] = {}

    def add(name: str, key: str, value: float) -> None:
        out.setdefault(name, {}).setdefault(key, []).append(value)

    for seed in range(count):
        dicts, _tools = openai_transcript(seed, 6 + seed % 15)
        given = _as_langchain(dicts)
        budget = counted(given) * 2 // 5
        started = time.perf_counter()
        fitted = assembler.fit(given, model="gpt-4o", budget=budget)
        add("fit", "seconds", time.perf_counter() - started)
        candidates = {"fit": fitted.messages}
        started = time.perf_counter()
        candidates["trim_messages"] = trim_messages(
            given,
            max_tokens=budget,
            token_counter=counted,
            strategy="last",
            start_on="human",
            include_system=True,
            allow_partial=False,
        )
        add("trim_messages", "seconds", time.perf_counter() - started)
        summarizer = SummarizationMiddleware(
            GenericFakeChatModel(messages=iter([])), keep=("tokens", budget), token_counter=counted
        )
        started = time.perf_counter()
        cut = summarizer._determine_cutoff_index(given)
        # the system prompt stays in an agent's request; the summary is not made here
        candidates["SummarizationMiddleware cut"] = [given[0], *given[max(cut, 1) :]]
        add("SummarizationMiddleware cut", "seconds", time.perf_counter() - started)
        for name, kept in candidates.items():
            valid, tokens = _valid(list(kept), budget, meter)
            add(name, "valid", float(valid))
            add(name, "value", _value(given, list(kept)))
            add(name, "fill", tokens / budget)
    rows = {
        name: {
            "valid": f"{int(sum(v['valid']))}/{len(v['valid'])}",
            "value_kept_pct": round(100 * statistics.mean(v["value"]), 1),
            "budget_used_pct": round(100 * statistics.mean(v["fill"]), 1),
            "ms_median": round(1000 * statistics.median(v["seconds"]), 2),
        }
        for name, v in out.items()
    }
    rows["timing_200_turns"] = _timing_200(repeats)
    return rows


def _timing_200(repeats: int) -> dict[str, Any]:
    """fit and trim_messages on one 200-turn transcript, interleaved, same counter."""
    from langchain_core.messages import convert_to_openai_messages, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    meter = meter_for("gpt-4o")
    dicts, _ = openai_transcript(4242, rounds=100)
    while len(dicts) < 200:
        dicts.insert(-1, {"role": "user", "content": "and one more thing"})
        dicts.insert(-1, {"role": "assistant", "content": "noted"})
    given = _as_langchain(dicts[:199] + dicts[-1:])

    def counted(messages: list[Any]) -> int:
        return openai_chat.tokens(meter, {"messages": convert_to_openai_messages(list(messages))})

    budget = counted(given) * 2 // 5
    samples: dict[str, list[float]] = {
        "fit": [],
        "trim_messages (same o200k count)": [],
        "trim_messages (count_tokens_approximately)": [],
    }
    for _ in range(repeats):
        started = time.perf_counter()
        assembler.fit(given, model="gpt-4o", budget=budget)
        samples["fit"].append(time.perf_counter() - started)
        for name, counter in (
            ("trim_messages (same o200k count)", counted),
            ("trim_messages (count_tokens_approximately)", count_tokens_approximately),
        ):
            started = time.perf_counter()
            trim_messages(
                given,
                max_tokens=budget,
                token_counter=counter,
                strategy="last",
                start_on="human",
                include_system=True,
            )
            samples[name].append(time.perf_counter() - started)
    medians = {k: round(1000 * statistics.median(v), 2) for k, v in samples.items()}
    return {
        "messages": len(given),
        "budget": budget,
        "repeats": repeats,
        "ms_median": medians,
        "fit_over_trim_same_count": round(
            medians["fit"] / medians["trim_messages (same o200k count)"], 2
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.adapters")
    parser.add_argument("--transcripts", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    report = {
        "machine": describe(),
        "goals": goals(args.transcripts),
        "peers": peers(args.transcripts // 2, args.repeats),
        "load": {"before": load_before, "after": os.getloadavg()},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "adapters.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (RESULTS / "ADAPTERS.md").write_text(_markdown(report), encoding="utf-8")
    print(_markdown(report))
    return 0


def _markdown(report: dict[str, Any]) -> str:
    machine = report["machine"]
    load = report["load"]
    lines = [
        "# Adapters: `fit` on agent transcripts, and LangChain's trimming beside it",
        "",
        f"`python -m benchmarks.adapters` on commit {machine.get('commit')}, {machine.get('cpu')},"
        f" load average {load['before'][0]:.2f} before, {load['after'][0]:.2f} after.",
        "",
        "## Goals (issues 26 and 35), budget 40% of each transcript's full count",
        "",
        "Each fitted body sent through the official SDK client (openai Chat Completions and"
        " Responses, anthropic, google-genai) on an in-process transport, and the body on the"
        " wire judged by `assembler.verifiers.structure` against the transcript it was cut"
        " from.",
        "",
        "| format | transcripts | counter | accepted by the SDK | with an orphaned tool message |"
        " with thinking, reasoning or a signature edited | over budget | fit median |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for fmt, row in report["goals"].items():
        lines.append(
            f"| {fmt} | {row['transcripts']} | {row['counter']} | {row['accepted']} |"
            f" {row['orphaned']} | {row['edited_thinking']} | {row['over_budget']} |"
            f" {row['fit_ms_median']} ms |"
        )
    peers = dict(report["peers"])
    timing = peers.pop("timing_200_turns")
    lines += [
        "",
        "## Against LangChain, same transcripts as LangChain messages (OpenAI shapes)",
        "",
        "| method | valid bodies (provider rules, within budget) | value kept | budget used |"
        " median time |",
        "|---|---|---|---|---|",
    ]
    for name, row in peers.items():
        lines.append(
            f"| {name} | {row['valid']} | {row['value_kept_pct']}% | {row['budget_used_pct']}% |"
            f" {row['ms_median']} ms |"
        )
    lines += [
        "",
        f"## 200 messages, budget {timing['budget']}, {timing['repeats']} interleaved repeats",
        "",
        "| method | median |",
        "|---|---|",
        *(f"| {k} | {v} ms |" for k, v in timing["ms_median"].items()),
        "",
        f"fit / trim_messages with the same count: {timing['fit_over_trim_same_count']}x"
        " (goal < 2x).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
