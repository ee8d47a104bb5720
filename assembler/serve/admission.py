"""Which HTTP call is taken next: a bounded queue, served client by client in turn.

Input: a call whose body has arrived, its client (the peer's address), and how long
it may wait for its turn (what is left of its time limit); the end of each admitted
call.
Output: the call's turn (one of ``max_pending`` places: it is then answered), or
``ServerBusy`` with ``retry_after``, the seconds after which a place is
expected to be free for it.

Calls wait, whole (a body that never ends never joins: it takes no place), in one
queue per client; a place that frees goes to the first waiting call of the next client in the
rotation, so that a client with many calls (many connections) gets one turn per round
like a client with one, and a client that just came is served within one round. At
most ``max_queue`` calls wait: beyond, a call of a client with fewer calls waiting than
the client with the most takes the place of that client's newest call, which is told
to retry; any other is refused at once. A call waits no longer than its ``wait``
(what is left of its time limit), then is told to retry; at a shutdown every call waiting is told
so at once (``close``). The seconds to retry after are estimated
from the rate at which places were given back lately.

Everything here runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import OrderedDict, deque

from .errors import ServerBusy

__all__ = ["Admission"]

# how much each place given back moves the estimate of the time between two
_SMOOTHING = 0.1
# the estimate of the time between two places given back, before any was
_FIRST_INTERVAL = 0.05
# a retry is never advised sooner or later than these
_SOONEST = 0.05
_LATEST = 60.0


class Admission:
    def __init__(self, max_pending: int, max_queue: int) -> None:
        self.max_pending = max_pending
        self.max_queue = max_queue
        # calls holding a place (their body being read, or answered)
        self.admitted = 0
        # calls waiting, by client, clients in the order of the rotation
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self.queued = 0
        self._interval = _FIRST_INTERVAL
        self._last_done: float | None = None
        # set once the server stops taking calls
        self._closed = False

    async def turn(self, client: str, wait: float) -> None:
        """Wait for a place (at once when one is free and nobody waits); ``ServerBusy``
        when the queue has no room, or after ``wait`` seconds."""
        if self._closed:
            raise _shutting_down()
        if self.admitted < self.max_pending and not self.queued:
            self.admitted += 1
            return
        if self.queued >= self.max_queue and not self._make_room(client):
            raise self._busy(f"{self.queued} calls wait for their turn (--max-queue)")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(client, deque()).append(future)
        self.queued += 1
        try:
            async with asyncio.timeout(wait):
                # shielded: a timeout leaves the future to _hand_over or _forget
                await asyncio.shield(future)
        except TimeoutError:
            if _granted(future):
                return  # the place came as the wait ended
            self._forget(client, future)
            raise self._busy(
                f"no turn came within {wait:g} s: {self.queued} calls wait"
                f" and {self.admitted} are answered (--max-pending)"
            ) from None
        except BaseException:
            # pushed out by _make_room (the future's ServerBusy), or the call cancelled
            if _granted(future):
                self.admitted -= 1
                self._hand_over()
            else:
                self._forget(client, future)
            raise

    def done(self) -> None:
        """An admitted call was answered: its place goes to the next client in turn."""
        now = time.monotonic()
        if self._last_done is not None:
            self._interval += _SMOOTHING * (now - self._last_done - self._interval)
        self._last_done = now
        self.admitted -= 1
        self._hand_over()

    def close(self) -> None:
        """The server is shutting down: every call waiting is told so at once, and so is
        every call that comes after; the admitted ones are answered as usual."""
        self._closed = True
        waiting, self._waiting = self._waiting, OrderedDict()
        self.queued = 0
        for calls in waiting.values():
            for future in calls:
                if not future.done():
                    future.set_exception(_shutting_down())

    def retry_after(self, position: int | None = None) -> float:
        """Seconds until a call that joins the queue now is expected to have a place."""
        ahead = self.queued if position is None else position
        return min(_LATEST, max(_SOONEST, (ahead + 1) * self._interval))

    def _hand_over(self) -> None:
        while self.admitted < self.max_pending and self._waiting:
            client, calls = next(iter(self._waiting.items()))
            future = calls.popleft()
            self.queued -= 1
            if calls:
                self._waiting.move_to_end(client)
            else:
                del self._waiting[client]
            if not future.done():
                self.admitted += 1
                future.set_result(None)

    def _forget(self, client: str, future: asyncio.Future[None]) -> None:
        if future.done() and not future.cancelled():
            future.exception()  # retrieved: nobody else will
        calls = self._waiting.get(client)
        if calls is None or future not in calls:
            return
        calls.remove(future)
        self.queued -= 1
        if not calls:
            del self._waiting[client]

    def _make_room(self, client: str) -> bool:
        """Push out the newest call of the client with the most calls waiting, if it
        has more than ``client``; whether there is room now."""
        mine = len(self._waiting.get(client, ()))
        greedy = max(self._waiting, key=lambda other: len(self._waiting[other]))
        calls = self._waiting[greedy]
        if len(calls) <= mine + 1:
            return False
        future = calls.pop()
        self.queued -= 1
        with contextlib.suppress(asyncio.InvalidStateError):
            future.set_exception(
                self._busy(
                    f"{self.queued + 1} calls wait (--max-queue) and this client has the"
                    f" most of them ({len(calls) + 1}): one made room for another client's"
                )
            )
        return True

    def _busy(self, why: str) -> ServerBusy:
        after = self.retry_after()
        return ServerBusy(f"{why}; retry after {math.ceil(after * 10) / 10:g} s", after)


def _shutting_down() -> ServerBusy:
    return ServerBusy(
        "the server is shutting down (a signal): this call had not had its turn; send it"
        " again to a server that is running"
    )


def _granted(future: asyncio.Future[None]) -> bool:
    return future.done() and not future.cancelled() and future.exception() is None
