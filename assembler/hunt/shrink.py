"""Shrinking a finding: delta debugging on the request dict.

Input: a request on which a strategy shows a ``FindingKind``.
Output: a smaller request on which it still does: drop candidates, drop a candidate
with its share of the budget, drop required / seal entries, dependencies, lineage,
groups and other optional fields, simplify costs, budget and relevance to rounder
numbers, renumber names, sort candidates; for a request with a ``cache`` section also
drop previous blocks and the section's optional fields and simplify its numbers (the
blocks follow a renumbered candidate); every edit after which the kind persists is
kept. Deterministic.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..model.errors import InvalidRequest
from ..model.fields import CANDIDATE_FIELDS, TASK_FIELDS
from .judge import FindingKind, judge_in

__all__ = ["SHRINK_MAX_TESTS", "RequestDict", "shrink"]

SHRINK_MAX_TESTS = 3000


RequestDict = dict[str, Any]


def _keeps(strategy: str, kind: FindingKind, shape: str = "") -> Callable[[RequestDict], bool]:
    def test(request: RequestDict) -> bool:
        try:
            return judge_in(request, strategy, shape).kind is kind
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
                self._cache,
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

    def _cache(self, request: RequestDict) -> RequestDict:
        cache = request.get("cache")
        if not isinstance(cache, dict):
            return request
        request = self._try(request, _delete("cache"))
        if "cache" not in request:
            return request
        blocks = list(request["cache"].get("previous", {}).get("blocks", []))
        if blocks:

            def test(kept: list[Any]) -> bool:
                trial = copy.deepcopy(request)
                trial["cache"]["previous"]["blocks"] = kept
                return self.test(trial)

            kept = _ddmin(blocks, test)
            if kept != blocks:
                request = copy.deepcopy(request)
                request["cache"]["previous"]["blocks"] = kept
        for key in _CACHE_OPTIONAL:
            if key in request["cache"]:
                request = self._try(request, _delete("cache", key))
        if "min_prefix_tokens" in request["cache"]:
            least = request["cache"]["min_prefix_tokens"]
            request = self._first(request, _simpler_ints(least), "cache", "min_prefix_tokens")
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


# the cache section's fields a shrunk case may do without (the provider's defaults)
_CACHE_OPTIONAL = (
    "model", "ttl", "pricing", "step_tokens", "breakpoints", "lookback", "tolerance",
    "headroom", "now", "instruction_tokens",
)  # fmt: skip


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


_TOP_ORDER = ("task", "sources", "policy", "candidates", "cache")
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
    for block in out.get("cache", {}).get("previous", {}).get("blocks", []):
        if isinstance(block, dict) and block.get("id") in ids:
            block["id"] = ids[block["id"]]
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
    request: RequestDict,
    strategy: str,
    kind: FindingKind,
    *,
    max_tests: int = SHRINK_MAX_TESTS,
    shape: str = "",
) -> RequestDict:
    """A smaller request on which ``strategy`` still shows ``kind``.

    Input: a request where ``judge_in(request, strategy, shape).kind is kind`` (``shape``:
    the hunt's, ``judge.judge_in``). Output: a request
    no edit of the shrinker can simplify further (or the best reached after
    ``max_tests`` judgements). Deterministic.
    """
    test = _keeps(strategy, kind, shape)
    return _layout(_Shrinker(test, max_tests).run(copy.deepcopy(request)))
