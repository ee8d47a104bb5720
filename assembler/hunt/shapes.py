"""The knobs of the request generator: how large, how tangled, how trapped.

Input: nothing. Output: ``Shape`` (frozen knobs, with presets ``small`` for hunts and
property tests, ``scale`` for benchmarks and ``tangled``, ``scale`` with dependency
chains and cycles turned up) and ``Relevance`` (how relevance is
drawn). ``generate`` turns a ``Shape`` and a seeded random source into a request.
Standard library only, like ``generate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Relevance", "Shape"]


class Relevance(StrEnum):
    """How identity relevance is drawn."""

    UNIFORM = "uniform"  # uniform on [0, 1]
    SKEWED = "skewed"  # most items weakly relevant, a few strongly (realistic retrieval)
    GRID = "grid"  # tenths only, so values tie and land exactly on thresholds
    MIXED = "mixed"  # one of the three above, drawn per request


@dataclass(frozen=True, slots=True)
class Shape:
    """Knobs of the generator. Probabilities are per form unless said otherwise.

    ``candidates`` is the inclusive range of the number of candidates (forms,
    resolvers included); ``forms_per_identity`` the inclusive range of forms of one
    content identity.
    """

    candidates: tuple[int, int] = (2, 10)
    forms_per_identity: tuple[int, int] = (1, 4)
    # fraction of forms that are references needing a shared resolver
    p_reference: float = 0.25
    # mean number of references sharing one resolver identity
    refs_per_resolver: float = 2.5
    resolver_forms: tuple[int, int] = (1, 2)
    # per content identity: its forms depend on another content identity (a chain)
    p_chain: float = 0.15
    # per content identity: it and another identity depend on each other (a cycle)
    p_cycle: float = 0.08
    # per content identity: a form depends on an identity with no candidate at all
    p_dangling: float = 0.04
    # fraction of identities in a coupled group
    p_group: float = 0.25
    group_size: tuple[int, int] = (2, 3)
    # per grouped identity: only some of its forms name the group
    p_partial_group: float = 0.3
    # per identity: it is required
    p_required: float = 0.3
    # per required identity: required through a form's flag rather than task.required
    p_required_flag: float = 0.3
    # per request: task.required names an identity with no candidate
    p_required_missing: float = 0.03
    # required identities are drawn among standalone ones (no dependency, no group) and
    # carry no gate trap, so the request is never refused as REQUIRED_INELIGIBLE; the
    # benchmarks want bundles, the hunts want every refusal, so only scale() sets it
    safe_required: bool = False
    # gate traps
    p_sealed: float = 0.05
    p_wrong_scope: float = 0.05
    p_shared: float = 0.08
    p_transfer: float = 0.05
    p_unknown_scope: float = 0.04
    p_stale: float = 0.05
    p_freshness_unknown: float = 0.03
    p_data_instruction: float = 0.04
    # eligible look-alikes of the traps: current source binding, instruction from an
    # instruction channel, lineage that is not sealed
    p_current_source: float = 0.15
    p_instruction: float = 0.05
    p_lineage: float = 0.1
    # per request: no task.scope (scope gate off), historical operation, policy table
    p_scope_off: float = 0.2
    p_historical: float = 0.15
    p_policy_table: float = 0.5
    relevance: Relevance = Relevance.MIXED
    # min_relevance is drawn from these (repeat a value to weight it)
    min_relevance: tuple[float, ...] = (0.0, 0.0, 0.3, 0.5)
    # budget = total cost of all candidates x a fraction drawn uniformly from this range
    budget_fraction: tuple[float, float] = (0.05, 0.8)
    # full-form cost range (log-uniform) and rounding grid; a coarse grid makes ties
    full_cost: tuple[int, int] = (50, 1000)
    resolver_cost: tuple[int, int] = (200, 900)
    reference_cost: tuple[int, int] = (5, 40)
    cost_grid: int = 10
    p_zero_cost: float = 0.02
    p_content: float = 0.1
    # shuffle candidates (arrival order must not matter to an exact strategy)
    shuffle: bool = True

    def __post_init__(self) -> None:
        for name in ("candidates", "forms_per_identity", "resolver_forms", "group_size"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                raise ValueError(f"Shape.{name} must be a range 1 <= low <= high, got {low, high}")
        if self.forms_per_identity[1] > 4:
            raise ValueError("Shape.forms_per_identity allows at most 4 forms per identity")
        if self.group_size[0] < 2:
            raise ValueError("Shape.group_size must start at 2 or more")
        for name in self.__slots__:
            if name.startswith("p_"):
                p = getattr(self, name)
                if not 0.0 <= p <= 1.0:
                    raise ValueError(f"Shape.{name} must be a probability, got {p}")
        low_f, high_f = self.budget_fraction
        if not 0.0 <= low_f <= high_f:
            raise ValueError("Shape.budget_fraction must be a range 0 <= low <= high")
        if not self.min_relevance or not all(0.0 <= m <= 1.0 for m in self.min_relevance):
            raise ValueError("Shape.min_relevance must be a non-empty tuple of values in [0, 1]")
        if self.refs_per_resolver < 1.0:
            raise ValueError("Shape.refs_per_resolver must be at least 1")
        if self.cost_grid < 1:
            raise ValueError("Shape.cost_grid must be at least 1")
        for name in ("full_cost", "resolver_cost", "reference_cost"):
            low, high = getattr(self, name)
            if not 1 <= low <= high:
                raise ValueError(f"Shape.{name} must be a range 1 <= low <= high")

    @classmethod
    def small(cls, max_candidates: int = 10) -> Shape:
        """Hunts and property tests: at most ``max_candidates`` forms, every trap turned up."""
        if max_candidates < 1:
            raise ValueError("max_candidates must be at least 1")
        return cls(candidates=(min(2, max_candidates), max_candidates))

    @classmethod
    def scale(cls, n_forms: int) -> Shape:
        """Benchmarks: exactly ``n_forms`` forms shaped like real requests.

        1-4 forms per identity, ~10% of forms are references to a shared resolver,
        ~5% of identities in coupled pairs, ~5% required, budget 30% of total cost,
        and gate traps rare (mostly eligible items).
        """
        if n_forms < 1:
            raise ValueError("n_forms must be at least 1")
        return cls(
            candidates=(n_forms, n_forms),
            forms_per_identity=(1, 4),
            p_reference=0.10,
            refs_per_resolver=8.0,
            resolver_forms=(1, 2),
            p_chain=0.02,
            p_cycle=0.005,
            p_dangling=0.002,
            p_group=0.05,
            group_size=(2, 2),
            p_partial_group=0.0,
            p_required=0.05,
            p_required_flag=0.3,
            p_required_missing=0.0,
            safe_required=True,
            p_sealed=0.005,
            p_wrong_scope=0.01,
            p_shared=0.05,
            p_transfer=0.005,
            p_unknown_scope=0.005,
            p_stale=0.01,
            p_freshness_unknown=0.002,
            p_data_instruction=0.005,
            p_current_source=0.2,
            p_instruction=0.01,
            p_lineage=0.05,
            p_scope_off=0.0,
            p_historical=0.0,
            p_policy_table=1.0,
            relevance=Relevance.SKEWED,
            min_relevance=(0.0,),
            budget_fraction=(0.3, 0.3),
            full_cost=(200, 4000),
            resolver_cost=(300, 1500),
            reference_cost=(10, 40),
            cost_grid=1,
            p_zero_cost=0.0,
            p_content=0.0,
        )
