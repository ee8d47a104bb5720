"""Counters: the adapters on tokenizers built in the test, and the estimator's bound."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from profiles import examples

from assembler.render.counters import Counter, Utf8Bytes

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")

from tokenizer_builders import MIXED, PAT, built_counters, train_ranks, write_ranks  # noqa: E402

from assembler.render.counters import TiktokenCounter  # noqa: E402


@pytest.fixture(scope="module")
def counters(tmp_path_factory: pytest.TempPathFactory) -> list[Counter]:
    return built_counters(tmp_path_factory.mktemp("tok"))


def test_adapters_load_local_files_and_name_themselves(counters: list[Counter]) -> None:
    tk, hf = counters
    assert tk.name == "tiktoken:test-bpe" and tk.version == tiktoken.__version__
    assert hf.name == "tokenizers:tokenizer" and hf.version == tokenizers.__version__
    for counter in counters:
        assert isinstance(counter, Counter)
        assert 0 < counter.count(MIXED) < len(MIXED.encode("utf-8"))


def test_special_token_text_counts_as_text(tmp_path: Path) -> None:
    ranks_file = tmp_path / "s.tiktoken"
    write_ranks(ranks_file, train_ranks(MIXED, 20))
    counter = TiktokenCounter.from_file(
        ranks_file, name="s", pat_str=PAT, special_tokens={"<|endoftext|>": 10_000}
    )
    assert counter.count("<|endoftext|>") > 1


ADVERSARIAL = st.text(
    alphabet=st.sampled_from([*'ab <>/"=\n\t{}:,', "é", "東", "💡", "\u0301", "\u200d"]),
    max_size=200,
)


@settings(max_examples=examples(200), deadline=None)
@given(text=ADVERSARIAL)
def test_utf8_bytes_bounds_every_byte_level_tokenizer(counters: list[Counter], text: str) -> None:
    bound = Utf8Bytes().count(text)
    for counter in counters:
        assert counter.count(text) <= bound
