"""The warm server: ``assembler serve``, for callers in any language.

JSON lines on stdin/stdout (``stdio``) or HTTP on a loopback port (``http``, on
Starlette and Uvicorn: the ``serve`` extra), both answering the same calls through
``service`` (sessions in ``store``, messages in ``messages``, errors in ``errors``).
The protocol is documented in ``models/session.md``.
"""

from __future__ import annotations

from .errors import ServeError, ServerBusy, SessionExpired, SessionUnknown, TimeLimitReached
from .service import Reply, ServerConfig, Service

__all__ = [
    "Reply",
    "ServeError",
    "ServerBusy",
    "ServerConfig",
    "Service",
    "SessionExpired",
    "SessionUnknown",
    "TimeLimitReached",
]
