"""The stdio transport: newline-delimited JSON-RPC over the process's stdin and stdout.

The SDK's ``stdio_server`` wraps both pipes in anyio's thread-wrapped text
files: every line read, every write and every flush is a round trip to a
worker thread, and every answer passes a text layer that encodes it to UTF-8
once more (a ``werkbaum_read`` round trip from a raw pipe client: 3.1 ms with
it, 2.0 ms with this transport). Here one thread owns each pipe: the reader parses request
lines off the event loop and hands over messages; the event loop serialises an
answer straight to bytes and queues it for the writer, which blocks on the pipe
so the loop does not. As with the SDK, a line that is not a JSON-RPC message
never reaches the session: :mod:`werkbaum_stdio.framing` answers it with the
JSON-RPC error for it right here (the SDK would drop it, and the host would
wait forever), and the log gets a line. End of input ends the session — but
only once every request read so far is answered (or after ``DRAIN_SECONDS``):
the SDK cancels requests still running at end of input, so a host that pipes
its requests and closes stdin lost the answers, even of writes that happened.
An answer that cannot be encoded (nested deeper than pydantic's serialiser
goes) is replaced by a ``-32603`` error for its id: one bad answer costs that
request, never the writer or the process.

While serving, fd 0 reads the null device and fd 1 writes to stderr, so stray
output of handlers or child processes cannot corrupt the wire; both are
restored afterwards. Where the pipe can be widened (Linux), the answer pipe
takes a whole large answer in one write.
"""

from __future__ import annotations

import errno
import fcntl
import io
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import TypeAdapter

from werkbaum_core.engine.lifetime import before_stop
from werkbaum_stdio.framing import (
    ID_PREFIX_BYTES,
    MAX_LINE_BYTES,
    UNENCODABLE,
    Refusal,
    decode_line,
    error_line,
    refuse_long_line,
    too_deep,
)
from werkbaum_stdio.std_streams import write_waiting

PIPE_BYTES = 1 << 20
"""Capacity asked of the answer pipe (Linux caps it at ``/proc/sys/fs/pipe-max-size``,
1 MiB by default); the kernel default is 64 KiB."""
QUEUED = 16
"""Messages queued between a pipe's thread and the session, each way."""
DRAIN_SECONDS = 30.0
"""At end of input, how long requests still running may take to be answered."""

IN_FLIGHT = 32
"""Requests read and not yet answered beyond which no more are read (until one is
answered): each holds its answer until the host reads it, and a host that pipelines
hundreds of large reads without reading stdout grew the server by their answers
(986 MiB for 300 reads of a 1.3 MB plan; 251 MiB with this bound). Requests wait in the
pipe meanwhile, never refused."""
ROOM_POLL = 0.01
"""Seconds between looks for room while :data:`IN_FLIGHT` requests are unanswered."""
ASKING_SECONDS = 30.0
"""Seconds a request of the server's to the client counts as awaiting its answer."""

DUPLICATE_ID = (
    "invalid request: its id is taken by a request not yet answered (give each request its own id)"
)
"""The ``-32600`` answer to a request whose id another unanswered request carries."""

PUT_SLICE = 0.25
"""Seconds an answer waits for room in the writer's queue before the wait is taken up
again (a slice a cancellation can end)."""

_F_SETPIPE_SZ = 1031  # linux/fcntl.h; not exported by Python 3.11's fcntl
SKIP_CHUNK = 1 << 20
"""Read size while skipping the rest of an overlong line."""

log = logging.getLogger(__name__)


Incoming = SessionMessage | Exception


