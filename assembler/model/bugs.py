"""The rule every entry point keeps: a bug inside reaches the caller as ``InternalError``.

Input: a block of code (``with internal_errors(stage):``). Output: the block's own
result; an exception of the assembler's own (``AssemblerError``: bad input, a ledger
that cannot write, ...) passes through as it is, as do ``KeyboardInterrupt`` and
``MemoryError``; any other exception is a bug and is raised as ``InternalError``
naming ``stage``, with the original as its cause.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .errors import AssemblerError, InternalError

__all__ = ["internal_errors"]


@contextmanager
def internal_errors(stage: str) -> Iterator[None]:
    """Let the assembler's own errors through; turn any other exception into
    ``InternalError`` (a bug), with the original as its cause."""
    try:
        yield
    except AssemblerError:
        raise
    except (KeyboardInterrupt, MemoryError):
        # not bugs: the caller's interrupt, or a machine too small for the request
        raise
    except Exception as exc:
        raise InternalError(exc, stage=stage) from exc
