"""assembler: decide, exactly and explainably, what goes into the context of one LLM call.

The public API is exactly ``__all__`` (pinned by ``tests/test_api.py``). Importing
the package loads no solver: OR-Tools is imported by ``assembler.exact.cpsat`` on the
first exact solve, sqlite3 when a ``Ledger`` is opened, and ``Session`` when it is
first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .api import DEFAULT_TIME_LIMIT, assemble
from .ledger import Ledger, LedgerError
from .model.errors import (
    AssemblerError,
    EnumerationTooLarge,
    InternalError,
    InvalidRequest,
    RenderError,
    RequestTooLarge,
    SolverError,
    UnknownStrategy,
)
from .model.limits import DEFAULT_LIMITS, Limits
from .model.parse import parse_request, request_from_json
from .model.rendering import Manifest, ManifestItem, RenderFormat, Rendering
from .model.types import (
    Candidate,
    Decision,
    Kind,
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
from .render import render
from .strategies import STRATEGIES
from .verifiers.bundle import verify
from .verifiers.rendering import verify_rendering

__all__ = [
    "DEFAULT_LIMITS",
    "DEFAULT_TIME_LIMIT",
    "STRATEGIES",
    "AssemblerError",
    "Candidate",
    "Decision",
    "EnumerationTooLarge",
    "InternalError",
    "InvalidRequest",
    "Kind",
    "Ledger",
    "LedgerError",
    "Limits",
    "Manifest",
    "ManifestItem",
    "Reason",
    "Refusal",
    "RefusalCode",
    "RenderError",
    "RenderFormat",
    "Rendering",
    "Request",
    "RequestTooLarge",
    "Result",
    "Session",
    "SolverError",
    "Status",
    "Task",
    "UnknownStrategy",
    "Verdict",
    "Violation",
    "assemble",
    "parse_request",
    "render",
    "request_from_json",
    "verify",
    "verify_rendering",
]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .session import Session


def __getattr__(name: str) -> Any:
    # sessions are imported when first used: `import assembler` stays as cheap as it was
    if name == "Session":
        from .session import Session

        return Session
    raise AttributeError(f"module 'assembler' has no attribute {name!r}")
