"""``assembler serve`` on standard input and output: one JSON message per line.

Input: lines of JSON on stdin (``messages``: a request, or a session's delta with its
key), the ``ServerConfig``.
Output: one reply per line on stdout, in the order of the lines, each a JSON object
with ``exit`` and ``result`` or ``error`` (and the message's ``id``); the process's
exit code: 0 after end of input or SIGTERM, 130 after SIGINT.

Messages are answered concurrently (up to ``max_pending`` read ahead, and no more
than ``max_body_memory`` bytes of lines held; calls on one session one after the
other, in the order of their lines) but replied to in order. Every line gets its
reply, a blank one too; a line that is not JSON, is too long (``max_request_bytes``),
too deeply nested or not a valid message gets its error line, and the next line is
read as usual: no input ends the server but the end of input or a signal. On
SIGTERM (or SIGINT) no further line is read, every message in flight is answered and
its reply written (lines read ahead but not started are answered ``server-busy``, the
server shutting down: a signal never waits for a slot), and the process exits; if
stdout is not being read, the replies are given up once the time limit, the overrun
grace and a margin have passed (said on stderr). A second signal exits at once.

stdin is read by a thread of its own and stdout written by another (either may be a
pipe, a file or a terminal), each reply whole: a write that returns short, because a
signal came or the pipe is full, is continued where it stopped. The event loop never
blocks on either, so signals are handled whatever the client does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..exits import EXIT_INTERRUPTED
from ..model.errors import InvalidRequest, RequestTooLarge
from .errors import ServerBusy
from .memory import BodyMemory
from .messages import call_from_message
from .service import OVERRUN_GRACE, SHUTDOWN_MARGIN, Reply, Service, error
from .text import load_utf8_json

__all__ = ["serve_stdio"]

_CHUNK = 1 << 16
_SIGNALS = {signal.SIGTERM, signal.SIGINT}
# of the shutdown's grace, what closing the service and the process takes
_EXIT_RESERVE = 0.5


def serve_stdio(service: Service) -> int:
    return asyncio.run(_serve(service))


@dataclass(frozen=True, slots=True)
class _Line:
    """A line as read: its bytes (or the error of an over-long line) and the bytes of
    ``max_body_memory`` it holds until its reply is written."""

    data: bytes | RequestTooLarge
    held: int = 0


class _Stopped(Exception):
    """The server took its last line: the reader ends."""


def _helper_thread(target: Callable[[], None], name: str) -> None:
    def run() -> None:
        # the process's signals go to the event loop's thread, never to a thread
        # blocked in a read or a write
        signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        target()

    threading.Thread(target=run, name=name, daemon=True).start()


class _Lines:
    """stdin as lines, read on a thread of its own, handed over through a bounded
    queue (the reader waits while the server is behind, or while the lines held
    fill ``memory``). A line over ``limit`` bytes is not kept: its place holds an
    error, and reading goes on after its newline."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, limit: int, ahead: int, memory: BodyMemory
    ) -> None:
        self.queue: asyncio.Queue[_Line | None] = asyncio.Queue(ahead)
        self._loop = loop
        self._limit = limit
        self._memory = memory
        # set once the server stops taking lines: the reader reads no more
        self._stopped = threading.Event()
        _helper_thread(self._read, "stdin")

    def stop(self) -> list[_Line]:
        """Read no further; the lines read and not yet taken (on the event loop)."""
        self._stopped.set()
        left = []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if item is not None:
                left.append(item)
        return left

    def _put(self, item: _Line | None) -> None:
        if self._stopped.is_set():
            raise _Stopped
        asyncio.run_coroutine_threadsafe(self.queue.put(item), self._loop).result()

    def _read(self) -> None:
        buffer = bytearray()
        skipping: int | None = None  # bytes of an over-long line, while it is skipped
        try:
            while chunk := os.read(0, _CHUNK):
                start = 0
                while (end := chunk.find(b"\n", start)) >= 0:
                    if skipping is None:
                        piece = chunk[start:end]
                        if len(buffer) + len(piece) > self._limit:
                            self._memory.give(len(buffer))
                            self._put(_Line(_too_long(len(buffer) + len(piece), self._limit)))
                        else:
                            self._keep(buffer, piece)
                            self._put(self._line(buffer))
                    else:
                        self._put(_Line(_too_long(skipping + end - start, self._limit)))
                        skipping = None
                    buffer = bytearray()
                    start = end + 1
                rest = chunk[start:]
                if skipping is not None:
                    skipping += len(rest)
                elif len(buffer) + len(rest) > self._limit:
                    skipping = len(buffer) + len(rest)
                    self._memory.give(len(buffer))
                    buffer = bytearray()
                else:
                    self._keep(buffer, rest)
            if skipping is not None:
                self._put(_Line(_too_long(skipping, self._limit)))
            elif buffer:
                self._put(self._line(buffer))
        except _Stopped:
            return
        except Exception:
            # stdin closed under us, or the loop gone (a put cancelled at shutdown): the
            # end of input either way
            pass
        with contextlib.suppress(Exception):
            self._put(None)

    def _keep(self, buffer: bytearray, piece: bytes) -> None:
        self._memory.take(len(piece))
        buffer += piece

    def _line(self, buffer: bytearray) -> _Line:
        return _Line(bytes(buffer), len(buffer))


