"""The clairvoyant limit: the least price of a whole session at each value, known ahead.

Input: a ``PlanSession`` (the provider, the model, the render format, and every call's
time and whole request, relevance included: what a planner that knew the future would
know), from ``plan_session`` (its JSON, ``assembler cache plan``'s file).
Output: a ``SessionLimit``: per value level (a share of the cache-blind optimum's
value, the sum of each call's best value), the least price in the simulator's units, *exact*
where the session is small enough to enumerate, else a proven *lower bound*
(``assembler.cache.limit``); and the cache-blind policy's value and price for scale.

Exact (``exact_frontier``): every legal selection of each call (one form per
identity, the required identities, closure, groups, budget), each rendered as the
selection alone renders (``dump`` of exactly its forms, the canonical layout) with its
breakpoints at each of the provider's lifetimes, replayed by the simulator; a dynamic
program over the calls keeps, per distinct cache state, the plans no other plan beats
on both value and price. It is exact over the canonical layout of each selection
(another order of the same forms is not tried), and refuses (``PlanTooLarge``) above
``EXACT_SELECTIONS`` selections of one call or ``EXACT_STATES`` states, before any
work of that size. The bound holds for every order and every breakpoint.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .api import assemble
from .cache import CacheSimulator, Call, blocks_of_rendering, cache_rules
from .cache.limit import LimitBound, Offers, lower_bound
from .errors import PlanTooLarge
from .exact.closure import build_problem
from .exact.incumbent import is_legal
from .facts import CacheMode, CacheRules, format_caching_by, providers_listed
from .model.errors import AssemblerError, InvalidRequest
from .model.numbers import is_number
from .model.objective import form_value
from .model.parse import parse_request
from .model.serialise import request_json
from .model.types import Request, Status
from .stages.gates import apply_gates

__all__ = [
    "EXACT_SELECTIONS",
    "EXACT_STATES",
    "LEVELS",
    "PlanSession",
    "PlanTooLarge",
    "SessionLimit",
    "exact_frontier",
    "offers_of",
    "plan",
    "plan_session",
]

# the most (cache state, plan) pairs the exact program keeps at a call
EXACT_STATES = 20_000
# the most selections of one call the exact program enumerates
EXACT_SELECTIONS = 4096
# value levels reported, as shares of the cache-blind optimum's value
LEVELS = (1.0, 0.99, 0.98, 0.95, 0.9, 0.8)


@dataclass(frozen=True, slots=True)
class PlanSession:
    rules: CacheRules
    format: str
    times: tuple[float, ...]
    requests: tuple[Request, ...]
    # the model the rules were found by (None: the provider's default)
    model: str | None = None


@dataclass(frozen=True, slots=True)
class SessionLimit:
    exact: bool
    blind_value: int
    blind_price: float
    # (value level as a share, least value, least price or its lower bound)
    levels: tuple[tuple[float, int, float], ...]
    # exact only: every plan no other beats on value and price, (value, price)
    frontier: tuple[tuple[int, float], ...] = ()
    bound: LimitBound | None = None

    def price_at(self, value: float) -> float:
        """The least price (exact) or its bound at a total value of at least ``value``."""
        if self.exact:
            return min((p for v, p in self.frontier if v >= value), default=float("inf"))
        assert self.bound is not None
        return self.bound.bound(value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "exact" if self.exact else "lower bound",
            "blind_value": self.blind_value,
            "blind_price": round(self.blind_price, 3),
            "levels": [
                {"share": share, "value": value, "price": round(price, 3)}
                for share, value, price in self.levels
            ],
            "frontier": [[v, round(p, 3)] for v, p in self.frontier],
        }


def plan_session(data: Any) -> PlanSession:
    """``{"provider", "model"?, "format"?, "calls": [{"at", "request"}, ...]}``, checked:
    an error is ``InvalidRequest`` naming the field (``calls[2].request.task.budget``)."""
    if not isinstance(data, Mapping):
        raise InvalidRequest("$", "a session must be a JSON object")
    provider = data.get("provider")
    if not isinstance(provider, str):
        raise InvalidRequest("provider", f"is required ({providers_listed()})")
    model = data.get("model")
    try:
        rules = cache_rules(provider, model if isinstance(model, str) else None)
    except ValueError as error:
        raise InvalidRequest("provider", str(error)) from None
    fmt = data.get("format", format_caching_by(CacheMode.BREAKPOINTS))
    calls = data.get("calls")
    if not isinstance(calls, list) or not calls:
        raise InvalidRequest("calls", "must be a non-empty list of {at, request}")
    times: list[float] = []
    requests: list[Request] = []
    for index, call in enumerate(calls):
        if not isinstance(call, Mapping) or "request" not in call:
            raise InvalidRequest(f"calls[{index}]", "must be an object with at and request")
        at = call.get("at", 0.0)
        if not is_number(at) or (times and at < times[-1]):
            raise InvalidRequest(f"calls[{index}].at", "must be seconds, never going backwards")
        try:
            requests.append(parse_request(call["request"]))
        except InvalidRequest as error:
            raise InvalidRequest(f"calls[{index}].request.{error.field}", error.reason) from None
        times.append(float(at))
    return PlanSession(rules, str(fmt), tuple(times), tuple(requests),
                       model if isinstance(model, str) else None)  # fmt: skip


def offers_of(session: PlanSession) -> Offers:
    """The session's forms for the bound: each gated form, its value at each call, and
    whether it must be sent there (the one eligible form of a required identity)."""
    index: dict[str, int] = {}
    tokens: list[int] = []
    identities: dict[str, int] = {}
    identity_of: list[int] = []
    rows: list[tuple[dict[int, int], set[int]]] = []
    groups: set[tuple[int, ...]] = set()
    for request in session.requests:
        problem = build_problem(request, apply_gates(request))
        values: dict[int, int] = {}
        for f, form_id in enumerate(problem.form_ids):
            k = index.setdefault(form_id, len(index))
            if k == len(tokens):
                tokens.append(problem.cost[f])
                name = problem.identities[problem.identity_of[f]]
                identity_of.append(identities.setdefault(name, len(identities)))
            values[k] = problem.value[f]
        counts = [0] * len(problem.identities)
        for identity in problem.identity_of:
            counts[identity] += 1
        must = {
            index[problem.form_ids[f]]
            for f, identity in enumerate(problem.identity_of)
            if identity in set(problem.required) and counts[identity] == 1
        }
        rows.append((values, must))
        for group in problem.groups:
            names = [problem.identities[i] for i in group]
            if all(name in identities for name in names):
                groups.add(tuple(sorted(identities[name] for name in names)))
    n, calls = len(index), len(rows)
    offered = np.zeros((calls, n), dtype=bool)
    required = np.zeros((calls, n), dtype=bool)
    value = np.zeros((calls, n), dtype=np.int64)
    for t, (values, must) in enumerate(rows):
        for k, v in values.items():
            offered[t, k] = True
            value[t, k] = v
        for k in must:
            required[t, k] = True
    budgets = tuple(r.task.budget or 0 for r in session.requests)
    return Offers(session.times, budgets, tuple(index), np.array(tokens, dtype=np.int64),
                  offered, required, value, np.array(identity_of, dtype=np.int64),
                  tuple(sorted(groups)))  # fmt: skip


def _ttls(rules: CacheRules) -> tuple[int, ...]:
    if rules.mode is CacheMode.AUTOMATIC:
        return (rules.default_ttl.seconds,)
    return tuple(t.seconds for t in rules.ttls)


def _blind(session: PlanSession) -> tuple[int, float]:
    simulator = CacheSimulator(session.rules)
    ttl = _ttls(session.rules)[0]
    value, price = 0, 0.0
    for at, request in zip(session.times, session.requests, strict=True):
        result = assemble(request, render=session.format)
        if result.status is not Status.BUNDLE or result.rendering is None:
            raise InvalidRequest("calls", f"a call has no bundle ({result.status.value})")
        by_id = {c.id: c for c in request.candidates}
        value += sum(
            form_value(by_id[i].relevance, request.task.min_relevance) for i in result.selected
        )
        price += simulator.call(Call(at, blocks_of_rendering(result.rendering, ttl=ttl))).price
    return value, price


def _selections(session: PlanSession, t: int) -> list[tuple[int, tuple[Any, ...]]]:
    """Each legal selection of call ``t``: its value, and its blocks at each lifetime."""
    request = session.requests[t]
    problem = build_problem(request, apply_gates(request))
    options = [[None, *forms] for forms in problem.forms_of()]
    if math.prod(len(o) for o in options) > EXACT_SELECTIONS:
        raise PlanTooLarge(f"call {t} has more than {EXACT_SELECTIONS} selections to enumerate")
    out: list[tuple[int, tuple[Any, ...]]] = []
    whole = request_json(request)
    for choice in itertools.product(*options):
        selection = tuple(sorted(f for f in choice if f is not None))
        if not is_legal(problem, selection):
            continue
        ids = [problem.form_ids[f] for f in selection]
        sub = {**whole, "candidates": [c for c in whole["candidates"] if c["id"] in ids]}
        try:
            result = assemble(sub, strategy="dump", render=session.format)
        except AssemblerError:
            continue  # a body the provider refuses (no message at all, ...): never sent
        if result.rendering is None or set(result.selected) != set(ids):
            continue
        renders = tuple(
            blocks_of_rendering(result.rendering, ttl=ttl) for ttl in _ttls(session.rules)
        )
        out.append((sum(problem.value[f] for f in selection), renders))
    return out


def exact_frontier(session: PlanSession) -> tuple[tuple[int, float], ...]:
    """Every (value, price) no other plan of the session beats on both, exactly."""
    per_call = [_selections(session, t) for t in range(len(session.requests))]
    # states: the cache's entries (a key) -> [simulator, [(value, price), ...]]
    states: list[tuple[CacheSimulator, int, float]] = [(CacheSimulator(session.rules), 0, 0.0)]
    for at, options in zip(session.times, per_call, strict=True):
        grown: dict[Any, list[tuple[CacheSimulator, int, float]]] = {}
        for simulator, value, price in states:
            for gained, renders in options:
                for blocks in renders:
                    after = copy.deepcopy(simulator)
                    cost = after.call(Call(at, blocks))
                    key = _state_key(after, at)
                    grown.setdefault(key, []).append((after, value + gained, price + cost.price))
        states = [kept for group in grown.values() for kept in _pareto(group)]
        if len(states) > EXACT_STATES:
            raise PlanTooLarge(f"more than {EXACT_STATES} plans to keep at one call")
    return tuple(sorted({(v, p) for _s, v, p in _pareto(states)}))


def _state_key(simulator: CacheSimulator, at: float) -> Any:
    live = simulator._entries.items()  # the state is the simulator's own
    return (
        frozenset((h, e.expiry, e.ttl) for h, e in live if e.expiry > at),
        tuple(simulator._recent),
        frozenset(simulator._held.items()),
    )


def _pareto(group: Sequence[tuple[CacheSimulator, int, float]]) -> list[Any]:
    kept: list[tuple[CacheSimulator, int, float]] = []
    for item in sorted(group, key=lambda s: (-s[1], s[2])):
        if not kept or item[2] < kept[-1][2] - 1e-9:
            kept.append(item)
    return kept


def plan(session: PlanSession, *, exact: bool | None = None, steps: int = 8) -> SessionLimit:
    """The limit at each of ``LEVELS``: exact when ``exact`` (or, by default, when the
    program fits), else the lower bound."""
    blind_value, blind_price = _blind(session)
    frontier: tuple[tuple[int, float], ...] = ()
    if exact is not False:
        try:
            frontier = exact_frontier(session)
        except PlanTooLarge:
            if exact:
                raise
    if frontier:
        levels = tuple(
            (share, _at_least(share, blind_value),
             min((p for v, p in frontier if v >= _at_least(share, blind_value)),
                 default=float("inf")))
            for share in LEVELS
        )  # fmt: skip
        return SessionLimit(True, blind_value, blind_price, levels, frontier)
    bound = lower_bound(offers_of(session), session.rules, steps=steps)
    levels = tuple(
        (share, _at_least(share, blind_value), bound.bound(_at_least(share, blind_value)))
        for share in LEVELS
    )
    return SessionLimit(False, blind_value, blind_price, levels, bound=bound)


def _at_least(share: float, value: int) -> int:
    return int(np.ceil(share * value - 1e-9))


def load(text: str) -> PlanSession:
    try:
        data = json.loads(text)
    except ValueError as error:
        raise InvalidRequest("$", f"not JSON: {error}") from None
    return plan_session(data)
