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
  work is bounded by the engine's and the backends' deadlines).

A connection whose deadline passes is closed; a request body cut off that way
reaches the application as a disconnect, and nothing is executed.

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
import os
import resource
import socket
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

Phase = Literal["headers", "body"]

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

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in TCP_FAMILIES:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)  # type: ignore[arg-type]
        if len(self.connections) > connection_limit():
            self.transport.write(_REFUSAL)
            self.transport.close()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._arm(None)
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Put the connection under the deadline its request's state calls for."""
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

    def _arm(self, phase: Phase | None) -> None:
        if phase == self._phase:
            return  # the deadline of this phase keeps running
        if self._deadline is not None:
            self._deadline.cancel()
        self._phase, self._deadline = phase, None
        if phase is not None:
            seconds = HEADER_SECONDS if phase == "headers" else BODY_SECONDS
            self._deadline = self.loop.call_later(seconds, self._expired)

    def _expired(self) -> None:
        self._deadline = self._phase = None
        if self.cycle is not None and not self.cycle.response_complete:
            # The application waits for the rest of the body: it gets a disconnect.
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.close()


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
