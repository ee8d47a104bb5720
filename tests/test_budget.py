"""The budget guarantee: with counted costs, the whole rendered text fits the budget.

Tokenizers are not additive across concatenation, so the guarantee is checked on
the rendered text counted as one text, with real tokenizers built in the test and
with a counter made super-additive on purpose (block boundaries cost extra), which
forces the re-solve with the measured excess taken off the budget.
"""

from __future__ import annotations

import pytest
from conftest import form, request, solve
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

import assembler
from assembler import RenderError
from assembler.model.rendering import Headers
from assembler.render.counters import Counter, Utf8Bytes

pytest.importorskip("tiktoken")
pytest.importorskip("tokenizers")

from tokenizer_builders import built_counters

FORMATS = ("text", "openai-chat", "anthropic-messages", "openai-responses", "gemini")


class BoundaryTax:
    """Bytes, plus 7 for every block boundary: invisible in any single block, so the
    sum of the parts always underestimates the whole."""

    name = "boundary-tax"
    version = "1"

    def count(self, text: str) -> int:
        return len(text.encode("utf-8")) + 7 * text.count("\n<item ")


@pytest.fixture(scope="module")
def counters(tmp_path_factory: pytest.TempPathFactory) -> list[Counter]:
    return [*built_counters(tmp_path_factory.mktemp("tok")), Utf8Bytes(), BoundaryTax()]


PIECES = st.sampled_from(
    [
        "a",
        "ab",
        " ",
        "\n",
        "<",
        ">",
        "</item>",
        "<item",
        '"',
        "=",
        "{",
        "}",
        "é",
        "東",
        "💡",
        "\u0301",
    ]
)
CONTENT = st.lists(PIECES, min_size=1, max_size=40).map("".join)


@settings(max_examples=examples(40), deadline=None)
@given(
    contents=st.lists(CONTENT, min_size=1, max_size=8),
    budget=st.integers(min_value=40, max_value=900),
    fmt=st.sampled_from(FORMATS),
    which=st.integers(min_value=0, max_value=3),
)
def test_the_whole_rendered_text_never_exceeds_the_budget(
    counters: list[Counter], contents: list[str], budget: int, fmt: str, which: int
) -> None:
    counter = counters[which]
    req = request(budget, query="q?")
    req["candidates"] = [
        form(f"f{i}", 1, 0.1 + i / 10, content=text) for i, text in enumerate(contents)
    ]
    try:
        result = solve(req, render=fmt, counter=counter)
    except RenderError as exc:
        assert exc.code == "RENDER_ENVELOPE_OVER_BUDGET"
        return
    assert result.rendering is not None
    manifest = result.rendering.manifest
    assert counter.count(result.rendering.text) == manifest.total_tokens <= budget
    assert manifest.costs == "counted" and manifest.counter_name == counter.name


def test_a_super_additive_counter_is_re_solved_until_it_fits() -> None:
    req = request(0, query="q?")
    req["candidates"] = [form(f"f{i}", 1, 0.5, content="x" * 20) for i in range(6)]
    counter = BoundaryTax()
    from assembler.render.layout import block_text

    parsed = assembler.parse_request(req)
    # the counter taxes headers: the framing that has them
    block = counter.count(block_text(parsed.candidates[0], Headers.PROVENANCE))
    envelope = counter.count("<query>\nq?\n</query>\n")
    # room for all six by the sum of the parts, not once the boundaries are taxed
    req["task"]["budget"] = envelope + 6 * block
    result = solve(req, render="text", counter=counter, headers="provenance")
    assert result.rendering is not None
    assert len(result.selected) < 6
    assert counter.count(result.rendering.text) <= req["task"]["budget"]
    assert result.budget < req["task"]["budget"] - envelope  # the excess was taken off


def test_counted_costs_include_header_and_framing(counters: list[Counter]) -> None:
    counter = counters[0]
    req = request(10_000, instruction="Be exact.")
    req["candidates"] = [form("a", 1, 0.5, content="hello")]
    result = solve(req, render="openai-chat", counter=counter)
    assert result.rendering is not None
    item = result.rendering.manifest.items[0]
    assert item.tokens == result.cost > counter.count("hello")
    assert result.rendering.manifest.envelope_tokens == counter.count(
        "<instruction>\nBe exact.\n</instruction>\n"
    )


def test_an_envelope_over_budget_is_a_structured_error() -> None:
    req = request(3, query="a question far longer than three bytes")
    with pytest.raises(RenderError) as caught:
        assembler.assemble(req, render="text", counter=Utf8Bytes())
    assert caught.value.code == "RENDER_ENVELOPE_OVER_BUDGET"


def test_a_counter_needs_a_format() -> None:
    with pytest.raises(assembler.InvalidRequest):
        assembler.assemble(request(10), counter=Utf8Bytes())


def test_one_loop_measures_and_reserves_for_the_chain_and_for_fit() -> None:
    import inspect
    from pathlib import Path

    from assembler import pipeline
    from assembler.adapters import fitting
    from assembler.render import budget

    # Rounds (the rule) has one user, measured (the loop); both fits by measurement run it
    package = Path(assembler.__file__).parent
    users = sorted(
        p.relative_to(package).as_posix()
        for p in package.rglob("*.py")
        if "Rounds(" in p.read_text(encoding="utf-8")
    )
    assert users == ["render/budget.py"]
    assert "Rounds(" in inspect.getsource(budget.measured)
    for module in (pipeline, fitting):
        assert "measured(budget, attempt)" in inspect.getsource(module)


def test_fit_judges_its_typed_request_once_whatever_its_rounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assembler.model import parse

    judged: list[str] = []
    for name in ("_parse", "_checked"):
        real = getattr(parse, name)
        monkeypatch.setattr(
            parse, name, lambda data, limits, real=real, name=name: judged.append(name)
            or real(data, limits)
        )
    messages = [{"role": "system", "content": "be brief"}]
    for turn in range(12):
        messages += [{"role": "user", "content": f"question {turn} " * 40},
                     {"role": "assistant", "content": f"answer {turn} " * 40}]  # fmt: skip
    messages.append({"role": "user", "content": "and now?"})
    fitted = assembler.fit(messages, model="gpt-4o", counter=Drifting(), budget=900)
    assert fitted.tokens <= 900 and fitted.result.budget < 900 - 3  # more than one round
    assert judged == ["_parse"]


class Drifting:
    """Counts UTF-8 bytes plus one more token for every 4 texts counted so far: the body
    fit measures last counts above the units it priced first, so fit must measure and
    reserve again (more than one round)."""

    name = "drifting"
    version = "1"

    def __init__(self) -> None:
        self.counted = 0

    def count(self, text: str) -> int:
        self.counted += 1
        return len(text.encode("utf-8")) + self.counted // 4
