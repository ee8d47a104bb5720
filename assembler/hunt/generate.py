"""Random request generator shared by the hunts, the property tests and the benchmarks.

Input: a ``random.Random`` (any object with its methods, e.g. Hypothesis' random) and
a ``Shape`` of knobs. Output: a request dict in the JSON format of the stated model
(``task`` / ``sources`` / ``policy`` / ``candidates``), always valid input: ids are
unique, costs are integers >= 0, relevance is a float in [0, 1] rounded to three
decimals, budgets are integers >= 0.

The same ``random.Random(seed)`` and ``Shape`` always give the same dict. The module
imports only the standard library so that it is cheap to import from tests, hunts
and worker processes.

What a request looks like. Each *content identity* has 1-4 forms following the
realistic pattern: ``full`` (expensive, high value), ``compact`` (cheaper, lower
value), ``excerpt`` (only when four non-reference forms are drawn), ``anchor``
(cheap, low value), ``reference`` (very cheap, useless without its resolver: it
``depends_on`` a *resolver identity*, and several references share one resolver).
On top of that, a ``Shape`` turns up dependency chains and cycles between content
identities, dependencies on identities that have no candidate, coupled groups
(sometimes named by only some forms of an identity), required identities (through
``task.required`` or ``required: true``, and sometimes one with no candidate at
all), and every gate trap: sealed (by id, identity or lineage), wrong scope, shared
scope, transfer, unknown scope, stale version, unknown source, and instruction from
a data channel.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from .shapes import Relevance, Shape

__all__ = ["Relevance", "Shape", "generate", "seeded_example"]

TASK_SCOPE = "proj-a"
OTHER_SCOPES = ("proj-b", "proj-c")
# channels with instruction standing under the default policy, and data channels
INSTRUCTION_CHANNELS = ("system", "user", "developer")
DATA_CHANNELS = ("retrieved", "tool", "memory")
SOURCES = ("src-0", "src-1", "src-2")
UNTRACKED_SOURCE = "src-untracked"

# cost and relevance of each form relative to the identity's full form
_COST_RATIO = {
    "full": (1.0, 1.0),
    "compact": (0.25, 0.5),
    "excerpt": (0.15, 0.3),
    "anchor": (0.04, 0.12),
}
_VALUE_RATIO = {
    "full": (1.0, 1.0),
    "compact": (0.6, 0.9),
    "excerpt": (0.4, 0.7),
    "anchor": (0.15, 0.45),
    "reference": (0.5, 1.0),
}
# non-reference kinds by how many of them an identity has
_PLAIN_KINDS = {
    0: (),
    1: ("full",),
    2: ("full", "compact"),
    3: ("full", "compact", "anchor"),
    4: ("full", "compact", "excerpt", "anchor"),
}


def _chance(rng: random.Random, p: float) -> bool:
    # written as 1 - r so that Hypothesis, which shrinks r towards 0, shrinks every
    # optional feature towards "absent"
    return 1.0 - rng.random() < p


def _round_relevance(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 3)


@dataclass(slots=True)
class _Form:
    """A candidate under construction (mutable: traps and links are added in passes)."""

    id: str
    identity: str
    form: str
    cost: int
    relevance: float
    depends_on: list[str]
    emit_identity: bool = True
    required: bool = False
    scope: str | None = None
    transfer_from: str | None = None
    source: str | None = None
    version: str | None = None
    channel: str | None = None
    role: str | None = None
    group: str | None = None
    lineage: list[str] | None = None
    content: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        if self.emit_identity:
            out["identity"] = self.identity
        out["form"] = self.form
        out["cost"] = self.cost
        out["relevance"] = self.relevance
        if self.required:
            out["required"] = True
        if self.scope is not None:
            out["scope"] = self.scope
        if self.transfer_from is not None:
            out["transfer"] = {"from": self.transfer_from}
        if self.source is not None:
            out["source"] = self.source
            out["version"] = self.version
        if self.channel is not None:
            out["channel"] = self.channel
        if self.role is not None:
            out["role"] = self.role
        if self.depends_on:
            out["depends_on"] = list(self.depends_on)
        if self.group is not None:
            out["group"] = self.group
        if self.lineage:
            out["lineage"] = list(self.lineage)
        if self.content is not None:
            out["content"] = self.content
        return out


class _Builder:
    """One generation run. Every random draw goes through ``self.rng`` in a fixed order."""

    def __init__(self, rng: random.Random, shape: Shape) -> None:
        self.rng = rng
        self.shape = shape
        self.forms: list[_Form] = []
        self.identities: list[str] = []  # content and resolver identities, creation order
        self.forms_of: dict[str, list[_Form]] = {}
        self.seal: list[str] = []
        self.required: list[str] = []
        self.n_lineage = 0
        self.n_items = 0

    # -- numbers -------------------------------------------------------------

    def _cost(self, low: float, high: float) -> int:
        if _chance(self.rng, self.shape.p_zero_cost):
            return 0
        # log-uniform: token counts span orders of magnitude
        raw = math.exp(self.rng.uniform(math.log(max(low, 1.0)), math.log(max(high, 1.0))))
        grid = self.shape.cost_grid
        return max(grid, round(raw / grid) * grid)

    def _base_relevance(self, dist: Relevance) -> float:
        if dist is Relevance.GRID:
            return self.rng.randint(0, 10) / 10
        if dist is Relevance.SKEWED:
            return float(self.rng.random() ** 2.5)
        return self.rng.random()

    def _ratio(self, dist: Relevance, low: float, high: float) -> float:
        if dist is Relevance.GRID:
            # multiples of 0.1 keep products on a coarse lattice (ties)
            return self.rng.randint(round(low * 10), round(high * 10)) / 10
        return self.rng.uniform(low, high)

    # -- structure -----------------------------------------------------------

    def _add(self, form: _Form) -> None:
        self.forms.append(form)
        self.forms_of.setdefault(form.identity, []).append(form)

    def build(self) -> dict[str, Any]:
        rng, shape = self.rng, self.shape
        n_target = rng.randint(*shape.candidates)
        dist = shape.relevance
        if dist is Relevance.MIXED:
            dist = rng.choice((Relevance.UNIFORM, Relevance.SKEWED, Relevance.GRID))

        # 1. content identities and their forms; references are linked to resolvers later.
        # The count is exact (benchmarks ask for n forms): content identities are drawn
        # while there is room left for them and the resolvers their references need.
        low_k, high_k = shape.forms_per_identity
        mean_k = (low_k + high_k) / 2
        # per identity, so that about p_reference of all forms are references
        p_has_ref = min(1.0, shape.p_reference * mean_k)
        content: list[str] = []
        content_forms: list[_Form] = []

        n_refs = 0  # kept as a running count: recounting made 100k forms quadratic

        def n_resolvers() -> int:
            return 0 if n_refs == 0 else max(1, round(n_refs / shape.refs_per_resolver))

        while len(content_forms) + n_resolvers() < n_target:
            room = n_target - len(content_forms) - n_resolvers()
            k = min(rng.randint(low_k, high_k), room)
            has_ref = _chance(rng, p_has_ref)
            kinds = [*_PLAIN_KINDS[k - 1 if has_ref else k], *(["reference"] if has_ref else [])]
            ident = self._new_item()
            content.append(ident)
            base_cost = self._cost(*shape.full_cost)
            base_rel = self._base_relevance(dist)
            single = len(kinds) == 1
            for kind in kinds:
                if kind == "reference":
                    cost = self._cost(*shape.reference_cost)
                    form_id = f"{ident}.ref"
                else:
                    lo, hi = _COST_RATIO[kind]
                    cost = base_cost if kind == "full" else self._scaled(base_cost, lo, hi)
                    form_id = f"{ident}.{kind}"
                rel = base_rel * self._ratio(dist, *_VALUE_RATIO[kind])
                form = _Form(form_id, ident, kind, cost, _round_relevance(rel), [])
                if single and _chance(rng, 0.5):
                    # the identity defaults to the id: exercise that default
                    form.id, form.emit_identity = ident, False
                content_forms.append(form)
                n_refs += kind == "reference"
        # a reference added last may have asked for one resolver too many: drop trailing
        # forms (plain ones first) until the resolvers fit, then pad with plain items
        while content_forms and len(content_forms) + n_resolvers() > n_target:
            plain = [i for i, f in enumerate(content_forms[-8:]) if f.form != "reference"]
            dropped = content_forms.pop(plain[-1] - min(8, len(content_forms)) if plain else -1)
            n_refs -= dropped.form == "reference"
        while len(content_forms) + n_resolvers() < n_target:
            ident = self._new_item()
            content.append(ident)
            rel = _round_relevance(self._base_relevance(dist))
            content_forms.append(
                _Form(f"{ident}.full", ident, "full", self._cost(*shape.full_cost), rel, [])
            )
        for form in content_forms:
            self._add(form)
        content = [ident for ident in content if ident in self.forms_of]
        self.identities.extend(content)

        # 2. resolvers shared among the references; spare room goes to their compact forms
        references = [f for f in content_forms if f.form == "reference"]
        resolvers = [f"resolver-{j}" for j in range(n_resolvers())]
        spare = n_target - len(content_forms) - len(resolvers)
        for ident in resolvers:
            self.identities.append(ident)
            base_cost = self._cost(*shape.resolver_cost)
            base_rel = self._base_relevance(dist) * 0.5
            n_forms = min(rng.randint(*shape.resolver_forms), 2)
            if n_forms == 2 and spare > 0:
                spare -= 1
            else:
                n_forms = 1
            for kind in ("full", "compact")[:n_forms]:
                cost = base_cost if kind == "full" else self._scaled(base_cost, 0.3, 0.6)
                rel = base_rel * self._ratio(dist, *_VALUE_RATIO[kind])
                self._add(_Form(f"{ident}.{kind}", ident, kind, cost, _round_relevance(rel), []))
        # every resolver gets at least one reference, the rest pick at random
        for i, ref in enumerate(references):
            ref.depends_on.append(resolvers[i] if i < len(resolvers) else rng.choice(resolvers))
        # room left over (resolvers drew fewer compact forms): more plain items
        while len(self.forms) < n_target:
            ident = self._new_item()
            content.append(ident)
            self.identities.append(ident)
            rel = _round_relevance(self._base_relevance(dist))
            self._add(_Form(f"{ident}.full", ident, "full", self._cost(*shape.full_cost), rel, []))

        # 3. dependency chains, cycles and dangling dependencies between content identities
        for i, ident in enumerate(content):
            forms = self.forms_of[ident]
            # depend on a later identity: chains, never cycles by themselves
            if len(content) > 1 and _chance(rng, shape.p_chain) and i + 1 < len(content):
                self._link(forms, content[rng.randint(i + 1, len(content) - 1)])
            if len(content) > 1 and _chance(rng, shape.p_cycle):
                j = rng.randint(0, len(content) - 2)
                other = content[j + 1 if j >= i else j]
                self._link(forms, other)
                self._link(self.forms_of[other], ident)
            if _chance(rng, shape.p_dangling):
                self._link(forms, f"ghost-{i}")
        if resolvers and content and _chance(rng, shape.p_chain):
            # a resolver that needs another document: references become two-step chains
            self._link(self.forms_of[resolvers[0]], rng.choice(content))

        # 4. coupled groups; membership belongs to the identity, even if only one form names it
        order = list(self.identities)
        rng.shuffle(order)
        mean_size = sum(shape.group_size) / 2
        p_start = shape.p_group / mean_size
        n_groups = 0
        pos = 0
        while pos < len(order):
            size = rng.randint(*shape.group_size)
            if pos + size <= len(order) and _chance(rng, p_start):
                name = f"group-{n_groups}"
                n_groups += 1
                for ident in order[pos : pos + size]:
                    forms = self.forms_of[ident]
                    partial = len(forms) > 1 and _chance(rng, shape.p_partial_group)
                    named = [rng.choice(forms)] if partial else forms
                    for form in named:
                        form.group = name
                pos += size
            else:
                pos += 1

        # 5. required identities
        for ident in self.identities:
            if shape.safe_required and any(f.depends_on or f.group for f in self.forms_of[ident]):
                continue
            if _chance(rng, shape.p_required):
                if _chance(rng, shape.p_required_flag):
                    rng.choice(self.forms_of[ident]).required = True
                else:
                    self.required.append(ident)
        if _chance(rng, shape.p_required_missing):
            self.required.append("absent-0")

        # 6. gate traps and their eligible look-alikes, per form
        protected = set(self.required) | {f.identity for f in self.forms if f.required}
        for form in self.forms:
            if shape.safe_required and form.identity in protected:
                form.scope = TASK_SCOPE
                continue
            self._traps(form)

        # 7. the task
        sources = {src: f"v{rng.randint(2, 4)}" for src in SOURCES}
        task: dict[str, Any] = {"id": f"generated-{rng.getrandbits(32):08x}"}
        total = sum(f.cost for f in self.forms)
        task["budget"] = int(total * rng.uniform(*shape.budget_fraction))
        if not _chance(rng, shape.p_scope_off):
            task["scope"] = TASK_SCOPE
        if _chance(rng, shape.p_historical):
            task["operation"] = "historical"
        min_rel = rng.choice(shape.min_relevance)
        if min_rel:
            task["min_relevance"] = min_rel
        if self.required:
            task["required"] = sorted(set(self.required))
        if self.seal:
            task["seal"] = sorted(set(self.seal))

        # stale/current versions are only known now: fill them in
        for form in self.forms:
            if form.source in sources:
                if form.version == "stale":
                    current = int(sources[form.source][1:])
                    form.version = f"v{rng.randint(1, current - 1)}"
                else:
                    form.version = sources[form.source]

        request: dict[str, Any] = {"task": task, "sources": sources}
        if _chance(rng, shape.p_policy_table):
            table = {
                "system": "instruction",
                "user": "instruction",
                "tool": "data",
                "retrieved": "data",
            }
            # an override both ways: standing is the table's, not the channel name's
            if _chance(rng, 0.3):
                table["tool"] = "instruction"
            if _chance(rng, 0.2):
                table["user"] = "data"
            request["policy"] = {"authority": table}
        order_forms = list(self.forms)
        if shape.shuffle:
            rng.shuffle(order_forms)
        request["candidates"] = [f.to_dict() for f in order_forms]
        return request

    def _scaled(self, base: int, low: float, high: float) -> int:
        if base == 0:
            return 0
        grid = self.shape.cost_grid
        raw = base * self.rng.uniform(low, high)
        return round(raw / grid) * grid if raw >= grid else max(1, round(raw))

    def _link(self, forms: list[_Form], target: str) -> None:
        # some forms of the identity carry the dependency, not necessarily all
        chosen = [f for f in forms if _chance(self.rng, 0.6)] or [self.rng.choice(forms)]
        for form in chosen:
            if target not in form.depends_on and target != form.identity:
                form.depends_on.append(target)

    def _traps(self, form: _Form) -> None:
        rng, shape = self.rng, self.shape
        # seal by id, identity or lineage
        if _chance(rng, shape.p_sealed):
            how = rng.randint(0, 2)
            if how == 0:
                self.seal.append(form.id)
            elif how == 1:
                self.seal.append(form.identity)
            else:
                call = self._lineage_id()
                form.lineage = [*(form.lineage or []), call]
                self.seal.append(call)
        if _chance(rng, shape.p_lineage):
            form.lineage = [*(form.lineage or []), self._lineage_id()]
        # scope: exactly one of the options (1 - r: see _chance)
        r = 1.0 - rng.random()
        edges = (shape.p_wrong_scope, shape.p_shared, shape.p_transfer, shape.p_unknown_scope)
        if r < edges[0]:
            form.scope = rng.choice(OTHER_SCOPES)
        elif r < sum(edges[:2]):
            form.scope = "shared"
        elif r < sum(edges[:3]):
            form.scope = rng.choice(OTHER_SCOPES)
            form.transfer_from = form.scope
        elif r < sum(edges):
            # unknown: sometimes spelled out, sometimes the default
            form.scope = "unknown" if _chance(rng, 0.5) else None
        else:
            form.scope = TASK_SCOPE
        # freshness binding: stale, unknown source, current, or none
        r = 1.0 - rng.random()
        fresh = (shape.p_stale, shape.p_freshness_unknown, shape.p_current_source)
        if r < fresh[0]:
            form.source, form.version = rng.choice(SOURCES), "stale"
        elif r < sum(fresh[:2]):
            form.source, form.version = UNTRACKED_SOURCE, "v1"
        elif r < sum(fresh):
            form.source, form.version = rng.choice(SOURCES), "current"
        # authority: instruction from a data channel, or from an instruction channel
        r = 1.0 - rng.random()
        if r < shape.p_data_instruction:
            form.channel, form.role = rng.choice(DATA_CHANNELS), "instruction"
        elif r < shape.p_data_instruction + shape.p_instruction:
            form.channel, form.role = rng.choice(INSTRUCTION_CHANNELS), "instruction"
        elif _chance(rng, 0.5):
            form.channel = rng.choice(DATA_CHANNELS + INSTRUCTION_CHANNELS)
        if _chance(rng, shape.p_content):
            form.content = f"{form.form} text of {form.identity} ({rng.getrandbits(16):04x})"

    def _new_item(self) -> str:
        self.n_items += 1
        return f"item-{self.n_items - 1}"

    def _lineage_id(self) -> str:
        self.n_lineage += 1
        return f"call-{self.n_lineage}"


def generate(rng: random.Random, shape: Shape | None = None) -> dict[str, Any]:
    """Draw one request dict (stated-model JSON) from ``rng`` following ``shape``.

    Deterministic: the same ``random.Random(seed)`` state and shape give the same dict.
    ``shape`` defaults to ``Shape.small()``.
    """
    return _Builder(rng, shape or Shape.small()).build()


def seeded_example(seed: int, index: int, shape: Shape) -> dict[str, Any]:
    """Example ``index`` of the series seeded ``seed``: ``generate(random.Random(
    f"{seed}:{index}"), shape)``. Any process, in any order, draws the same example,
    which is what lets hunts and sweeps split a series into batches anywhere."""
    return generate(random.Random(f"{seed}:{index}"), shape)
