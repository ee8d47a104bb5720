"""Cache benchmark: what context policies cost under real provider caches, and what they keep.

Run ``python -m benchmarks.cache`` (``--help``; ``--quick`` for a short run). Output:
``benchmarks/results/cache.json`` (every figure), ``benchmarks/results/CACHE.md`` (the
tables) and ``benchmarks/results/cache.png`` (value kept against money); exit 0, or 1
when a policy's rendering could not be made.

Sessions (``assembler.tooling.cachesession``): a 1,000-turn coding agent with recency
re-scoring, the same with static relevance, and a retrieval session whose evidence is
replaced and re-scored every five calls. Each policy is a function from a call's view
(the session, the call, its whole request, the policy's previous pick) to a pick:

* ``exact``: cache-blind exact, ``assembler.assemble`` as it is today;
* ``hysteresis``: append the new material while it fits (the full forms, else the
  compact ones); when it does not, re-solve exactly at 70% of the budget;
* ``window``: the required head and the newest whole units (a turn, a tool call with
  its result, a document) that fit;
* ``compaction``: append; when full, drop the oldest units down to half the budget;
* ``trim_messages``: LangChain's ``trim_messages(strategy="last", include_system=True,
  start_on=("human", "ai"))`` over the same messages, with the same token counter (the
  head, system prompt, tools and task, is its one system message);
* the lead's cache-aware exact policy: one entry per (tolerance, headroom) pair in
  ``CACHE_AWARE_SWEEP`` (see ``cache_aware``).

Every pick is rendered by the library's renderer (``anthropic-messages``; the baselines'
picks through the ``dump`` strategy on a request of exactly their forms, whose
rendering is the same bytes as that set rendered anywhere) and priced by the
simulator (``assembler.cache``): Anthropic Claude Sonnet 4.5 with 5-minute breakpoints
(the headline) and OpenAI GPT-5. Tokens are the declared costs for every policy. Per
policy and session: price (base-input units, against all-uncached and against
``exact``), value summed over calls under each call's own relevance (and as a share of
``exact``'s, the cache-blind optimum), the share of each call's tokens that is a prefix
of the previous call's, re-admissions of evicted identities, and validity (orphaned
tool calls or results, missing required material, over budget), with the machine's
load (``os.getloadavg``) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import assembler
from assembler.cache import CacheBlock, CacheSimulator, Call, blocks_of_rendering, cache_rules
from assembler.model.objective import form_value
from assembler.tooling.cachesession import (
    CacheSession,
    OfferedItem,
    Scoring,
    coding_session,
    retrieval_session,
)

from . import machine

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results"
FORMAT = "anthropic-messages"
TTL = 300
HEADLINE = ("anthropic", "claude-sonnet-4-5")
PROVIDERS = (HEADLINE, ("openai", "gpt-5"))
REFILL = 0.7  # hysteresis re-solves at this share of the budget
COMPACT_TO = 0.5  # compaction drops down to this share of the budget

# ---------------------------------------------------------------------------------
# The cache-aware exact policy plugs in here: one (tolerance, headroom) pair per point
# of its sweep, e.g. [(0.0, 0.0), (0.02, 0.1), (0.05, 0.25), (0.1, 0.3)]. Each pair runs
# ``cache_aware(tolerance, headroom)`` as a policy named "cache-aware t=.. h=..".
CACHE_AWARE_SWEEP: list[tuple[float, float]] = [
    (0.0, 0.0),
    (0.02, 0.25),
    (0.04, 0.2),
    (0.05, 0.25),
    (0.06, 0.2),
    (0.08, 0.25),
    (0.12, 0.25),
    (0.2, 0.25),
]
# ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pick:
    """A policy's answer for one call: the form ids, and their rendering if it has one."""

    ids: frozenset[str]
    rendering: assembler.Rendering | None = None
    # what the policy remembers for its next call (compaction: the units offered now)
    state: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class View:
    session: CacheSession
    call: int
    request: dict[str, Any]
    offered: tuple[OfferedItem, ...]
    previous: Pick | None
    previous_blocks: tuple[CacheBlock, ...] = ()
    by_id: dict[str, OfferedItem] = field(default_factory=dict)


