"""A CP-SAT model written as its protocol buffer, and OR-Tools loaded once.

Input: ``Linear`` expressions and the constraints of ``ProtoModel``'s methods.
Output: a ``helper.CpModelProto`` equal to what the same calls of ``cp_model.CpModel``
write (``tests/test_cpsat.py`` compares the two), ready for ``cp_model_helper``'s
solver. Knows nothing of the assembler's problems: ``cpsat.py`` and ``cached.py``
write their encodings through it. This and ``cpsat.py`` are the only modules that
touch OR-Tools.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["Linear", "ProtoModel", "cp_helper"]

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Linear:
    """An integer linear expression over a model's variables: a coefficient per
    variable and a constant. ``+``, ``-`` and ``*`` by an integer make new ones."""

    __slots__ = ("constant", "terms")

    def __init__(self, terms: dict[int, int] | None = None, constant: int = 0) -> None:
        self.terms = {} if terms is None else terms
        self.constant = constant

    @classmethod
    def var(cls, variable: int) -> Linear:
        return cls({variable: 1})

    @classmethod
    def sum(cls, variables: Iterable[int], coefficients: Iterable[int]) -> Linear:
        """``sum(coefficient * variable)``; a variable named twice adds up."""
        terms: dict[int, int] = {}
        for variable, coefficient in zip(variables, coefficients, strict=True):
            terms[variable] = terms.get(variable, 0) + coefficient
        return cls(terms)

    def __add__(self, other: Linear | int) -> Linear:
        if isinstance(other, int):
            return Linear(dict(self.terms), self.constant + other)
        terms = dict(self.terms)
        for variable, coefficient in other.terms.items():
            terms[variable] = terms.get(variable, 0) + coefficient
        return Linear(terms, self.constant + other.constant)

    __radd__ = __add__

    def __mul__(self, factor: int) -> Linear:
        return Linear({v: c * factor for v, c in self.terms.items()}, self.constant * factor)

    __rmul__ = __mul__

    def __sub__(self, other: Linear | int) -> Linear:
        return self + other * -1

    def __rsub__(self, other: int) -> Linear:
        return self * -1 + other

    def canonical(self) -> list[tuple[int, int]]:
        """The terms in variable order, without a zero coefficient."""
        return [(v, c) for v, c in sorted(self.terms.items()) if c]


class ProtoModel:
    """A CP-SAT model written as its protocol buffer (``helper.CpModelProto``).

    Variables are named by index; a literal is a Boolean variable ``i`` or its negation
    ``-i - 1``; a constraint on a ``Linear`` is written over its terms in variable order
    with the constant moved into the bounds. Each method writes what the same call of
    ``cp_model.CpModel`` writes (``tests/test_cpsat.py`` compares the two protos)."""

    def __init__(self, helper: Any) -> None:
        self.helper = helper
        self.proto = helper.CpModelProto()
        self._constants: dict[int, int] = {}

    def new_bool(self, name: str) -> int:
        return self.new_int(0, 1, name)

    def new_int(self, low: int, high: int, name: str) -> int:
        variable = self.proto.variables.add()
        variable.name = name
        variable.domain.extend((low, high))
        return len(self.proto.variables) - 1

    def constant(self, value: int) -> int:
        """A variable fixed to ``value``, one per value (``CpModel.new_constant``)."""
        found = self._constants.get(value)
        if found is None:
            variable = self.proto.variables.add()
            variable.domain.extend((value, value))
            found = self._constants[value] = len(self.proto.variables) - 1
        return found

    def exactly_one(self, literals: Sequence[int]) -> None:
        self.proto.constraints.add().exactly_one.literals.extend(literals)

    def at_most_one(self, literals: Sequence[int]) -> None:
        self.proto.constraints.add().at_most_one.literals.extend(literals)

    def bool_or(self, literals: Sequence[int], enforced_by: int | None = None) -> None:
        constraint = self.proto.constraints.add()
        if enforced_by is not None:
            constraint.enforcement_literal.append(enforced_by)
        constraint.bool_or.literals.extend(literals)

    def implication(self, literal: int, implied: int) -> None:
        """``literal -> implied`` (``CpModel.add_implication``)."""
        constraint = self.proto.constraints.add()
        constraint.enforcement_literal.append(literal)
        constraint.bool_and.literals.append(implied)

    def linear(self, expr: Linear, low: int, high: int, enforced_by: int | None = None) -> None:
        """``low <= expr <= high`` (an infinite bound stays infinite)."""
        constraint = self.proto.constraints.add()
        if enforced_by is not None:
            constraint.enforcement_literal.append(enforced_by)
        terms = expr.canonical()
        linear = constraint.linear
        linear.vars.extend([v for v, _ in terms])
        linear.coeffs.extend([c for _, c in terms])
        shift = expr.constant
        linear.domain.extend(
            (
                low if low == _INT64_MIN else low - shift,
                high if high == _INT64_MAX else high - shift,
            )
        )

    def fix(self, expr: Linear, value: int, enforced_by: int | None = None) -> None:
        self.linear(expr, value, value, enforced_by)

    def at_most(self, expr: Linear, value: int, enforced_by: int | None = None) -> None:
        self.linear(expr, _INT64_MIN, value, enforced_by)

    def at_least(self, expr: Linear, value: int, enforced_by: int | None = None) -> None:
        self.linear(expr, value, _INT64_MAX, enforced_by)

    def objective(self, expr: Linear, *, maximize: bool) -> None:
        self.clear_objective()
        objective = self.proto.objective
        terms = expr.canonical()
        objective.vars.extend([v for v, _ in terms])
        # CP-SAT minimises: a maximisation is stored negated, with a scaling of -1
        sign = -1 if maximize else 1
        objective.scaling_factor = float(sign)
        objective.offset = float(sign * expr.constant)
        objective.coeffs.extend([sign * c for _, c in terms])

    def clear_objective(self) -> None:
        self.proto.clear_objective()
        self.proto.clear_floating_point_objective()

    def hint(self, values: Iterable[tuple[int, int]]) -> None:
        """Replace the solution hint by these ``(variable, value)`` pairs."""
        self.proto.clear_solution_hint()
        pairs = list(values)
        self.proto.solution_hint.vars.extend([v for v, _ in pairs])
        self.proto.solution_hint.values.extend([value for _, value in pairs])

    def clear_hints(self) -> None:
        self.proto.clear_solution_hint()

    def assume(self, literals: Sequence[int]) -> None:
        self.proto.assumptions.extend(literals)

    def clear_assumptions(self) -> None:
        self.proto.assumptions.clear()

    def validate(self) -> str:
        found: str = self.helper.CpSatHelper.validate_model(self.proto)
        return found


# -- loading OR-Tools once --------------------------------------------------------
#
# The first solves of a fresh process may start on several threads at once (a server's
# solver threads, a caller's own): the first imports the helper, and the others must
# wait for that import to finish rather than find the module half-initialised.

_load_lock = threading.Lock()
_loaded: Any = None


def cp_helper() -> Any:
    """``ortools.sat.python.cp_model_helper``, imported once, by one thread."""
    global _loaded
    if _loaded is None:
        with _load_lock:
            if _loaded is None:
                from ortools.sat.python import cp_model_helper

                _loaded = cp_model_helper
    return _loaded
