"""``assembler serve --port N``: the same calls over HTTP, on Starlette and Uvicorn.

Input: HTTP requests on a loopback port; the ``Settings``.
Output: JSON replies (the same objects as the JSON-lines transport), the HTTP status
saying what kind of reply it is and the ``X-Assembler-Exit`` header the exit code
``assembler compile`` would give; the process's exit code: 0 after SIGTERM, once every
request in flight was answered (130 after SIGINT).

Routes (``models/session.md``, "The server"):

* ``POST /assemble`` (body: a request) -> ``{"exit", "result"}``
* ``PUT /sessions/{key}`` (body: the session's first request) -> ``{"exit", "session",
  "result"}``; it replaces the key's session, if any
* ``POST /sessions/{key}/delta`` (body: a delta) -> ``{"exit", "session", "result"}``
* ``DELETE /sessions/{key}`` -> ``{"exit": 0, "closed"}``
* ``GET /healthz`` -> ``{"status": "ok", "sessions", "in_flight", ...}``

Options are query parameters: ``strategy`` and ``render`` (assemble and open),
``time_limit`` (any call). A body is read no further than ``max_request_bytes``. At
most ``max_pending`` calls are held at once; beyond that a call is told
``server-busy`` (503) before its body is read. Starlette and Uvicorn are imported
only here (the ``serve`` extra).
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from ..exits import EXIT_INTERNAL
from ..model.errors import InvalidRequest, RequestTooLarge
from .errors import ServerBusy
from .messages import Op, call_from_http
from .service import OVERRUN_GRACE, Reply, Service, error

__all__ = ["build_app", "serve_http"]

# beyond the time limit and its grace, what a graceful shutdown waits for (writing
# the last replies) before Uvicorn cancels what is left
_SHUTDOWN_MARGIN = 5.0


def build_app(service: Service, announce: Callable[[], None] = lambda: None) -> Any:
    """The ASGI application answering ``service``'s calls; ``announce`` is called once
    it is ready (the listening socket already queues connections)."""
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    def respond(reply: Reply) -> Response:
        return Response(
            reply.body,
            status_code=reply.http,
            media_type="application/json",
            headers={"X-Assembler-Exit": str(reply.exit)},
        )

    max_pending = service.settings.max_pending
    # calls held, counted from before their bodies are read (bodies are what is large)
    held = [0]

    async def call(request: Request, op: Op) -> Response:
        if held[0] >= max_pending:
            busy = ServerBusy(f"{max_pending} calls are in flight (--max-pending); try again")
            return respond(error(busy))
        held[0] += 1
        try:
            return respond(await _answer(request, op))
        finally:
            held[0] -= 1

    async def _answer(request: Request, op: Op) -> Reply:
        key = request.path_params.get("key")
        try:
            body = None if op is Op.CLOSE else await _body(request, service)
            made = call_from_http(
                op,
                key,
                dict(request.query_params),
                body,
                service.settings.limits,
                service.settings.time_limit,
            )
        except Exception as exc:
            return error(exc)
        return await service.handle(made, time.monotonic())

    async def assemble(request: Request) -> Response:
        return await call(request, Op.ASSEMBLE)

    async def open_session(request: Request) -> Response:
        return await call(request, Op.OPEN)

    async def delta(request: Request) -> Response:
        return await call(request, Op.DELTA)

    async def close(request: Request) -> Response:
        return await call(request, Op.CLOSE)

    async def health(request: Request) -> Response:
        return Response(json.dumps(service.health()), media_type="application/json")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        wrong = InvalidRequest(
            "$",
            f"{request.method} {_shown_path(request.url.path)}: {exc.detail}; the routes are"
            " POST /assemble, PUT|DELETE /sessions/{key}, POST /sessions/{key}/delta,"
            " GET /healthz",
        )
        reply = error(wrong)
        return Response(reply.body, status_code=exc.status_code, media_type="application/json")

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(service.sweep_forever())
        announce()
        try:
            yield
        finally:
            sweeper.cancel()
            await asyncio.get_running_loop().run_in_executor(None, service.close)

    return Starlette(
        routes=[
            Route("/assemble", assemble, methods=["POST"]),
            Route("/sessions/{key}", open_session, methods=["PUT"]),
            Route("/sessions/{key}", close, methods=["DELETE"]),
            Route("/sessions/{key}/delta", delta, methods=["POST"]),
            Route("/healthz", health, methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )


def _shown_path(path: str) -> str:
    return json.dumps(path[:80])


async def _body(request: Any, service: Service) -> bytes:
    """The body's bytes, read no further than the limit."""
    limit = service.settings.limits.max_request_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise _too_large(None, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(size: int | None, limit: int) -> RequestTooLarge:
    what = f"a body of {size} bytes" if size is not None else f"a body of more than {limit} bytes"
    return RequestTooLarge("$", what, limit="max_request_bytes", maximum=limit, actual=size)


def serve_http(service: Service, host: str, port: int) -> int:
    """Serve until SIGTERM or SIGINT; announce the address as a JSON line on stdout."""
    import uvicorn

    listening = _listening(host, port)
    bound = listening.getsockname()[1]
    where = f"http://{'[' + host + ']' if ':' in host else host}:{bound}"

    def announce() -> None:
        # from the lifespan's start-up: Uvicorn handles the signals by then
        sys.stdout.write(json.dumps({"listening": where, "port": bound}) + "\n")
        sys.stdout.flush()

    config = uvicorn.Config(
        build_app(service, announce),
        lifespan="on",
        log_level="warning",
        access_log=False,
        http="h11",
        loop="asyncio",
        timeout_graceful_shutdown=math.ceil(
            service.settings.time_limit + OVERRUN_GRACE + _SHUTDOWN_MARGIN
        ),
    )
    server = uvicorn.Server(config)

    def terminated(sig: int, frame: Any) -> None:
        # Before Uvicorn handles signals, a SIGTERM stops it as soon as it has started;
        # after a graceful shutdown Uvicorn raises the signal again with the handler it
        # found, this one, so that the process exits 0 rather than by the signal.
        server.should_exit = True

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        server.run(sockets=[listening])
    finally:
        signal.signal(signal.SIGTERM, previous)
        listening.close()
    return 0 if server.started else EXIT_INTERNAL


def _listening(host: str, port: int) -> socket.socket:
    """A listening TCP socket whose connections send small replies at once.

    asyncio turns Nagle's algorithm off only on sockets whose protocol is TCP by
    number, and an accepted socket has the listener's; ``socket.create_server`` leaves
    it 0, and each small reply then waited for the client's delayed ACK (measured:
    44 ms for ``GET /healthz``). Linux also passes TCP_NODELAY on to accepted sockets.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        listening.bind((host, port))
        listening.listen(128)
    except BaseException:
        listening.close()
        raise
    return listening
