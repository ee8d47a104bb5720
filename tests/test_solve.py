"""Exact solving: determinism, time limits, refusal order, oracle limits."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from typing import Any

import pytest
from conftest import form, request, solve

import assembler
from assembler import EnumerationTooLarge, InvalidRequest
from assembler.exact.cpsat import racers


def knapsack(n: int, seed: int, budget_fraction: float = 0.3) -> dict[str, Any]:
    """A request with alternatives, shared resolvers, groups and required items."""
    rng = random.Random(seed)
    candidates: list[dict[str, Any]] = []
    resolvers = [f"resolver-{i}" for i in range(max(1, n // 20))]
    for name in resolvers:
        candidates.append(form(name, rng.randint(200, 600), 0.0))
    identity = 0
    while len(candidates) < n:
        identity += 1
        base = rng.randint(100, 900)
        relevance = round(rng.random(), 3)
        candidates.append(form(f"i{identity}-full", base, relevance, identity=f"i{identity}"))
        if rng.random() < 0.5:
            candidates.append(
                form(
                    f"i{identity}-compact",
                    base // 3,
                    round(relevance * 0.7, 3),
                    identity=f"i{identity}",
                )
            )
        if rng.random() < 0.2:
            candidates.append(
                form(
                    f"i{identity}-ref",
                    15,
                    round(relevance * 0.8, 3),
                    identity=f"i{identity}",
                    depends_on=[rng.choice(resolvers)],
                )
            )
        if rng.random() < 0.05:
            candidates[-1]["group"] = f"g{identity // 2}"
    total = sum(c["cost"] for c in candidates)
    req = request(budget=int(total * budget_fraction), required=["i1"])
    req["candidates"] = candidates
    return req


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_answer_is_identical_under_permutation_and_worker_count(seed: int) -> None:
    req = knapsack(120, seed)
    first = solve(req)
    assert first.optimal
    shuffled = dict(
        req, candidates=random.Random(seed).sample(req["candidates"], len(req["candidates"]))
    )
    for variant, workers in ((shuffled, 1), (req, 8), (shuffled, 8)):
        other = solve(variant, workers=workers)
        assert (other.selected, other.package_id, other.trace_id) == (
            first.selected,
            first.package_id,
            first.trace_id,
        )
        assert [d.to_dict() for d in other.decisions] == [d.to_dict() for d in first.decisions]


def test_exact_ties_are_broken_canonically_not_by_arrival() -> None:
    # Four interchangeable items, room for two: the tie-break, not the order, decides.
    req = request(budget=20)
    req["candidates"] = [form(name, 10, 0.5) for name in ("d", "b", "c", "a")]
    answers = set()
    for seed in range(6):
        shuffled = dict(req, candidates=random.Random(seed).sample(req["candidates"], 4))
        answers.add(solve(shuffled).selected)
        answers.add(solve(shuffled, "enumerate").selected)
    assert len(answers) == 1


def test_zero_cost_zero_value_filler_is_never_admitted() -> None:
    req = request(budget=10)
    req["candidates"] = [form("useful", 5, 0.5), form("filler", 0, 0.0)]
    for strategy in ("exact", "enumerate"):
        assert solve(req, strategy).selected == ("useful",)


def test_below_threshold_items_carry_no_value_and_are_left_out() -> None:
    req = request(budget=10, min_relevance=0.5)
    req["candidates"] = [form("weak", 1, 0.49), form("strong", 1, 0.5)]
    result = solve(req)
    assert result.selected == ("strong",) and result.value == 500
    assert "below min_relevance" in result.decision("weak").detail


def test_a_tiny_time_limit_never_refuses_falsely_nor_returns_an_illegal_bundle() -> None:
    req = knapsack(3000, 7)
    result = assembler.assemble(req, time_limit=0.01)
    assert result.status.value in {"bundle", "undecided"}
    assert assembler.verify(req, result) == []
    if result.status.value == "bundle" and not result.optimal:
        assert result.bound is not None and result.bound >= result.value
        assert result.gap is not None and result.gap >= 0


def test_required_missing_comes_before_required_ineligible() -> None:
    req = request(required=["ghost", "sealed"], seal=["sealed"])
    req["candidates"] = [form("sealed", 1)]
    refusal = solve(req).refusal
    assert refusal is not None and refusal.code.value == "REQUIRED_MISSING"
    assert [i.identity for i in refusal.identities] == ["ghost"]


def test_required_ineligible_names_each_form_with_its_gate() -> None:
    req = request(required=["doc"], scope="p")
    req["candidates"] = [
        form("doc-full", 1, identity="doc", scope="q"),
        form("doc-ref", 1, identity="doc", scope="p", depends_on=["ghost"]),
    ]
    refusal = solve(req).refusal
    assert refusal is not None and refusal.code.value == "REQUIRED_INELIGIBLE"
    (item,) = refusal.identities
    assert dict((f, g.value) for f, g in item.forms) == {
        "doc-full": "scope",
        "doc-ref": "dependency-unavailable",
    }


def test_required_flag_on_a_form_makes_its_identity_required() -> None:
    req = request(budget=5)
    req["candidates"] = [form("a", 10, 0.1, required=True), form("b", 1, 0.9)]
    refusal = solve(req).refusal
    assert refusal is not None and refusal.conflict == ("a",)


def test_enumerate_refuses_clearly_above_its_limit() -> None:
    req = request()
    req["candidates"] = [form(f"c{i}", 1) for i in range(40)]
    with pytest.raises(EnumerationTooLarge) as caught:
        assembler.assemble(req, strategy="enumerate")
    assert caught.value.combinations == 2**40


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"time_limit": 0}, "time_limit"),
        ({"time_limit": float("nan")}, "time_limit"),
        ({"workers": 0}, "workers"),
        ({"workers": 1.5}, "workers"),
    ],
)
def test_bad_solver_arguments(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        assembler.assemble(request(), **kwargs)
    assert caught.value.field == field


def test_huge_costs_within_the_limit_solve_exactly() -> None:
    big = 2**50
    req = request(budget=2 * big)
    req["candidates"] = [form("a", big, 0.9), form("b", big, 0.8), form("c", big + 1, 1.0)]
    for strategy in ("exact", "enumerate"):
        result = solve(req, strategy)
        assert set(result.selected) == {"a", "b"} or set(result.selected) == {"c"}
        assert result.value == 1700


@pytest.mark.integration
def test_a_refusal_priced_out_of_time_claims_nothing_false() -> None:
    # Infeasibility may be proven before the limit while pricing the closure is not:
    # every answer at every limit must still pass the verifier.
    req = knapsack(3000, 3)
    req["task"]["budget"] = 10
    req["task"]["required"] = [c["identity"] for c in req["candidates"][:400] if "identity" in c]
    for limit in (0.001, 0.05, 0.2, 0.5, 2.0):
        result = assembler.assemble(req, time_limit=limit)
        assert result.status.value in {"refused", "undecided"}
        assert assembler.verify(req, result) == []


@pytest.mark.parametrize("limit", [0.001, 0.05, 0.3])
def test_a_tiny_limit_on_a_large_realistic_request_answers_with_a_proven_bound(
    limit: float,
) -> None:
    # Not a timed assertion: what the answer says must be true whenever it comes.
    from assembler.hunt.generate import Shape, generate

    req = generate(random.Random(11), Shape.scale(8000))
    result = assembler.assemble(req, time_limit=limit)
    assert assembler.verify(req, result) == []
    assert result.status.value in {"bundle", "undecided"}
    if result.status.value == "bundle":
        assert result.bound is not None and result.bound >= result.value
        assert result.gap is not None and 0.0 <= result.gap <= 1.0
        if result.optimal:
            assert result.bound == result.value and result.gap == 0.0
    else:
        assert not result.selected and not result.optimal
        assert all(d.verdict.value == "rejected" for d in result.decisions)


def test_a_build_past_its_deadline_gives_up_and_one_in_time_is_the_whole_problem() -> None:
    # decide_exact answers undecided, unsearched, for any problem finished past the
    # deadline, so the build may stop as soon as the deadline has passed
    from assembler.deadline import Deadline
    from assembler.exact.closure import _CHUNK, build_problem, build_problem_by
    from assembler.hunt.generate import Shape, generate
    from assembler.stages.gates import apply_gates

    for n in (5, _CHUNK, 2 * _CHUNK + 3):
        parsed = assembler.parse_request(generate(random.Random(n), Shape.scale(n)))
        gates = apply_gates(parsed)
        assert build_problem_by(Deadline.after(-1), parsed, gates) is None
        whole = build_problem_by(Deadline.after(60), parsed, gates)
        assert whole is not None and whole == build_problem(parsed, gates)


_CTRL_C_CHILD = """
import os, random, signal, sys, time
import assembler
from assembler.hunt.generate import generate
from assembler.cli.stopping import StopOnInterrupt
from benchmarks.scenarios.adversarial import tangled

