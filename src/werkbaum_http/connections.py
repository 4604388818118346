"""uvicorn's HTTP/1.1 protocol with deadlines, a connection cap, and two fixes for ``--workers N``.

**Deadlines.** uvicorn bounds only the idle time between requests
(``timeout_keep_alive``), and resets even that on every byte received: a
client that trickles a request one byte at a time, or connects and sends
nothing, held its connection for good in the hardening round. So each
connection here is always under one deadline, by the state of the request
it is receiving (h11's ``their_state``):

- waiting for a request's headers (from the accept, or from a kept-alive
  request's first byte): :data:`HEADER_SECONDS`;
- receiving its body, from the end of the headers: :data:`BODY_SECONDS`;
- idle after a response: uvicorn's keep-alive, :data:`KEEP_ALIVE_SECONDS`;
- request complete, the application working: none here (the server's own
  work is bounded by the engine's and the backends' deadlines);
- and above all of these, while an answer has not reached the client: the
  send deadline, :func:`send_seconds`.

A connection whose deadline passes is closed; a request body cut off that way
reaches the application as a disconnect, and nothing is executed.

**Answers a client does not read.** A client can send one complete request for
a big answer and never read it. The answer then sat in the transport's write
buffer and the kernel's for as long as the socket stayed open: nothing was
waiting on the client any more, and uvicorn's keep-alive close waits for the
write buffer to drain, which never happened (300 such clients held 414 MB,
1.1 GB of kernel buffers and 300 descriptors for good in round 21; at the
descriptor cap everybody got ``503``). So:

- the write buffer's limits are zero: asyncio calls ``pause_writing`` as soon
  as a byte is left that the kernel did not take and ``resume_writing`` once
  the last one is out. That tells the connection when it waits on the client,
  and makes uvicorn wait for the buffer to empty before it writes the next
  message, so a connection buffers one answer message at most;
- from the moment an answer is written and not all of it is delivered (in the
  write buffer, or unacknowledged in the kernel's, Linux ``SIOCOUTQ``) the
  connection is under the send deadline, sized from those bytes at
  :data:`SEND_BYTES_PER_SECOND` plus :data:`SEND_GRACE_SECONDS`. A keep-alive
  close meanwhile waits for it (a close would hand the rest to the kernel with
  no deadline at all);
- when it passes with bytes undelivered, the connection is reset
  (``SO_LINGER`` 0, then ``abort()``): the descriptor, the write buffer and
  the kernel's buffer are freed at once. A graceful close would wait again.

**The descriptor limit.** Every connection is a file descriptor. At the
process limit ``accept()`` fails with ``EMFILE``, and uvicorn's process died of
it: asyncio reported the failure through a logging handler that itself needed
a descriptor. So a connection that would leave fewer than :data:`FD_RESERVE`
descriptors for the server's own use (backend connections, the engine's
pipes, logs) is answered ``503`` at once and closed, the limit read afresh on
every accept (``RLIMIT_NOFILE`` can change under a running process); and
:class:`LoopErrors` keeps the event loop alive if ``accept()`` fails
anyway — asyncio then stops accepting for a second and retries, and the
waiting connections are served as soon as descriptors are free again.

**Nagle.** With ``--workers N`` uvicorn binds the listening socket itself with
protocol 0, and asyncio then leaves ``TCP_NODELAY`` unset on accepted
connections (it sets it only for sockets created with ``IPPROTO_TCP``). A
response written in two parts then waits for the client's delayed ACK: every
request on a kept-alive connection took ~44 ms instead of ~1 ms in
``nox -s bench``.

**Sharing kept-alive connections.** The workers share one listening socket,
and the worker that wakes first accepts every connection waiting; a kept-alive
connection then stays with it for good. Sixteen agents that connected at once
were split 16:0 or 11:5 between two workers in ``nox -s bench``, and the
second worker idled. So with several workers a connection is handed back
after ``REQUESTS_PER_CONNECTION`` requests: that response says
``Connection: close``, the client reconnects for its next request, and the
new connection goes to whichever worker is waiting for one — the one with
less to do. A connect costs a fraction of a millisecond on a LAN, an MCP tool
call several milliseconds, so this costs well under 1 %.

uvicorn accepts a protocol class (its ``http`` option), which is the public
place for all of this; :func:`uvicorn_settings` are the options that go with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import resource
import socket
import struct
import termios
import time
from typing import Any, Literal, cast

import h11
from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.h11_impl import H11Protocol

TCP_FAMILIES = (socket.AF_INET, socket.AF_INET6)
REQUESTS_PER_CONNECTION = 10

HEADER_SECONDS = 10.0
"""From the accept, or a kept-alive request's first byte, to its complete headers."""
BODY_SECONDS = 30.0
"""From a request's headers to the last byte of its body (8 MiB at most: ≥ 280 KB/s)."""
SEND_GRACE_SECONDS = 10.0
"""The part of the send deadline that does not grow with the answer (:func:`send_seconds`)."""
SEND_BYTES_PER_SECOND = 125_000
"""The slowest a client may read an answer on average and still get it whole: 1 Mbit/s."""
KEEP_ALIVE_SECONDS = 5
"""Idle time between requests on a kept-alive connection (uvicorn's ``timeout_keep_alive``)."""
MAX_HEADER_BYTES = 16 * 1024
"""Request line plus headers (h11's ``max_incomplete_event_size``); beyond: ``400``."""
BACKLOG = 2048
"""Connections the kernel queues while none is accepted (uvicorn's default)."""
FD_RESERVE = 128
"""File descriptors a worker keeps free for its own use; beyond, connections get ``503``."""
ACCEPT_FAILED = "socket.accept() out of system resource"
"""asyncio's message when ``accept()`` fails for want of descriptors (it retries in 1 s)."""
ACCEPT_REPORT_SECONDS = 1.0

