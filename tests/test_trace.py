"""Stable identities, render order and the text table."""

from __future__ import annotations

import copy
import random

from conftest import form, request, solve

import assembler
from assembler.cli.table import render_text
from assembler.hunt.generate import Shape, generate


def base() -> dict:  # type: ignore[type-arg]
    req = request(budget=100)
    req["candidates"] = [
        form("z-evidence", 10, 0.9, content="the facts"),
        form("a-instruction", 10, 0.8, role="instruction", channel="system"),
        form("m-evidence", 10, 0.7),
    ]
    return req


def test_instructions_render_first_then_by_id() -> None:
    assert solve(base()).selected == ("a-instruction", "m-evidence", "z-evidence")


def test_rewriting_a_payload_under_the_same_id_changes_the_package() -> None:
    original = solve(base())
    rewritten = base()
    rewritten["candidates"][0]["content"] = "the facts, quietly edited"
    changed = solve(rewritten)
    assert changed.selected == original.selected
    assert changed.package_id != original.package_id
    assert changed.trace_id != original.trace_id


def test_identities_ignore_arrival_order_and_labels_and_detail() -> None:
    original = solve(base())
    shuffled = base()
    shuffled["candidates"].reverse()
    shuffled["candidates"][0]["labels"] = ["distractor"]
    again = solve(shuffled)
    assert (again.package_id, again.trace_id) == (original.package_id, original.trace_id)


def test_trace_changes_when_a_decision_changes_but_package_does_not() -> None:
    req = base()
    req["candidates"].append(form("sealed-one", 5, 0.1))
    before = solve(req)
    sealed = copy.deepcopy(req)
    sealed["task"]["seal"] = ["sealed-one"]
    after = solve(sealed)
    assert after.selected == tuple(s for s in before.selected if s != "sealed-one")
    assert after.trace_id != before.trace_id


def test_text_table_lists_both_verdicts_and_the_budget_line() -> None:
    req = base()
    req["candidates"].append(form("stranger", 1, 1.0, scope="elsewhere"))
    req["task"]["scope"] = "home"
    for c in req["candidates"][:3]:
        c["scope"] = "home"
    text = render_text(solve(req))
    assert "admitted (3):" in text and "rejected (1):" in text
    assert "stranger" in text and "scope" in text
    assert "budget 100: cost 30, slack 70" in text and "proven optimal" in text


def test_text_table_escapes_and_cuts_what_it_cannot_show_safely() -> None:
    import assembler
    from assembler import Limits
    from assembler.cli.table import ID_COLUMN

    req = request(budget=100)
    req["candidates"] = [
        form("bell\x07\x1b]0;title\x07", 1, 0.5),
        form("rtl\u202egnp.exe", 1, 0.5, depends_on=["line\u2028break"]),
        form("x" * 3000, 1, 0.5),
    ]
    result = solve(req, limits=Limits(max_name_length=3000))
    text = render_text(result)
    assert "\x07" not in text and "\x1b" not in text and "\u202e" not in text
    assert "\u2028" not in text and "\\u2028" in text
    assert all(line.isprintable() for line in text.split("\n"))
    rows = [line for line in text.splitlines() if line.startswith("  ")]
    # every reason starts in the same column: ids are padded to, and cut at, ID_COLUMN
    reasons = {row[2 + ID_COLUMN + 2 :].split()[0] for row in rows}
    assert reasons <= {reason.value for reason in assembler.Reason}, rows
    assert any(("x" * (ID_COLUMN - 1)) + "…" in row for row in rows)


