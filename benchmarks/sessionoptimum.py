"""The least price of a small session at a value, proven: a program over every plan.

Input: a ``PlanSession`` (the provider's rules, the render format, every call's time and
whole request) and a value the plan's calls must reach in sum.
Output: ``SessionOptimum``: a proven lower bound on the price (in the simulator's units)
of every plan of that value, the plan of least price the program found, and that plan's
price when the library renders it and the simulator replays it (an upper bound on the
true optimum, and the true optimum when the two meet).

The program (a mixed-integer program, solved by HiGHS) is a relaxation of the
simulator over every plan whose prompts keep the provider's order (tool definitions,
the system prompt, then the messages) with the conversation in its own order (a tool
result after its call), which every layout of the library keeps:

* per call, a legal selection (one form per identity, the required ones, coupled
  groups whole, the budget), and the plan's value in sum at least the target;
* per call, what it caches (reads or writes): a prefix of its prompt; what it reads:
  a prefix of what one earlier call cached, within the longest lifetime, the same forms
  block for block through it; evidence and other items whose place among the messages
  a layout may choose are read whenever the earlier call cached them and the head up
  to them agrees (each reader may order the earlier prompt as it likes: a relaxation);
* with breakpoints, a call's entries end at no more of its places than the provider's
  breakpoint limit, and a read ends where an entry of its source ends (the lookback is
  relaxed: a call places a breakpoint where it reads);
* the price of a call: read x R + write x (cached - read) + (sent - cached), with the
  cheapest lifetime's write price (a provider without write fees: everything sent is
  cached for free), R at least the minimum prefix when anything is read, and with
  automatic caching the minimum plus whole steps of what agrees; the minimum of what
  is written is relaxed.

Every plan's simulated price is at least its price here, so the program's optimum (and
HiGHS's proven bound when stopped) is a lower bound; ``replay`` prices the program's
plan as the library sends it (the previous call's blocks kept first, the breakpoints
where the layout puts them). The program's size grows with calls x earlier calls x
forms: it is for sessions of about ten calls (``benchmarks.cache``'s small sessions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from assembler.api import assemble
from assembler.cache import CacheBlock, CacheMode, CacheSimulator, Call, blocks_of_rendering
from assembler.cache.prefix import order_key, rank
from assembler.cacheplan import PlanSession
from assembler.exact.closure import build_problem
from assembler.model.serialise import request_json
from assembler.model.types import Kind, Status
from assembler.stages.gates import apply_gates

__all__ = ["SessionOptimum", "replay", "session_optimum"]

_CONVERSATION = frozenset({Kind.USER_TURN, Kind.ASSISTANT_TURN, Kind.TOOL_CALL, Kind.TOOL_RESULT})


@dataclass(frozen=True, slots=True)
class SessionOptimum:
    value: int
    # proven: no plan of at least ``value`` pays less in the simulator
    lower: float
    # the program's best plan: each call's form ids
    plan: tuple[tuple[str, ...], ...]
    # that plan's value and its price as the library renders it and the simulator replays it
    plan_value: int
    replayed: float
    # the same plan with the breakpoints where the program placed its entries (None:
    # the provider has no breakpoints to place)
    placed: float | None
    # the program proved its plan optimal (else the time limit stopped it)
    optimal: bool
    seconds: float

    @property
    def best(self) -> float:
        """The least replayed price of the plan: the library's layout, or the program's
        breakpoints (which a client that knows the coming calls can place)."""
        return self.replayed if self.placed is None else min(self.replayed, self.placed)

    @property
    def gap(self) -> float:
        """The plan's best replayed price over the lower bound (1.0: the optimum is known)."""
        return self.best / self.lower if self.lower > 0 else math.inf