@asynccontextmanager
async def stdio_pipes() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Incoming], MemoryObjectSendStream[SessionMessage]]
]:
    """The session's read and write streams over this process's stdin and stdout."""
    wire_in, restore_in = _claim(0, os.open(os.devnull, os.O_RDONLY))
    try:
        wire_out, restore_out = _claim(1, os.dup(2))
    except BaseException:
        restore_in()
        raise
    _widen(wire_out)
    to_session, from_wire = anyio.create_memory_object_stream[Incoming](QUEUED)
    to_wire, from_session = anyio.create_memory_object_stream[SessionMessage](QUEUED)
    writer = _Writer(wire_out)
    pending = _Pending()
    token = anyio.lowlevel.current_token()

    def answered(seconds: float) -> None:
        # A stop signal waited for writes in flight: their answers go out first.
        deadline = time.monotonic() + seconds
        with suppress(RuntimeError):  # the loop is gone
            anyio.from_thread.run(pending.all_answered, seconds, token=token)
        writer.written(deadline - time.monotonic())

    forget = before_stop(answered)
    ending = _Ending()
    try:
        async with anyio.create_task_group() as tasks:
            threading.Thread(
                target=_read_lines,
                args=(wire_in, to_session, pending, token, writer, ending),
                daemon=True,
            ).start()
            tasks.start_soon(_send_answers, from_session, writer, pending)
            yield from_wire, to_wire
            await to_wire.aclose()
            # The answers still to write get what is left of the time since the end of
            # input: a host that closed stdin and does not read stdout must not keep the
            # process alive (it hung until the host went away).
            deadline = ending.deadline()
            tasks.cancel_scope.deadline = anyio.current_time() + deadline - time.monotonic()
        if not await anyio.to_thread.run_sync(writer.drain, deadline - time.monotonic()):
            log.error(
                "answers not written: the host did not read standard output for %g s after "
                "the end of input",
                DRAIN_SECONDS,
            )
    finally:
        forget()
        writer.stop()
        restore_out()
        restore_in()


def _claim(fd: int, replacement: int) -> tuple[int, Callable[[], None]]:
    """Move the wire off ``fd`` to a private descriptor and put ``replacement`` in its place."""
    try:
        # Above 2, so that a closed standard descriptor is never taken for the wire.
        private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
        os.dup2(replacement, fd)
    finally:
        os.close(replacement)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(private, fd)
        # The private descriptor is not closed: the reader thread may still be
        # blocked on it, and a closed number could be reused under that thread.

    return private, restore


def _widen(fd: int) -> None:
    if sys.platform.startswith("linux"):
        with suppress(OSError):  # not a pipe (a file, a tty), or over the limit
            fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)


class _Ending:
    """When the session has to be over: :data:`DRAIN_SECONDS` after the end of input (or
    after the session ended, if that came first)."""

    def __init__(self) -> None:
        self._at: float | None = None

    def input_ended(self) -> None:
        if self._at is None:
            self._at = time.monotonic() + DRAIN_SECONDS

    def deadline(self) -> float:
        """The ``time.monotonic()`` by which every answer is to be written."""
        self.input_ended()
        assert self._at is not None
        return self._at


