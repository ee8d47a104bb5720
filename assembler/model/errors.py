"""The exception hierarchy, as the stated model's modules import it.

Input: nothing. Output: every error class, each defined once in ``assembler/errors.py``
(the ground floor: every floor raises them); this module hands them on so that
``assembler.model.errors`` keeps working.
"""

from __future__ import annotations

from ..errors import (
    AssemblerError,
    EnumerationTooLarge,
    InternalError,
    InvalidRequest,
    RenderError,
    RequestTooLarge,
    SolverError,
    UnknownCacheModel,
    UnknownCacheProvider,
    UnknownStrategy,
)

__all__ = [
    "AssemblerError",
    "EnumerationTooLarge",
    "InternalError",
    "InvalidRequest",
    "RenderError",
    "RequestTooLarge",
    "SolverError",
    "UnknownCacheModel",
    "UnknownCacheProvider",
    "UnknownStrategy",
]