Policy = Callable[[View], Pick]


def _by_id(view: View) -> dict[str, OfferedItem]:
    return view.by_id or {item.id: item for item in view.offered}


def _units(view: View) -> list[tuple[str, ...]]:
    """Chronological units of full forms after the required head: an assistant or user
    turn, a tool call with its result, a document."""
    units: list[tuple[str, ...]] = []
    pending: dict[str, list[str]] = {}
    for item in view.offered:
        fields = dict(item.fields)
        if fields.get("required") or fields.get("form") == "compact":
            continue
        call_id = fields.get("tool_call_id")
        if call_id is None:
            units.append((item.id,))
            continue
        pending.setdefault(str(call_id), []).append(item.id)
        if len(pending[str(call_id)]) == 2:
            units.append(
                tuple(sorted(pending.pop(str(call_id)), key=lambda i: i.endswith("result")))
            )
    return units


def _head(view: View) -> set[str]:
    return {i.id for i in view.offered if dict(i.fields).get("required")}


def _cost(view: View, ids: Iterable[str]) -> int:
    by_id = _by_id(view)
    return sum(int(dict(by_id[i].fields)["cost"]) for i in ids)


def exact(view: View) -> Pick:
    result = assembler.assemble(view.request, render=FORMAT)
    if result.status is not assembler.Status.BUNDLE:
        raise RuntimeError(f"{view.session.name} call {view.call}: exact gave {result.status}")
    return Pick(frozenset(result.selected), result.rendering)


def _solved_at(view: View, share: float) -> Pick:
    request = dict(view.request)
    request["task"] = {**request["task"], "budget": int(view.session.budget * share)}
    result = assembler.assemble(request, render=FORMAT)
    return Pick(frozenset(result.selected), result.rendering)


def hysteresis(view: View) -> Pick:
    if view.previous is None:
        return _solved_at(view, 1.0)
    offered = _by_id(view)
    kept = {i for i in view.previous.ids if i in offered}
    new = [i for i in view.offered if i.born == view.call and i.id not in kept]
    fulls = {i.id for i in new if dict(i.fields).get("form") != "compact"}
    compacts = {
        str(dict(i.fields).get("identity", i.id)): i.id
        for i in new
        if dict(i.fields).get("form") == "compact"
    }
    lean = {compacts.get(i, i) for i in fulls}
    budget = view.session.budget
    for extra in (fulls, lean):
        if _cost(view, kept | extra) <= budget:
            return Pick(frozenset(kept | extra))
    return _solved_at(view, REFILL)


def window(view: View) -> Pick:
    chosen = _head(view)
    room = view.session.budget - _cost(view, chosen)
    for unit in reversed(_units(view)):
        need = _cost(view, unit)
        if need > room:
            break
        chosen.update(unit)
        room -= need
    return Pick(frozenset(chosen))


def compaction(view: View) -> Pick:
    units = _units(view)
    seen: set[str] = set()
    had: frozenset[str] = frozenset()
    if view.previous is not None:
        had = view.previous.ids
        seen = set().union(*view.previous.state)
    # what was kept stays, what is new is appended; a unit once dropped never returns
    chosen = [u for u in units if all(i in had for i in u) or not any(i in seen for i in u)]
    head = _head(view)
    budget = view.session.budget
    total = _cost(view, head) + sum(_cost(view, u) for u in chosen)
    if total > budget:
        dropped = 0
        while dropped < len(chosen) and total > budget * COMPACT_TO:
            total -= _cost(view, chosen[dropped])
            dropped += 1
        chosen = chosen[dropped:]
    return Pick(frozenset(head.union(*chosen)), state=tuple(frozenset(u) for u in units))


