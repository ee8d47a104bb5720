"""The CP-SAT backend: the model it writes, how it loads OR-Tools, and what it loads.

The backend writes its model's protocol buffer itself (``ProtoModel``) and solves it
with ``cp_model_helper``; these tests check that every model it hands CP-SAT is
the one ``cp_model`` writes for the same constraints, that an exact call loads
neither ``cp_model`` nor pandas, and that the first solves of a fresh process, started
on several threads at once, all get a fully imported OR-Tools.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from assembler.deadline import Deadline
from assembler.exact import cpmodel, cpsat
from assembler.exact.backend import Ask
from assembler.exact.closure import build_problem
from assembler.hunt.generate import Shape, generate
from assembler.model.parse import parse_request
from assembler.stages.gates import apply_gates


class _Mirrored(cpmodel.ProtoModel):
    """A ``ProtoModel`` that makes every call on a ``cp_model.CpModel`` as well."""

    def __init__(self, helper: Any) -> None:
        from ortools.sat.python import cp_model

        super().__init__(helper)
        self.cp = cp_model
        self.reference = cp_model.CpModel()
        self.vars: list[Any] = []

    def _literal(self, literal: int) -> Any:
        return self.vars[literal] if literal >= 0 else ~self.vars[-literal - 1]

    def _expr(self, expr: cpmodel.Linear) -> Any:
        variables = [self.vars[v] for v in expr.terms]
        return self.cp.LinearExpr.weighted_sum(variables, list(expr.terms.values())) + expr.constant

    def new_int(self, low: int, high: int, name: str) -> int:
        if (low, high) == (0, 1):
            self.vars.append(self.reference.new_bool_var(name))
        else:
            self.vars.append(self.reference.new_int_var(low, high, name))
        return super().new_int(low, high, name)

    def constant(self, value: int) -> int:
        known = value in self._constants
        found = super().constant(value)
        if not known:
            self.vars.append(self.reference.new_constant(value))
        return found

    def exactly_one(self, literals: Sequence[int]) -> None:
        self.reference.add_exactly_one([self._literal(x) for x in literals])
        super().exactly_one(literals)

    def at_most_one(self, literals: Sequence[int]) -> None:
        self.reference.add_at_most_one([self._literal(x) for x in literals])
        super().at_most_one(literals)

    def bool_or(self, literals: Sequence[int], enforced_by: int | None = None) -> None:
        added = self.reference.add_bool_or([self._literal(x) for x in literals])
        if enforced_by is not None:
            added.only_enforce_if(self._literal(enforced_by))
        super().bool_or(literals, enforced_by)

    def implication(self, literal: int, implied: int) -> None:
        self.reference.add_implication(self._literal(literal), self._literal(implied))
        super().implication(literal, implied)

    def linear(
        self, expr: cpmodel.Linear, low: int, high: int, enforced_by: int | None = None
    ) -> None:
        e = self._expr(expr)
        if low == high:
            added = self.reference.add(e == low)
        elif low == cpmodel._INT64_MIN:
            added = self.reference.add(e <= high)
        else:
            assert high == cpmodel._INT64_MAX
            added = self.reference.add(e >= low)
        if enforced_by is not None:
            added.only_enforce_if(self._literal(enforced_by))
        super().linear(expr, low, high, enforced_by)

    def objective(self, expr: cpmodel.Linear, *, maximize: bool) -> None:
        super().objective(expr, maximize=maximize)  # clears both objectives first
        (self.reference.maximize if maximize else self.reference.minimize)(self._expr(expr))

    def clear_objective(self) -> None:
        self.reference.clear_objective()
        super().clear_objective()

    def hint(self, values: Iterable[tuple[int, int]]) -> None:
        pairs = list(values)
        self.reference.clear_hints()
        for variable, value in pairs:
            self.reference.add_hint(self.vars[variable], bool(value))
        super().hint(pairs)

    def clear_hints(self) -> None:
        self.reference.clear_hints()
        super().clear_hints()

    def assume(self, literals: Sequence[int]) -> None:
        self.reference.add_assumptions([self._literal(x) for x in literals])
        super().assume(literals)

    def clear_assumptions(self) -> None:
        self.reference.clear_assumptions()
        super().clear_assumptions()


def test_expressions_with_constants_are_written_as_cp_model_writes_them() -> None:
    from assembler.exact.cpmodel import Linear

    model = _Mirrored(cpmodel.cp_helper())
    x, y, z = (model.new_bool(name) for name in "xyz")
    one = model.constant(1)
    assert model.constant(1) == one
    steps = model.new_int(0, 9, "steps")
    total = 7 + Linear.sum([x, y, z, x], [3, 0, 2, 1])
    read = 4 * Linear.var(y) + 6 * Linear.var(one)
    model.at_most(2 * Linear.var(steps) - read, 0)
    model.at_least(total, 5, enforced_by=z)
    model.fix(Linear.var(steps) - (total - read), 0, enforced_by=-z - 1)
    model.implication(x, one)
    for maximize in (False, True):
        model.objective(10 * read + 20 * (total - read) - 3, maximize=maximize)
        assert str(model.proto) == str(model.reference.proto)
    assert "offset: 137" in str(model.proto) or "offset: -137" in str(model.proto)


def _problems() -> Iterable[Any]:
    for seed in range(40):
        yield generate(random.Random(seed), Shape.small(14))
    for seed in range(2):
        yield generate(random.Random(seed), Shape.scale(200))


def _mirrored(monkeypatch: pytest.MonkeyPatch, parts: Iterable[str]) -> set[str]:
    """From now on, every model CP-SAT is handed is checked against cp_model's; returns
    the set that gathers which of ``parts`` the models held."""
    seen: set[str] = set()
    run = cpsat.CpSatSearch._run

    def checked(session: Any) -> Any:
        text = str(session.model.proto)
        assert text == str(session.model.reference.proto)
        seen.update(part for part in parts if part in text)
        return run(session)

    monkeypatch.setattr(cpsat, "ProtoModel", _Mirrored)
    monkeypatch.setattr(cpsat.CpSatSearch, "_run", checked)
    return seen


def test_every_model_solved_is_the_one_cp_model_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _mirrored(monkeypatch, _PARTS)
    for request in _problems():
        parsed = parse_request(request)
        problem = build_problem(parsed, apply_gates(parsed))
        for flags in ({}, {"tiebreak": False}, {"value_only": True, "tiebreak": False}):
            cpsat.CpSat().solve(problem, Ask(Deadline.after(30), 1, **flags))
        cpsat.CpSat().solve(problem.mandatory(), Ask(Deadline.after(30), 1))
    # every kind of constraint, objective, hint and assumption the phases write
    assert seen == set(_PARTS)


def test_every_cache_aware_model_solved_is_the_one_cp_model_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import test_cached

    from assembler.exact import cached

    seen = _mirrored(monkeypatch, _CACHE_PARTS)
    # these knapsack-shaped cases are settled by the program class by class: here they
    # go to CP-SAT, the model under test
    monkeypatch.setattr(cached, "settled_by_program", lambda *args: None)
    # breakpoints (Anthropic) and automatic prefixes in steps (OpenAI), writes priced
    test_cached.test_a_call_that_fits_keeps_the_whole_previous_rendering_and_reads_it()
    test_cached.test_a_rewrite_leaves_the_headroom_for_the_calls_after_it()
    test_cached.test_an_old_turn_brought_back_ends_the_prefix_where_it_belongs()
    test_cached.test_openai_reads_the_common_prefix_in_steps_from_its_minimum()
    assert seen == set(_CACHE_PARTS)


_PARTS = (
    "exactly_one",
    "at_most_one",
    "bool_or",
    "enforcement_literal",
    "linear",
    "domain: -9223372036854775808",
    "scaling_factor: -1",
    "scaling_factor: 1",
    "solution_hint",
    "assumptions",
    "unique_probe",
)
# what the cache-aware search adds: the kept prefix's chain, the price
_CACHE_PARTS = (
    "keep0",
    "bool_and",
    "domain: 9223372036854775807",
    "steps",
    "cacheable",
    "written",
    "appended",
)


def test_an_exact_call_loads_neither_cp_model_nor_pandas() -> None:
    code = (
        "import random, sys, assembler\n"
        "from assembler.hunt.generate import Shape, generate\n"
        "request = generate(random.Random(7), Shape.scale(1000))\n"
        "result = assembler.assemble(request, time_limit=30)\n"
        "assert 'ortools.sat.python.cp_model_helper' in sys.modules, 'CP-SAT was not reached'\n"
        "assert assembler.verify(request, result) == []\n"
        "print('ortools.sat.python.cp_model' in sys.modules, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# Eight threads of a fresh process assemble at once, each request reaching CP-SAT: the
# first to get there imports OR-Tools while the others arrive. The race it guards
# against (a thread finding the module half-imported: "partially initialized module
# ... has no attribute 'CpModel'") failed about half of such processes.
_RACE = """
import random, sys, threading
import assembler
from assembler.hunt.generate import Shape, generate
requests = [generate(random.Random(7), Shape.scale(1000)) for _ in range(8)]
assembler.assemble(generate(random.Random(1), Shape.small(6)))  # everything but OR-Tools
assert not any(m.startswith("ortools") for m in sys.modules), "OR-Tools loaded too early"
start = threading.Barrier(len(requests))
failures = []

def call(request):
    start.wait()
    try:
        result = assembler.assemble(request, time_limit=60)
        assert assembler.verify(request, result) == [] and result.optimal
    except Exception as error:
        failures.append(repr(error)[:300])

threads = [threading.Thread(target=call, args=(r,)) for r in requests]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert "ortools.sat.python.cp_model_helper" in sys.modules, "CP-SAT was not reached"
print(failures)
"""


@pytest.mark.integration
def test_the_first_solves_of_a_fresh_process_may_start_on_many_threads() -> None:
    runs = [
        subprocess.Popen([sys.executable, "-c", _RACE], stdout=subprocess.PIPE, text=True)
        for _ in range(6)
    ]
    outputs = [run.communicate(timeout=300)[0].strip() for run in runs]
    assert [run.returncode for run in runs] == [0] * len(runs)
    assert outputs == ["[]"] * len(runs)
