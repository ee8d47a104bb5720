"""Counters: text -> token count, for costs counted rather than declared.

Input: text. Output: an integer token count, and the counter's name and version for
the manifest.

* ``Utf8Bytes`` (dependency-free, the estimator): the number of UTF-8 bytes. Its
  documented bound: it is never below the token count of any tokenizer whose every
  token covers at least one byte of the text, which holds for tiktoken encodings and
  byte-level BPE (each token decodes to one or more bytes, so n bytes make at most n
  tokens). It is additive, so with it the budget guarantee needs no re-solve.
* ``TiktokenCounter``: a ``tiktoken.Encoding``, or one built from a local
  ``.tiktoken`` ranks file (``from_file``); special-token text counts as ordinary
  text, so a payload cannot smuggle a control token past the count.
* ``TokenizersCounter``: a Hugging Face ``tokenizers.Tokenizer``, or one loaded from a
  local ``tokenizer.json`` (``from_file``); no special tokens are added.

Nothing is downloaded: both adapters load only local files, and their packages are
optional extras (``pip install 'assembler[tiktoken]'`` / ``'assembler[tokenizers]'``)
imported only when an adapter is built.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["Counter", "TiktokenCounter", "TokenizersCounter", "Utf8Bytes"]


@runtime_checkable
class Counter(Protocol):
    """What the renderer needs of a tokenizer."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Utf8Bytes:
    """UTF-8 byte count: an upper bound on every byte-level tokenizer's count."""

    name: str = "utf8-bytes"
    version: str = "1"

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))


class TiktokenCounter:
    """Counts with a ``tiktoken.Encoding``."""

    def __init__(self, encoding: Any) -> None:
        import tiktoken

        self._encoding = encoding
        self.name = f"tiktoken:{encoding.name}"
        self.version = tiktoken.__version__

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        name: str,
        pat_str: str,
        special_tokens: dict[str, int] | None = None,
    ) -> TiktokenCounter:
        """An encoding from a local ranks file (lines ``base64(token) rank``)."""
        import tiktoken

        ranks: dict[bytes, int] = {}
        for line in Path(path).read_bytes().splitlines():
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        encoding = tiktoken.Encoding(
            name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special_tokens or {}
        )
        return cls(encoding)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


class TokenizersCounter:
    """Counts with a Hugging Face ``tokenizers.Tokenizer``."""

    def __init__(self, tokenizer: Any, name: str = "tokenizer") -> None:
        import tokenizers

        self._tokenizer = tokenizer
        self.name = f"tokenizers:{name}"
        self.version = tokenizers.__version__

    @classmethod
    def from_file(cls, path: str | Path, name: str | None = None) -> TokenizersCounter:
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_file(str(path)), name or Path(path).stem)

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)
