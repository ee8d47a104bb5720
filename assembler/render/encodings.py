"""Real tiktoken encodings, shipped in the package: never downloaded.

Input: an encoding name (``o200k_base``, ``cl100k_base``).
Output: a ``TiktokenCounter`` on the real encoding (``load_encoding``), built from the
ranks the package ships; ``pack_ranks`` / ``unpack_ranks`` the compact form they are
shipped in.

The official ranks files (``base64(token) rank`` per line, 3.6 MB and 1.7 MB) are
shipped compactly as ``ranks/NAME.ranks.xz``: the tokens in rank order, each as its
length (one byte) and its bytes, xz-compressed (0.83 MB and 0.39 MB). The ranks are
0 .. n-1 without a gap in both files, so the order is the whole mapping, and
``official_text`` rebuilds the official file byte for byte (the tests check its
sha256 against the official one). At run time the shipped file is checked against
its own sha256 before it is used, and the ``Encoding`` is built here, so that no code
path can fall through to tiktoken's download.
"""

from __future__ import annotations

import base64
import hashlib
import lzma
from functools import cache
from pathlib import Path

from .counters import TiktokenCounter

__all__ = [
    "ENCODINGS",
    "load_encoding",
    "official_text",
    "pack_ranks",
    "shipped_ranks",
    "unpack_ranks",
]

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

# name -> (official url, sha256 of the ranks file, pre-tokenizer pattern, special tokens),
# as tiktoken's public encodings define them
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


# sha256 of each shipped ranks/NAME.ranks.xz (what the package itself carries)
SHIPPED = {
    "o200k_base": "74c6f5af06dd76707df670b80098f8be24afcd25ffae041f3df869abdcf63f65",
    "cl100k_base": "3208ff089538356f91190e4abe4f6b1126b65045c189e60d7c5475580d6fc3b9",
}
_FOLDER = Path(__file__).resolve().parent / "ranks"


def pack_ranks(official: bytes) -> bytes:
    """The compact form of an official ranks file: tokens in rank order, each a
    length byte and its bytes, xz-compressed. ValueError when the ranks have a gap."""
    pairs = [line.split() for line in official.splitlines() if line]
    tokens = [base64.b64decode(token) for token, _ in pairs]
    if [int(rank) for _, rank in pairs] != list(range(len(pairs))):
        raise ValueError("the ranks are not 0 .. n-1 in order")
    if any(not 0 < len(token) < 256 for token in tokens):
        raise ValueError("a token is empty or longer than 255 bytes")
    blob = b"".join(bytes([len(token)]) + token for token in tokens)
    return lzma.compress(blob, preset=9 | lzma.PRESET_EXTREME)


def unpack_ranks(packed: bytes) -> dict[bytes, int]:
    """token bytes -> rank, from ``pack_ranks``' form."""
    blob = lzma.decompress(packed)
    ranks: dict[bytes, int] = {}
    index = 0
    while index < len(blob):
        length = blob[index]
        ranks[blob[index + 1 : index + 1 + length]] = len(ranks)
        index += 1 + length
    return ranks


def official_text(ranks: dict[bytes, int]) -> bytes:
    """The official ranks file these ranks were packed from, byte for byte."""
    return b"".join(
        base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
        for token, rank in sorted(ranks.items(), key=lambda pair: pair[1])
    )


def shipped_ranks(name: str) -> dict[bytes, int]:
    """The ranks of ``name`` from the package's own file, checked by its sha256."""
    packed = (_FOLDER / f"{name}.ranks.xz").read_bytes()
    if hashlib.sha256(packed).hexdigest() != SHIPPED[name]:
        raise RuntimeError(f"the shipped ranks of {name} are damaged: reinstall assembler")
    return unpack_ranks(packed)


@cache
def load_encoding(name: str) -> TiktokenCounter | None:
    """The real encoding ``name`` as a counter (None for an encoding not shipped)."""
    if name not in ENCODINGS:
        return None
    import tiktoken

    _, _, pattern, special = ENCODINGS[name]
    encoding = tiktoken.Encoding(
        name, pat_str=pattern, mergeable_ranks=shipped_ranks(name), special_tokens=dict(special)
    )
    return TiktokenCounter(encoding)
