"""Tokenizers trained here on local text, for the counter benchmarks and tests.

Input: text. Output: a tiktoken ranks table (every byte, then the most frequent
adjacent pairs merged greedily) written in the ``.tiktoken`` file format, or a Hugging
Face byte-level BPE ``Tokenizer``. Nothing is downloaded.
"""

from __future__ import annotations

import base64
import itertools
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["PAT", "train_hf", "train_ranks", "write_ranks"]

# tiktoken's cl100k-style pre-tokenizer pattern (words, numbers, punctuation, spaces)
PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""
)


def train_ranks(text: str, merges: int) -> dict[bytes, int]:
    ranks = {bytes([b]): b for b in range(256)}
    words = [[bytes([b]) for b in w.encode("utf-8")] for w in text.split(" ")]
    for _ in range(merges):
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for w in words:
            pairs.update(itertools.pairwise(w))
        if not pairs:
            break
        (a, b), _count = pairs.most_common(1)[0]
        ranks[a + b] = len(ranks)
        for w in words:
            i = 0
            while i < len(w) - 1:
                if w[i] == a and w[i + 1] == b:
                    w[i : i + 2] = [a + b]
                i += 1
    return ranks


def write_ranks(path: Path, ranks: dict[bytes, int]) -> None:
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    path.write_text(
        "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ordered), encoding="ascii"
    )


def train_hf(text: str, vocab_size: int) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    return tokenizer
