"""Adapters: the message lists callers hold, in and out of the assembler.

Input: an OpenAI Chat Completions message list (with ``tools``), an Anthropic
Messages body (``system``, ``messages`` with thinking, images and tool blocks,
``tools``) or LangChain messages. Output: ``fit`` keeps the most valuable part that
fits a model and gives it back as the same kind of list (``Fitted``);
``AssemblerMiddleware`` does it before every model call of a LangChain agent.

One module per concern: ``units`` (the pieces the solver chooses among and their
request), ``openai``, ``anthropic`` and ``langchain`` (each provider's list to units
and back), ``fitting`` (``fit``, the one call), ``middleware`` (the LangChain agent hook),
``calibration`` (the provider's billed usage against the count).
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