class _Output:
    """stdout, written by a thread of its own: each reply whole, in the order given.

    ``write`` hands a reply over and returns; ``written`` is called (on the event
    loop) once its bytes are out, or dropped because the client stopped reading,
    which ``on_closed`` hears of once."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_closed: Callable[[], None]) -> None:
        self._loop = loop
        self._on_closed = on_closed
        self._items: list[tuple[bytes, Callable[[], None]] | None] = []
        self._ready = threading.Condition()
        self.closed = False
        self.finished = asyncio.Event()
        self.pending = 0
        _helper_thread(self._run, "stdout")

    def write(self, data: bytes, written: Callable[[], None]) -> None:
        self.pending += 1
        with self._ready:
            self._items.append((data, written))
            self._ready.notify()

    def finish(self) -> None:
        with self._ready:
            self._items.append(None)
            self._ready.notify()

    def _next(self) -> tuple[bytes, Callable[[], None]] | None:
        with self._ready:
            while not self._items:
                self._ready.wait()
            return self._items.pop(0)

    def _run(self) -> None:
        fd = sys.stdout.fileno()
        while (item := self._next()) is not None:
            data, written = item
            if not self.closed:
                try:
                    _write_all(fd, data)
                    _write_all(fd, b"\n")
                except OSError:
                    # the client stopped reading (a broken pipe, a closed terminal):
                    # what is in flight is answered, nothing more is read
                    self.closed = True
                    with contextlib.suppress(OSError):
                        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
                    self._call(self._on_closed)
            self._call(self._done(written))
        self._call(self.finished.set)

    def _done(self, written: Callable[[], None]) -> Callable[[], None]:
        def done() -> None:
            self.pending -= 1
            written()

        return done

    def _call(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop already closed
            self._loop.call_soon_threadsafe(callback)


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data``: a short write (a signal, a full pipe) goes on
    where it stopped, and a non-blocking descriptor is waited for."""
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


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
    config = service.config
    stopping = asyncio.Event()
    caught: list[int] = []
    signalled = asyncio.Event()

    def stop(sig: int) -> None:
        caught.append(sig)
        if len(caught) > 1:
            # a second signal: leave now, unanswered messages and all
            os._exit(EXIT_INTERRUPTED if sig == signal.SIGINT else 0)
        signalled.set()
        stopping.set()

    for sig in _SIGNALS:
        loop.add_signal_handler(sig, stop, sig)
    memory = service.bodies
    lines = _Lines(loop, config.limits.max_request_bytes, config.max_pending, memory)
    output = _Output(loop, stopping.set)
    # a slot is given back once a reply is written
    replies = _Replies()
    slots = asyncio.Semaphore(config.max_pending)
    writer = asyncio.create_task(_write(replies, slots, output, memory))
    sweeper = asyncio.create_task(service.sweep_forever())
    try:
        while (line := await _next(lines, stopping)) is not None:
            if not await _slot(slots, stopping):
                # a signal while every slot is held (stdout unread): this line and those
                # read ahead are told the server stopped, not left waiting for a slot
                _refuse(replies, [line], service)
                break
            task = asyncio.create_task(_answer(service, line.data, time.monotonic()))
            replies.due(_Pending(task, line.held, True))
        if stopping.is_set():
            _refuse(replies, lines.stop(), service)
        service.draining = True
        replies.queue.put_nowait(None)
        await _drain(writer, output, signalled, service, replies)
    finally:
        sweeper.cancel()
        await loop.run_in_executor(None, service.close)
    return EXIT_INTERRUPTED if caught and caught[0] == signal.SIGINT else 0


