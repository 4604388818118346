"""uvicorn's HTTP/1.1 protocol with Nagle's algorithm switched off on every connection.

With ``--workers N`` uvicorn binds the listening socket itself with protocol 0,
and asyncio then leaves ``TCP_NODELAY`` unset on accepted connections (it sets
it only for sockets created with ``IPPROTO_TCP``). A response written in two
parts then waits for the client's delayed ACK: every request on a kept-alive
connection took ~44 ms instead of ~1 ms in ``nox -s bench``. uvicorn accepts a
protocol class (its ``http`` option), which is the public place to fix this.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

from uvicorn.protocols.http.h11_impl import H11Protocol

TCP_FAMILIES = (socket.AF_INET, socket.AF_INET6)


class NoDelayH11Protocol(H11Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in TCP_FAMILIES:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)  # type: ignore[arg-type]
