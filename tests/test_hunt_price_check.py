"""The cache hunt's independent price check: the simulator's replay against the record.

On drawn cache-hunt examples the exact bundle's body, replayed by the simulator after
the previous call's blocks, reads exactly the tokens its cache record states; the check
reads nothing from expired entries.
"""

from __future__ import annotations

import copy
from typing import Any

import assembler
from assembler.hunt.cachejudge import simulated_read
from assembler.hunt.cachesessions import session_example
from assembler.hunt.judge import _price_check, reference


def test_drawn_examples_agree_with_the_simulator() -> None:
    checked = 0
    for index in range(60):
        request = session_example(3, index, 10)
        exact = assemble_exact(request)
        if exact is None:
            continue
        assert _price_check(request, exact) is None, index
        checked += 1
        verdict = reference(request, oracle=False).verdict
        assert verdict is None or verdict.kind is None, (index, verdict)
    assert checked >= 30


def assemble_exact(request: dict[str, Any]) -> assembler.Result | None:
    result = assembler.assemble(request, strategy="exact")
    if result.status is not assembler.Status.BUNDLE or result.cache is None:
        return None
    return result


def test_the_replay_reads_the_record_and_nothing_from_expired_entries() -> None:
    for index in range(200):
        request = session_example(5, index, 10)
        if request["cache"]["provider"] != "anthropic" or request["cache"].get("now") is not None:
            continue
        fmt = "anthropic-messages"
        try:
            result = assembler.assemble(request, render=fmt)
        except assembler.AssemblerError:
            continue
        if result.cache is None or not result.cache.read:
            continue
        replayed = simulated_read(request, result)
        assert replayed == result.cache.read
        # the same body when the previous call's entries have expired: nothing is read
        later = copy.deepcopy(request)
        later["cache"]["now"] = 10_000.0
        later["cache"]["previous"]["at"] = 0.0
        assert simulated_read(later, result) == 0
        return
    raise AssertionError("no Anthropic example read from the cache")