def _documented_trace_id(package, status, refusal, decisions) -> str:  # type: ignore[no-untyped-def]
    """trace_id as the module docstring states it: sha256 of the canonical JSON."""
    import hashlib

    from assembler.stages.identities import canonical_json

    body = {
        "package_id": package,
        "status": status.value,
        "refusal": None if refusal is None else refusal.code.value,
        "decisions": [[d.id, d.verdict.value, d.reason.value] for d in decisions],
    }
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def test_trace_id_hashes_the_documented_canonical_json_for_any_id() -> None:
    # trace_id joins prebuilt row pieces instead of encoding the body: every id that
    # needs escaping (quote, backslash, control characters) or none, non-ASCII ones,
    # an empty list, and each verdict and reason must give the documented hash
    from assembler.model.types import Decision, Reason, Refusal, RefusalCode, Status, Verdict
    from assembler.stages.identities import trace_id

    awkward = ['say "hi"', "back\\slash", "tab\there", "nul\x00", "\x1f", "\x7f"]
    awkward += ["é-ü", "日本", "😀"]
    plain = ["a", "b-1", "z.full"]
    refusal = Refusal(RefusalCode.REQUIRED_MISSING, 10, message="m")
    for ids in ([], plain, awkward, plain + awkward[:1], awkward[-3:]):
        verdicts, reasons = list(Verdict), list(Reason)
        decisions = [
            Decision(i, f"id-{n}", verdicts[n % 2], reasons[n % len(reasons)], "detail")
            for n, i in enumerate(ids)
        ]
        for package, status, refused in (
            (None, Status.UNDECIDED, None),
            ("p" * 64, Status.BUNDLE, None),
            (None, Status.REFUSED, refusal),
        ):
            expected = _documented_trace_id(package, status, refused, decisions)
            assert trace_id(package, status, refused, decisions) == expected
            assert trace_id(package, status, refused, iter(decisions)) == expected


def test_a_result_with_no_bundle_keeps_the_documented_trace_and_decisions() -> None:
    from assembler.model.parse import parse_request
    from assembler.stages.gates import apply_gates
    from assembler.stages.trace import refused_result, undecided_result

    req = base()
    req["task"]["scope"] = "home"
    req["candidates"].append(form('quote"d', 1, 1.0, scope="elsewhere"))
    req["candidates"].append(form("shared-one", 1, 0.5, scope="shared"))
    parsed = parse_request(req)
    gates = apply_gates(parsed)
    for result in (
        undecided_result(parsed, gates, "exact", bound=3),
        refused_result(parsed, gates, "exact", solve(req).refusal or _a_refusal()),
    ):
        assert [d.id for d in result.decisions] == [c.id for c in parsed.candidates]
        assert result.trace_id == _documented_trace_id(
            None, result.status, result.refusal, result.decisions
        )
        by_id = {d.id: d for d in result.decisions}
        assert by_id['quote"d'].reason.value == "scope"
        assert by_id["shared-one"].detail.endswith("; shared scope")


def _a_refusal():  # type: ignore[no-untyped-def]
    from assembler.model.types import Refusal, RefusalCode

    return Refusal(RefusalCode.MANDATORY_OVER_BUDGET, 100, message="m")


def test_a_bundles_decisions_are_worded_when_first_read() -> None:
    """The trace decides every verdict and reason (the identities read them) and words
    the decisions once, when first read; the words are those of a kept trace's."""
    import pickle

    from assembler.deadline import Deadline
    from assembler.exact.solve import exact_strategy
    from assembler.model.types import Decisions
    from assembler.stages.gates import apply_gates
    from assembler.stages.trace import trace

    request = generate(random.Random(11), Shape.scale(300))
    parsed = assembler.parse_request(request)
    gates = apply_gates(parsed)
    result = trace(parsed, gates, "exact", exact_strategy(parsed, gates, Deadline.after(30), 1))[0]
    decisions = result.decisions
    assert isinstance(decisions, Decisions) and decisions._made is None
    worded = tuple(decisions)
    assert decisions._made == worded and decisions._word is None
    kept = assembler.Session(request).answer()  # the kept path words every decision
    assert tuple(kept.decisions) == worded and kept == result == assembler.assemble(request)
    assert decisions == worded == decisions and hash(decisions) == hash(worded)
    assert decisions[0] == worded[0] and decisions[-2:] == worded[-2:]
    assert len(decisions) == len(worded)
    assert pickle.loads(pickle.dumps(result)) == result
    assert result.to_dict()["decisions"] == [d.to_dict() for d in worded]
