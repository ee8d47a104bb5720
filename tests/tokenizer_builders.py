"""Counters on tokenizers built offline for the tests: nothing is downloaded.

The tiktoken ranks and the Hugging Face BPE are trained on ``MIXED`` by
``benchmarks.offline_tokenizers`` and loaded back from local files by the adapters.
"""

from __future__ import annotations

from pathlib import Path

from assembler.render.counters import Counter
from benchmarks.offline_tokenizers import PAT, train_hf, train_ranks, write_ranks

__all__ = ["MIXED", "PAT", "built_counters", "train_ranks", "write_ranks"]

MIXED = (
    "The backfill runs in 10k-row chunks; lock_timeout = 2s. "
    'def count(text: str) -> int:\n    return len(text.encode("utf-8"))\n'
    '{"order": "4471", "items_cents": 5400, "damaged": false}\n'
    'Zürich naïve café — 東京 💡 <item id="x"> </item>\n'
)


def built_counters(folder: Path) -> list[Counter]:
    """A tiktoken counter and a tokenizers counter, each loaded from a local file."""
    from assembler.render.counters import TiktokenCounter, TokenizersCounter

    ranks_file = folder / "test.tiktoken"
    write_ranks(ranks_file, train_ranks(MIXED * 20, 200))
    tokenizer_file = folder / "tokenizer.json"
    train_hf(MIXED * 20, 400).save(str(tokenizer_file))
    return [
        TiktokenCounter.from_file(ranks_file, name="test-bpe", pat_str=PAT),
        TokenizersCounter.from_file(tokenizer_file),
    ]
