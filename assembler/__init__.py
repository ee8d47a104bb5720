"""assembler: decide, exactly and explainably, what goes into the context of one LLM call.

The public API is exactly ``__all__`` (pinned by ``tests/test_api.py``). Importing
the package loads no solver: OR-Tools is imported by ``assembler.exact.cpsat`` on the
first exact solve.
"""

from __future__ import annotations

from .api import DEFAULT_TIME_LIMIT, assemble
from .model.errors import (
    AssemblerError,
    EnumerationTooLarge,
    InvalidRequest,
    SolverError,
    UnknownStrategy,
)
from .model.parse import parse_request, request_from_json
from .model.types import (
    Candidate,
    Decision,
    Reason,
    Refusal,
    RefusalCode,
    Request,
    Result,
    Status,
    Task,
    Verdict,
    Violation,
)
from .strategies import STRATEGIES
from .verifiers.bundle import verify

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "STRATEGIES",
    "AssemblerError",
    "Candidate",
    "Decision",
    "EnumerationTooLarge",
    "InvalidRequest",
    "Reason",
    "Refusal",
    "RefusalCode",
    "Request",
    "Result",
    "SolverError",
    "Status",
    "Task",
    "UnknownStrategy",
    "Verdict",
    "Violation",
    "assemble",
    "parse_request",
    "request_from_json",
    "verify",
]

__version__ = "0.1.0"
