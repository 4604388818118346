"""uvicorn's HTTP/1.1 protocol with two fixes for ``--workers N``.

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
place for both.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import cast

from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.h11_impl import H11Protocol

TCP_FAMILIES = (socket.AF_INET, socket.AF_INET6)
REQUESTS_PER_CONNECTION = 10


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in TCP_FAMILIES:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)  # type: ignore[arg-type]


class SharingH11Protocol(NoDelayH11Protocol):
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