def trim_messages_policy(view: View) -> Pick:
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        trim_messages,
    )

    by_id = _by_id(view)
    head = _head(view)
    costs = {"head": _cost(view, head)}
    messages: list[BaseMessage] = [SystemMessage("head", id="head")]
    for unit in _units(view):
        for item_id in unit:
            fields = dict(by_id[item_id].fields)
            costs[item_id] = int(fields["cost"])
            kind, content = fields.get("kind"), str(fields["content"])
            if kind == "tool_call":
                use = {"name": fields["tool_name"], "args": {}, "id": fields["tool_call_id"]}
                messages.append(AIMessage(content, id=item_id, tool_calls=[use]))
            elif kind == "tool_result":
                messages.append(
                    ToolMessage(content, id=item_id, tool_call_id=fields["tool_call_id"])
                )
            elif kind == "assistant_turn":
                messages.append(AIMessage(content, id=item_id))
            else:
                messages.append(HumanMessage(content, id=item_id))
    kept = trim_messages(
        messages,
        max_tokens=view.session.budget,
        token_counter=lambda ms: sum(costs[str(m.id)] for m in ms),
        strategy="last",
        include_system=True,
        allow_partial=False,
        start_on=("human", "ai"),
    )
    ids = {str(m.id) for m in kept} - {"head"}
    return Pick(frozenset(ids | (head if any(m.id == "head" for m in kept) else set())))


def cache_aware(tolerance: float, headroom: float) -> Policy:
    """The lead's cache-aware exact policy at one point of the sweep: the request carries
    the ``cache`` field of the draft design (issue 24), filled from the previous pick."""
    provider, model = HEADLINE

    def policy(view: View) -> Pick:
        request = dict(view.request)
        cache: dict[str, Any] = {
            "provider": provider, "model": model, "ttl": TTL,
            "tolerance": tolerance, "headroom": headroom, "now": view.session.times[view.call],
        }  # fmt: skip
        previous = view.previous.rendering if view.previous else None
        if previous is not None and view.call > 0:
            cache["previous"] = {
                "at": view.session.times[view.call - 1],
                "blocks": previous.manifest.cache_blocks(previous.text),
            }
        request["cache"] = cache
        result = assembler.assemble(request, render=FORMAT)
        return Pick(frozenset(result.selected), result.rendering)

    return policy


def policies(sweep: list[tuple[float, float]]) -> dict[str, Policy]:
    found: dict[str, Policy] = {
        "exact": exact,
        "hysteresis": hysteresis,
        "window": window,
        "compaction": compaction,
        "trim_messages": trim_messages_policy,
    }
    for tolerance, headroom in sweep:
        found[f"cache-aware t={tolerance:g} h={headroom:g}"] = cache_aware(tolerance, headroom)
    return found


# --- measuring ----------------------------------------------------------------------


def render_pick(view: View, pick: Pick) -> assembler.Rendering:
    """The pick's rendering: the policy's own, or the dump of exactly its forms."""
    if pick.rendering is not None:
        return pick.rendering
    by_id = _by_id(view)
    chosen = [by_id[i] for i in sorted(pick.ids)]
    request = {
        "task": {"id": dict(view.session.task)["id"], "budget": _cost(view, pick.ids)},
        "candidates": [i.candidate(view.session.relevance(i, view.call)) for i in chosen],
    }
    result = assembler.assemble(request, strategy="dump", render=FORMAT)
    if result.rendering is None:
        raise RuntimeError(f"{view.session.name} call {view.call}: no rendering ({result.status})")
    return result.rendering


def _violations(view: View, ids: frozenset[str]) -> dict[str, bool]:
    by_id = _by_id(view)
    calls: dict[str, set[str]] = {}
    for i in ids:
        fields = dict(by_id[i].fields)
        if "tool_call_id" in fields:
            calls.setdefault(str(fields["tool_call_id"]), set()).add(str(fields["kind"]))
    return {
        "orphaned": any(kinds != {"tool_call", "tool_result"} for kinds in calls.values()),
        "missing_required": not _head(view) <= ids,
        "over_budget": _cost(view, ids) > view.session.budget,
    }


def _prefix_tokens(old: tuple[CacheBlock, ...], new: tuple[CacheBlock, ...]) -> int:
    shared = 0
    for a, b in zip(old, new, strict=False):
        if a.key != b.key:
            break
        shared += b.tokens
    return shared


