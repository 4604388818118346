"""The stdio transport: newline-delimited JSON-RPC over the process's stdin and stdout.

The SDK's ``stdio_server`` wraps both pipes in anyio's thread-wrapped text
files: every line read, every write and every flush is a round trip to a
worker thread, and every answer passes a text layer that encodes it to UTF-8
once more (a ``werkbaum_read`` round trip from a raw pipe client: 3.1 ms with
it, 2.0 ms with this transport). Here one thread owns each pipe: the reader parses request
lines off the event loop and hands over messages; the event loop serialises an
answer straight to bytes and queues it for the writer, which blocks on the pipe
so the loop does not. As with the SDK, a line that is not a JSON-RPC message
reaches the session as an exception, and end of input ends the session — but
only once every request read so far is answered (or after ``DRAIN_SECONDS``):
the SDK cancels requests still running at end of input, so a host that pipes
its requests and closes stdin lost the answers, even of writes that happened.

While serving, fd 0 reads the null device and fd 1 writes to stderr, so stray
output of handlers or child processes cannot corrupt the wire; both are
restored afterwards. Where the pipe can be widened (Linux), the answer pipe
takes a whole large answer in one write.
"""

from __future__ import annotations

import fcntl
import os
import queue
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

PIPE_BYTES = 1 << 20
"""Capacity asked of the answer pipe (Linux caps it at ``/proc/sys/fs/pipe-max-size``,
1 MiB by default); the kernel default is 64 KiB."""
QUEUED = 16
"""Messages queued between a pipe's thread and the session, each way."""
DRAIN_SECONDS = 30.0
"""At end of input, how long requests still running may take to be answered."""

_F_SETPIPE_SZ = 1031  # linux/fcntl.h; not exported by Python 3.11's fcntl


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
    try:
        async with anyio.create_task_group() as tasks:
            token = anyio.lowlevel.current_token()
            threading.Thread(
                target=_read_lines, args=(wire_in, to_session, pending, token), daemon=True
            ).start()
            tasks.start_soon(_send_answers, from_session, writer, pending)
            yield from_wire, to_wire
            await to_wire.aclose()
        await anyio.to_thread.run_sync(writer.drain)
    finally:
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


class _Pending:
    """Ids of the requests read and not yet answered (used on the event loop only)."""

    def __init__(self) -> None:
        self._ids: set[types.RequestId] = set()
        self._none_left = anyio.Event()
        self._none_left.set()

    def read(self, item: Incoming) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, types.JSONRPCRequest):
            if not self._ids:
                self._none_left = anyio.Event()
            self._ids.add(message.id)
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and message.params
        ):
            # A cancelled request gets no answer (MCP), so it is not waited for.
            self._answered(message.params.get("requestId"))

    def written(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self._answered(message.id)

    def _answered(self, request_id: object) -> None:
        if request_id in self._ids:
            self._ids.discard(request_id)
            if not self._ids:
                self._none_left.set()

    async def all_answered(self, timeout: float) -> None:
        with anyio.move_on_after(timeout):
            await self._none_left.wait()


def _read_lines(
    fd: int,
    to_session: MemoryObjectSendStream[Incoming],
    pending: _Pending,
    token: anyio.lowlevel.EventLoopToken,
) -> None:
    """Reader thread: one JSON-RPC message per line, parsed here rather than on the loop."""

    async def hand_over(item: Incoming) -> None:
        pending.read(item)
        await to_session.send(item)

    async def end() -> None:
        await pending.all_answered(DRAIN_SECONDS)
        await to_session.aclose()

    def deliver(item: Incoming) -> None:
        anyio.from_thread.run(hand_over, item, token=token)

    try:
        with os.fdopen(fd, "rb", closefd=False) as wire:
            for line in wire:
                try:
                    item: Incoming = SessionMessage(
                        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    )
                except Exception as exc:
                    item = exc
                deliver(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError, OSError):
        pass  # the session ended first, or the loop is gone
    finally:
        with suppress(RuntimeError):
            anyio.from_thread.run(end, token=token)


class _Writer:
    """Writer thread: blocking writes of whole answers, in order."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.Queue[bytes] = queue.Queue(QUEUED)
        self._failed = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def put_nowait(self, data: bytes) -> bool:
        try:
            self._queue.put_nowait(data)
        except queue.Full:
            return False
        return True

    def put(self, data: bytes) -> None:
        self._queue.put(data)

    def drain(self) -> None:
        """Write everything queued, then end the thread; give up after ``DRAIN_SECONDS``
        (a host that stopped reading would otherwise keep the server alive)."""
        with suppress(queue.Full):
            self._queue.put(b"", timeout=DRAIN_SECONDS)
        self._thread.join(DRAIN_SECONDS)

    def stop(self) -> None:
        """End the thread without waiting (teardown after an error)."""
        with suppress(queue.Full):
            self._queue.put_nowait(b"")

    def _run(self) -> None:
        while data := self._queue.get():  # b"" ends the thread
            if self._failed:
                continue
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._fd, view) :]
            except OSError:  # the host closed its end: later answers are dropped
                self._failed = True


async def _send_answers(
    from_session: MemoryObjectReceiveStream[SessionMessage], writer: _Writer, pending: _Pending
) -> None:
    async with from_session:
        async for message in from_session:
            data = (
                types.jsonrpc_message_adapter.dump_json(
                    message.message, by_alias=True, exclude_unset=True
                )
                + b"\n"
            )
            if not writer.put_nowait(data):
                await anyio.to_thread.run_sync(writer.put, data)
            pending.written(message.message)
