"""The independent verifier: does a result keep every rule of its request?

Input: a request (mapping or ``Request``) and a result (``Result`` or its JSON dict).
Output: a list of ``Violation`` (empty when the result is legal and its record is
honest).

It deliberately imports nothing from the gates, the closure, the objective's
solvers or the trace: it re-derives every gate from ``models/README.md`` in its
own words, so that a bug in a stage is not shared by its judge. It checks
legality and the record, not optimality (that takes a search; the tests compare
against the brute-force oracle for that). Given the format the bundle is sent in
(``render``, or the result's own rendering's), it also checks that the format can send
it (``sendable.py``): an exact strategy's bundle always can, a baseline's may not.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, TypeGuard

from ..model.cache import cache_identity
from ..model.parse import parse_request
from ..model.rendering import RenderFormat
from ..model.types import Candidate, Request, Result, Violation
from .cache import verify_cache
from .sendable import FORMAT_RULE, verify_sendable

__all__ = ["ViolationKind", "verify"]


class ViolationKind:
    """The kinds of violation (strings, so they read well in JSON and tables)."""

    GATE = "gate"
    DEPENDENCY = "dependency"
    GROUP = "group"
    DUPLICATE_IDENTITY = "duplicate-identity"
    BUDGET = "budget"
    REQUIRED = "required"
    RECORD = "record"
    REFUSAL = "refusal"
    # the format the bundle is sent in cannot send it (section 14)
    FORMAT = FORMAT_RULE

    ILLEGAL = (GATE, DEPENDENCY, GROUP, DUPLICATE_IDENTITY, BUDGET, REQUIRED)


_PER_FORM_GATES = (
    "sealed",
    "scope",
    "scope-unknown",
    "stale",
    "freshness-unknown",
    "authority",
    "no-content",
)
_DERIVED_GATES = ("dependency-unavailable", "group-ineligible")


def verify(
    request: Mapping[str, Any] | Request,
    result: Result | Mapping[str, Any],
    *,
    render: str | RenderFormat | None = None,
) -> list[Violation]:
    """Every way ``result`` breaks ``request``; an empty list means it is legal.
    ``render``: the format the bundle is sent in (default: its rendering's, when it
    carries one), whose rules a bundle must keep and an UNSENDABLE refusal names."""
    req = parse_request(request)
    data = result.to_dict() if isinstance(result, Result) else dict(result)
    if render is None and isinstance(data.get("rendering"), Mapping):
        render = data["rendering"].get("manifest", {}).get("format")
    fmt = None if render is None else str(render)
    # with a cache section, the prefix and the price as well (``cache.py``)
    return _Judge(req, data, fmt).run() + verify_cache(req, data)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class _Judge:
    def __init__(self, request: Request, result: dict[str, Any], fmt: str | None) -> None:
        self.request = request
        self.result = result
        self.fmt = fmt
        self.found: list[Violation] = []
        self.by_id = {c.id: c for c in request.candidates}
        # a result that carries a rendering, or gates a form as no-content, was
        # assembled with a rendering asked for: then every contentless form is gated
        self.needs_content = result.get("rendering") is not None or any(
            d.get("reason") == "no-content" for d in result.get("decisions", [])
        )
        self.first_gate = {c.id: self._first_gate(c) for c in request.candidates}
        self.eligible = self._derive_eligible()

    def flag(self, kind: str, detail: str, *forms: str) -> None:
        self.found.append(Violation(kind, detail, tuple(forms)))

    # -- gates, re-derived ---------------------------------------------------------

    def _first_gate(self, c: Candidate) -> str | None:
        task = self.request.task
        sealed = set(task.seal)
        if c.id in sealed or c.identity in sealed or sealed.intersection(c.lineage):
            return "sealed"
        if task.scope is not None:
            home = c.scope in (task.scope, "shared")
            if not home:
                if c.scope == "unknown":
                    return "scope-unknown"
                if c.transfer_from is None:
                    return "scope"
        if task.operation.value == "current" and c.source is not None:
            versions = dict(self.request.sources)
            if c.source not in versions:
                return "freshness-unknown"
            if versions[c.source] != c.version:
                return "stale"
        if c.role.value == "instruction":
            table = {"system": "instruction", "developer": "instruction", "user": "instruction"}
            table.update(dict(self.request.authority))
            if c.channel is None or table.get(c.channel, "data") != "instruction":
                return "authority"
        if self.needs_content and c.content is None:
            return "no-content"
        return None

    def _groups(self) -> dict[str, set[str]]:
        # a tool call and its result are coupled by their shared tool_call_id
        groups: dict[str, set[str]] = {}
        for c in self.request.candidates:
            if c.group is not None:
                groups.setdefault(c.group, set()).add(c.identity)
            if c.tool_call_id is not None:
                groups.setdefault("tool_call:" + c.tool_call_id, set()).add(c.identity)
        return groups

    def _derive_eligible(self) -> set[str]:
        """Forms passing every gate: a form falls when an identity it needs, or a member
        of one of its groups, has no form left, and its fall may empty its own identity.

        Written as falls counted per identity, not as the gates module's worklist of
        verdicts, so that the two implementations do not share a mistake; each form
        falls once and each identity and group empties once, so the fixpoint is linear
        in the request (plain rounds took one round per link of a dead chain)."""
        candidates = self.request.candidates
        alive = {c.id for c in candidates if self.first_gate[c.id] is None}
        left: dict[str, int] = {}  # identity -> forms still alive
        for form_id in alive:
            identity = self.by_id[form_id].identity
            left[identity] = left.get(identity, 0) + 1
        needed_by: dict[str, list[str]] = {}  # identity -> forms that need it
        for c in candidates:
            if c.id in alive:
                for d in c.depends_on:
                    if d != c.identity:
                        needed_by.setdefault(d, []).append(c.id)
        groups = self._groups()
        member_of: dict[str, list[str]] = {}
        for group, members in groups.items():
            for identity in members:
                member_of.setdefault(identity, []).append(group)
        forms_of: dict[str, list[str]] = {}
        for form_id in alive:
            forms_of.setdefault(self.by_id[form_id].identity, []).append(form_id)
        # identities with no live form: what they doom is judged from them outward
        empty = [i for i in {c.identity for c in candidates} | set(needed_by) if not left.get(i)]
        broken: set[str] = set()
        while empty:
            identity = empty.pop()
            doomed = list(needed_by.pop(identity, ()))
            for group in member_of.get(identity, ()):
                if group not in broken:
                    broken.add(group)
                    for member in groups[group]:
                        doomed.extend(forms_of.get(member, ()))
            for form_id in doomed:
                if form_id in alive:
                    alive.discard(form_id)
                    owner = self.by_id[form_id].identity
                    left[owner] -= 1
                    if left[owner] == 0:
                        empty.append(owner)
        return alive

    # -- checks --------------------------------------------------------------------

    def run(self) -> list[Violation]:
        self._check_record()
        status = self.result.get("status")
        if status == "bundle":
            self._check_bundle()
        elif status == "refused":
            self._check_refusal()
        elif status == "undecided":
            if self.result.get("selected"):
                self.flag(ViolationKind.RECORD, "an undecided result lists selected forms")
        else:
            self.flag(ViolationKind.RECORD, f"unknown status {status!r}")
        return self.found

    def _check_record(self) -> None:
        decisions = self.result.get("decisions", [])
        ids = [d.get("id") for d in decisions]
        expected = sorted(self.by_id)
        if ids != expected:
            missing = sorted(set(expected) - set(ids))
            extra = sorted({str(i) for i in ids} - set(expected))
            self.flag(
                ViolationKind.RECORD,
                f"decisions must cover every candidate once, sorted by id"
                f" (missing {missing}, unknown {extra})",
            )
        selected = list(self.result.get("selected", []))
        if len(set(selected)) != len(selected):
            self.flag(ViolationKind.RECORD, "a form is selected twice", *selected)
        unknown = [s for s in selected if s not in self.by_id]
        if unknown:
            self.flag(ViolationKind.RECORD, "selected forms the request does not offer", *unknown)
        chosen = set(selected)
        for d in decisions:
            form_id = d.get("id")
            c = self.by_id.get(form_id) if isinstance(form_id, str) else None
            if c is None:
                continue
            if d.get("identity") != c.identity:
                self.flag(ViolationKind.RECORD, "decision names the wrong identity", c.id)
            admitted = d.get("verdict") == "admitted"
            if admitted != (c.id in chosen):
                self.flag(ViolationKind.RECORD, "verdict disagrees with the selection", c.id)
            reason = d.get("reason")
            gate = self.first_gate[c.id]
            if reason in _PER_FORM_GATES and reason != gate:
                self.flag(
                    ViolationKind.RECORD,
                    f"rejected as {reason!r} but its first failing gate is {gate!r}",
                    c.id,
                )
            if reason in _DERIVED_GATES and (gate is not None or c.id in self.eligible):
                self.flag(ViolationKind.RECORD, f"rejected as {reason!r} wrongly", c.id)
            gated = reason in _PER_FORM_GATES + _DERIVED_GATES
            if not admitted and not gated and c.id not in self.eligible:
                self.flag(
                    ViolationKind.RECORD,
                    f"rejected as {reason!r}, hiding that it fails a gate",
                    c.id,
                )

    def _value(self, c: Candidate) -> int:
        if c.relevance < self.request.task.min_relevance:
            return 0
        scaled = Decimal(repr(c.relevance)) * 1000
        return int(scaled.quantize(Decimal(1), rounding=ROUND_HALF_UP))

    def _check_bundle(self) -> None:
        req = self.request
        chosen = [self.by_id[s] for s in self.result.get("selected", []) if s in self.by_id]
        admitted = {c.identity for c in chosen}
        for c in chosen:
            if c.id not in self.eligible:
                gate = (
                    self.first_gate[c.id] or "a dependency or group partner with no eligible form"
                )
                self.flag(ViolationKind.GATE, f"admitted although it fails {gate}", c.id)
        seen: dict[str, str] = {}
        for c in chosen:
            if c.identity in seen:
                self.flag(
                    ViolationKind.DUPLICATE_IDENTITY,
                    f"two forms of identity {c.identity!r}",
                    seen[c.identity],
                    c.id,
                )
            seen[c.identity] = c.id
        for identity in req.required_identities:
            if identity not in admitted:
                self.flag(ViolationKind.REQUIRED, f"required identity {identity!r} is not admitted")
        for c in chosen:
            for d in c.depends_on:
                if d != c.identity and d not in admitted:
                    self.flag(ViolationKind.DEPENDENCY, f"needs {d!r}, which is not admitted", c.id)
        for group, members in sorted(self._groups().items()):
            inside = members & admitted
            if inside and inside != members:
                self.flag(
                    ViolationKind.GROUP,
                    f"group {group!r} is split:"
                    f" {sorted(inside)} without {sorted(members - inside)}",
                )
        cost = sum(c.cost for c in chosen)
        if cost > req.task.budget:
            self.flag(ViolationKind.BUDGET, f"cost {cost} exceeds the budget {req.task.budget}")
        value = sum(self._value(c) for c in chosen)
        claims = {
            "cost": cost,
            "value": value,
            "budget": req.task.budget,
            "slack": req.task.budget - cost,
        }
        for name, truth in claims.items():
            if self.result.get(name) != truth:
                self.flag(ViolationKind.RECORD, f"{name} is {self.result.get(name)!r}, not {truth}")
        if self.fmt is not None:
            self.found += verify_sendable(req, self.fmt, [c.id for c in chosen])
        order = sorted(chosen, key=lambda c: (c.role.value != "instruction", c.id))
        if [c.id for c in order] != list(self.result.get("selected", [])):
            self.flag(ViolationKind.RECORD, "selected is not in canonical render order")
        if self.result.get("package_id") != self._package_id(order):
            self.flag(ViolationKind.RECORD, "package_id does not match the selected forms")

    def _package_id(self, order: list[Candidate]) -> str:
        task = self.request.task
        body = {
            "task": {
                "id": task.id,
                "budget": task.budget,
                "scope": task.scope,
                "operation": task.operation.value,
                "min_relevance": task.min_relevance,
                "required": sorted(self.request.required_identities),
                "seal": sorted(task.seal),
                # a cache section, as its JSON (models/README.md section 11)
                **(
                    {}
                    if self.request.cache is None
                    else {"cache": cache_identity(self.request.cache)}
                ),
            },
            "policy": (
                {"authority": dict(self.request.authority)}
                if self.request.has_authority_table
                else {}
            ),
            "forms": [
                {
                    "id": c.id,
                    "cost": c.cost,
                    "content_sha256": None
                    if c.content is None
                    else hashlib.sha256(c.content.encode("utf-8")).hexdigest(),
                }
                for c in order
            ],
        }
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _check_refusal(self) -> None:
        refusal = self.result.get("refusal")
        if not isinstance(refusal, Mapping):
            self.flag(ViolationKind.REFUSAL, "a refusal must carry its structured fields")
            return
        if self.result.get("selected"):
            self.flag(ViolationKind.REFUSAL, "a refusal must not select anything")
        code = refusal.get("code")
        required = set(self.request.required_identities)
        offered = {c.identity for c in self.request.candidates}
        listed = [item.get("identity") for item in refusal.get("identities", [])]
        if code == "REQUIRED_MISSING":
            wrong = [i for i in listed if i not in required or i in offered]
            if wrong or not listed:
                self.flag(ViolationKind.REFUSAL, f"REQUIRED_MISSING names {listed!r} wrongly")
        elif code == "REQUIRED_INELIGIBLE":
            with_eligible = {self.by_id[form_id].identity for form_id in self.eligible}
            for identity in listed:
                if identity not in required or identity in with_eligible:
                    self.flag(
                        ViolationKind.REFUSAL,
                        f"REQUIRED_INELIGIBLE names {identity!r}, which is not required"
                        " or has an eligible form",
                    )
            if not listed:
                self.flag(ViolationKind.REFUSAL, "REQUIRED_INELIGIBLE names no identity")
        elif code == "MANDATORY_OVER_BUDGET":
            self._check_over_budget(refusal, required)
        elif code == "UNSENDABLE":
            self._check_unsendable(refusal, required)
        else:
            self.flag(ViolationKind.REFUSAL, f"unknown refusal code {code!r}")

    def _check_over_budget(self, refusal: Mapping[str, Any], required: set[str]) -> None:
        budget = self.request.task.budget
        if refusal.get("budget") != budget:
            self.flag(ViolationKind.REFUSAL, "the refusal misstates the budget")
        lower = refusal.get("mandatory_cost_lower")
        upper = refusal.get("mandatory_cost_upper")
        mandatory = refusal.get("mandatory_cost")
        excess = refusal.get("excess")
        # The refusal claims the budget cannot hold the required material, so the
        # cheapest closure it proves is at least budget + 1.
        if not _is_int(lower) or lower <= budget:
            self.flag(
                ViolationKind.REFUSAL,
                f"mandatory_cost_lower {lower!r} is not an integer above the budget {budget}",
            )
        if upper is None:
            # Priced too late (time limit): the refusal may only say so, claiming nothing.
            claims = (mandatory, excess, refusal.get("forms"), refusal.get("conflict"))
            if claims != (None, None, [], []):
                self.flag(ViolationKind.REFUSAL, "an unpriced refusal must claim no closure")
            return
        forms = [self.by_id[f] for f in refusal.get("forms", []) if f in self.by_id]
        cost = sum(c.cost for c in forms)
        if upper != cost:
            self.flag(
                ViolationKind.REFUSAL,
                f"mandatory_cost_upper {upper!r} is not the cost {cost} of the forms it lists",
            )
        if _is_int(lower) and _is_int(upper) and upper < lower:
            self.flag(ViolationKind.REFUSAL, "mandatory_cost_upper is below mandatory_cost_lower")
        proven = _is_int(lower) and lower == upper
        if mandatory is not None or excess is not None or proven:
            # stated exactly when proven: both ends meet, and the excess follows from it
            if not (proven and mandatory == upper):
                self.flag(
                    ViolationKind.REFUSAL,
                    f"mandatory_cost {mandatory!r} is stated unless proven, or not stated"
                    f" although proven (interval {lower!r}..{upper!r})",
                )
            elif excess != upper - budget:
                self.flag(ViolationKind.REFUSAL, "excess is not mandatory_cost - budget")
        conflict = set(refusal.get("conflict", []))
        if not conflict or not conflict <= required:
            self.flag(
                ViolationKind.REFUSAL,
                f"conflict {sorted(conflict)} is not a non-empty set of required identities",
            )
        self._check_closure(forms, required)

    def _check_closure(self, forms: list[Candidate], required: set[str]) -> None:
        """The listed closure must itself be legal apart from the budget."""
        admitted = {c.identity for c in forms}
        if len(admitted) != len(forms):
            self.flag(ViolationKind.REFUSAL, "the mandatory closure has two forms of an identity")
        if not required <= admitted:
            self.flag(ViolationKind.REFUSAL, "the mandatory closure misses a required identity")
        for c in forms:
            if c.id not in self.eligible:
                self.flag(
                    ViolationKind.REFUSAL, "the mandatory closure has an ineligible form", c.id
                )
            for d in c.depends_on:
                if d != c.identity and d not in admitted:
                    self.flag(ViolationKind.REFUSAL, f"the mandatory closure misses {d!r}", c.id)
        for group, members in self._groups().items():
            inside = members & admitted
            if inside and inside != members:
                self.flag(ViolationKind.REFUSAL, f"the mandatory closure splits group {group!r}")

    def _check_unsendable(self, refusal: Mapping[str, Any], required: set[str]) -> None:
        """UNSENDABLE: the rules it names, and the cheapest selection that keeps them (a
        legal one apart from the budget, which the format can send, over the budget)
        in one of section 7's shapes, or none at all (none exists at any budget)."""
        budget = self.request.task.budget
        if refusal.get("budget") != budget:
            self.flag(ViolationKind.REFUSAL, "the refusal misstates the budget")
        rules = refusal.get("rules")
        if not isinstance(rules, list) or not rules or not all(isinstance(r, str) for r in rules):
            self.flag(ViolationKind.REFUSAL, f"UNSENDABLE names no rule: {rules!r}")
        if refusal.get("conflict") or refusal.get("identities"):
            self.flag(ViolationKind.REFUSAL, "UNSENDABLE names required identities")
        lower = refusal.get("mandatory_cost_lower")
        upper = refusal.get("mandatory_cost_upper")
        mandatory, excess = refusal.get("mandatory_cost"), refusal.get("excess")
        listed = refusal.get("forms", [])
        if lower is None:
            # none at any budget: nothing priced, nothing claimed
            if (upper, mandatory, excess, listed) != (None, None, None, []):
                self.flag(ViolationKind.REFUSAL, "an unbounded UNSENDABLE refusal claims a cost")
            return
        if not _is_int(lower) or lower <= budget:
            self.flag(
                ViolationKind.REFUSAL,
                f"mandatory_cost_lower {lower!r} is not an integer above the budget {budget}",
            )
        if upper is None:
            if (mandatory, excess, listed) != (None, None, []):
                self.flag(ViolationKind.REFUSAL, "an unpriced refusal must claim no closure")
            return
        forms = [self.by_id[f] for f in listed if f in self.by_id]
        cost = sum(c.cost for c in forms)
        if upper != cost or (_is_int(lower) and upper < lower):
            self.flag(
                ViolationKind.REFUSAL,
                f"mandatory_cost_upper {upper!r} is not the cost {cost} of the forms it lists,"
                f" at least mandatory_cost_lower {lower!r}",
            )
        proven = lower == upper
        if (mandatory is not None or excess is not None or proven) and not (
            proven and mandatory == upper and excess == upper - budget
        ):
            self.flag(
                ViolationKind.REFUSAL,
                f"mandatory_cost {mandatory!r} and excess {excess!r} are stated unless proven,"
                f" or not stated although proven (interval {lower!r}..{upper!r})",
            )
        self._check_closure(forms, required)
        if self.fmt is not None:
            for violation in verify_sendable(self.request, self.fmt, listed):
                self.flag(ViolationKind.REFUSAL, f"the selection listed breaks {violation.detail}")