@dataclass
class Tally:
    """One policy's running figures over a session."""

    simulators: dict[str, CacheSimulator]
    value: int = 0
    prefix_shares: list[float] = field(default_factory=list)
    quiet_shares: list[float] = field(default_factory=list)
    readmissions: int = 0
    violations: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    ever: set[str] = field(default_factory=set)
    costs: dict[str, list[Any]] = field(default_factory=dict)


def run_session(session: CacheSession, chosen: dict[str, Policy]) -> dict[str, Any]:
    tallies = {
        name: Tally({f"{p}/{m}": CacheSimulator(cache_rules(p, m)) for p, m in PROVIDERS})
        for name in chosen
    }
    picks: dict[str, Pick | None] = dict.fromkeys(chosen)
    blocks: dict[str, tuple[CacheBlock, ...]] = {name: () for name in chosen}
    exact_value = 0
    for call in range(session.calls):
        offered = tuple(session.offered(call))
        candidates = [i.candidate(session.relevance(i, call)) for i in offered]
        request = {"task": dict(session.task), "candidates": candidates}
        relevance = {i.id: session.relevance(i, call) for i in offered}
        by_id = {i.id: i for i in offered}
        identity = {i.id: str(dict(i.fields).get("identity", i.id)) for i in offered}
        for name, policy in chosen.items():
            tally = tallies[name]
            view = View(session, call, request, offered, picks[name], blocks[name], by_id)
            start = time.process_time()
            pick = policy(view)
            tally.seconds += time.process_time() - start
            for key, bad in _violations(view, pick.ids).items():
                tally.violations[key] = tally.violations.get(key, 0) + bad
            rendering = render_pick(view, pick)
            now = blocks_of_rendering(rendering, ttl=TTL)
            value = sum(form_value(relevance[i], 0.0) for i in pick.ids)
            tally.value += value
            if name == "exact":
                exact_value += value
            previous = picks[name]
            if previous is not None:
                tokens = sum(b.tokens for b in now) or 1
                share = _prefix_tokens(blocks[name], now) / tokens
                tally.prefix_shares.append(share)
                kept_ids = {i for i in previous.ids if i in relevance}
                if kept_ids <= pick.ids:
                    # nothing evicted: how much of what the previous call sent is sent again
                    before = sum(b.tokens for b in blocks[name]) or 1
                    tally.quiet_shares.append(_prefix_tokens(blocks[name], now) / before)
                before = {identity[i] for i in previous.ids if i in identity}
                mine = {identity[i] for i in pick.ids}
                tally.readmissions += len((mine - before) & tally.ever)
            tally.ever.update(identity[i] for i in pick.ids)
            for key, simulator in tally.simulators.items():
                cost = simulator.call(Call(session.times[call], now))
                tally.costs.setdefault(key, []).append(cost)
            picks[name] = Pick(pick.ids, rendering, pick.state)
            blocks[name] = now
    return _summary(session, tallies, exact_value)


def _summary(session: CacheSession, tallies: dict[str, Tally], exact_value: int) -> dict[str, Any]:
    exact_price = {
        key: sum(c.price for c in costs) for key, costs in tallies["exact"].costs.items()
    }
    rows = []
    for name, tally in tallies.items():
        providers = {}
        for key, costs in tally.costs.items():
            tokens = sum(c.tokens for c in costs)
            price = sum(c.price for c in costs)
            providers[key] = {
                "tokens": tokens, "read": sum(c.read for c in costs),
                "written": sum(c.written for c in costs),
                "uncached": sum(c.uncached for c in costs),
                "price": round(price, 1), "vs_uncached": round(price / tokens, 4),
                "vs_exact": round(price / exact_price[key], 4),
                "usd": None if costs[0].usd is None else round(sum(c.usd or 0 for c in costs), 4),
            }  # fmt: skip
        shares = tally.prefix_shares
        rows.append({
            "policy": name, "providers": providers, "value": tally.value,
            "value_share": round(tally.value / exact_value, 4) if exact_value else None,
            "prefix_kept_mean": round(sum(shares) / len(shares), 4) if shares else None,
            "prefix_kept_quiet_mean": (round(sum(tally.quiet_shares) / len(tally.quiet_shares), 4)
                                       if tally.quiet_shares else None),
            "quiet_calls": len(tally.quiet_shares),
            "readmissions": tally.readmissions, "violations": tally.violations,
            "cpu_s": round(tally.seconds, 2),
        })  # fmt: skip
    return {
        "session": session.name, "calls": session.calls, "budget": session.budget,
        "scoring": session.scoring.value, "hours": round(session.times[-1] / 3600, 2),
        "policies": rows,
    }  # fmt: skip