rng = random.Random(0)
request = generate(rng, tangled(rng.randint(400, 600)))  # its core goes to CP-SAT
with StopOnInterrupt() as stop:
    result = assembler.assemble(request, workers=int(sys.argv[1]))
    os.kill(os.getpid(), signal.SIGINT)  # a first Ctrl-C: asks the run to stop
    print(stop.requested(), result.optimal, flush=True)
    try:
        os.kill(os.getpid(), signal.SIGINT)  # a second one interrupts at once
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
"""


@pytest.mark.integration
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_after_a_cp_sat_solve_reaches_python(workers: int) -> None:
    # CP-SAT's own SIGINT handler (on unless catch_sigint_signal is off) replaced
    # Python's during each solve and left SIGINT at its fatal default afterwards: the
    # first Ctrl-C of a hunt that solved in-process killed it instead of asking it to
    # stop and write its findings (issue 15).
    child = subprocess.run(
        [sys.executable, "-c", _CTRL_C_CHILD, str(workers)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 130, (child.returncode, child.stderr)
    assert child.stdout.split("\n")[:2] == ["True True", "interrupted"]


_LONG_SOLVE_CHILD = """
import signal, sys
import assembler
from benchmarks.scenarios.adversarial import Adversary, build

# a runner started in the background (SIGINT ignored) hands that on: a terminal's is the default
signal.signal(signal.SIGINT, signal.default_int_handler)

