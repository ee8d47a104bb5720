"""``assembler serve --port N``: the same calls over HTTP, on Starlette and Uvicorn.

Input: HTTP requests on a port (loopback unless ``--allow-remote``); the ``ServerConfig``.
Output: JSON replies (the same objects as the JSON-lines transport), the HTTP status
saying what kind of reply it is and the ``X-Assembler-Exit`` header the exit code
``assembler compile`` would give, on every reply (an unknown route's too); the
process's exit code: 0 after SIGTERM, once every request in flight was answered (130
after SIGINT; a second signal exits at once).

Routes (``models/session.md``, "The server"), matched on the raw path so that a
session key is percent-decoded exactly once, as UTF-8, or refused:

* ``POST /assemble`` (body: a request) -> ``{"exit", "result"}``
* ``PUT /sessions/{key}`` (body: the session's first request) -> ``{"exit", "session",
  "result"}``; it replaces the key's session, if any
* ``POST /sessions/{key}/delta`` (body: a delta) -> ``{"exit", "session", "result"}``
* ``DELETE /sessions/{key}`` -> ``{"exit": 0, "closed"}``
* ``GET /healthz`` -> ``{"status": "ok" | "saturated" | "draining", ...}`` (503 unless ok)

Options are query parameters: ``strategy``, ``render`` and ``headers`` (assemble and
open), ``cache`` (open, with ``render``: a provider's name), ``time_limit`` (any call).
With a token (``ServerConfig.token``) every route but ``/healthz`` needs
``Authorization: Bearer <token>``.

What a client can hold is bounded: its headers must arrive within ``header_timeout``
(from the connection, or the end of the previous reply on it), its body within
``body_timeout`` of its headers, both cut with ``read-timeout`` (408) and the
connection closed; its reply must be taken within ``write_timeout`` or the connection
is cut. The bytes of bodies being read or answered and of replies not yet taken
together within ``max_body_memory`` (``memory.py``: beyond, the oldest body being
read of the client with the most of them is cut for a body of a client with fewer, or
the body is told ``server-busy`` before it is read further; and no solve starts). A
call's body is read first; only a whole call waits for one of ``max_pending`` places
in a queue served client by client (``admission.py``), its deadline (the time limit
from the body's arrival) bounding the wait. Connections are capped in all and per
client, the client holding the most giving way (``connections.py``): clients that
stall their headers or bodies take nothing from the others but a connection each,
until their deadline or a newer call's need. Replies are written in chunks, each
waiting for the client to take the one before, so that a reply is held once, never
copied whole into a transport's buffer. Starlette and Uvicorn are imported only here
and in ``connections.py`` (the ``serve`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import math
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

from ..exits import EXIT_BUNDLE, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_UNDECIDED
from ..model.errors import InvalidRequest, RequestTooLarge
from .admission import Admission
from .connections import Connections, protocol_class, retry_after_header
from .errors import ClientDisconnected, ReadTimeout, ServerBusy, Unauthorized
from .messages import Op, call_from_http, session_key
from .service import OVERRUN_GRACE, SHUTDOWN_MARGIN, Reply, Service, error

__all__ = ["build_app", "serve_http"]

_ROUTES = (
    "the routes are POST /assemble, PUT|DELETE /sessions/{key}, POST /sessions/{key}/delta,"
    " GET /healthz"
)


# a reply is handed to the transport this many bytes at a time
_CHUNK = 1 << 18
# at a shutdown, replies still unread this long before Uvicorn's grace ends are cut
_LAST_WRITE_MARGIN = 0.5


@dataclass(frozen=True, slots=True)
class _Answer:
    """An HTTP reply to write: its status, headers and body."""

    status: int
    headers: dict[str, str]
    body: bytes
    # its bytes already held in the body memory (a call's reply)
    counted: bool = False


def build_app(
    service: Service,
    announce: Callable[[], None] = lambda: None,
    counts: Connections | None = None,
    admission: Admission | None = None,
) -> Any:
    """The ASGI application answering ``service``'s calls; ``announce`` is called once
    it is ready (the listening socket already queues connections)."""
    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect, Request

    config = service.config
    held = (
        Connections(config.max_connections, config.max_client_connections)
        if counts is None
        else counts
    )
    if admission is None:
        admission = Admission(config.max_pending, config.max_queue)
    service.transport_health = lambda: {
        **held.figures(),
        "queued": admission.queued,
        "admitted": admission.admitted,
        "max_queue": config.max_queue,
        "header_timeout": config.header_timeout,
        "body_timeout": config.body_timeout,
        "write_timeout": config.write_timeout,
    }
    token = None if config.token is None else config.token.encode("ascii")

    def respond(
        reply: Reply,
        headers: dict[str, str] | None = None,
        status: int | None = None,
        counted: bool = False,
    ) -> _Answer:
        extra = dict(headers or {})
        if reply.code in ("read-timeout", "client-disconnected", "request-too-large"):
            # the rest of a body that did not come, or is refused unread, is not waited
            # for on this connection (a body told server-busy is read and dropped, so
            # that its client reads when to retry)
            extra["Connection"] = "close"
        if reply.code == "unauthorized":
            extra["WWW-Authenticate"] = 'Bearer realm="assembler"'
        if reply.retry_after is not None:
            extra["Retry-After"] = retry_after_header(reply.retry_after)
        return _Answer(
            reply.http if status is None else status,
            {"X-Assembler-Exit": str(reply.exit), **extra},
            reply.body,
            counted,
        )

    async def dispatch(request: Request) -> _Answer:
        raw = request.scope.get("raw_path") or request.url.path.encode("utf-8")
        path = raw.split(b"?", 1)[0]
        if path == b"/healthz":
            if request.method not in ("GET", "HEAD"):
                return _wrong_method(request, "GET")
            health = service.health()
            ok = health["status"] == "ok"
            # the exit header as a call now would be answered: at once, or told to retry
            return _Answer(
                200 if ok else 503,
                {"X-Assembler-Exit": str(EXIT_BUNDLE if ok else EXIT_UNDECIDED)},
                json.dumps(health).encode("utf-8"),
            )
        # the token before the route: without it, a caller learns nothing of the routes
        if token is not None and not _authorised(request, token):
            return respond(service.count(error(Unauthorized())))
        route = _route(request, path)
        if isinstance(route, _Answer):
            return route
        op, key_bytes = route
        try:
            key = None if key_bytes is None else session_key(key_bytes, config.limits)
        except InvalidRequest as exc:
            return respond(service.count(error(exc)))
        reply, counted = await call(request, op, key)
        return respond(reply, counted=counted)

    def _route(request: Request, path: bytes) -> tuple[Op, bytes | None] | _Answer:
        method = request.method
        parts = path.split(b"/")
        if path == b"/assemble":
            return (Op.ASSEMBLE, None) if method == "POST" else _wrong_method(request, "POST")
        if parts[:2] == [b"", b"sessions"] and len(parts) in (3, 4) and parts[2]:
            if len(parts) == 3 and method in ("PUT", "DELETE"):
                return (Op.OPEN if method == "PUT" else Op.CLOSE), parts[2]
            if len(parts) == 3:
                return _wrong_method(request, "PUT, DELETE")
            if parts[3] == b"delta":
                return (Op.DELTA, parts[2]) if method == "POST" else _wrong_method(request, "POST")
        return _unknown(request, 404, "not found")

    def _wrong_method(request: Request, allow: str) -> _Answer:
        return _unknown(request, 405, "method not allowed", allow)

    def _unknown(request: Request, status: int, what: str, allow: str | None = None) -> _Answer:
        wrong = InvalidRequest(
            "$", f"{request.method} {json.dumps(request.url.path[:80])}: {what}; {_ROUTES}"
        )
        allowed = {} if allow is None else {"Allow": allow}
        return respond(service.count(error(wrong)), allowed, status)

    async def call(request: Request, op: Op, key: str | None) -> tuple[Reply, bool]:
        """The call's reply, and whether its bytes are already held (a result's). Its
        body is read first (bounded by its deadline and the body memory); only a whole
        call waits for one of the admission places."""
        peer = request.scope.get("client")
        connection = held.of(peer)
        taken = [0]
        admitted = False
        try:
            try:
                body = (
                    None
                    if op is Op.CLOSE
                    else await _body(request, service, held, connection, taken)
                )
                made = call_from_http(
                    op,
                    key,
                    dict(request.query_params),
                    # a payload the service decodes as bytes or a bytearray alike
                    cast(bytes | None, body),
                    config.limits,
                    config.time_limit,
                    time.monotonic(),
                )
            except ClientDisconnect:
                return service.count(error(ClientDisconnected())), False
            except ServerBusy as busy:
                # the body memory is full: room comes when a reply is taken, at the
                # latest when the first one being written meets its write deadline
                after = held.next_cut()
                after = admission.retry_after() if after is None else after
                return service.count(error(ServerBusy(str(busy), after))), False
            except Exception as exc:
                return service.count(error(exc)), False
            try:
                await admission.turn(str(peer[0]) if peer else "", made.deadline.left())
            except ServerBusy as busy:
                return service.count(error(busy)), False
            admitted = True
            reply = await service.handle(made)
            # the reply is counted before its request is given back: the bytes held
            # never dip between the two, so no solve waiting for room starts in between
            service.bodies.hold_reply(len(reply.body))
            return reply, True
        finally:
            service.bodies.give(taken[0])
            if connection is not None:
                connection.body_bytes = 0
            if admitted:
                admission.done()

    async def write(answer: _Answer, scope: Any, send: Any) -> None:
        """``answer`` in chunks, each handed over once the client took the one before
        (Uvicorn waits while the transport's buffer is full), its bytes counted until
        the last is out, or its client cut at the write deadline."""
        body = answer.body
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode("ascii"))]  # fmt: skip
        headers += [
            (k.lower().encode("ascii"), v.encode("ascii")) for k, v in answer.headers.items()
        ]
        if not answer.counted:
            service.bodies.hold_reply(len(body))
        try:
            connection = held.of(scope.get("client"))
            if connection is not None:
                connection.write_deadline(config.write_timeout)
            await send({"type": "http.response.start", "status": answer.status, "headers": headers})
            view = memoryview(body)
            for start in range(0, max(1, len(body)), _CHUNK):
                last = start + _CHUNK >= len(body)
                chunk = bytes(view[start : start + _CHUNK])
                await send({"type": "http.response.body", "body": chunk, "more_body": not last})
        finally:
            service.bodies.drop_reply(len(body))

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        sweeper = asyncio.create_task(service.sweep_forever())
        announce()
        try:
            yield
        finally:
            sweeper.cancel()
            await asyncio.get_running_loop().run_in_executor(None, service.close)

    # Starlette runs the lifespan; every HTTP request comes to ``dispatch`` as it is
    # (its routes match the decoded path, which a key with a newline escapes)
    lifespan_app = Starlette(lifespan=lifespan)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan_app(scope, receive, send)
            return
        try:
            answer = await dispatch(Request(scope, receive))
        except Exception as exc:
            # a bug is one internal-error reply with its exit header, not the
            # transport's bare 500
            answer = respond(service.count(error(exc)))
        try:
            await write(answer, scope, send)
        except asyncio.CancelledError:
            # the shutdown's grace ended before the client took its reply: its
            # connection is cut, as at its write deadline (no traceback: not a bug)
            connection = held.of(scope.get("client"))
            if connection is not None:
                connection.transport.abort()

    return app


def _authorised(request: Any, token: bytes) -> bool:
    """Whether the ``Authorization`` header's bytes are ``Bearer`` and the token's
    (visible ASCII, ``model.keys.token``), compared as bytes: what every client sends
    the same, whatever the encoding it would give other text."""
    given = b""
    for name, value in request.scope["headers"]:
        if name == b"authorization":
            given = value
    scheme, _, secret = given.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(secret.strip(b" \t"), token)


async def _body(
    request: Any, service: Service, held: Connections, connection: Any, taken: list[int]
) -> bytearray:
    """The body's bytes, read within the body deadline, no further than the size
    limit, each chunk taken from the server's body memory (``taken[0]`` says how much,
    for the caller to give back once the call is answered; ``connection.body_bytes``
    too, for the choice of a body to cut when the memory is full)."""
    config = service.config
    limit = config.limits.max_request_bytes
    memory = service.bodies
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit():
        if int(declared) > limit:
            raise _too_large(int(declared), limit)
        if memory.held + int(declared) > memory.limit and held.body_to_cut(connection) is None:
            raise _memory_full(memory.held, memory.limit)
    # one buffer grown in place (a large one is remapped, not copied): the body is held
    # once while it is read, not as its chunks and their join
    body = bytearray()
    total = 0
    held.reading += 1
    try:
        async with asyncio.timeout(config.body_timeout):
            async for chunk in request.stream():
                total += len(chunk)
                if total > limit:
                    raise _too_large(None, limit)
                if not memory.try_take(len(chunk)) and not await _make_room(
                    held, memory, connection, len(chunk)
                ):
                    raise _memory_full(memory.held, memory.limit)
                taken[0] += len(chunk)
                if connection is not None:
                    connection.body_bytes = taken[0]
                body += chunk
    except TimeoutError:
        raise ReadTimeout("body_timeout", config.body_timeout, total) from None
    finally:
        held.reading -= 1
    return body


# how long a body waits for the bytes of the bodies cut to make room for it
_ROOM_WAIT = 1.0


async def _make_room(held: Connections, memory: Any, connection: Any, size: int) -> bool:
    """The body memory is full: cut the oldest body being read of the client with the
    most of them (``Connections.body_to_cut``), then take ``size`` bytes once they are
    given back; whether they were taken."""
    victim = held.body_to_cut(connection)
    while victim is not None:
        held.cut += 1
        victim.cut(False)
        if await memory.take_within(size, _ROOM_WAIT):
            return True
        victim = held.body_to_cut(connection)
    return False


def _too_large(size: int | None, limit: int) -> RequestTooLarge:
    what = f"a body of {size} bytes" if size is not None else f"a body of more than {limit} bytes"
    return RequestTooLarge("$", what, limit="max_request_bytes", maximum=limit, actual=size)


def _memory_full(held: int, limit: int) -> ServerBusy:
    return ServerBusy(
        f"the bodies in flight hold {held} bytes of the {limit} this server keeps for them"
        " (--max-body-memory); try again"
    )


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

    held = Connections(service.config.max_connections, service.config.max_client_connections)
    admission = Admission(service.config.max_pending, service.config.max_queue)
    grace = math.ceil(service.config.time_limit + OVERRUN_GRACE + SHUTDOWN_MARGIN)
    config = uvicorn.Config(
        build_app(service, announce, held, admission),
        lifespan="on",
        log_level="warning",
        access_log=False,
        http=protocol_class(service, held),
        # upgrades are refused by the protocol; Uvicorn must not hand one to a
        # websocket protocol of its own (``websockets`` comes with some SDKs)
        ws="none",
        loop="asyncio",
        timeout_graceful_shutdown=grace,
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.should_exit:
                # a second signal: leave now, unanswered calls and all
                os._exit(EXIT_INTERRUPTED if sig == signal.SIGINT else 0)
            service.draining = True
            # calls waiting for their turn are told at once; those admitted are answered,
            # and a reply still unread when the grace ends is cut then
            with contextlib.suppress(RuntimeError):  # no loop yet: nothing waits
                loop = asyncio.get_running_loop()
                loop.call_soon_threadsafe(admission.close)
                loop.call_soon_threadsafe(held.shutting_down, grace - _LAST_WRITE_MARGIN)
            super().handle_exit(sig, frame)

    server = Server(config)

    def terminated(sig: int, frame: Any) -> None:
        # Before Uvicorn handles signals, a SIGTERM stops it as soon as it has started;
        # after a graceful shutdown Uvicorn raises the signal again with the handler it
        # found, this one, so that the process exits 0 rather than by the signal.
        service.draining = True
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
        listening.listen(1024)
    except BaseException:
        listening.close()
        raise
    return listening