Phase = Literal["headers", "body", "send"]
_RESET = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on, 0 s: closing the socket resets the connection and drops unsent data."""

_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: 37\r\n"
    b"\r\n"
    b"too many connections; retry shortly\r\n"
)


def uvicorn_settings(workers: int) -> dict[str, Any]:
    """The uvicorn options of the HTTP server (the protocol class and its limits)."""
    protocol = "SharingH11Protocol" if workers > 1 else "GuardedH11Protocol"
    return {
        "http": f"werkbaum_http.connections:{protocol}",
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "backlog": BACKLOG,
    }


def send_seconds(undelivered: int) -> float:
    """How long an answer may take to reach the client, from when it is written.

    ``undelivered`` counts its bytes in the server's buffer and the kernel's
    (all of them, when the deadline starts as the answer is written): a client
    reading at :data:`SEND_BYTES_PER_SECOND` gets the whole answer in time.
    """
    return SEND_GRACE_SECONDS + undelivered / SEND_BYTES_PER_SECOND


def kernel_unsent(transport: asyncio.BaseTransport) -> int:
    """Bytes the kernel holds for the client, not yet acknowledged (Linux ``SIOCOUTQ``); else 0."""
    sock = transport.get_extra_info("socket")
    if sock is None or not hasattr(termios, "TIOCOUTQ"):
        return 0
    try:
        answer = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
    except OSError:
        return 0
    return int(struct.unpack("i", answer)[0])


def connection_limit() -> int:
    """How many connections a worker may hold now: its descriptor limit minus the reserve."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft - FD_RESERVE if soft != resource.RLIM_INFINITY else 1 << 30


class LoopErrors:
    """asyncio's exception handler for a worker, made so that it cannot fail or flood.

    The default handler logs through whatever handlers are configured; at the
    descriptor limit one of them could not open a file, the error escaped the
    handler and ended the event loop (and the worker). Here such a failure
    becomes one line written straight to stderr. And a failed ``accept()`` is
    reported once a second: asyncio reports it once per connection waiting in
    the backlog (up to 2,048 times a second), and schedules as many retries,
    which fail once more each if the server shuts down before they run.
    """

    def __init__(self) -> None:
        self._accept_reported = -ACCEPT_REPORT_SECONDS

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        retry = "_start_serving" in repr(context.get("handle"))
        if context.get("message") == ACCEPT_FAILED or retry:
            now = time.monotonic()
            if now - self._accept_reported >= ACCEPT_REPORT_SECONDS:
                self._accept_reported = now
                _say(context)
            return
        try:
            loop.default_exception_handler(context)
        except Exception:
            _say(context)


