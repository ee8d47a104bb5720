"""Tokenizers built offline for the counter tests: nothing is downloaded.

``tiktoken_ranks`` trains a small byte-pair ranks table on local text (every byte,
then the most frequent adjacent pairs, merged greedily); ``hf_tokenizer`` trains a
Hugging Face byte-level BPE on the same text.
"""

from __future__ import annotations

import base64
import itertools
from collections import Counter
from pathlib import Path

# tiktoken's cl100k-style pre-tokenizer pattern (words, numbers, punctuation, spaces)
PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)

MIXED = (
    "The backfill runs in 10k-row chunks; lock_timeout = 2s. "
    'def count(text: str) -> int:\n    return len(text.encode("utf-8"))\n'
    '{"order": "4471", "items_cents": 5400, "damaged": false}\n'
    'Zürich naïve café — 東京 💡 <item id="x"> </item>\n'
)


def tiktoken_ranks(merges: int = 200, text: str = MIXED * 20) -> dict[bytes, int]:
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
    lines = [
        f"{base64.b64encode(t).decode()} {r}" for t, r in sorted(ranks.items(), key=lambda x: x[1])
    ]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def hf_tokenizer(path: Path, text: str = MIXED * 20) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    tokenizer.save(str(path))
    return path