class _Program:
    """A mixed-integer program written column by column and row by row."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.upper: list[float] = []
        self.starts: list[int] = [0]
        self.index: list[int] = []
        self.coefs: list[float] = []
        self.lower_rows: list[float] = []
        self.upper_rows: list[float] = []

    def var(self, cost: float = 0.0, upper: float = 1.0) -> int:
        """A new integer column in [0, upper]."""
        self.cost.append(cost)
        self.upper.append(upper)
        return len(self.cost) - 1

    def row(self, low: float, high: float, terms: list[tuple[int, float]]) -> None:
        for column, coef in terms:
            self.index.append(column)
            self.coefs.append(coef)
        self.starts.append(len(self.index))
        self.lower_rows.append(low)
        self.upper_rows.append(high)

    def at_most(self, a: int, b: int) -> None:
        """a <= b."""
        self.row(-math.inf, 0.0, [(a, 1.0), (b, -1.0)])

    def solve(self, time_limit: float) -> tuple[bool, float, np.ndarray[Any, Any] | None]:
        """(proven optimal, the optimum or the proven bound, the solution found)."""
        import highspy
        from highspy._core import _Highs  # the public wrapper prints a banner on stdout

        solver = _Highs()
        solver.setOptionValue("output_flag", False)
        solver.setOptionValue("time_limit", float(time_limit))
        solver.setOptionValue("mip_rel_gap", 1e-6)
        solver.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        n = len(self.cost)
        solver.passModel(
            n,
            len(self.lower_rows),
            len(self.index),
            int(highspy.MatrixFormat.kRowwise),
            int(highspy.ObjSense.kMinimize),
            0.0,
            np.array(self.cost, dtype=np.float64),
            np.zeros(n),
            np.array(self.upper, dtype=np.float64),
            np.array([-inf if v == -math.inf else v for v in self.lower_rows], dtype=np.float64),
            np.array([inf if v == math.inf else v for v in self.upper_rows], dtype=np.float64),
            np.array(self.starts, dtype=np.int32),
            np.array(self.index, dtype=np.int32),
            np.array(self.coefs, dtype=np.float64),
            np.ones(n, dtype=np.int32),  # every column an integer
        )
        solver.run()
        status = solver.getModelStatus()
        if status == highspy.HighsModelStatus.kInfeasible:
            return True, math.inf, None
        solution = solver.getSolution()
        values = np.array(solution.col_value) if solution.value_valid else None
        info = solver.getInfo()
        optimal = status == highspy.HighsModelStatus.kOptimal
        bound = info.objective_function_value if optimal else info.mip_dual_bound
        return optimal, float(bound), values


@dataclass(frozen=True, slots=True)
class _Form:
    id: str
    identity: str
    tokens: int
    # the place among the prompt's fixed-order blocks (None: a layout places it)
    place: tuple[Any, ...] | None


def session_optimum(
    session: PlanSession, value: int, *, time_limit: float = 120.0
) -> SessionOptimum:
    """The least price of a plan of ``session`` worth at least ``value`` (module
    docstring), with the plan found and its replayed price."""
    import time

    started = time.process_time()
    rules = session.rules
    forms: dict[str, int] = {}
    known: list[_Form] = []
    calls: list[tuple[list[tuple[int, int]], dict[int, list[int]], set[int], Any, int]] = []
    for request in session.requests:
        problem = build_problem(request, apply_gates(request))
        by_id = {c.id: c for c in request.candidates}
        tool_calls: dict[str, tuple[int, str]] = {}
        for c in request.candidates:
            if c.kind is Kind.TOOL_CALL:
                at = (c.turn, c.id)
                tool_calls[str(c.tool_call_id)] = min(tool_calls.get(str(c.tool_call_id), at), at)
        offered: list[tuple[int, int]] = []
        for f, form_id in enumerate(problem.form_ids):
            if form_id not in forms:
                c = by_id[form_id]
                if rank(c.kind) < 2:
                    place: tuple[Any, ...] | None = (0, rank(c.kind), c.identity)
                elif c.kind in _CONVERSATION:
                    place = (1, *order_key(c, tool_calls))
                else:
                    place = None
                forms[form_id] = len(known)
                known.append(_Form(form_id, c.identity, problem.cost[f], place))
            offered.append((forms[form_id], problem.value[f]))
        identities: dict[int, list[int]] = {}
        for f, form_id in enumerate(problem.form_ids):
            identities.setdefault(problem.identity_of[f], []).append(forms[form_id])
        assert problem.budget is not None, "a session's calls have budgets"
        calls.append((offered, identities, set(problem.required), problem.groups,
                      problem.budget))  # fmt: skip
    # fixed-order places, one per identity, in the prompt's order
    order = sorted({(fm.place, fm.identity) for fm in known if fm.place is not None})
    place_of = {identity: p for p, (_place, identity) in enumerate(order)}
    head = [p for p, (place, _identity) in enumerate(order) if place[0] == 0]
    last_head = head[-1] if head else None
    at_place: dict[int, list[int]] = {}
    for f, fm in enumerate(known):
        if fm.place is not None:
            at_place.setdefault(place_of[fm.identity], []).append(f)

    writes = rules.bills_writes
    ttls = rules.ttls if rules.mode is not CacheMode.AUTOMATIC else rules.ttls[:1]
    write = min(t.write for t in ttls) if writes else 1.0
    longest = max(t.seconds for t in ttls)
    read = rules.read
    least, step = rules.min_prefix_tokens, rules.step_tokens
    program = _Program()
    x: dict[tuple[int, int], int] = {}
    cached: dict[tuple[int, int], int] = {}
    reads: dict[tuple[int, int], int] = {}
    valued: list[tuple[int, float]] = []
    sent: list[set[int]] = []
    for t, (offered, identities, required, groups, budget) in enumerate(calls):
        # a token sent costs 1; cached, write - 1 more; read, read - write more
        for f, worth in offered:
            tokens = known[f].tokens
            x[t, f] = program.var(float(tokens))
            valued.append((x[t, f], float(worth)))
            if writes:
                cached[t, f] = program.var(tokens * (write - 1.0))
                program.at_most(cached[t, f], x[t, f])
            else:
                cached[t, f] = x[t, f]
            # read tokens are priced per call (their steps), below
            reads[t, f] = program.var(tokens * (read - write) if step == 1 else 0.0)
            program.at_most(reads[t, f], cached[t, f])
            if t == 0:
                program.upper[reads[t, f]] = 0.0
        for identity, members in identities.items():
            low = 1.0 if identity in required else 0.0
            program.row(low, 1.0, [(x[t, f], 1.0) for f in members])
        for group in groups:
            for other in group[1:]:
                program.row(0.0, 0.0, [(x[t, f], 1.0) for f in identities[group[0]]]
                            + [(x[t, f], -1.0) for f in identities[other]])  # fmt: skip
        program.row(-math.inf, float(budget),
                    [(x[t, f], float(known[f].tokens)) for f, _worth in offered])  # fmt: skip
        sent.append({f for f, _worth in offered})
    program.row(float(value), math.inf, valued)

    # what a call caches: a prefix of its prompt (an extent along the fixed places; an
    # item a layout places is cached only with the whole head)
    extent: dict[tuple[int, int], int] = {}
    for t in range(len(calls)):
        before = None
        for p in range(len(order)):
            here = [f for f in at_place[p] if f in sent[t]]
            if not here:
                continue
            extent[t, p] = program.var()
            if before is not None:
                program.at_most(extent[t, p], extent[t, before])
            for f in here:
                program.at_most(cached[t, f], extent[t, p])
                if writes:
                    # sent within the extent: cached
                    terms = [(cached[t, f], 1.0), (extent[t, p], -1.0), (x[t, f], -1.0)]
                    program.row(-1.0, math.inf, terms)
            before = p
        if last_head is not None and (t, last_head) in extent:
            for f in sent[t]:
                if known[f].place is None:
                    program.at_most(cached[t, f], extent[t, last_head])

    # with breakpoints, a call's entries end at most ``breakpoints`` of its places (its
    # read refreshed included), and a read ends at one of the source's entries
    limited = rules.breakpoints > 0 and writes
    entry: dict[tuple[int, int], int] = {}
    if limited:
        for t in range(len(calls)):
            ends = [p for p in range(len(order)) if (t, p) in extent]
            for p in ends:
                entry[t, p] = program.var()
                program.at_most(entry[t, p], extent[t, p])
            if ends:
                program.row(-math.inf, float(rules.breakpoints),
                            [(entry[t, p], 1.0) for p in ends])  # fmt: skip

    # what a call reads: from one earlier call, the prefix on which the two agree
    times = session.times
    for t in range(1, len(calls)):
        sources = [u for u in range(t) if times[t] - times[u] < longest]
        readable: dict[int, list[int]] = {f: [] for f in sent[t]}
        source_of: dict[int, int] = {}
        for u in sources:
            source_of[u] = program.var()
        if source_of:
            program.row(-math.inf, 1.0, [(s, 1.0) for s in source_of.values()])
        for u, chosen in source_of.items():
            before = chosen
            agreed: dict[int, int] = {}
            for p in range(len(order)):
                both = [f for f in at_place[p] if f in sent[t] or f in sent[u]]
                if not both:
                    continue
                a = program.var()
                program.at_most(a, before)
                for f in both:
                    mine, theirs = x.get((t, f)), x.get((u, f))
                    # the same form sent by both, or by neither
                    if mine is not None and theirs is not None:
                        program.row(-math.inf, 1.0, [(a, 1.0), (mine, 1.0), (theirs, -1.0)])
                        program.row(-math.inf, 1.0, [(a, 1.0), (theirs, 1.0), (mine, -1.0)])
                    else:
                        only = mine if mine is not None else theirs
                        assert only is not None
                        program.row(-math.inf, 1.0, [(a, 1.0), (only, 1.0)])
                if (u, p) in extent:
                    program.at_most(a, extent[u, p])
                else:
                    program.upper[a] = 0.0
                agreed[p] = a
                before = a
            # how far the read reaches: within the agreement, up to an entry of the source
            reach = agreed
            if limited:
                reach = {}
                places = list(agreed)
                for k, p in enumerate(places):
                    reach[p] = program.var()
                    program.at_most(reach[p], agreed[p])
                    if k:
                        program.at_most(reach[p], reach[places[k - 1]])
                for k, p in enumerate(places):
                    # reaching p but not the next place: p ends an entry of the source,
                    # and the reader's own breakpoint there finds it
                    stops = [(reach[p], 1.0)]
                    if k + 1 < len(places):
                        stops.append((reach[places[k + 1]], -1.0))
                    for owner in (u, t):
                        if (owner, p) in entry:
                            program.row(-math.inf, 0.0, [*stops, (entry[owner, p], -1.0)])
                        else:
                            program.row(-math.inf, 0.0, stops)
            for p, a in reach.items():
                for f in at_place[p]:
                    if f in sent[t] and f in sent[u]:
                        readable[f].append(a)
            head_agreed = agreed.get(last_head, chosen) if last_head is not None else chosen
            for f in sent[t]:
                if known[f].place is None and f in sent[u]:
                    b = program.var()
                    program.at_most(b, head_agreed)
                    program.at_most(b, cached[u, f])
                    readable[f].append(b)
        for f in sent[t]:
            program.row(-math.inf, 0.0, [(reads[t, f], 1.0)] + [(a, -1.0) for a in readable[f]])
        # a read is at least the minimum prefix; with steps, the minimum and whole steps
        # of the tokens that agree are read, the rest of them written or sent
        some = program.var()
        agreeing = [(reads[t, f], float(known[f].tokens)) for f in sent[t]]
        for f in sent[t]:
            program.at_most(reads[t, f], some)
        if step == 1:
            program.row(0.0, math.inf, [*agreeing, (some, -float(least))])
        else:
            budget = calls[t][4]
            steps = program.var((read - write) * step, upper=float(budget // step + 1))
            program.cost[some] = (read - write) * least
            program.row(-math.inf, 0.0,
                        [(some, float(least)), (steps, float(step))]
                        + [(col, -tokens) for col, tokens in agreeing])  # fmt: skip
            program.row(-math.inf, 0.0, [(steps, 1.0), (some, -float(budget // step + 1))])
    optimal, lower, solution = program.solve(time_limit)
    seconds = time.process_time() - started
    if solution is None:
        return SessionOptimum(value, lower, (), 0, math.inf, None, optimal, seconds)
    plan = tuple(
        tuple(sorted(known[f].id for f, _worth in offered if solution[x[t, f]] > 0.5))
        for t, (offered, *_rest) in enumerate(calls)
    )
    worth = round(sum(w * float(solution[col]) for col, w in valued))
    placed = None
    if limited:
        marks = tuple(
            frozenset(order[p][1] for p in range(len(order))
                      if (t, p) in entry and solution[entry[t, p]] > 0.5)
            for t in range(len(calls))
        )  # fmt: skip
        placed = replay(session, plan, marks=marks)
    return SessionOptimum(value, max(0.0, lower), plan, worth, replay(session, plan), placed,
                          optimal, seconds)  # fmt: skip


def replay(
    session: PlanSession,
    plan: tuple[tuple[str, ...], ...],
    ttl: int | None = None,
    marks: tuple[frozenset[str], ...] | None = None,
) -> float:
    """The price of sending ``plan`` (each call's form ids) as the library renders it:
    each call's forms alone, with the previous call's blocks as its cache section (kept
    first, the breakpoints where the layout puts them), replayed by the simulator. With
    ``marks`` (per call, the identities whose blocks end with a breakpoint), the
    breakpoints are those instead."""
    rules = session.rules
    seconds = rules.default_ttl.seconds if ttl is None else ttl
    simulator = CacheSimulator(rules)
    previous: list[dict[str, Any]] | None = None
    total = 0.0
    for t, (request, chosen) in enumerate(zip(session.requests, plan, strict=True)):
        whole = request_json(request)
        keep = set(chosen)
        sub = {**whole, "candidates": [c for c in whole["candidates"] if c["id"] in keep]}
        sub["task"] = {**whole["task"], "budget": max(1, sum(c["cost"] for c in sub["candidates"]))}
        section: dict[str, Any] = {"provider": rules.provider.value, "ttl": seconds,
                                   "now": session.times[t]}  # fmt: skip
        if session.model is not None:
            section["model"] = session.model
        if previous is not None:
            section["previous"] = {"at": session.times[t - 1], "blocks": previous}
        sub["cache"] = section
        result = assemble(sub, strategy="dump", render=session.format)
        if result.status is not Status.BUNDLE or result.rendering is None:
            raise ValueError(f"call {t}: the plan's forms have no bundle ({result.status.value})")
        rendering = result.rendering
        blocks = blocks_of_rendering(rendering, ttl=seconds)
        if marks is not None:
            blocks = _marked(rendering, blocks, marks[t], seconds)
        total += simulator.call(Call(session.times[t], blocks)).price
        previous = rendering.manifest.cache_blocks(rendering.text)
    return total


def _marked(
    rendering: Any, blocks: tuple[CacheBlock, ...], identities: frozenset[str], ttl: int
) -> tuple[CacheBlock, ...]:
    """``blocks`` with a breakpoint exactly where an item of ``identities`` ends (the
    blocks in the rendering's order: its items and envelope parts by offset)."""
    manifest = rendering.manifest
    owners = sorted(
        [(i.offset, i.identity) for i in manifest.items]
        + [(offset, None) for _part, offset, _length in manifest.envelope]
    )
    assert len(owners) == len(blocks)
    return tuple(
        replace(block, breakpoint=ttl if owner in identities else None)
        for (_offset, owner), block in zip(owners, blocks, strict=True)
    )
