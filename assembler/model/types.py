"""Value types shared by every stage.

Input: nothing. Output: frozen, slotted dataclasses for the request (``Task``,
``Candidate``, ``Request``), the per-candidate ``Decision``, the ``Refusal`` and
the ``Result`` every strategy returns, plus the enums for statuses and reason codes.

These types know nothing about any solver.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from .cache import Cache, CacheOutcome
    from .limits import Limits
    from .rendering import Rendering

__all__ = [
    "TOOL_CALL_GROUP_PREFIX",
    "Candidate",
    "Decision",
    "Decisions",
    "Kind",
    "Operation",
    "Reason",
    "Refusal",
    "RefusalCode",
    "Request",
    "RequiredIdentity",
    "Result",
    "Role",
    "Status",
    "Task",
    "Verdict",
    "Violation",
    "required_names",
]


class Status(StrEnum):
    BUNDLE = "bundle"
    REFUSED = "refused"
    UNDECIDED = "undecided"


class Verdict(StrEnum):
    ADMITTED = "admitted"
    REJECTED = "rejected"


class Operation(StrEnum):
    CURRENT = "current"
    HISTORICAL = "historical"


class Role(StrEnum):
    EVIDENCE = "evidence"
    INSTRUCTION = "instruction"


class Kind(StrEnum):
    """What a candidate is in the model's input: decides its place in a rendering.

    Stable kinds come first in a rendering, then evidence, then the conversation.
    """

    SYSTEM = "system"
    DEVELOPER = "developer"
    TOOL_DEFINITION = "tool_definition"
    MEMORY = "memory"
    EVIDENCE = "evidence"
    USER_TURN = "user_turn"
    ASSISTANT_TURN = "assistant_turn"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"

    @property
    def is_instruction(self) -> bool:
        return self in (Kind.SYSTEM, Kind.DEVELOPER)

    @property
    def is_tool(self) -> bool:
        return self in (Kind.TOOL_CALL, Kind.TOOL_RESULT)


# A tool call id X puts the identities of its call and of its result in the coupled
# group named TOOL_CALL_GROUP_PREFIX + X, so every strategy that keeps groups keeps a
# result with its call (models/README.md, section 2).
TOOL_CALL_GROUP_PREFIX = "tool_call:"


class Reason(StrEnum):
    """Why a candidate was admitted or rejected.

    Gate codes come first (in the order gates are checked); then the derived gates;
    then the reasons an eligible form can still be left out; then the reasons a form
    is admitted.
    """

    # hard gates, checked in this order; the first that fails is the reason
    SEALED = "sealed"
    SCOPE = "scope"
    SCOPE_UNKNOWN = "scope-unknown"
    STALE = "stale"
    FRESHNESS_UNKNOWN = "freshness-unknown"
    AUTHORITY = "authority"
    # only when a rendering is asked for: a form with nothing to render
    NO_CONTENT = "no-content"
    # derived gates (fixpoint over dependencies and groups)
    DEPENDENCY_UNAVAILABLE = "dependency-unavailable"
    GROUP_INELIGIBLE = "group-ineligible"
    # eligible but not admitted
    ALTERNATIVE = "alternative"  # another form of the same identity is admitted
    NOT_CHOSEN = "not-chosen"  # the chosen bundle leaves it out (budget, value, cost)
    REFUSED = "refused"  # no bundle was produced: the request was refused
    UNDECIDED = "undecided"  # no bundle was produced: the time limit was hit
    # admitted
    REQUIRED = "required"  # its identity is required
    DEPENDENCY = "dependency"  # an admitted form depends on its identity
    GROUP = "group"  # its identity is coupled with an admitted identity
    VALUE = "value"  # admitted for its own value

    @property
    def is_gate(self) -> bool:
        return self in _GATE_REASONS


_GATE_REASONS = frozenset(
    {
        Reason.SEALED,
        Reason.SCOPE,
        Reason.SCOPE_UNKNOWN,
        Reason.STALE,
        Reason.FRESHNESS_UNKNOWN,
        Reason.AUTHORITY,
        Reason.NO_CONTENT,
        Reason.DEPENDENCY_UNAVAILABLE,
        Reason.GROUP_INELIGIBLE,
    }
)


class RefusalCode(StrEnum):
    REQUIRED_MISSING = "REQUIRED_MISSING"
    REQUIRED_INELIGIBLE = "REQUIRED_INELIGIBLE"
    MANDATORY_OVER_BUDGET = "MANDATORY_OVER_BUDGET"
    # a legal selection fits, but none the rendering's format can send (``rules``)
    UNSENDABLE = "UNSENDABLE"


# ---------------------------------------------------------------------------
# Request


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    budget: int
    scope: str | None = None
    operation: Operation = Operation.CURRENT
    min_relevance: float = 0.0
    required: tuple[str, ...] = ()
    seal: tuple[str, ...] = ()
    # the task's own words, rendered around the selected material (never selected)
    instruction: str | None = None
    query: str | None = None


def _key(rule: str, at: int, key: str | None = None) -> dict[str, Any]:
    """A candidate field's place in the request's JSON: the name of the rule that judges
    it (``fields.py``), its place in the documented order (``models/README.md``) and its
    key when that is not the attribute's name."""
    return {"rule": rule, "at": at, "key": key}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A validated candidate: the one home of a candidate's fields, their defaults and
    their JSON keys (the parser, the typed decoder and the serialiser read them here;
    ``identity`` defaults to the id, and ``kind`` and ``role`` from each other)."""

    id: str = field(metadata=_key("name", 0))
    identity: str = field(metadata=_key("name", 1))
    cost: int = field(metadata=_key("integer", 3))
    form: str = field(default="full", metadata=_key("name", 2))
    relevance: float = field(default=0.0, metadata=_key("unit_number", 4))
    required: bool = field(default=False, metadata=_key("flag", 5))
    scope: str = field(default="unknown", metadata=_key("name", 6))
    transfer_from: str | None = field(default=None, metadata=_key("transfer", 7, "transfer"))
    source: str | None = field(default=None, metadata=_key("name", 8))
    version: str | None = field(default=None, metadata=_key("name", 9))
    channel: str | None = field(default=None, metadata=_key("name", 10))
    role: Role = field(default=Role.EVIDENCE, metadata=_key("role", 11))
    depends_on: tuple[str, ...] = field(default=(), metadata=_key("name_set", 12))
    group: str | None = field(default=None, metadata=_key("name", 13))
    lineage: tuple[str, ...] = field(default=(), metadata=_key("name_list", 14))
    content: str | None = field(default=None, metadata=_key("text", 15))
    labels: tuple[str, ...] = field(default=(), metadata=_key("label_list", 16))
    kind: Kind = field(default=Kind.EVIDENCE, metadata=_key("kind", 17))
    tool_call_id: str | None = field(default=None, metadata=_key("name", 18))
    tool_name: str | None = field(default=None, metadata=_key("name", 19))
    # position in the conversation (user/assistant turns and tool calls)
    turn: int = field(default=0, metadata=_key("integer", 20))
    # index in the request as sent; only the `dump` baseline reads it (arrival order);
    # no key of the JSON
    position: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Request:
    """A validated request. Candidates are kept in canonical order (sorted by id)."""

    task: Task
    candidates: tuple[Candidate, ...]
    sources: tuple[tuple[str, str], ...] = ()
    authority: tuple[tuple[str, str], ...] = ()
    # True when the request gave a policy.authority table (it overrides the defaults)
    has_authority_table: bool = False
    # what the provider holds: the previous call's rendering and the cache's rules
    # (models/README.md section 6b); None prices nothing and keeps section 6's order
    cache: Cache | None = None
    # The limits this very object was validated under by ``parse_request`` (None for a
    # request built by hand). Not an init field: ``dataclasses.replace`` (any edit)
    # yields a request that is checked again, while passing a parsed request back in
    # costs nothing (judging 100k typed candidates again took longer than parsing JSON).
    validated_under: Limits | None = field(default=None, init=False, compare=False, repr=False)
    # Each content's sha256 and UTF-8 length, by the content object's id (with the
    # object, so the id cannot be reused while held): the identities, the layout and the
    # manifest each read them, and the content is hashed once (stages/identities.py).
    # A session hands it on to the request after a delta. Never part of the value.
    digests: dict[int, tuple[str, str, int]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # Each selected candidate's rendered block by candidate id, with the candidate and
    # the header choice it was made for (render/layout.py); handed on like ``digests``.
    blocks: dict[str, tuple[Any, Any, Any]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def candidate(self, candidate_id: str) -> Candidate:
        for candidate in self.candidates:
            if candidate.id == candidate_id:
                return candidate
        raise KeyError(candidate_id)

    @property
    def required_identities(self) -> tuple[str, ...]:
        """Required identities, sorted: task.required plus any form marked required."""
        return required_names(
            self.task.required, (c.identity for c in self.candidates if c.required)
        )


def required_names(task_required: Iterable[str], flagged: Iterable[str]) -> tuple[str, ...]:
    """The required identities, sorted: the task's list and the identities of the forms
    marked ``required`` (``Request.required_identities``, for a reader that already has
    the flagged identities)."""
    return tuple(sorted({*task_required, *flagged}))


# ---------------------------------------------------------------------------
# Result


class Decision(NamedTuple):
    """The verdict on one candidate and why.

    An immutable named tuple rather than a frozen dataclass, unlike the other values:
    a result holds one per candidate, and a frozen dataclass's constructor makes one
    ``object.__setattr__`` call per field."""

    id: str
    identity: str
    verdict: Verdict
    reason: Reason
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "identity": self.identity,
            "verdict": self.verdict.value,
            "reason": self.reason.value,
            "detail": self.detail,
        }


class Decisions(Sequence[Decision]):
    """A result's decisions, in the result's order, worded when first read.

    The identities read only each decision's id, verdict and reason, which the trace
    decides for every candidate; the words (``Decision.detail``) are built by ``word``
    the first time any decision is read, all at once, and then kept: a caller that
    sends the bundle and never reads why pays for no sentence. Equal to any sequence
    of the same decisions (a tuple included), hashed and pickled as that tuple."""

    __slots__ = ("_lock", "_made", "_word")

    def __init__(self, word: Callable[[], Sequence[Decision]]) -> None:
        self._word: Callable[[], Sequence[Decision]] | None = word
        self._made: tuple[Decision, ...] | None = None
        self._lock = threading.Lock()

    def _all(self) -> tuple[Decision, ...]:
        made = self._made
        if made is None:
            with self._lock:
                made = self._made
                if made is None:
                    word = self._word
                    assert word is not None
                    made = self._made = tuple(word())
                    self._word = None  # what it read is no longer held
        return made

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Decision]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decisions):
            return self._all() == other._all()
        if isinstance(other, tuple | list):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self._all(),))


@dataclass(frozen=True, slots=True)
class RequiredIdentity:
    """A required identity that cannot be admitted, with each of its forms' gates."""

    identity: str
    forms: tuple[tuple[str, Reason], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "identity": self.identity,
            "forms": [{"id": form_id, "gate": gate.value} for form_id, gate in self.forms],
        }


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why no bundle exists. For MANDATORY_OVER_BUDGET the cheapest closure of the
    required material lies in [``mandatory_cost_lower``, ``mandatory_cost_upper``]
    (the upper end is the cost of ``forms``, the best closure found; None when none
    was priced in time); ``mandatory_cost`` and ``excess`` are set only when the two
    ends meet, so an unproven figure never reads as the excess."""

    code: RefusalCode
    budget: int
    mandatory_cost: int | None = None
    excess: int | None = None
    forms: tuple[str, ...] = ()
    conflict: tuple[str, ...] = ()
    identities: tuple[RequiredIdentity, ...] = ()
    message: str = ""
    mandatory_cost_lower: int | None = None
    mandatory_cost_upper: int | None = None
    # UNSENDABLE: the format's rules no legal selection keeps together (section 14)
    rules: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "budget": self.budget,
            "mandatory_cost": self.mandatory_cost,
            "excess": self.excess,
            "mandatory_cost_lower": self.mandatory_cost_lower,
            "mandatory_cost_upper": self.mandatory_cost_upper,
            "forms": list(self.forms),
            "conflict": list(self.conflict),
            "identities": [identity.to_dict() for identity in self.identities],
            "rules": list(self.rules),
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class Result:
    """What every strategy returns. ``to_dict`` is the JSON contract."""

    status: Status
    strategy: str
    selected: tuple[str, ...]
    cost: int
    value: int
    budget: int
    optimal: bool
    # a tuple, or ``Decisions`` (worded when first read) from the trace of a bundle
    decisions: Sequence[Decision]
    trace_id: str
    package_id: str | None = None
    bound: int | None = None
    refusal: Refusal | None = None
    # wall-clock seconds per stage; diagnostic only, never part of any identity
    timings: tuple[tuple[str, float], ...] = field(default=(), compare=False)
    # the prepared model input, when assemble(render=...) asked for one
    rendering: Rendering | None = None
    # with a request's cache section: what the cache-aware decision priced (section 6b)
    cache: CacheOutcome | None = None

    @property
    def slack(self) -> int | None:
        return self.budget - self.cost if self.status is Status.BUNDLE else None

    @property
    def gap(self) -> float | None:
        """Relative distance between value and its proven upper bound (None when unknown)."""
        if self.optimal:
            return 0.0
        if self.bound is None:
            return None
        return (self.bound - self.value) / max(self.bound, 1)

    def decision(self, candidate_id: str) -> Decision:
        for decision in self.decisions:
            if decision.id == candidate_id:
                return decision
        raise KeyError(candidate_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "strategy": self.strategy,
            "selected": list(self.selected),
            "cost": self.cost,
            "value": self.value,
            "budget": self.budget,
            "slack": self.slack,
            "optimal": self.optimal,
            "bound": self.value if self.optimal and self.status is Status.BUNDLE else self.bound,
            "gap": self.gap if self.status is Status.BUNDLE else None,
            "package_id": self.package_id,
            "trace_id": self.trace_id,
            "decisions": [decision.to_dict() for decision in self.decisions],
            "refusal": None if self.refusal is None else self.refusal.to_dict(),
            "timings": {stage: round(seconds, 6) for stage, seconds in self.timings},
            "rendering": None if self.rendering is None else self.rendering.to_dict(),
            "cache": None if self.cache is None else self.cache.to_dict(self.value),
        }


@dataclass(frozen=True, slots=True)
class Violation:
    """One way a result breaks its request, found by the independent verifier."""

    kind: str
    detail: str
    forms: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "forms": list(self.forms)}
