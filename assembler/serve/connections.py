"""The HTTP server's connections: counted, capped per client and in all, idle ones
given up first, and every deadline of reading and writing a call.

Input: connections as Uvicorn's h11 protocol makes them (a client is the peer's
address), the ``ServerConfig``.
Output: ``Connections``, the figures ``/healthz`` reports and the protocol of a
request's connection (``of``: the application cuts a client that does not read its
reply); ``protocol_class``, Uvicorn's protocol with the deadlines and the caps.

What a connection may hold:

* its headers must all arrive within ``header_timeout`` of the connection or of the
  end of the previous reply on it (else ``read-timeout``, 408, and it is closed; one
  that sent nothing is closed silently);
* at most ``max_connections`` are open, at most ``max_client_connections`` of one
  client. A connection beyond either takes the place of the connection idle the
  longest (of that client, or of any): one with no call under way, which loses nothing
  but a socket its client would open again. Only when none is idle is it refused
  (``server-busy``, 503, with ``Retry-After``, and closed), so that sockets held idle,
  however many, never lock the other clients out;
* what is not HTTP/1.1 (a malformed request line or header, headers past h11's 16 KiB)
  is answered ``invalid-request`` (400) like every reply, with ``X-Assembler-Exit``.

Everything here runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..model.errors import InvalidRequest
from .errors import ReadTimeout, ServerBusy, WriteTimeout
from .service import Service, error

__all__ = ["Connections", "protocol_class"]

_NOT_HTTP = (
    "not a valid HTTP/1.1 request (a malformed request line or header, or headers larger"
    " than 16 KiB); the connection is closed"
)
_PHRASES = {400: "Bad Request", 408: "Request Timeout", 503: "Service Unavailable"}
# a refused connection is told to retry after this long: an idle place frees as soon as
# any client's call is answered
_RETRY_CONNECTION = 1.0


@dataclass(slots=True)
class Connections:
    """What the transport holds, for the limits and ``/healthz``."""

    max_connections: int
    max_client_connections: int
    open: int = 0
    reading: int = 0
    # idle connections given up for a new one, and connections refused
    evicted: int = 0
    refused: int = 0
    by_client: dict[str, int] = field(default_factory=dict)
    # idle connections, the longest idle first: all of them, and by client
    idle: OrderedDict[Any, None] = field(default_factory=OrderedDict)
    idle_by_client: dict[str, OrderedDict[Any, None]] = field(default_factory=dict)
    # a request's connection by its peer (the ASGI scope's "client")
    peers: dict[Any, Any] = field(default_factory=dict)

    def of(self, peer: Any) -> Any:
        return self.peers.get(None if peer is None else tuple(peer))

    def next_cut(self) -> float | None:
        """Seconds until the first reply still being written meets its write deadline
        (its bytes are then given back), if any is being written."""
        due = [c.write_due for c in self.peers.values() if c.write_due is not None]
        return None if not due else max(0.0, min(due) - asyncio.get_running_loop().time())

    def figures(self) -> dict[str, Any]:
        return {
            "connections": self.open,
            "max_connections": self.max_connections,
            "clients": len(self.by_client),
            "max_client_connections": self.max_client_connections,
            "connections_evicted": self.evicted,
            "connections_refused": self.refused,
            "reading": self.reading,
        }


def protocol_class(service: Service, held: Connections) -> type:
    """Uvicorn's h11 protocol, counting connections, capping them, and cutting a call
    whose headers have not all arrived within ``header_timeout``."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    seconds = service.config.header_timeout

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _write_timer: asyncio.TimerHandle | None = None
        _partial = False
        _counted = False
        who = ""
        # when the reply being written meets its write deadline (the loop's clock)
        write_due: float | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.who = str(self.client[0]) if self.client else ""
            held.open += 1
            held.by_client[self.who] = held.by_client.get(self.who, 0) + 1
            self._counted = True
            held.peers[self.client] = self
            if self._placed():
                self._idle(True)
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._uncount()
            self._disarm()
            self._unwrite()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._idle(False)
            if self.conn.their_state is h11.IDLE:
                self._partial = True
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def on_response_complete(self) -> None:
            self._unwrite()
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._partial = False
                self._idle(True)
                self._arm()

        def write_deadline(self, limit: float) -> None:
            """The reply now being written must be taken within ``limit`` seconds, or
            the connection is cut (its bytes are then given back)."""
            self._unwrite()
            self._write_timer = self.loop.call_later(limit, self._write_expired, limit)
            self.write_due = self.loop.time() + limit

        def _write_expired(self, limit: float) -> None:
            self._write_timer = None
            self.write_due = None
            service.count(error(WriteTimeout(limit)))
            self.transport.abort()

        def _unwrite(self) -> None:
            self.write_due = None
            if self._write_timer is not None:
                self._write_timer.cancel()
                self._write_timer = None

        # -- the caps -------------------------------------------------------------

        def _placed(self) -> bool:
            """Room for this connection, an idle one given up for it if need be;
            False once it was refused."""
            mine = held.by_client[self.who] > held.max_client_connections
            if not mine and held.open <= held.max_connections:
                return True
            idle = held.idle_by_client.get(self.who) if mine else held.idle
            victim = next(iter(idle), None) if idle else None
            if victim is not None:
                held.evicted += 1
                victim._uncount()
                victim.transport.close()
                return True
            held.refused += 1
            which = (
                f"this client has {held.by_client[self.who] - 1} connections open"
                f" (--max-client-connections {held.max_client_connections})"
                if mine
                else f"{held.open - 1} connections are open (--max-connections"
                f" {held.max_connections})"
            )
            busy = ServerBusy(f"{which}, none of them idle; try again", _RETRY_CONNECTION)
            self._last_words(busy)
            self._uncount()
            self.transport.close()
            return False

        def _idle(self, idle: bool) -> None:
            mine = held.idle_by_client.setdefault(self.who, OrderedDict())
            if idle and self._counted:
                held.idle[self] = None
                mine[self] = None
                return
            held.idle.pop(self, None)
            mine.pop(self, None)
            if not mine:
                del held.idle_by_client[self.who]

        def _uncount(self) -> None:
            if not self._counted:
                return
            self._counted = False
            self._idle(False)
            held.open -= 1
            held.by_client[self.who] -= 1
            if not held.by_client[self.who]:
                del held.by_client[self.who]
            held.peers.pop(self.client, None)

        # -- the header deadline --------------------------------------------------

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(seconds, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            if self._partial:
                self._last_words(ReadTimeout("header_timeout", seconds, None))
            self.transport.close()

        def send_400_response(self, msg: str) -> None:
            # Uvicorn's own reply to what is not HTTP (a malformed request line, headers
            # past h11's 16 KiB), as every reply: JSON with its exit header, counted
            self._last_words(InvalidRequest("$", _NOT_HTTP))
            self.transport.close()

        def _last_words(self, exc: Exception) -> None:
            """Write ``exc``'s reply on a connection about to be closed, outside h11
            (whose state may be an error by now)."""
            reply = service.count(error(exc))
            retry = getattr(exc, "retry_after", None)
            head = (
                f"HTTP/1.1 {reply.http} {_PHRASES.get(reply.http, 'Error')}\r\n"
                "content-type: application/json\r\n"
                f"content-length: {len(reply.body)}\r\n"
                f"x-assembler-exit: {reply.exit}\r\n"
                + ("" if retry is None else f"retry-after: {retry_after_header(retry)}\r\n")
                + "connection: close\r\n\r\n"
            )
            self.transport.write(head.encode("ascii") + reply.body)

    return Protocol


def retry_after_header(seconds: float) -> str:
    """``Retry-After`` in whole seconds (HTTP has no fractions), never 0."""
    return str(max(1, int(-(-seconds // 1))))