def _say(context: dict[str, Any]) -> None:
    """One line on stderr, written without logging (which may need a descriptor)."""
    message = str(context.get("message") or "event loop error")
    exc = context.get("exception")
    line = f"werkbaum-mcp-http: {message}" + (f": {exc!r}" if exc is not None else "")
    with contextlib.suppress(OSError):
        os.write(2, (line + "\n").encode("utf-8", "replace"))


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the connection cap of the module."""

    _deadline: asyncio.TimerHandle | None = None
    _phase: Phase | None = None
    _waiting_on_client = False
    """Part of an answer is in the write buffer (between ``pause_`` and ``resume_writing``)."""
    _idle_over = False
    """The keep-alive time passed while an answer was still being delivered."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in TCP_FAMILIES:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        cast(asyncio.WriteTransport, transport).set_write_buffer_limits(high=0, low=0)
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > connection_limit():
            self.transport.write(_REFUSAL)
            self.transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        self._idle_over = False
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch(answered=True)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._waiting_on_client = True
        self._watch()

    def resume_writing(self) -> None:
        super().resume_writing()
        self._waiting_on_client = False
        self._watch()

    def timeout_keep_alive_handler(self) -> None:
        if self._phase == "send" and self._undelivered():
            # A close now would leave the rest to the kernel with no deadline:
            # the send deadline closes instead (or resets, if still undelivered).
            self._idle_over = True
            return
        super().timeout_keep_alive_handler()

    def connection_lost(self, exc: Exception | None) -> None:
        self._waiting_on_client = False
        self._arm(None)
        super().connection_lost(exc)

    def _watch(self, *, answered: bool = False) -> None:
        """Put the connection under the deadline its state calls for."""
        sending = answered or self._waiting_on_client or self._phase == "send"
        if sending and self._undelivered():
            self._arm("send")  # also once closing: a close waits for the buffer
            return
        if self.transport.is_closing():
            self._arm(None)
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self._arm("body")
        elif state is h11.IDLE and self.timeout_keep_alive_task is None:
            self._arm("headers")
        else:  # idle under uvicorn's keep-alive, or the request is complete
            self._arm(None)
            if self._idle_over:
                super().timeout_keep_alive_handler()

    def _undelivered(self) -> int:
        """Bytes of answers the client has not taken: in the server's buffer and the kernel's."""
        return self.transport.get_write_buffer_size() + kernel_unsent(self.transport)

    def _arm(self, phase: Phase | None) -> None:
        if phase == self._phase:
            return  # the deadline of this phase keeps running
        if self._deadline is not None:
            self._deadline.cancel()
        self._phase, self._deadline = phase, None
        if phase is not None:
            self._deadline = self.loop.call_later(self._seconds(phase), self._expired)

    def _seconds(self, phase: Phase) -> float:
        if phase == "headers":
            return HEADER_SECONDS
        if phase == "body":
            return BODY_SECONDS
        return send_seconds(self._undelivered())

    def _expired(self) -> None:
        phase = self._phase
        self._deadline = self._phase = None
        if phase == "send":
            if self._undelivered():
                self._reset()
            else:
                self._watch()
            return
        if self.cycle is not None and not self.cycle.response_complete:
            # The application waits for the rest of the body: it gets a disconnect.
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.close()

    def _reset(self) -> None:
        """End the connection now, dropping what is unsent here and in the kernel."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET)
        self.transport.abort()


class SharingH11Protocol(GuardedH11Protocol):
    """For ``--workers N``: every ``REQUESTS_PER_CONNECTION``-th response closes."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.requests = 0
        super().connection_made(transport)

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        cycle = self.cycle
        if cycle is None or cycle is before:
            return  # no new request in these bytes
        self.requests += 1
        if self.requests % REQUESTS_PER_CONNECTION == 0:
            # A close in the request's headers makes uvicorn answer with
            # "Connection: close" and close once the response is out; the
            # request has not reached the application yet.
            cast(list[tuple[bytes, bytes]], cycle.scope["headers"]).append(CLOSE_HEADER)