@dataclass(frozen=True, slots=True)
class _Pending:
    """A line's reply to come, the bytes its line holds, and whether it holds a slot."""

    task: asyncio.Task[Reply]
    held: int
    slot: bool


class _Replies:
    """The replies due, in the order of the lines, and how many are not yet written
    (what a shutdown that gives up on stdout says it lost)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[_Pending | None] = asyncio.Queue()
        self.unwritten = 0

    def due(self, pending: _Pending) -> None:
        self.unwritten += 1
        self.queue.put_nowait(pending)


async def _slot(slots: asyncio.Semaphore, stopping: asyncio.Event) -> bool:
    """Take a slot for the next line, or False once the server is stopping (the wait
    for a slot never outlasts a signal)."""
    if stopping.is_set():
        return False
    if not slots.locked():
        await slots.acquire()  # at once
        return True
    take = asyncio.ensure_future(slots.acquire())
    stop = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({take, stop}, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if not take.done():
        take.cancel()
        return False
    if stopping.is_set():
        slots.release()
        return False
    return True


def _refuse(replies: _Replies, lines: list[_Line], service: Service) -> None:
    """Reply to lines read but not started once the server stops: ``server-busy``."""
    for line in lines:
        task = asyncio.create_task(_stopped(service, line.data))
        replies.due(_Pending(task, line.held, False))


async def _stopped(service: Service, line: bytes | RequestTooLarge) -> Reply:
    busy = ServerBusy(
        "the server is shutting down (a signal): this line was read but not answered;"
        " send it again to a server that is running"
    )
    id_ = None
    if isinstance(line, bytes) and line.strip():
        # decoded off the loop, only for the id to echo: a second signal is still heard
        id_ = await asyncio.get_running_loop().run_in_executor(
            None, _id_of, line, service.config.limits
        )
    return service.count(error(busy, id_))


def _id_of(line: bytes, limits: Any) -> Any:
    try:
        message = load_utf8_json(line, limits)
    except Exception:
        return None
    return message.get("id") if isinstance(message, dict) else None


async def _drain(
    writer: asyncio.Task[None],
    output: _Output,
    signalled: asyncio.Event,
    service: Service,
    replies: _Replies,
) -> None:
    """Wait for every reply to be written: after the end of input for as long as it
    takes, after a signal no longer than a call can take and a margin."""
    done = asyncio.ensure_future(_written(writer, output))
    if not signalled.is_set():
        await asyncio.wait({done, asyncio.ensure_future(signalled.wait())},
                           return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if done.done():
            return
    grace = service.config.time_limit + OVERRUN_GRACE + SHUTDOWN_MARGIN
    try:
        # what is left of the grace once the replies are given up is for the exit itself
        await asyncio.wait_for(asyncio.shield(done), grace - _EXIT_RESERVE)
    except TimeoutError:
        left = replies.unwritten
        print(
            f"assembler serve: {left} replies not written: stdout was not read within"
            f" {grace:g} s of the signal",
            file=sys.stderr,
            flush=True,
        )


async def _written(writer: asyncio.Task[None], output: _Output) -> None:
    await writer
    output.finish()
    await output.finished.wait()


async def _next(lines: _Lines, stopping: asyncio.Event) -> _Line | None:
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
        return service.count(error(line))
    if not line.strip():
        blank = InvalidRequest(
            "$", "an empty line: each line is one JSON message (docs: guides/sessions)"
        )
        return service.count(error(blank))
    limits = service.config.limits
    message: Any = None
    try:
        message = load_utf8_json(line, limits)
        call = call_from_message(message, limits, service.config.time_limit, arrived)
    except Exception as exc:
        id_ = message.get("id") if isinstance(message, dict) else None
        return service.count(error(exc, id_))
    return await service.handle(call)


async def _write(
    replies: _Replies,
    slots: asyncio.Semaphore,
    output: _Output,
    memory: BodyMemory,
) -> None:
    while (item := await replies.queue.get()) is not None:
        reply = await item.task
        # the reply's bytes are held until the pipe took them (memory.py)
        memory.hold_reply(len(reply.body))

        def written(item: _Pending = item, size: int = len(reply.body)) -> None:
            replies.unwritten -= 1
            memory.drop_reply(size)
            memory.give(item.held)
            if item.slot:
                slots.release()

        output.write(reply.body, written)
