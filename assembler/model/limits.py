"""The size limits a request must keep.

Input: nothing. Output: ``Limits``, a frozen dataclass whose defaults are the
documented limits (``DEFAULT_LIMITS``); the parser, ``assemble`` and the command
line take one as an option.

The defaults admit every request the assembler answers in reasonable time and
memory (the benchmarks go to 250,000 forms at ~2.6-3.2 KB of memory per form, see
``benchmarks/results/memory.md``) and refuse,
with ``RequestTooLarge``, what would only exhaust the machine. Each limit is a
positive integer.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from .errors import InvalidRequest
from .numbers import is_whole

__all__ = ["DEFAULT_LIMITS", "Limits"]


@dataclass(frozen=True, slots=True)
class Limits:
    """Size limits on one request; every field is a positive integer."""

    # bytes of JSON text (UTF-8), checked before the text is parsed into objects;
    # a mapping handed to the API has no byte size and is not measured
    max_request_bytes: int = 256 * 2**20
    # candidates in the request: memory grows linearly with them, and this bound keeps
    # the largest request within a small machine (benchmarks/results/memory.md)
    max_candidates: int = 250_000
    # characters of every name: ids, identities, scopes, groups, sources, labels, ...
    # (content is text, bounded by max_request_bytes only)
    max_name_length: int = 4096
    # nesting of arrays and objects in JSON text; the request format itself uses 4
    max_depth: int = 32

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if not is_whole(value) or value < 1:
                raise InvalidRequest(
                    f"limits.{spec.name}", f"must be a positive integer, not {value!r:.60}"
                )


DEFAULT_LIMITS = Limits()
