"""Adapters: the message lists callers hold, in and out of the assembler.

Input: a message list as a caller holds it: any provider API's list (with its tools
and system prompt), a whole body, or a framework's message objects (LangChain's).
Output: ``fit`` keeps the most valuable part that fits a model and gives it back as the
same kind of list (``Fitted``); ``AssemblerMiddleware`` does it before every model call
of a LangChain agent.

One module per concern: ``fitting`` (``fit``, the one call; each list's room in
``assembler.providers`` cuts it into units and back), ``selection`` (the request the
units make, the forms a result chose), ``refusals`` (a refusal in the caller's
indices and overheads), ``middleware`` (the LangChain agent hook).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["AssemblerMiddleware", "FitRefused", "Fitted", "fit"]

if TYPE_CHECKING:
    from .fitting import FitRefused, Fitted, fit
    from .middleware import AssemblerMiddleware


def __getattr__(name: str) -> Any:
    # the middleware imports langchain: loaded only when asked for
    if name == "AssemblerMiddleware":
        from .middleware import AssemblerMiddleware

        return AssemblerMiddleware
    if name in ("FitRefused", "Fitted", "fit"):
        from . import fitting as module

        return getattr(module, name)
    raise AttributeError(f"module 'assembler.adapters' has no attribute {name!r}")
