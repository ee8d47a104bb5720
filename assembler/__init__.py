"""assembler: decide, exactly and explainably, what goes into the context of one LLM call.

Input: nothing (importing the package). Output: the public API, exactly ``__all__``
(pinned by ``tests/test_api.py``).

Importing the package loads almost nothing (its error classes' small module, whose
list of names the package exports): every other public name is imported from its
module the first time it is read (a module-level ``__getattr__``), so ``import
assembler`` does not pay for the ledger (sqlite3), the renderer, the verifiers or
sessions until they are used, and no solver is loaded before the first exact solve
(OR-Tools by ``assembler.exact.cpsat``, HiGHS by ``assembler.exact.relaxation``).
A name, once read, is an ordinary attribute of the package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import kernels as _kernels

# before any other module of the package loads: the kernels' mode checked, and plain
# modules shadowed by an older build's compiled copies loaded from their source
_kernels.install()

from .model import errors as _errors  # noqa: E402  (after the kernels, as every module)

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
    "Settings",
    "SolverError",
    "Status",
    "Task",
    "UnknownStrategy",
    "Verdict",
    "Violation",
    "assemble",
    "fit",
    "parse_request",
    "render_bundle",
    "request_from_json",
    "verify",
    "verify_rendering",
]

__version__ = "0.1.0"

# public name -> the module that defines it (relative to the package)
_HOME = {
    "DEFAULT_TIME_LIMIT": ".model.arguments",
    "assemble": ".api",
    "fit": ".adapters.fitting",
    "Ledger": ".ledger",
    "LedgerError": ".ledger",
    "DEFAULT_LIMITS": ".model.limits",
    "Limits": ".model.limits",
    "parse_request": ".model.parse",
    "request_from_json": ".model.parse",
    "render_bundle": ".render",
    "Session": ".session",
    "Settings": ".settings",
    "STRATEGIES": ".strategies",
    "verify": ".verifiers.bundle",
    "verify_rendering": ".verifiers.rendering",
    # every error class is public: the errors module's own list
    **dict.fromkeys(_errors.__all__, ".model.errors"),
    **dict.fromkeys(("Manifest", "ManifestItem", "RenderFormat", "Rendering"), ".model.rendering"),
    **dict.fromkeys(
        (
            "Candidate",
            "Decision",
            "Kind",
            "Reason",
            "Refusal",
            "RefusalCode",
            "Request",
            "Result",
            "Status",
            "Task",
            "Verdict",
            "Violation",
        ),
        ".model.types",
    ),
}

if TYPE_CHECKING:
    from .adapters.fitting import fit
    from .api import assemble
    from .ledger import Ledger, LedgerError
    from .model.arguments import DEFAULT_TIME_LIMIT
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
    from .render import render_bundle
    from .session import Session
    from .settings import Settings
    from .strategies import STRATEGIES
    from .verifiers.bundle import verify
    from .verifiers.rendering import verify_rendering


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'assembler' has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    # read once: later reads find an ordinary attribute, without this function
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
