"""The HTTP server's connections: counted, capped per client and in all, and every
deadline of reading and writing a call.

Input: connections as Uvicorn's h11 protocol makes them (a client is the peer's
address), the ``ServerConfig``.
Output: ``Connections``, the figures ``/healthz`` reports, a request's connection
(``of``: the application reads a body through it, and cuts a client that does not read
its reply); ``protocol_class``, Uvicorn's protocol with the deadlines and the caps.

What a connection may hold:

* its headers must all arrive within ``header_timeout`` of the connection or of the
  end of the previous reply on it (else ``read-timeout``, 408, and it is closed; one
  that sent nothing is closed silently);
* at most ``max_connections`` are open, at most ``max_client_connections`` of one
  client. A connection beyond its client's cap is *parked*: held unread and uncounted
  until the header deadline, then told ``server-busy`` and closed (at most
  ``max_connections`` parked; beyond, it is placed as below), so that a client that
  reopens whatever is closed cannot make the server accept and close sockets without
  end (measured: the honest clients' p99 3-6x with that churn, within 2x without). A
  connection beyond ``max_connections`` takes the place of another of the client that
  holds the most: its longest idle one (no call under way: it loses nothing but a
  socket its client would open again), else its oldest *unfinished* one (a request
  begun whose headers or body have not all come), which is told ``server-busy`` and
  closed. Only when no client has such a connection to give
  (every one holds a whole call, being answered or its reply written) is the new one
  refused (``server-busy``, 503, with ``Retry-After``), so that sockets held idle or
  half-sent, however many and from however many addresses, never lock the other
  clients out, nor close their idle connections. The bodies being read are
  bounded the same way by ``--max-body-memory`` (``http.py``: ``_make_room``), a body
  cut only for a client with fewer bodies being read;
* a protocol the server does not serve (a websocket upgrade) is refused at once with
  ``invalid-request`` (400) and closed; what is not HTTP/1.1 (a malformed request line
  or header, headers past h11's 16 KiB) is answered the same way;
* an idle connection is closed ``header_timeout`` after its last reply (Uvicorn's own
  keep-alive timer is not used); at a shutdown, a reply still unread when the grace
  ends is cut then, before Uvicorn would cancel its writer.

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

__all__ = ["Connections", "protocol_class", "retry_after_header"]

_NOT_HTTP = (
    "not a valid HTTP/1.1 request (a malformed request line or header, or headers larger"
    " than 16 KiB); the connection is closed"
)
_NO_UPGRADE = (
    "a websocket upgrade: this server answers HTTP/1.1 calls only (models/session.md);"
    " the connection is closed"
)
_PHRASES = {400: "Bad Request", 408: "Request Timeout", 503: "Service Unavailable"}
# a refused connection is told to retry after this long: a place frees as soon as any
# client's call is answered
_RETRY_CONNECTION = 1.0


@dataclass(slots=True)
class Connections:
    """What the transport holds, for the limits and ``/healthz``."""

    max_connections: int
    max_client_connections: int
    open: int = 0
    # bodies being read by the application
    reading: int = 0
    # idle connections given up for a new one, unfinished ones cut, connections refused
    evicted: int = 0
    cut: int = 0
    refused: int = 0
    # connections beyond their client's cap, held unread until their header deadline
    parked: int = 0
    by_client: dict[str, int] = field(default_factory=dict)
    # idle connections, the longest idle first: all of them, and by client
    idle: OrderedDict[Any, None] = field(default_factory=OrderedDict)
    idle_by_client: dict[str, OrderedDict[Any, None]] = field(default_factory=dict)
    # unfinished connections (a request begun, not whole), the oldest first, by client
    unfinished: dict[str, OrderedDict[Any, None]] = field(default_factory=dict)
    # a request's connection by its peer (the ASGI scope's "client")
    peers: dict[Any, Any] = field(default_factory=dict)
    # set at a shutdown: when (the loop's clock) every reply still unread is cut
    last_write: float | None = None

    def of(self, peer: Any) -> Any:
        return self.peers.get(None if peer is None else tuple(peer))

    def next_cut(self) -> float | None:
        """Seconds until the first reply still being written meets its write deadline
        (its bytes are then given back), if any is being written."""
        due = [c.write_due for c in self.peers.values() if c.write_due is not None]
        return None if not due else max(0.0, min(due) - asyncio.get_running_loop().time())

    def victim(self, client: str | None) -> tuple[Any, bool] | None:
        """The connection to close for a new one, and whether it is idle: one of
        ``client`` (at its own cap) or, for the total cap, of the client with the most
        connections that has one to give: its longest idle, else its oldest unfinished
        (a client with only whole calls gives none). None: no connection to give."""
        whose = [client] if client is not None else sorted(
            self.by_client, key=lambda who: self.by_client[who], reverse=True
        )  # fmt: skip
        for who in whose:
            idle = self.idle_by_client.get(who)
            if idle:
                return next(iter(idle)), True
            begun = self.unfinished.get(who)
            if begun:
                return next(iter(begun)), False
        return None

    def body_to_cut(self, connection: Any) -> Any:
        """The oldest body being read (bytes taken) of the client with the most such
        bodies, if it has more of them than ``connection``'s client (this one
        counted); else None: a client never loses a body to its own newer one."""
        bodies: dict[str, list[Any]] = {}
        for mine in self.unfinished.values():
            for other in mine:
                if other.body_bytes:
                    bodies.setdefault(other.who, []).append(other)
        if not bodies:
            return None
        most = max(bodies.values(), key=len)
        who = "" if connection is None else connection.who
        own = bodies.get(who, [])
        count = len(own) + (0 if connection in own else 1)
        return most[0] if len(most) > count else None

    def shutting_down(self, grace: float) -> None:
        """A shutdown began: a reply not taken within ``grace`` seconds is cut then."""
        loop = asyncio.get_running_loop()
        self.last_write = loop.time() + grace
        for connection in list(self.peers.values()):
            if connection.write_due is not None and connection.write_due > self.last_write:
                connection.write_deadline(grace)

    def figures(self) -> dict[str, Any]:
        return {
            "connections": self.open,
            "max_connections": self.max_connections,
            "clients": len(self.by_client),
            "max_client_connections": self.max_client_connections,
            "unfinished": sum(len(each) for each in self.unfinished.values()),
            "connections_evicted": self.evicted,
            "connections_cut": self.cut,
            "connections_refused": self.refused,
            "connections_parked": self.parked,
            "reading": self.reading,
        }


def protocol_class(service: Service, held: Connections) -> type:
    """Uvicorn's h11 protocol, counting connections, capping them, refusing upgrades,
    and cutting a call whose headers have not all arrived within ``header_timeout``."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    seconds = service.config.header_timeout

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _write_timer: asyncio.TimerHandle | None = None
        _partial = False
        _counted = False
        _parked = False
        who = ""
        # when the reply being written meets its write deadline (the loop's clock)
        write_due: float | None = None
        # a request begun and not whole (its headers or its body still coming): since
        unfinished = False
        began = 0.0
        # the bytes of its body read so far (http.py counts them)
        body_bytes = 0

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
            if self._parked:
                self._parked = False
                held.parked -= 1
            self._uncount()
            self._disarm()
            self._unwrite()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._idle(False)
            if self.conn.their_state is h11.IDLE:
                self._partial = True
                self._unfinished(True)
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE):
                self._unfinished(False)  # the whole request has come

        def on_response_complete(self) -> None:
            self._unwrite()
            super().on_response_complete()
            # the header deadline, not Uvicorn's keep-alive timer, closes an idle one
            self._unset_keepalive_if_required()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._partial = False
                self._idle(True)
                self._arm()

        def write_deadline(self, limit: float) -> None:
            """The reply now being written must be taken within ``limit`` seconds (and
            by the end of a shutdown's grace), or the connection is cut (its bytes are
            then given back)."""
            self._unwrite()
            if held.last_write is not None:
                limit = max(0.0, min(limit, held.last_write - self.loop.time()))
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

        # -- protocols not served -------------------------------------------------

        def _should_upgrade_to_ws(self) -> bool:
            return True  # every websocket upgrade comes to handle_websocket_upgrade

        def _unsupported_upgrade_warning(self) -> None:
            pass  # another upgrade (h2c) is ignored, as HTTP/1.1 allows: nothing to log

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._last_words(InvalidRequest("$", _NO_UPGRADE))
            self._uncount()
            self.transport.close()

        # -- the caps -------------------------------------------------------------

        def _placed(self) -> bool:
            """Room for this connection, an idle or unfinished one given up for it if
            need be; False once it was refused."""
            mine = held.by_client[self.who] > held.max_client_connections
            if not mine and held.open <= held.max_connections:
                return True
            if mine and held.parked < held.max_connections:
                self._park()
                return False
            found = held.victim(self.who if mine else None)
            if found is not None:
                victim, idle = found
                if idle:
                    held.evicted += 1
                    victim._uncount()
                    victim.transport.close()
                else:
                    held.cut += 1
                    victim.cut(mine)
                return True
            held.refused += 1
            which = (
                f"this client has {held.by_client[self.who] - 1} connections open"
                f" (--max-client-connections {held.max_client_connections})"
                if mine
                else f"{held.open - 1} connections are open (--max-connections"
                f" {held.max_connections})"
            )
            busy = ServerBusy(
                f"{which}, each with a whole call; try again", _RETRY_CONNECTION
            )
            self._last_words(busy)
            self._uncount()
            self.transport.close()
            return False

        def _park(self) -> None:
            """Hold this connection, beyond its client's cap, unread and uncounted until
            the header deadline, then tell it server-busy: a client reopening what it
            is refused at once would make the server accept and close sockets without
            end."""
            self._uncount()
            held.parked += 1
            self._parked = True
            self.transport.pause_reading()
            self._header_timer = self.loop.call_later(seconds, self._parked_out)

        def _parked_out(self) -> None:
            self._header_timer = None
            self._last_words(ServerBusy(
                f"this client has {held.by_client.get(self.who, 0)} connections open"
                f" (--max-client-connections {held.max_client_connections}); use those,"
                " or try again", _RETRY_CONNECTION,
            ))  # fmt: skip
            self.transport.close()

        def cut(self, own: bool) -> None:
            """Close this unfinished connection for another (a cap reached): its client
            is told ``server-busy``."""
            whose = (
                "this client reached --max-client-connections"
                if own
                else "the server's connections or body memory are full"
            )
            self._last_words(
                ServerBusy(
                    f"{whose} and this request, the oldest unfinished one of the client"
                    " with the most, was closed for a newer call; send it whole, sooner",
                    _RETRY_CONNECTION,
                )
            )
            self._uncount()
            self.transport.close()

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

        def _unfinished(self, unfinished: bool) -> None:
            if unfinished == self.unfinished or (unfinished and not self._counted):
                return
            self.unfinished = unfinished
            if unfinished:
                self.began = self.loop.time()
                held.unfinished.setdefault(self.who, OrderedDict())[self] = None
                return
            mine = held.unfinished.get(self.who)
            if mine is not None:
                mine.pop(self, None)
                if not mine:
                    del held.unfinished[self.who]

        def _uncount(self) -> None:
            if not self._counted:
                return
            self._unfinished(False)
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
