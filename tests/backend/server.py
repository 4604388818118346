"""The transport: the stdlib ``ThreadingHTTPServer`` carrying :class:`~tests.backend.app.App`.

A thread per connection suits the protocol: a long poll is a thread blocked
on the store's condition, exactly like upstream's virtual thread, and a call
into the JS engine (which holds the GIL for a whole evaluation) only slows
other requests down instead of freezing an event loop.  No dependency beyond
the standard library.

:func:`running_backend` is what tests use: a real server on a loopback port,
started in a background thread, stopped on exit.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.backend.app import App, Request
from tests.backend.auth import check_hash_supported
from tests.backend.clock import AdjustableClock, Clock, SystemClock
from tests.backend.config import BackendConfig
from tests.backend.faults import Faults
from tests.backend.ops import line_ops
from tests.backend.store import Store

MAX_BODY_BYTES = 64 * 1024 * 1024
"""Far above any valid request (2 M characters of content as JSON), far below memory trouble."""


SHUTDOWN_POLL_S = 0.02
"""How often ``serve_forever`` looks for a shutdown request; keeps ``stop()`` quick."""


class _BodyError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: App, verbose: bool) -> None:
        super().__init__(address, _Handler)
        self.app = app
        self.verbose = verbose
        self.faults = Faults()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "werkbaum-stand-in"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve()

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline().strip():  # trailers
                        pass
                    return b"".join(chunks)
                total += size
                if total > MAX_BODY_BYTES:
                    raise _BodyError(413, "request body too large")
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = self.headers.get("Content-Length")
        if not length:
            return b""
        try:
            n = int(length)
        except ValueError:
            raise _BodyError(400, "bad Content-Length") from None
        if n < 0 or n > MAX_BODY_BYTES:
            raise _BodyError(413 if n > 0 else 400, "request body too large")
        return self.rfile.read(n)

    def _serve(self) -> None:
        try:
            body = self._read_body()
        except (_BodyError, ValueError) as exc:
            status = exc.status if isinstance(exc, _BodyError) else 400
            self.close_connection = True
            self.send_error(status, str(exc))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        request = Request(self.command, self.path, headers, body)
        response = self.server.app.handle(request)
        fault = self.server.faults.match(self.command, request.path)
        if fault is not None:
            self.close_connection = fault.closes
            with contextlib.suppress(OSError):  # the client gave up: what the fault is for
                fault.send(self.wfile, response, self.protocol_version)
            return
        self.send_response(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        if response.status not in (204, 304):
            self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD" and response.status not in (204, 304):
            self.wfile.write(response.body)

    def log_message(self, format: str, *args: object) -> None:
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


class Backend:
    """A configured stand-in bound to a socket; start it in a thread or serve in the caller."""

    def __init__(
        self,
        config: BackendConfig | None = None,
        *,
        clock: Clock | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        verbose: bool = False,
    ) -> None:
        self.config = config or BackendConfig()
        check_hash_supported(self.config.master_password_hash)
        self.clock: Clock = clock or (
            AdjustableClock() if self.config.clock_control else SystemClock()
        )
        self.store = Store(self.config, self.clock, line_ops(self.config.ops_impl))
        self.app = App(self.config, self.clock, self.store)
        self._server = _HTTPServer((host, port), self.app, verbose)
        self._thread: threading.Thread | None = None

    @property
    def faults(self) -> Faults:
        """Misbehaviours to inject (:mod:`tests.backend.faults`)."""
        return self._server.faults

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://host:port`` plus the configured prefix; append ``/api/v1/...``."""
        host = str(self._server.server_address[0])
        if host in ("0.0.0.0", "::"):
            host = "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}{self.config.prefix}"

    @property
    def ops_name(self) -> str:
        """Which line-ops implementation runs (``python`` or ``engine:<executor>``)."""
        return self.store.ops.name

    def start(self) -> Backend:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": SHUTDOWN_POLL_S},
            name=f"backend:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Wake long polls (they answer 204), stop accepting, release the port."""
        self.store.close()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


@contextmanager
def running_backend(
    config: BackendConfig | None = None, *, clock: Clock | None = None, host: str = "127.0.0.1"
) -> Iterator[Backend]:
    """A started backend on a free loopback port; ``.base_url`` for requests, ``.clock`` to steer.

    The clock defaults to an :class:`AdjustableClock` so a test can jump over
    the milestone pause instead of sleeping.
    """
    backend = Backend(config, clock=clock or AdjustableClock(), host=host, port=0)
    backend.start()
    try:
        yield backend
    finally:
        backend.stop()
