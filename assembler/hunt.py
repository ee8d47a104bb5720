"""Counterexample hunts: find, shrink and pin where a strategy fails (issue 4).

Input: a strategy name, a seed, an example count or a time budget, a candidate cap,
a worker count and an output folder (``main(argv)`` parses them from the command
line ``assembler hunt ...``).
Output: a summary (text, or JSON with ``--json``) of every disagreement between the
strategy and the exact solver, and one JSON file per shrunk finding in ``--out``
with ``kind``, ``strategy``, ``seed``, ``example``, ``request``, ``answers`` and a
one-line ``explanation``. ``assembler hunt --replay FILE`` re-runs a saved case.

Example ``i`` of seed ``s`` is ``generate(random.Random(f"{s}:{i}"), Shape.small(M))``,
so a hunt is deterministic for a given seed and example count whatever the worker
count: workers take batches of indices and the parent merges them by index.

Every answer is judged against ``cpsat`` (and against ``enumerate`` as a second
opinion when the request is small enough), and every bundle by the independent
verifier, never by the strategy's own claim. Kinds, in the order they are checked:
``crash`` (a strategy raised on valid input), ``exact-disagreement`` (cpsat and
enumerate disagree, an exact answer fails the verifier, or a baseline beats cpsat:
a bug in the project), ``false-bundle``, ``false-refusal``, ``suboptimal-value``,
``suboptimal-cost``.

Shrinking is delta debugging on the request dict (drop candidates, drop a candidate
together with its share of the budget, drop required / seal entries, dependencies,
lineage, groups and other optional fields, simplify costs, budget and relevance to
rounder numbers, renumber names, sort candidates), keeping every edit after which the
strategy still shows the same kind. It costs ~100 examples' worth of judging, so only
the first ``--shrink N`` findings of each kind (default 3) are shrunk; every finding
is counted and listed (by example index, which regenerates it). A saved case is named
``STRATEGY-KIND-HASH.json`` after its shrunk request, so a re-run overwrites rather
than duplicates; its ``answers`` are ``Result.to_dict()`` without the wall-clock
``timings`` (roles ``tested``, ``exact`` and, when run, ``oracle``).

Exit codes: 0 hunt finished; 1 an exact strategy is wrong (an exact-disagreement or
crash, or any finding against ``cpsat`` / ``enumerate``), or a replayed case did not
reproduce; 2 bad arguments.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import multiprocessing
import random
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn, TextIO

from .api import assemble
from .generate import Shape, generate
from .model.errors import EnumerationTooLarge, InvalidRequest
from .model.parse import CANDIDATE_FIELDS, TASK_FIELDS
from .model.types import Result, Status
from .strategies import STRATEGIES
from .verifiers.bundle import verify

__all__ = [
    "Finding",
    "FindingKind",
    "HuntConfig",
    "HuntReport",
    "Judgement",
    "example_request",
    "hunt",
    "judge",
    "main",
    "replay",
    "shrink",
]

EXACT = ("cpsat", "enumerate")
DEFAULT_OUT = Path("corpus/register")
DEFAULT_EXAMPLES = 500
DEFAULT_MAX_CANDIDATES = 10
# findings shrunk and written per kind: shrinking costs ~100x an example, and the
# first few findings of a kind are almost always the same trap
DEFAULT_SHRINK_PER_KIND = 3
# the second opinion costs exponential time; above this many candidates it is skipped
# even when enumerate's own limit would still allow it
ORACLE_MAX_CANDIDATES = 14
SHRINK_MAX_TESTS = 3000
BATCH = 8


class FindingKind(StrEnum):
    """How a strategy's answer disagrees with the exact answer."""

    CRASH = "crash"
    EXACT_DISAGREEMENT = "exact-disagreement"
    FALSE_BUNDLE = "false-bundle"
    FALSE_REFUSAL = "false-refusal"
    SUBOPTIMAL_VALUE = "suboptimal-value"
    SUBOPTIMAL_COST = "suboptimal-cost"


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict on one request: ``kind`` is None when the strategy is right.

    ``skipped`` is true when no verdict could be reached (the strategy answered
    ``undecided`` or cannot run at this size). ``answers`` maps a role (``tested``,
    ``exact``, ``oracle``) to that answer's ``Result.to_dict()`` without timings.
    """

    kind: FindingKind | None
    explanation: str
    answers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    skipped: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """One example where the strategy was wrong, before shrinking."""

    example: int
    kind: FindingKind
    explanation: str
    candidates: int


@dataclass(frozen=True, slots=True)
class HuntConfig:
    """One hunt: ``examples`` (a count) or ``seconds`` (a search time); ``out`` None
    writes nothing."""

    strategy: str
    seed: int = 0
    examples: int | None = DEFAULT_EXAMPLES
    seconds: float | None = None
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    workers: int = 1
    out: Path | None = DEFAULT_OUT
    shrink_per_kind: int = DEFAULT_SHRINK_PER_KIND

    def __post_init__(self) -> None:
        if self.examples is None and self.seconds is None:
            raise ValueError("a hunt needs an example count or a number of seconds")
        if self.examples is not None and self.examples < 0:
            raise ValueError("examples must be 0 or more")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError("seconds must be positive")
        if self.workers < 1 or self.max_candidates < 1 or self.shrink_per_kind < 0:
            raise ValueError("workers and max_candidates must be >= 1, shrink_per_kind >= 0")


@dataclass(frozen=True, slots=True)
class HuntReport:
    """What a hunt did: examples tried (a prefix 0..examples-1), findings, written cases."""

    strategy: str
    seed: int
    examples: int
    skipped: int
    seconds: float
    shrink_seconds: float
    findings: tuple[Finding, ...]
    cases: tuple[Mapping[str, Any], ...]
    paths: tuple[str, ...]

    def counts(self) -> dict[str, int]:
        counts = Counter(f.kind for f in self.findings)
        return {kind.value: counts.get(kind, 0) for kind in FindingKind}

    @property
    def rate(self) -> float:
        """Examples per second of search (shrinking excluded)."""
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def exact_is_wrong(self) -> bool:
        if self.strategy in EXACT:
            return bool(self.findings)
        loud = (FindingKind.EXACT_DISAGREEMENT, FindingKind.CRASH)
        return any(f.kind in loud for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        per_1000 = {
            kind: round(1000 * n / self.examples, 2) if self.examples else 0.0
            for kind, n in self.counts().items()
        }
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "examples": self.examples,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "shrink_seconds": round(self.shrink_seconds, 3),
            "examples_per_second": round(self.rate, 2),
            "findings": self.counts(),
            "per_1000": per_1000,
            "found": [
                {"example": f.example, "kind": f.kind.value, "explanation": f.explanation}
                for f in self.findings
            ],
            "cases": [
                {
                    "path": path,
                    "kind": case["kind"],
                    "example": case["example"],
                    "candidates": len(case["request"]["candidates"]),
                    "candidates_before": case["shrunk_from"],
                    "explanation": case["explanation"],
                }
                for path, case in zip(self.paths, self.cases, strict=True)
            ],
        }


# ---------------------------------------------------------------------------
# Judging one request


def _answer(result: Result) -> dict[str, Any]:
    # timings are wall-clock noise: a saved case must be byte-identical on a re-run
    data = result.to_dict()
    data.pop("timings", None)
    return data


def _describe(result: Result) -> str:
    if result.status is Status.BUNDLE:
        return f"a bundle of value {result.value}, cost {result.cost}"
    if result.refusal is not None:
        return f"a refusal {result.refusal.code.value}"
    return result.status.value


def _violations(request: Mapping[str, Any], result: Result) -> str:
    found = verify(request, result)
    return "; ".join(f"{v.kind}: {v.detail}" for v in found[:3])


def _exact_mismatch(a: Result, b: Result) -> str | None:
    """Why two exact answers differ, or None when they agree."""
    if a.status is not b.status:
        return f"status {a.status.value} vs {b.status.value}"
    if a.status is Status.BUNDLE:
        if (a.value, a.cost) != (b.value, b.cost):
            return f"value/cost {a.value}/{a.cost} vs {b.value}/{b.cost}"
        if a.selected != b.selected:
            return (
                f"same value and cost, different selection {list(a.selected)} vs {list(b.selected)}"
            )
    if a.refusal is not None and b.refusal is not None:
        ra, rb = a.refusal, b.refusal
        if (ra.code, ra.mandatory_cost) != (rb.code, rb.mandatory_cost):
            return (
                f"refusal {ra.code.value} (mandatory {ra.mandatory_cost}) vs"
                f" {rb.code.value} (mandatory {rb.mandatory_cost})"
            )
    return None


def judge(request: Mapping[str, Any], strategy: str, *, oracle: bool = True) -> Judgement:
    """Run ``strategy`` and the exact solver on ``request`` and classify the outcome.

    Input: a valid request dict and a strategy name. Output: a ``Judgement``.
    Raises ``InvalidRequest`` when the request is not valid (the shrinker relies on it).
    """
    answers: dict[str, Mapping[str, Any]] = {}
    try:
        exact = assemble(request, strategy="cpsat")
    except InvalidRequest:
        raise
    except Exception as error:
        return Judgement(FindingKind.CRASH, f"cpsat raised {type(error).__name__}: {error}")
    answers["exact"] = _answer(exact)
    broken = _violations(request, exact)
    if broken:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"cpsat's own answer fails the verifier: {broken}",
            answers,
        )
    if exact.status is Status.UNDECIDED or (exact.status is Status.BUNDLE and not exact.optimal):
        return Judgement(None, "cpsat did not prove its answer", answers, skipped=True)

    if oracle and len(request["candidates"]) <= ORACLE_MAX_CANDIDATES:
        try:
            second = assemble(request, strategy="enumerate")
        except EnumerationTooLarge:
            pass
        except Exception as error:
            return Judgement(
                FindingKind.CRASH, f"enumerate raised {type(error).__name__}: {error}", answers
            )
        else:
            answers["oracle"] = _answer(second)
            why = _exact_mismatch(exact, second) or (
                f"enumerate's answer fails the verifier: {b}"
                if (b := _violations(request, second))
                else None
            )
            if why:
                return Judgement(
                    FindingKind.EXACT_DISAGREEMENT, f"cpsat and enumerate disagree: {why}", answers
                )

    try:
        tested = assemble(request, strategy=strategy)
    except EnumerationTooLarge:
        return Judgement(None, f"{strategy} cannot run at this size", answers, skipped=True)
    except Exception as error:
        return Judgement(
            FindingKind.CRASH, f"{strategy} raised {type(error).__name__}: {error}", answers
        )
    answers = {"tested": _answer(tested), **answers}
    if tested.status is Status.UNDECIDED:
        return Judgement(None, f"{strategy} answered undecided", answers, skipped=True)

    if tested.status is Status.REFUSED:
        if exact.status is Status.BUNDLE:
            refusal = tested.refusal
            why = "" if refusal is None else f" {refusal.code.value}"
            if refusal is not None and refusal.mandatory_cost is not None:
                why += (
                    f" (claims mandatory cost {refusal.mandatory_cost} > budget {refusal.budget})"
                )
            return Judgement(
                FindingKind.FALSE_REFUSAL,
                f"{strategy} refused{why} but cpsat found {_describe(exact)}:"
                f" {' '.join(exact.selected)}",
                answers,
            )
        if strategy in EXACT and (why := _exact_mismatch(tested, exact)):
            return Judgement(FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs cpsat: {why}", answers)
        return Judgement(None, "both refuse", answers)

    broken = _violations(request, tested)
    if broken:
        return Judgement(
            FindingKind.FALSE_BUNDLE, f"the verifier rejects {strategy}'s bundle: {broken}", answers
        )
    # from here the tested bundle is legal and its value and cost are verified
    if exact.status is not Status.BUNDLE:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy} found a legal bundle ({_describe(tested)}) but cpsat gave"
            f" {_describe(exact)}",
            answers,
        )
    if tested.value < exact.value:
        return Judgement(
            FindingKind.SUBOPTIMAL_VALUE,
            f"{strategy}'s legal bundle is worth {tested.value} (cost {tested.cost}),"
            f" cpsat's {exact.value} (cost {exact.cost})",
            answers,
        )
    if tested.value > exact.value or tested.cost < exact.cost:
        return Judgement(
            FindingKind.EXACT_DISAGREEMENT,
            f"{strategy}'s legal bundle ({_describe(tested)}) beats cpsat's ({_describe(exact)})",
            answers,
        )
    if tested.cost > exact.cost:
        return Judgement(
            FindingKind.SUBOPTIMAL_COST,
            f"{strategy}'s legal bundle reaches the optimal value {tested.value} at cost"
            f" {tested.cost}, cpsat at cost {exact.cost}",
            answers,
        )
    if strategy in EXACT and (why := _exact_mismatch(tested, exact)):
        return Judgement(FindingKind.EXACT_DISAGREEMENT, f"{strategy} vs cpsat: {why}", answers)
    return Judgement(None, "agrees", answers)


def _judge_safely(request: Mapping[str, Any], strategy: str) -> Judgement:
    """``judge`` that turns any exception into a ``crash`` finding.

    A generated request rejected as invalid is a disagreement between the generator
    and the parser, and an exception in the verifier is a bug too: either is worth a
    saved case, and neither may take a whole hunt down.
    """
    try:
        return judge(request, strategy)
    except InvalidRequest as error:
        return Judgement(FindingKind.CRASH, f"the request was rejected as invalid: {error}")
    except Exception as error:
        return Judgement(FindingKind.CRASH, f"judging raised {type(error).__name__}: {error}")


# ---------------------------------------------------------------------------
# Shrinking (delta debugging on the request dict)


RequestDict = dict[str, Any]


def _keeps(strategy: str, kind: FindingKind) -> Callable[[RequestDict], bool]:
    def test(request: RequestDict) -> bool:
        try:
            return judge(request, strategy).kind is kind
        except InvalidRequest:
            # an edit that breaks the request's validity is not a simplification
            return False
        except Exception:
            return kind is FindingKind.CRASH

    return test


def _ddmin(items: list[Any], test: Callable[[list[Any]], bool]) -> list[Any]:
    """Zeller's ddmin over complements: a 1-minimal sublist of ``items`` passing ``test``."""
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        for i in range(len(chunks)):
            rest = [x for j, chunk in enumerate(chunks) if j != i for x in chunk]
            if test(rest):
                items, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(items):
                break
            n = min(2 * n, len(items))
    if len(items) == 1 and test([]):
        return []
    return items


