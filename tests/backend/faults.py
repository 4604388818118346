"""Fault modes of the stand-in: a backend that trickles, stalls, sends far too much or twice.

The store's limits (a total deadline per call, bounded answers) are only
shown by a real server that misbehaves on a real socket, so the stand-in can
be told to, per request it matches::

    with backend.faults.injected(Trickle(every=1.0)):
        ...  # each answer goes out one byte per second
    with backend.faults.injected(Huge(size=300 * 2**20, path="/history")):
        ...  # GET …/history answers an entry with 300 MB of text
    with backend.faults.injected(Held(path="/history")) as held:
        ...  # the first GET …/history waits for held.released.set()
    with backend.faults.injected(Delayed(seconds=3.0, path="/history")):
        ...  # GET …/history is answered 3 s late
    with backend.faults.injected(Twice(method="PATCH", path="/content")):
        ...  # the next PATCH is answered twice on its kept-alive connection

A fault replaces only the bytes on the wire; what the answer says (status,
body) is still decided by :class:`~tests.backend.app.App`, so a trickled
answer is a correct one, just slow.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from tests.backend.app import Response

CHUNK = 1024 * 1024


class Wire(Protocol):
    """What a fault writes to: the handler's socket file."""

    def write(self, data: bytes, /) -> int | None: ...

    def flush(self) -> None: ...


@dataclass(frozen=True)
class Fault:
    """Matches requests by method and by how the path ends (empty: every document path)."""

    method: str = "GET"
    path: str = ""
    closes: ClassVar[bool] = True
    """Whether the stand-in closes the connection after the fault's bytes."""

    def matches(self, method: str, path: str) -> bool:
        return (
            method == self.method
            and path.startswith("/api/v1/documents/")
            and path.endswith(self.path)
        )

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        raise NotImplementedError


def head(status: int, headers: dict[str, str], version: str) -> bytes:
    lines = [f"{version} {status} X"] + [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@dataclass(frozen=True)
class Trickle(Fault):
    """The real answer, status line first, one byte every ``every`` seconds."""

    every: float = 1.0

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        headers = {**response.headers, "Content-Length": str(len(response.body))}
        data = head(response.status, headers, http_version) + response.body
        for index in range(len(data)):
            wire.write(data[index : index + 1])
            wire.flush()
            time.sleep(self.every)


@dataclass(frozen=True)
class Huge(Fault):
    """``200`` with a document (or, for ``/history``, one entry) of ``size`` bytes of text.

    Generated while it is sent, so the stand-in itself stays small; with
    ``declare_length`` False it has no ``Content-Length`` and ends with the
    connection, so that only a reader that counts can stop it.
    """

    size: int = 300 * 1024 * 1024
    declare_length: bool = True

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        entry = {"id": "huge", "title": "Huge", "version": 1, "changeType": "CREATED"}
        opening, closing = json.dumps(entry)[:-1] + ', "content": "', '"}'
        if self.path == "/history":
            opening, closing = "[" + opening, closing + "]"
        line = b"  - [ ] #x: a line of a very long plan (S)\\n"  # JSON: ends in a newline
        lines = self.size // len(line)
        headers = {"Content-Type": "application/json"}
        if self.declare_length:
            headers["Content-Length"] = str(len(opening) + lines * len(line) + len(closing))
        else:
            headers["Connection"] = "close"
        wire.write(head(200, headers, http_version) + opening.encode())
        per_block = CHUNK // len(line)
        for first in range(0, lines, per_block):
            wire.write(line * min(per_block, lines - first))
        wire.write(closing.encode())
        wire.flush()


@dataclass(frozen=True)
class Held(Fault):
    """The real answer to the first matching request, sent once the test sets ``released``
    (at the latest after ``limit`` seconds); later matches are answered at once.

    For a race that needs something to happen while one client waits for exactly this
    answer: ``arrived`` is set when that request is being held.
    """

    limit: float = 30.0
    arrived: threading.Event = field(default_factory=threading.Event, compare=False)
    released: threading.Event = field(default_factory=threading.Event, compare=False)
    taken: threading.Lock = field(default_factory=threading.Lock, compare=False)

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        if self.taken.acquire(blocking=False):
            self.arrived.set()
            self.released.wait(self.limit)
        wire.write(_whole(response, http_version))
        wire.flush()


@dataclass(frozen=True)
class Delayed(Fault):
    """The real answer, whole, after ``seconds`` (the request has been handled already:
    a delayed PATCH is applied, its answer late)."""

    seconds: float = 2.0

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        time.sleep(self.seconds)
        wire.write(_whole(response, http_version))
        wire.flush()


@dataclass(frozen=True)
class Twice(Fault):
    """The real answer twice, in one write, on a connection kept alive: what a broken
    backend or middlebox does. The client takes the first; the second waits on the
    connection as if it were the answer to the next request sent there. Only the
    first ``times`` matching requests are answered so; the rest are answered once."""

    times: int = 1
    answered: list[str] = field(default_factory=list, compare=False)
    closes: ClassVar[bool] = False

    def send(self, wire: Wire, response: Response, http_version: str) -> None:
        data = _whole(response, http_version)
        if len(self.answered) < self.times:
            self.answered.append(response.body.decode("utf-8", "replace"))
            data += data
        wire.write(data)
        wire.flush()


def _whole(response: Response, http_version: str) -> bytes:
    headers = {**response.headers, "Content-Length": str(len(response.body))}
    return head(response.status, headers, http_version) + response.body


class Faults:
    """The faults in force on one stand-in (thread-safe; the first match wins)."""

    def __init__(self) -> None:
        self._active: list[Fault] = []
        self._lock = threading.Lock()

    def match(self, method: str, path: str) -> Fault | None:
        with self._lock:
            return next((f for f in self._active if f.matches(method, path)), None)

    @contextlib.contextmanager
    def injected(self, fault: Fault) -> Iterator[Fault]:
        with self._lock:
            self._active.append(fault)
        try:
            yield fault
        finally:
            with self._lock:
                self._active.remove(fault)
