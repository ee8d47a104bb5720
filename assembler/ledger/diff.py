"""``diff``: what changed between two recorded compilations (usually consecutive turns).

Input: two ``Compilation`` records, A (before) and B (after). Output: a ``Diff``: the
admitted items that entered, left or changed form (another form of the same identity,
or the same form with other content or cost), the token (cost) delta, what was
offered differently, the longest common prefix of the two bundles in render order,
and, when both were rendered, the first byte at which the rendered inputs diverge:
everything before it is a structurally reusable cache prefix. When B carries a cache
section (``models/README.md`` 6b), its ``CacheView`` (``cacheview.py``): the previous
blocks it kept, the tokens read and written, its price against the cache-blind
optimum's, the value given up, and the first previous block not kept, with why.

Costs are in the request's unit (tokens in practice); a byte offset is only given
for bytes that were actually recorded, never estimated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from ..model.errors import AssemblerError
from .cacheview import CacheView, cache_view
from .ledger import Compilation
from .replay import first_divergence

__all__ = ["AdmittedItem", "Change", "Diff", "diff"]


@dataclass(frozen=True, slots=True)
class AdmittedItem:
    identity: str
    form: str
    cost: int
    content_sha256: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "form": self.form,
            "cost": self.cost,
            "content_sha256": self.content_sha256,
        }


@dataclass(frozen=True, slots=True)
class Change:
    """An identity admitted in both, shown differently: ``what`` is form, content, cost."""

    identity: str
    before: AdmittedItem
    after: AdmittedItem
    what: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "what": list(self.what),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class Diff:
    a: int
    b: int
    sessions: tuple[str | None, str | None]
    outcomes: tuple[str, str]
    statuses: tuple[str | None, str | None]
    package_ids: tuple[str | None, str | None]
    trace_ids: tuple[str | None, str | None]
    entered: tuple[AdmittedItem, ...]
    left: tuple[AdmittedItem, ...]
    changed: tuple[Change, ...]
    costs: tuple[int, int]
    budgets: tuple[int | None, int | None]
    offered_added: tuple[str, ...]
    offered_removed: tuple[str, ...]
    offered_changed: tuple[str, ...]
    # admitted forms identical at the start of both, in rendered (else render) order
    common_prefix: int
    selected: tuple[int, int]
    rendered_sizes: tuple[int | None, int | None]
    # first divergent byte of the rendered inputs: None when identical or not rendered
    first_divergent_byte: int | None
    rendered_identical: bool
    # B's place in the provider's cache, when its request has a cache section
    cache: CacheView | None = None

    @property
    def token_delta(self) -> int:
        return self.costs[1] - self.costs[0]

    @property
    def both_rendered(self) -> bool:
        return None not in self.rendered_sizes

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "sessions": list(self.sessions),
            "outcomes": list(self.outcomes),
            "statuses": list(self.statuses),
            "package_ids": list(self.package_ids),
            "trace_ids": list(self.trace_ids),
            "entered": [i.to_dict() for i in self.entered],
            "left": [i.to_dict() for i in self.left],
            "changed": [c.to_dict() for c in self.changed],
            "costs": list(self.costs),
            "token_delta": self.token_delta,
            "budgets": list(self.budgets),
            "offered": {
                "added": list(self.offered_added),
                "removed": list(self.offered_removed),
                "changed": list(self.offered_changed),
            },
            "common_prefix_forms": self.common_prefix,
            "selected": list(self.selected),
            "rendered": {
                "sizes": list(self.rendered_sizes),
                "identical": self.rendered_identical if self.both_rendered else None,
                "first_divergent_byte": self.first_divergent_byte,
            },
            "cache": None if self.cache is None else self.cache.to_dict(),
        }


def _offered(compilation: Compilation) -> dict[str, dict[str, Any]]:
    if compilation.request is None:
        return {}
    return {c["id"]: c for c in compilation.request["candidates"]}


def _item(candidate: dict[str, Any]) -> AdmittedItem:
    content = candidate.get("content")
    digest = None if content is None else hashlib.sha256(content.encode("utf-8")).hexdigest()
    identity = candidate.get("identity", candidate["id"])
    return AdmittedItem(identity, candidate["id"], candidate["cost"], digest)


def _bundle(compilation: Compilation) -> list[AdmittedItem]:
    """The admitted forms in the order they were rendered (the manifest's), else in the
    result's render order."""
    if compilation.result is None:
        return []
    offered = _offered(compilation)
    order = compilation.result["selected"]
    if compilation.rendering is not None:
        order = [item["id"] for item in compilation.rendering.manifest["items"]]
    return [_item(offered[form]) for form in order]


def diff(a: Compilation, b: Compilation) -> Diff:
    before, after = _bundle(a), _bundle(b)
    by_identity_a = {item.identity: item for item in before}
    by_identity_b = {item.identity: item for item in after}
    entered = tuple(i for i in after if i.identity not in by_identity_a)
    left = tuple(i for i in before if i.identity not in by_identity_b)
    changed = []
    for item in after:
        old = by_identity_a.get(item.identity)
        if old is None or old == item:
            continue
        what = tuple(
            name
            for name, differs in (
                ("form", old.form != item.form),
                ("content", old.content_sha256 != item.content_sha256),
                ("cost", old.cost != item.cost),
            )
            if differs
        )
        changed.append(Change(item.identity, old, item, what))
    prefix = 0
    for x, y in zip(before, after, strict=False):
        if x != y:
            break
        prefix += 1
    offered_a, offered_b = _offered(a), _offered(b)
    rendered_a = None if a.rendering is None else a.rendering.data
    rendered_b = None if b.rendering is None else b.rendering.data
    divergence = None
    identical = False
    if rendered_a is not None and rendered_b is not None:
        divergence = first_divergence(rendered_a, rendered_b)
        identical = divergence is None

    def field(c: Compilation, key: str) -> Any:
        return None if c.result is None else c.result[key]

    return Diff(
        a=a.number,
        b=b.number,
        sessions=(a.session, b.session),
        outcomes=(a.outcome.value, b.outcome.value),
        statuses=(field(a, "status"), field(b, "status")),
        package_ids=(field(a, "package_id"), field(b, "package_id")),
        trace_ids=(field(a, "trace_id"), field(b, "trace_id")),
        entered=entered,
        left=left,
        changed=tuple(changed),
        costs=(sum(i.cost for i in before), sum(i.cost for i in after)),
        budgets=(field(a, "budget"), field(b, "budget")),
        offered_added=tuple(sorted(offered_b.keys() - offered_a.keys())),
        offered_removed=tuple(sorted(offered_a.keys() - offered_b.keys())),
        offered_changed=tuple(
            sorted(k for k in offered_a.keys() & offered_b.keys() if offered_a[k] != offered_b[k])
        ),
        common_prefix=prefix,
        selected=(len(before), len(after)),
        rendered_sizes=(
            None if rendered_a is None else len(rendered_a),
            None if rendered_b is None else len(rendered_b),
        ),
        first_divergent_byte=divergence,
        rendered_identical=identical,
        cache=compilation_cache(b),
    )


def compilation_cache(compilation: Compilation) -> CacheView | None:
    """The cache view of a recorded compilation (None without a cache section, a bundle,
    or a request this version can still read)."""
    try:
        return cache_view(compilation.request, compilation.result)
    except AssemblerError:
        return None