# its value phase alone takes CP-SAT ~35 s here, after <1 s of parsing and reduction
request = build(Adversary.CHAIN, 5_000).request
print("solving", flush=True)
try:
    assembler.assemble(request, time_limit=600, workers=int(sys.argv[1]))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


@pytest.mark.integration
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_during_a_long_cp_sat_solve_interrupts_it(workers: int) -> None:
    # Ctrl-C during a solve is the caller's: the call raises KeyboardInterrupt (the
    # searches stopped). With CP-SAT's own handler the search ended early and the call
    # answered as if its limit had come (and in a search thread the handler aborted the
    # process). The solve runs in a thread the caller waits on, so Python's handler runs
    # at once rather than when the solve ends; that promptness is not asserted here.
    child = subprocess.Popen(
        [sys.executable, "-c", _LONG_SOLVE_CHILD, str(workers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "solving\n"
        time.sleep(3)  # parsing and the reduction take a fraction of this: it is solving
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130, (child.returncode, stderr)
    assert stdout == "interrupted\n"


def test_never_more_cp_sat_searches_than_usable_cores() -> None:
    # more searching threads than cores only slow the one-worker search down (issue 16)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert racers(1) == 1
    assert racers(2) == min(2, usable or 1)
    assert 1 <= racers(256) <= (usable or 1)