def sessions(turns: int, retrieval_calls: int, seed: int) -> list[CacheSession]:
    return [
        coding_session(seed, turns, Scoring.RECENCY),
        coding_session(seed, turns, Scoring.STATIC),
        retrieval_session(seed, retrieval_calls),
    ]


# --- report ---------------------------------------------------------------------------


def _pct(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"{100 * x:.{digits}f}%"


def markdown(data: dict[str, Any]) -> str:
    lines = ["# Cache benchmark", ""]
    m = data["machine"]
    lines += [
        f"Commit {m.get('commit')}{' (dirty)' if m.get('dirty') else ''}, {m.get('date')};"
        f" {m.get('cpu')}, {m.get('cores')} cores; load average {data['load_before']} before,"
        f" {data['load_after']} after; {data['elapsed_s']:.0f} s in all.",
        "",
        f"Sessions: {data['settings']['turns']} coding turns (recency and static relevance),"
        f" {data['settings']['retrieval_calls']} retrieval calls; seed {data['settings']['seed']}."
        " Tokens are declared costs. Price in units of the base input price: Anthropic Claude"
        " Sonnet 4.5 with 5-minute breakpoints (headline) and OpenAI GPT-5, simulated by"
        " `assembler.cache` (rules: [models/cache-providers.md](../../models/cache-providers.md)).",
        "",
        "Columns: *vs uncached* = price / tokens sent; *vs exact* = price / the cache-blind"
        " exact policy's; *value* = value summed over calls under each call's relevance, as a"
        " share of the cache-blind optimum's; *prefix kept* = mean share of a call's tokens"
        " that is a prefix of the previous call's; *no eviction* = on the calls that evicted"
        " nothing, mean share of the previous call's tokens sent again as this call's prefix"
        " (with the number of such calls);"
        " *re-adm.* = identities selected again after an eviction; *invalid* = calls with an"
        " orphaned tool call or result / a missing required item / over budget.",
        "",
    ]
    for s in data["sessions"]:
        lines += [
            f"## {s['session']} ({s['calls']} calls, budget {s['budget']:,}, {s['hours']} h)", "",
            "| policy | Anthropic vs uncached | vs exact | OpenAI vs uncached | vs exact | value |"
            " prefix kept | (no eviction) | re-adm. | invalid | CPU s |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]  # fmt: skip
        for row in s["policies"]:
            a = row["providers"]["/".join(HEADLINE)]
            o = row["providers"]["openai/gpt-5"]
            v = row["violations"]
            bad = " / ".join(
                str(v.get(k, 0)) for k in ("orphaned", "missing_required", "over_budget")
            )
            lines.append(
                f"| {row['policy']} | {a['vs_uncached']:.3f} | {a['vs_exact']:.2f}x |"
                f" {o['vs_uncached']:.3f} | {o['vs_exact']:.2f}x | {_pct(row['value_share'], 1)} |"
                f" {_pct(row['prefix_kept_mean'])} | {_pct(row['prefix_kept_quiet_mean'])}"
                f" ({row['quiet_calls']}) | {row['readmissions']} | {bad} | {row['cpu_s']} |"
            )
        lines.append("")
    lines += _goals(data)
    return "\n".join(lines)


def _goals(data: dict[str, Any]) -> list[str]:
    """Issue 24's first two goal rows, per coding session: a cost at most compaction's
    and at least 95% of the cache-blind optimum's value."""
    lines = [
        "## Goals (issue 24)", "",
        "Per coding session, the policies that cost at most what compaction to half costs"
        " (Anthropic 5-minute) and keep at least 95% of the cache-blind optimum's value.",
        "`window` and `trim_messages` coincide: both keep the newest messages that fit"
        " (trim_messages with `allow_partial=False` never splits a message, and a tool"
        " result follows its call).", "",
        "| session | compaction's price | meets both |", "|---|---|---|",
    ]  # fmt: skip
    for s in data["sessions"]:
        if not s["session"].startswith("coding"):
            continue
        price = {r["policy"]: r["providers"]["/".join(HEADLINE)]["price"] for r in s["policies"]}
        limit = price.get("compaction")
        if limit is None:
            continue
        meets = [
            r["policy"]
            for r in s["policies"]
            if price[r["policy"]] <= limit and (r["value_share"] or 0) >= 0.95
        ]
        lines.append(f"| {s['session']} | {limit:,.0f} | {', '.join(meets) or 'none'} |")
    lines.append("")
    return lines


def plot(data: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sessions_ = data["sessions"]
    figure, axes = plt.subplots(1, len(sessions_), figsize=(5 * len(sessions_), 4.2), squeeze=False)
    for ax, s in zip(axes[0], sessions_, strict=True):
        sweep = []
        points: dict[tuple[float, float], list[str]] = {}
        for row in s["policies"]:
            x = row["providers"]["/".join(HEADLINE)]["vs_exact"]
            y = row["value_share"] or 0
            if row["policy"].startswith("cache-aware"):
                sweep.append((x, y))
                ax.plot(x, y, "o", color="tab:red")
            else:
                points.setdefault((x, y), []).append(row["policy"])
        for (x, y), names in points.items():
            ax.plot(x, y, "s")
            label = " = ".join(names)
            ax.annotate(label, (x, y), fontsize=8, xytext=(4, 3), textcoords="offset points")
        if sweep:
            ax.plot(
                *zip(*sorted(sweep), strict=True), "-", color="tab:red", label="cache-aware sweep"
            )
            ax.legend(fontsize=8)
        ax.set_title(s["session"], fontsize=10)
        ax.set_xlabel("Anthropic 5-min price, x cache-blind exact")
        ax.set_ylabel("value kept, share of the cache-blind optimum")
        ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cache", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="150 turns and 60 retrieval calls")
    parser.add_argument("--turns", type=int, default=None, help="coding turns (default 1000)")
    parser.add_argument("--retrieval-calls", type=int, default=None, help="default 300")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--policies", default=None, help="comma-separated names (exact always runs)"
    )
    parser.add_argument(
        "--cache-aware", default="", help="the sweep's points, T:H,T:H (default: CACHE_AWARE_SWEEP)"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.turns = args.turns or (150 if args.quick else 1000)
    args.retrieval_calls = args.retrieval_calls or (60 if args.quick else 300)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    given = [point.split(":") for point in filter(None, args.cache_aware.split(","))]
    sweep = [(float(t), float(h)) for t, h in given] if given else list(CACHE_AWARE_SWEEP)
    chosen = policies(sweep)
    if args.policies:
        wanted = {"exact", *args.policies.split(",")}
        chosen = {name: p for name, p in chosen.items() if name in wanted}
    started = time.perf_counter()
    load_before = [round(x, 2) for x in os.getloadavg()]
    results = []
    for session in sessions(args.turns, args.retrieval_calls, args.seed):
        t = time.perf_counter()
        results.append(run_session(session, chosen))
        print(
            f"{session.name}: {session.calls} calls in {time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
    data = {
        "machine": machine.describe(), "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "settings": {"turns": args.turns, "retrieval_calls": args.retrieval_calls,
                     "seed": args.seed, "format": FORMAT, "ttl": TTL, "sweep": sweep,
                     "providers": ["/".join(p) for p in PROVIDERS]},
        "sessions": results, "elapsed_s": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cache.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    (args.out / "CACHE.md").write_text(markdown(data) + "\n", encoding="utf-8")
    plot(data, args.out / "cache.png")
    print(markdown(data), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