class _Pending:
    """Ids of the requests read and not yet answered (used on the event loop only).

    Ids are compared as the SDK correlates them (``"7"`` and ``7`` are one id,
    :func:`_correlated`): its table of running requests holds one entry per
    id, so a second request under an id still running would take the first
    one's place there (a cancellation would reach the wrong one), and the
    first answer would end the wait for both at end of input.
    """

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()
        self._none_left = anyio.Event()
        self._none_left.set()
        self._asking: dict[types.RequestId, float] = {}
        """The server's own requests to the client (``roots/list``) awaiting an answer,
        with when they were sent."""

    async def room(self) -> None:
        """Wait until fewer than :data:`IN_FLIGHT` requests are unanswered — unless the
        server awaits an answer from the client, which must not be kept from being read
        behind a request (a ``roots/list`` the requests in flight wait for)."""
        while len(self._ids) >= IN_FLIGHT and not self._awaiting_client():
            await anyio.sleep(ROOM_POLL)

    def _awaiting_client(self) -> bool:
        now = time.monotonic()
        for request_id, sent in list(self._asking.items()):
            if now - sent > ASKING_SECONDS:  # the SDK has given up on it long ago
                del self._asking[request_id]
        return bool(self._asking)

    def read(self, item: Incoming) -> bytes | None:
        """Note a request read; a request whose id is still unanswered is not passed on
        (JSON-RPC ids tell answers apart): the answer refusing it is returned."""
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            if message.id is not None:
                self._asking.pop(message.id, None)  # the client answered the server
        elif isinstance(message, types.JSONRPCRequest):
            key = _correlated(message.id)
            if key in self._ids:
                log.warning("refused request %.80r: its id is taken", message.id)
                return error_line(types.INVALID_REQUEST, DUPLICATE_ID, message.id)
            if not self._ids:
                self._none_left = anyio.Event()
            self._ids.add(key)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and message.params
        ):
            # A cancelled request gets no answer (MCP), so it is not waited for.
            self._answered(message.params.get("requestId"))
        return None

    def written(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._answered(message.id)
        elif isinstance(message, types.JSONRPCRequest):
            self._asking[message.id] = time.monotonic()

    def _answered(self, request_id: object) -> None:
        if not isinstance(request_id, str | int):
            return
        key = _correlated(request_id)
        if key in self._ids:
            self._ids.discard(key)
            if not self._ids:
                self._none_left.set()

    async def all_answered(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._none_left.wait()


def _correlated(request_id: types.RequestId) -> types.RequestId:
    """The id as the SDK's dispatcher keys running requests: a string that ``int`` reads
    is that integer (so that a client echoing ids as strings still correlates)."""
    if isinstance(request_id, str):
        with suppress(ValueError):
            return int(request_id)
    return request_id


def _read_lines(
    fd: int,
    to_session: MemoryObjectSendStream[Incoming],
    pending: _Pending,
    token: anyio.lowlevel.EventLoopToken,
    writer: _Writer,
    ending: _Ending,
) -> None:
    """Reader thread: one JSON-RPC message per line, parsed here rather than on the loop;
    a line that is not one is answered here (:func:`_refused`)."""

    async def hand_over(item: Incoming) -> bytes | None:
        if isinstance(item, SessionMessage) and isinstance(item.message, types.JSONRPCRequest):
            await pending.room()  # no more stdin read meanwhile: the host waits
        refusal = pending.read(item)
        if refusal is None:
            await to_session.send(item)
        return refusal

    async def end() -> None:
        ending.input_ended()
        await pending.all_answered(DRAIN_SECONDS)
        await to_session.aclose()

    try:
        with os.fdopen(fd, "rb", closefd=False) as wire:
            # Once answers cannot reach the host, no further request is run: a write
            # whose answer nobody gets is a change nobody asked to see.
            while not writer.failed and (line := wire.readline(MAX_LINE_BYTES + 1)):
                if writer.failed:
                    break
                item: SessionMessage | Refusal | None
                if len(line) > MAX_LINE_BYTES:
                    item = refuse_long_line(line[:ID_PREFIX_BYTES])
                    del line  # not held while the rest is skipped
                    _skip_rest_of_line(wire)
                else:
                    item = decode_line(line)
                if isinstance(item, Refusal):
                    _refused(item, writer)
                elif item is not None and (
                    refused := anyio.from_thread.run(hand_over, item, token=token)
                ):
                    writer.put(refused)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError, OSError):
        pass  # the session ended first, or the loop is gone
    finally:
        with suppress(RuntimeError):
            anyio.from_thread.run(end, token=token)


def _skip_rest_of_line(wire: io.BufferedReader) -> None:
    while (chunk := wire.readline(SKIP_CHUNK)) and not chunk.endswith(b"\n"):
        pass


def _refused(refusal: Refusal, writer: _Writer) -> None:
    """Answer a refused line (if anyone waits for it) and say so in the log."""
    if refusal.answerable:
        writer.put(refusal.answer())
        log.warning(
            "answered request %r with %s: %s", refusal.request_id, refusal.code, refusal.message
        )
    else:
        log.warning("dropped a message that cannot be answered: %s", refusal.message)


class _Writer:
    """Writer thread: blocking writes of whole answers, in order."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.Queue[bytes] = queue.Queue(QUEUED)
        self._failed = False
        self._dropping = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def put_nowait(self, data: bytes) -> bool:
        try:
            self._queue.put_nowait(data)
        except queue.Full:
            return False
        return True

    def put(self, data: bytes, timeout: float | None = None) -> bool:
        """Queue ``data``, waiting up to ``timeout`` seconds for room; whether it was."""
        try:
            self._queue.put(data, timeout=timeout)
        except queue.Full:
            return False
        return True

    def drain(self, timeout: float) -> bool:
        """Write everything queued, then end the thread; give up after ``timeout`` seconds
        (a host that stopped reading would otherwise keep the server alive). Whether all
        was written (or the host had gone: nothing left to write to)."""
        deadline = time.monotonic() + max(timeout, 0.0)
        if self.put(b"", max(timeout, 0.0)):
            self._thread.join(max(deadline - time.monotonic(), 0.0))
        return not self._thread.is_alive()

    def stop(self) -> None:
        """End the thread without waiting (teardown after an error)."""
        with suppress(queue.Full):
            self._queue.put_nowait(b"")

    def written(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds until everything queued so far is written."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)

    def _run(self) -> None:
        while data := self._queue.get():  # b"" ends the thread
            try:
                if not (self._failed or self._dropping):
                    self._write(data)
            finally:
                self._queue.task_done()

    @property
    def failed(self) -> bool:
        """Whether an answer could not be written: no later one can reach the host."""
        return self._failed

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[write_waiting(self._fd, view) :]
        except OSError as exc:  # the host closed its end, or stdout is no pipe it reads
            if exc.errno == errno.EBADF:
                # Started with stdout closed (held by /dev/null, std_streams.guard): the
                # host wants no answers; they are dropped and the session goes on.
                self._dropping = True
                return
            self._failed = True
            reason = "the host closed it" if isinstance(exc, BrokenPipeError) else exc.strerror
            log.error(
                "cannot write answers to standard output (%s): no more requests are read, "
                "and the session ends once those running are done",
                reason,
            )


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {
    kind: TypeAdapter(kind)
    for kind in (
        types.JSONRPCResponse,
        types.JSONRPCError,
        types.JSONRPCNotification,
        types.JSONRPCRequest,
    )
}
"""One adapter per message class: the union adapter nests one level deeper, and so
gives up on answers that the SDK's HTTP transport still encodes."""


def encoded(message: types.JSONRPCMessage) -> bytes | None:
    """``message`` as one wire line; an answer that cannot be encoded becomes a -32603
    error for its id, anything else that cannot is dropped (``None``) — with a log line."""
    try:
        return (
            _ADAPTERS[type(message)].dump_json(message, by_alias=True, exclude_unset=True) + b"\n"
        )
    except Exception as exc:  # pydantic's serialiser: too deep, lone surrogates, …
        failure = exc
    if not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
        log.error("dropped a %s that cannot be encoded: %s", type(message).__name__, failure)
        return None
    log.error("the answer to request %r cannot be encoded: %s", message.id, failure)
    text = UNENCODABLE if too_deep(failure) else "internal error: the answer could not be encoded"
    return error_line(types.INTERNAL_ERROR, text, message.id)


async def _send_answers(
    from_session: MemoryObjectReceiveStream[SessionMessage], writer: _Writer, pending: _Pending
) -> None:
    async with from_session:
        async for message in from_session:
            data = encoded(message.message)
            # Before the answer can reach the host: a host may reuse an id once it
            # has its answer, and that request must not find the id still taken.
            pending.written(message.message)
            if data is not None and not writer.put_nowait(data):
                # In slices: the wait for a host that reads again can be cancelled.
                while not await anyio.to_thread.run_sync(writer.put, data, PUT_SLICE):
                    pass