def _int_rank(v: int) -> tuple[int, int]:
    # fewer significant digits is simpler, then smaller; a strict order, so it terminates
    digits = str(v).rstrip("0") or "0"
    return (len(digits), v)


def _simpler_ints(x: int) -> list[int]:
    """Positive values strictly simpler than ``x`` (round numbers, halves), simplest first.

    Never below 10: a 1-token form or a zero budget makes a case degenerate, not clearer.
    """
    candidates = {x // 2}
    for digits in (1, 2):
        step = 10 ** max(len(str(x)) - digits, 0)
        candidates.update((x // step * step, -(-x // step) * step))
    return sorted((v for v in candidates if v >= 10 and _int_rank(v) < _int_rank(x)), key=_int_rank)


def _relevance_rank(r: float) -> tuple[int, float]:
    # fewer decimals is simpler; a strict order, so shrinking relevance terminates
    for digits in (1, 2):
        if round(r, digits) == r:
            return (digits, r)
    return (3, r)


def _simpler_relevance(r: float) -> list[float]:
    """Relevance values strictly simpler than ``r`` (fewer decimals), simplest first.

    Never 0: a valueless form hides why a strategy preferred it.
    """
    candidates = {round(r, 1), round(r, 2), round(r / 2, 1)}
    return sorted(
        (v for v in candidates if v > 0 and _relevance_rank(v) < _relevance_rank(r)),
        key=_relevance_rank,
    )


_OPTIONAL_FIELDS = (
    "content",
    "labels",
    "lineage",
    "transfer",
    "channel",
    "role",
    "group",
    "required",
    "source",
    "scope",
)


class _Shrinker:
    def __init__(self, test: Callable[[RequestDict], bool], max_tests: int) -> None:
        self.test_fn = test
        self.tests = 0
        self.max_tests = max_tests

    def test(self, request: RequestDict) -> bool:
        if self.tests >= self.max_tests:
            return False
        self.tests += 1
        return self.test_fn(request)

    def run(self, request: RequestDict) -> RequestDict:
        while self.tests < self.max_tests:
            before = json.dumps(request, sort_keys=True)
            for step in (
                self._candidates,
                self._candidates_and_budget,
                self._task_lists,
                self._task_fields,
                self._form_lists,
                self._form_fields,
                self._numbers,
                self._rename,
                self._sort,
            ):
                request = step(request)
            if json.dumps(request, sort_keys=True) == before:
                break
        return request

    def _try(self, request: RequestDict, edit: Callable[[RequestDict], None]) -> RequestDict:
        trial = copy.deepcopy(request)
        edit(trial)
        return trial if trial != request and self.test(trial) else request

    def _candidates(self, request: RequestDict) -> RequestDict:
        def test(kept: list[Any]) -> bool:
            return self.test({**request, "candidates": kept})

        return {**request, "candidates": _ddmin(list(request["candidates"]), test)}

    def _candidates_and_budget(self, request: RequestDict) -> RequestDict:
        # a refusal on the edge of the budget survives dropping a form only if the budget
        # drops with it: 1-minimality over single edits cannot find that pair
        i = 0
        while i < len(request["candidates"]):
            cost = request["candidates"][i]["cost"]
            if cost > 0:

                def drop(r: RequestDict, i: int = i, cost: int = cost) -> None:
                    del r["candidates"][i]
                    r["task"]["budget"] = max(0, r["task"]["budget"] - cost)

                trial = self._try(request, drop)
                if trial is not request:
                    request = trial
                    continue
            i += 1
        return request

    def _task_lists(self, request: RequestDict) -> RequestDict:
        for key in ("required", "seal"):
            items = list(request["task"].get(key, []))
            if items:
                request = _with_list(request, key, _ddmin(items, self._list_test(request, key)))
        return request

    def _task_fields(self, request: RequestDict) -> RequestDict:
        for key in ("scope", "operation", "min_relevance"):
            if key in request["task"]:
                request = self._try(request, _delete("task", key))
        for key in ("policy", "sources"):
            if key in request:
                request = self._try(request, _delete(key))
        for name in sorted(request.get("sources", {})):
            request = self._try(request, _delete("sources", name))
        if request["task"].get("id") != "t":
            request = self._try(request, _assign("t", "task", "id"))
        return request

    def _list_test(self, request: RequestDict, key: str) -> Callable[[list[Any]], bool]:
        def test(kept: list[Any]) -> bool:
            return self.test(_with_list(request, key, kept))

        return test

    def _form_lists(self, request: RequestDict) -> RequestDict:
        for i in range(len(request["candidates"])):
            for key in ("depends_on", "lineage"):
                for item in list(request["candidates"][i].get(key, [])):

                    def drop(r: RequestDict, i: int = i, key: str = key, item: Any = item) -> None:
                        form = r["candidates"][i]
                        form[key] = [x for x in form[key] if x != item]
                        if not form[key]:
                            del form[key]

                    request = self._try(request, drop)
        return request

    def _form_fields(self, request: RequestDict) -> RequestDict:
        for i in range(len(request["candidates"])):
            for key in _OPTIONAL_FIELDS:
                if key not in request["candidates"][i]:
                    continue

                def drop(r: RequestDict, i: int = i, key: str = key) -> None:
                    form = r["candidates"][i]
                    del form[key]
                    if key == "source":
                        form.pop("version", None)

                request = self._try(request, drop)
        return request

    def _numbers(self, request: RequestDict) -> RequestDict:
        request = self._first(request, _simpler_ints(request["task"]["budget"]), "task", "budget")
        for i in range(len(request["candidates"])):
            form = request["candidates"][i]
            request = self._first(request, _simpler_ints(form["cost"]), "candidates", i, "cost")
            simpler = _simpler_relevance(form.get("relevance", 0.0))
            request = self._first(request, simpler, "candidates", i, "relevance")
        return request

    def _first(self, request: RequestDict, values: Iterable[Any], *path: str | int) -> RequestDict:
        """The request with the first of ``values`` at ``path`` that keeps the kind."""
        for value in values:
            trial = self._try(request, _assign(value, *path))
            if trial is not request:
                return trial
        return request

    def _rename(self, request: RequestDict) -> RequestDict:
        renamed = _renumber(request)
        if renamed != request and self.test(renamed):
            return renamed
        return request

    def _sort(self, request: RequestDict) -> RequestDict:
        # canonical arrival order reads better; an order-sensitive strategy may refuse it
        ordered = sorted(request["candidates"], key=lambda c: str(c["id"]))
        if ordered != request["candidates"]:
            return self._try(request, _assign(ordered, "candidates"))
        return request


def _with_list(request: RequestDict, key: str, items: list[Any]) -> RequestDict:
    """The request with ``task[key]`` set to ``items`` (the key dropped when empty)."""
    task = {**request["task"], key: items}
    if not items:
        del task[key]
    return {**request, "task": task}


def _walk(request: RequestDict, path: Sequence[str | int]) -> Any:
    node: Any = request
    for step in path:
        node = node[step]
    return node


def _assign(value: Any, *path: str | int) -> Callable[[RequestDict], None]:
    """An edit that sets the entry at ``path`` to ``value``."""

    def edit(request: RequestDict) -> None:
        _walk(request, path[:-1])[path[-1]] = copy.deepcopy(value)

    return edit


def _delete(*path: str) -> Callable[[RequestDict], None]:
    """An edit that deletes the entry at ``path``."""

    def edit(request: RequestDict) -> None:
        del _walk(request, path[:-1])[path[-1]]

    return edit


_TOP_ORDER = ("task", "sources", "policy", "candidates")
_TASK_ORDER = TASK_FIELDS
_FORM_ORDER = CANDIDATE_FIELDS


def _ordered(data: Mapping[str, Any], order: Sequence[str]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(order)}
    return {k: data[k] for k in sorted(data, key=lambda k: (rank.get(k, len(rank)), k))}


def _layout(request: RequestDict) -> RequestDict:
    """The same request with keys in the stated model's order (edits append keys)."""
    out = _ordered(request, _TOP_ORDER)
    out["task"] = _ordered(request["task"], _TASK_ORDER)
    out["candidates"] = [_ordered(c, _FORM_ORDER) for c in request["candidates"]]
    return out


def _renumber(request: RequestDict) -> RequestDict:
    """The same request with identities, groups and lineage numbered densely from 0."""
    out = copy.deepcopy(request)
    forms = out["candidates"]
    names: dict[str, str] = {}
    counters: Counter[str] = Counter()

    def rename(name: str) -> str:
        if name not in names:
            prefix = name.rsplit("-", 1)[0] if "-" in name else name
            names[name] = f"{prefix}-{counters[prefix]}"
            counters[prefix] += 1
        return names[name]

    identities = [c.get("identity", c["id"]) for c in forms]
    for ident in sorted(set(identities), key=_natural):
        rename(ident)
    for c in forms:
        ident = c.get("identity", c["id"])
        new = names[ident]
        if c["id"] == ident:
            c["id"] = new
        elif c["id"].startswith(ident + "."):
            c["id"] = new + c["id"][len(ident) :]
        if "identity" in c:
            c["identity"] = new
    ids = {old["id"]: new["id"] for old, new in zip(request["candidates"], forms, strict=True)}
    extra: dict[str, str] = {}
    for c in forms:
        if "depends_on" in c:
            c["depends_on"] = [names.get(d) or rename(d) for d in c["depends_on"]]
        if "group" in c:
            c["group"] = extra.setdefault(c["group"], f"group-{len(extra)}")
        if "lineage" in c:
            c["lineage"] = [rename(x) for x in c["lineage"]]
    task = out["task"]
    if "required" in task:
        task["required"] = sorted(names.get(x) or rename(x) for x in task["required"])
    if "seal" in task:
        task["seal"] = sorted(ids.get(x) or names.get(x) or rename(x) for x in task["seal"])
    return out


def _natural(name: str) -> tuple[str, int]:
    head, _, tail = name.rpartition("-")
    return (head, int(tail)) if tail.isdigit() else (name, -1)


def shrink(
    request: RequestDict, strategy: str, kind: FindingKind, *, max_tests: int = SHRINK_MAX_TESTS
) -> RequestDict:
    """A smaller request on which ``strategy`` still shows ``kind``.

    Input: a request where ``judge(request, strategy).kind is kind``. Output: a request
    no edit of the shrinker can simplify further (or the best reached after
    ``max_tests`` judgements). Deterministic.
    """
    return _layout(_Shrinker(_keeps(strategy, kind), max_tests).run(copy.deepcopy(request)))


# ---------------------------------------------------------------------------
# Hunting


def example_request(seed: int, index: int, max_candidates: int) -> RequestDict:
    """Example ``index`` of the hunt seeded ``seed``: the same in every process."""
    return generate(random.Random(f"{seed}:{index}"), Shape.small(max_candidates))


@dataclass(frozen=True, slots=True)
class _Outcome:
    example: int
    kind: FindingKind | None
    explanation: str
    skipped: bool
    candidates: int


def _run_batch(args: tuple[int, Sequence[int], str, int]) -> list[_Outcome]:
    seed, indices, strategy, max_candidates = args
    out = []
    for index in indices:
        request = example_request(seed, index, max_candidates)
        verdict = _judge_safely(request, strategy)
        out.append(
            _Outcome(
                index,
                verdict.kind,
                verdict.explanation,
                verdict.skipped,
                len(request["candidates"]),
            )
        )
    return out


def _shrink_job(args: tuple[int, int, str, str, int]) -> dict[str, Any]:
    seed, index, strategy, kind_name, max_candidates = args
    kind = FindingKind(kind_name)
    original = example_request(seed, index, max_candidates)
    small = shrink(original, strategy, kind)
    verdict = _judge_safely(small, strategy)
    return {
        "kind": kind.value,
        "strategy": strategy,
        "seed": seed,
        "example": index,
        "max_candidates": max_candidates,
        "explanation": verdict.explanation,
        "shrunk_from": len(original["candidates"]),
        "request": small,
        "answers": dict(verdict.answers),
    }


def _case_name(case: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(
        json.dumps(case["request"], sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    return f"{case['strategy']}-{case['kind']}-{digest[:10]}.json"


def _batches(config: HuntConfig) -> Iterator[tuple[int, Sequence[int], str, int]]:
    start = 0
    while config.examples is None or start < config.examples:
        stop = start + BATCH if config.examples is None else min(start + BATCH, config.examples)
        # with both a count and a time, whichever ends first ends the hunt
        yield (config.seed, range(start, stop), config.strategy, config.max_candidates)
        start = stop


def _outcomes(config: HuntConfig, pool: Any, deadline: float | None) -> Iterator[list[_Outcome]]:
    """Batches of outcomes in index order, until the example count or the deadline."""
    jobs = _batches(config)
    if pool is None:
        for job in jobs:
            if deadline is not None and time.monotonic() >= deadline:
                return
            yield _run_batch(job)
        return
    # keep a few batches in flight per worker; results are taken in submission order, so
    # the examples tried are always a prefix 0..n-1 whatever the worker count
    pending: deque[Any] = deque()
    exhausted = False
    while True:
        while not exhausted and len(pending) < 3 * config.workers:
            if deadline is not None and time.monotonic() >= deadline:
                exhausted = True
                break
            next_job = next(jobs, None)
            if next_job is None:
                exhausted = True
                break
            pending.append(pool.apply_async(_run_batch, (next_job,)))
        if not pending:
            return
        yield pending.popleft().get()


def hunt(
    config: HuntConfig, progress: Callable[[int, Counter[FindingKind], float], None] | None = None
) -> HuntReport:
    """Run a hunt. Input: a ``HuntConfig``. Output: a ``HuntReport``; cases written to
    ``config.out`` when it is set. ``progress(examples, counts, elapsed)`` is called
    after every batch."""
    pool = None
    if config.workers > 1:
        # spawn, not fork: the parent may already hold OR-Tools' threads
        pool = multiprocessing.get_context("spawn").Pool(config.workers)
    try:
        started = time.monotonic()
        deadline = None if config.seconds is None else started + config.seconds
        findings: list[Finding] = []
        counts: Counter[FindingKind] = Counter()
        examples = skipped = 0
        for batch in _outcomes(config, pool, deadline):
            for outcome in batch:
                examples += 1
                skipped += outcome.skipped
                if outcome.kind is not None:
                    counts[outcome.kind] += 1
                    findings.append(
                        Finding(
                            outcome.example, outcome.kind, outcome.explanation, outcome.candidates
                        )
                    )
            if progress is not None:
                progress(examples, counts, time.monotonic() - started)
        searched = time.monotonic() - started

        shrink_started = time.monotonic()
        chosen: list[Finding] = []
        per_kind: Counter[FindingKind] = Counter()
        for finding in findings:
            if per_kind[finding.kind] < config.shrink_per_kind:
                per_kind[finding.kind] += 1
                chosen.append(finding)
        jobs = [
            (config.seed, f.example, config.strategy, f.kind.value, config.max_candidates)
            for f in chosen
        ]
        shrunk = pool.map(_shrink_job, jobs) if pool is not None else [_shrink_job(j) for j in jobs]
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()

    # several findings often shrink to the same case: keep one file per distinct request
    cases: list[dict[str, Any]] = []
    paths: list[str] = []
    for case in shrunk:
        name = _case_name(case)
        path = name if config.out is None else str(config.out / name)
        if path in paths:
            continue
        cases.append(case)
        paths.append(path)
        if config.out is not None:
            config.out.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(case, indent=2) + "\n", encoding="utf-8")
    return HuntReport(
        strategy=config.strategy,
        seed=config.seed,
        examples=examples,
        skipped=skipped,
        seconds=searched,
        shrink_seconds=time.monotonic() - shrink_started,
        findings=tuple(findings),
        cases=tuple(cases),
        paths=tuple(paths),
    )


# ---------------------------------------------------------------------------
# Replay


@dataclass(frozen=True, slots=True)
class ReplayResult:
    expected: FindingKind
    judgement: Judgement

    @property
    def reproduced(self) -> bool:
        return self.judgement.kind is self.expected


def replay(case: Mapping[str, Any]) -> ReplayResult:
    """Re-run a saved case. Input: the case dict (as written by a hunt). Output: whether
    its kind reproduces, with the new judgement. Raises ``InvalidRequest`` when the
    saved request is not valid input."""
    expected = FindingKind(case["kind"])
    request, strategy = case["request"], str(case["strategy"])
    try:
        return ReplayResult(expected, judge(request, strategy))
    except InvalidRequest:
        raise
    except Exception:
        return ReplayResult(expected, _judge_safely(request, strategy))


def load_case(path: Path) -> dict[str, Any]:
    """Read and check a saved case; raises ``ValueError`` with a clear message."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a saved case is a JSON object")
    for key in ("kind", "strategy", "request"):
        if key not in data:
            raise ValueError(f"{path}: a saved case needs {key!r}")
    if data["kind"] not in {k.value for k in FindingKind}:
        raise ValueError(f"{path}: unknown kind {data['kind']!r}")
    if data["strategy"] not in STRATEGIES:
        raise ValueError(f"{path}: unknown strategy {data['strategy']!r}")
    if not isinstance(data["request"], dict):
        raise ValueError(f"{path}: 'request' must be a JSON object")
    return data


# ---------------------------------------------------------------------------
# Command line


class _UsageError(Exception):
    pass


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


class _Parser(argparse.ArgumentParser):
    # argparse exits the interpreter on a bad argument; main() must return instead
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


def _parser() -> _Parser:
    parser = _Parser(
        prog="assembler hunt",
        description="Search random requests for answers where a strategy disagrees with the"
        " exact solver; shrink each finding and save it as a reproducible case.",
    )
    parser.add_argument("--against", metavar="STRATEGY", help=f"one of {', '.join(STRATEGIES)}")
    parser.add_argument("--seed", type=int, default=0, help="hunt seed (default 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, metavar="S", help="search for S seconds")
    budget.add_argument(
        "--examples", type=int, metavar="K", help=f"try K examples (default {DEFAULT_EXAMPLES})"
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=DEFAULT_MAX_CANDIDATES,
        metavar="M",
        help=f"at most M candidates per request (default {DEFAULT_MAX_CANDIDATES})",
    )
    parser.add_argument("--workers", type=int, default=1, metavar="W", help="processes (default 1)")
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"where shrunk cases are written (default {DEFAULT_OUT}/)",
    )
    parser.add_argument(
        "--shrink",
        type=int,
        default=DEFAULT_SHRINK_PER_KIND,
        metavar="N",
        help=f"shrink and save the first N findings of each kind (default"
        f" {DEFAULT_SHRINK_PER_KIND}; 0 saves none)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="re-run a saved case: exit 0 if its kind reproduces, 1 if not",
    )
    return parser


def _config(args: argparse.Namespace) -> HuntConfig:
    if args.against is None:
        raise _UsageError("--against STRATEGY is required (or --replay FILE)")
    if args.against not in STRATEGIES:
        raise _UsageError(
            f"unknown strategy {args.against!r}; expected one of {', '.join(STRATEGIES)}"
        )
    if args.seconds is not None and not 0 < args.seconds < float("inf"):
        raise _UsageError("--seconds must be a positive number")
    if args.examples is not None and args.examples < 1:
        raise _UsageError("--examples must be at least 1")
    if args.max_candidates < 1:
        raise _UsageError("--max-candidates must be at least 1")
    if args.workers < 1:
        raise _UsageError("--workers must be at least 1")
    if args.shrink < 0:
        raise _UsageError("--shrink must be 0 or more")
    if args.out.exists() and not args.out.is_dir():
        raise _UsageError(f"--out {args.out} exists and is not a directory")
    examples = args.examples
    if examples is None and args.seconds is None:
        examples = DEFAULT_EXAMPLES
    return HuntConfig(
        strategy=args.against,
        seed=args.seed,
        examples=examples,
        seconds=args.seconds,
        max_candidates=args.max_candidates,
        workers=args.workers,
        out=args.out,
        shrink_per_kind=args.shrink,
    )


def _progress_line(stream: TextIO) -> Callable[[int, Counter[FindingKind], float], None]:
    last = [0.0]

    def show(examples: int, counts: Counter[FindingKind], elapsed: float) -> None:
        if elapsed - last[0] < 0.2:
            return
        last[0] = elapsed
        found = " ".join(
            f"{kind.value} {n} ({1000 * n / examples:.1f}/1000)"
            for kind, n in sorted(counts.items(), key=lambda kv: list(FindingKind).index(kv[0]))
        )
        rate = examples / elapsed if elapsed > 0 else 0.0
        stream.write(f"\r\x1b[K{examples} examples, {rate:.0f}/s | {found or 'no findings'}")
        stream.flush()

    return show


def _summary(report: HuntReport) -> str:
    lines = [
        f"hunt against {report.strategy}, seed {report.seed}: {report.examples} examples in"
        f" {report.seconds:.1f} s ({report.rate:.1f}/s), {report.skipped} skipped;"
        f" shrinking took {report.shrink_seconds:.1f} s",
    ]
    counts = report.counts()
    for kind, n in counts.items():
        if n:
            per_1000 = 1000 * n / report.examples
            first = next(f for f in report.findings if f.kind.value == kind)
            lines.append(
                f"  {kind:<20} {n:>6}  ({per_1000:.1f} per 1,000)  first: example {first.example}"
            )
    if not any(counts.values()):
        lines.append("  no findings")
    if report.exact_is_wrong:
        lines.append(
            "  !! an exact strategy is wrong (exact-disagreement or crash): this is a bug in"
            " the project, see the saved cases"
        )
    for path, case in zip(report.paths, report.cases, strict=True):
        lines.append(
            f"  saved {path}: {case['kind']}, {len(case['request']['candidates'])} candidates"
            f" (from {case['shrunk_from']}) — {case['explanation']}"
        )
    return "\n".join(lines)


def _replay_main(path: Path, as_json: bool) -> int:
    try:
        case = load_case(path)
    except ValueError as error:
        raise _UsageError(str(error)) from None
    try:
        result = replay(case)
    except InvalidRequest as error:
        raise _UsageError(f"{path}: the saved request is not valid: {error}") from None
    got = result.judgement.kind
    if as_json:
        print(
            json.dumps(
                {
                    "path": str(path),
                    "expected": result.expected.value,
                    "got": None if got is None else got.value,
                    "reproduced": result.reproduced,
                    "explanation": result.judgement.explanation,
                },
                indent=2,
            )
        )
    elif result.reproduced:
        print(f"reproduced {result.expected.value}: {result.judgement.explanation}")
    else:
        print(
            f"did not reproduce {result.expected.value}: got"
            f" {'no finding' if got is None else got.value} ({result.judgement.explanation})"
        )
    return 0 if result.reproduced else 1


def main(argv: Iterable[str]) -> int:
    """``assembler hunt ...``. Input: the arguments after ``hunt``. Output: the exit code."""
    args_list = list(argv)
    if args_list[:1] == ["hunt"]:
        args_list = args_list[1:]
    try:
        args = _parser().parse_args(args_list)
        if args.replay is not None:
            if args.against is not None:
                raise _UsageError("--replay takes the strategy from the saved case; drop --against")
            return _replay_main(args.replay, args.json)
        config = _config(args)
        progress = _progress_line(sys.stderr) if sys.stderr.isatty() and not args.json else None
        report = hunt(config, progress)
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        else:
            print(_summary(report))
        return 1 if report.exact_is_wrong else 0
    except _UsageError as error:
        sys.stderr.write(f"assembler hunt: error: {error}\n")
        return 2
    except _Exit as done:
        return done.code
    except KeyboardInterrupt:
        sys.stderr.write("\nassembler hunt: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
