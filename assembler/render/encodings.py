"""Real tiktoken encodings, from files already on this machine: never downloaded.

Input: an encoding name (``o200k_base``, ``cl100k_base``).
Output: a ``TiktokenCounter`` on the real encoding, or ``None`` when no copy of its
ranks file is on this machine.

Where a copy is looked for, in order:

1. tiktoken's own cache (``TIKTOKEN_CACHE_DIR``, ``DATA_GYM_CACHE_DIR`` or the
   system temporary folder's ``data-gym-cache``, under the key tiktoken gives the
   official file), as a previous ``tiktoken.get_encoding`` left it;
2. the ranks files that the ``bpe-openai`` package ships (``pip install
   'assembler[encodings]'``), byte for byte the official ones.

Each copy is checked against the official file's sha256 before it is used, and the
``Encoding`` is built here from the file, so that no code path can fall through to
tiktoken's download.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
from functools import cache
from pathlib import Path

from .counters import TiktokenCounter

__all__ = ["ENCODINGS", "load_encoding"]

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

# name -> (official url, sha256 of the ranks file, pre-tokenizer pattern, special tokens),
# as tiktoken_ext.openai_public defines them
ENCODINGS: dict[str, tuple[str, str, str, dict[str, int]]] = {
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"""
        r"""| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
}


def _tiktoken_cache(url: str) -> Path:
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
    base = Path(folder) if folder else Path(tempfile.gettempdir()) / "data-gym-cache"
    return base / hashlib.sha1(url.encode()).hexdigest()


def _shipped(name: str) -> Path | None:
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"


def _ranks_bytes(name: str) -> bytes | None:
    url, sha256, _, _ = ENCODINGS[name]
    cached = _tiktoken_cache(url)
    if cached.is_file():
        data = cached.read_bytes()
        if hashlib.sha256(data).hexdigest() == sha256:
            return data
    shipped = _shipped(name)
    if shipped is not None and shipped.is_file():
        data = gzip.decompress(shipped.read_bytes())
        if hashlib.sha256(data).hexdigest() == sha256:
            return data
    return None


@cache
def load_encoding(name: str) -> TiktokenCounter | None:
    """The real encoding ``name`` as a counter, or None when no checked copy is here
    (or tiktoken is not installed)."""
    if name not in ENCODINGS or importlib.util.find_spec("tiktoken") is None:
        return None
    data = _ranks_bytes(name)
    if data is None:
        return None
    import base64

    import tiktoken

    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in data.splitlines() if line)
    }
    _, _, pattern, special = ENCODINGS[name]
    encoding = tiktoken.Encoding(
        name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=dict(special)
    )
    return TiktokenCounter(encoding)
