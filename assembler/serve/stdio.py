"""``assembler serve`` on standard input and output: one JSON message per line.

Input: lines of JSON on stdin (``messages``: a request, or a session's delta with its
key), the ``Settings``.
Output: one reply per line on stdout, in the order of the messages, each a JSON
object with ``exit`` and ``result`` or ``error`` (and the message's ``id``); the
process's exit code: 0 after end of input or SIGTERM, 130 after SIGINT.

Messages are answered concurrently (up to ``max_pending`` read ahead; calls on one session
one after the other, in the order of their lines) but replied to in order. A line
that is not JSON, is too long (``max_request_bytes``), too deeply nested or not a
valid message gets its error line, and the next line is read as usual: no input
ends the server but the end of input or a signal. On SIGTERM (or SIGINT) no further
line is read, every message already read is answered, and the process exits.

stdin is read by a thread of its own (it may be a pipe, a file or a terminal); the
event loop never blocks on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
import time
from typing import Any

from ..exits import EXIT_INTERRUPTED
from ..model.errors import RequestTooLarge
from ..model.jsontext import load_json
from .messages import call_from_message
from .service import Reply, Service, error

__all__ = ["serve_stdio"]

_CHUNK = 1 << 16


def serve_stdio(service: Service) -> int:
    return asyncio.run(_serve(service))


class _Lines:
    """stdin as lines, read on a thread of its own, handed over through a bounded
    queue (the reader waits while the server is behind). A line over ``limit`` bytes
    is not kept: its place holds an error, and reading goes on after its newline."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int, ahead: int) -> None:
        self.queue: asyncio.Queue[bytes | RequestTooLarge | None] = asyncio.Queue(ahead)
        self._loop = loop
        self._limit = limit
        threading.Thread(target=self._read, name="stdin", daemon=True).start()

    def _put(self, item: bytes | RequestTooLarge | None) -> None:
        asyncio.run_coroutine_threadsafe(self.queue.put(item), self._loop).result()

    def _read(self) -> None:
        buffer = bytearray()
        skipping: int | None = None  # bytes of an over-long line, while it is skipped
        try:
            while chunk := os.read(0, _CHUNK):
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if skipping is None:
                        buffer += chunk[start:end]
                        self._put(self._line(buffer))
                    else:
                        self._put(_too_long(skipping + end - start, self._limit))
                        skipping = None
                    buffer = bytearray()
                    start = end + 1
                rest = chunk[start:]
                if skipping is not None:
                    skipping += len(rest)
                elif len(buffer) + len(rest) > self._limit:
                    skipping = len(buffer) + len(rest)
                    buffer = bytearray()
                else:
                    buffer += rest
            if skipping is not None:
                self._put(_too_long(skipping, self._limit))
            elif buffer.strip():
                self._put(self._line(buffer))
        except Exception:
            # stdin closed under us, or the loop gone (a put cancelled at shutdown): the
            # end of input either way
            pass
        with contextlib.suppress(Exception):
            self._put(None)

    def _line(self, buffer: bytearray) -> bytes | RequestTooLarge:
        if len(buffer) > self._limit:
            return _too_long(len(buffer), self._limit)
        return bytes(buffer)


def _too_long(size: int, limit: int) -> RequestTooLarge:
    return RequestTooLarge(
        "$",
        f"a line of {size} bytes",
        limit="max_request_bytes",
        maximum=limit,
        actual=size,
    )


async def _serve(service: Service) -> int:
    loop = asyncio.get_running_loop()
    settings = service.settings
    stopping = asyncio.Event()
    caught: list[int] = []

    def stop(sig: int) -> None:
        caught.append(sig)
        if len(caught) > 1:
            # a second signal: leave now, unanswered messages and all
            os._exit(EXIT_INTERRUPTED if sig == signal.SIGINT else 0)
        stopping.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop, sig)
    lines = _Lines(loop, settings.limits.max_request_bytes, settings.max_pending)
    # replies in the order of the lines; a slot is given back once a reply is written
    replies: asyncio.Queue[asyncio.Task[Reply] | None] = asyncio.Queue()
    slots = asyncio.Semaphore(settings.max_pending)
    writer = asyncio.create_task(_write(replies, slots, stopping))
    sweeper = asyncio.create_task(service.sweep_forever())
    try:
        while (line := await _next(lines, stopping)) is not None:
            if isinstance(line, bytes) and not line.strip():
                continue
            await slots.acquire()
            replies.put_nowait(asyncio.create_task(_answer(service, line, time.monotonic())))
        replies.put_nowait(None)
        await writer
    finally:
        sweeper.cancel()
        await loop.run_in_executor(None, service.close)
    return EXIT_INTERRUPTED if caught and caught[0] == signal.SIGINT else 0


async def _next(lines: _Lines, stopping: asyncio.Event) -> bytes | RequestTooLarge | None:
    if stopping.is_set():
        return None
    get = asyncio.ensure_future(lines.queue.get())
    stop = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({get, stop}, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if get.done():
        return get.result()
    get.cancel()
    return None


async def _answer(service: Service, line: bytes | RequestTooLarge, arrived: float) -> Reply:
    if isinstance(line, RequestTooLarge):
        return error(line)
    limits = service.settings.limits
    message: Any = None
    try:
        message = load_json(line, limits)
        call = call_from_message(message, limits, service.settings.time_limit)
    except Exception as exc:
        id_ = message.get("id") if isinstance(message, dict) else None
        return error(exc, id_)
    return await service.handle(call, arrived)


async def _write(
    replies: asyncio.Queue[asyncio.Task[Reply] | None],
    slots: asyncio.Semaphore,
    stopping: asyncio.Event,
) -> None:
    out = sys.stdout.buffer
    closed = False
    while (task := await replies.get()) is not None:
        reply = await task
        slots.release()
        if closed:
            continue
        try:
            out.write(reply.body + b"\n")
            out.flush()
        except (BrokenPipeError, ValueError):
            # the client stopped reading: finish what is in flight, read nothing more
            closed = True
            stopping.set()
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
