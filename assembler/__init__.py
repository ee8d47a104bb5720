"""assembler: decide, exactly and explainably, what goes into the context of one LLM call.

Input: nothing (importing the package). Output: the public API, exactly ``__all__``:
the names of ``_HOME`` (each public name and the module that defines it).

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

from . import errors as _errors  # noqa: E402  (after the kernels, as every module)

__version__ = "0.1.0"

# public name -> the module that defines it (relative to the package)
_HOME = {
    "DEFAULT_TIME_LIMIT": ".model.arguments",
    "assemble": ".api",
    "fit": ".adapters.fitting",
    "Ledger": ".ledger",
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
    **dict.fromkeys(_errors.PUBLIC, ".errors"),
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
# the public API: the names of ``_HOME``, its one list (``tests/test_api.py`` holds the
# ``TYPE_CHECKING`` imports below, which type checkers read, to the same names and homes)
__all__ = sorted(_HOME)

if TYPE_CHECKING:
    # what type checkers read: each public name from its home, re-exported (``as``)
    from .adapters.fitting import fit as fit
    from .api import assemble as assemble
    from .errors import AssemblerError as AssemblerError
    from .errors import EnumerationTooLarge as EnumerationTooLarge
    from .errors import InternalError as InternalError
    from .errors import InvalidRequest as InvalidRequest
    from .errors import LedgerError as LedgerError
    from .errors import RenderError as RenderError
    from .errors import RequestTooLarge as RequestTooLarge
    from .errors import SolverError as SolverError
    from .errors import UnknownStrategy as UnknownStrategy
    from .ledger import Ledger as Ledger
    from .model.arguments import DEFAULT_TIME_LIMIT as DEFAULT_TIME_LIMIT
    from .model.limits import DEFAULT_LIMITS as DEFAULT_LIMITS
    from .model.limits import Limits as Limits
    from .model.parse import parse_request as parse_request
    from .model.parse import request_from_json as request_from_json
    from .model.rendering import Manifest as Manifest
    from .model.rendering import ManifestItem as ManifestItem
    from .model.rendering import RenderFormat as RenderFormat
    from .model.rendering import Rendering as Rendering
    from .model.types import Candidate as Candidate
    from .model.types import Decision as Decision
    from .model.types import Kind as Kind
    from .model.types import Reason as Reason
    from .model.types import Refusal as Refusal
    from .model.types import RefusalCode as RefusalCode
    from .model.types import Request as Request
    from .model.types import Result as Result
    from .model.types import Status as Status
    from .model.types import Task as Task
    from .model.types import Verdict as Verdict
    from .model.types import Violation as Violation
    from .render import render_bundle as render_bundle
    from .session import Session as Session
    from .settings import Settings as Settings
    from .strategies import STRATEGIES as STRATEGIES
    from .verifiers.bundle import verify as verify
    from .verifiers.rendering import verify_rendering as verify_rendering

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
