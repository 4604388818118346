"""HTTP to the documents backends: a total deadline per store call, a cap on calls in flight.

httpx's timeouts bound each socket operation, not a call: a backend that sends
one byte every few seconds never trips a 10 s read timeout and kept a call
waiting without end in the hardening round. So the store's transport is httpx
over httpcore with a network backend of its own: every connect, read and write
gets at most the time left until the running call's deadline
(:class:`BackendCalls`, one per store, thread-local because a store call runs
in one thread from start to end); past it the next socket operation fails at
once with a timeout. Writes go out in slices so that a backend that reads
slowly is bounded as well. The one wait that cannot be bounded this way is
the system resolver (``getaddrinfo``), which has its own timeouts.

The tool handlers of both servers run in anyio's worker threads (40 by
default, shared by every call of a process). A slow backend must not be able
to take all of them, or the stdio server's file calls would queue behind
document calls that wait for it. So a store admits at most
:attr:`BackendCalls.limit` calls at once and answers the next one at once with
``source_unavailable`` instead of letting it wait: however slow the backends,
the other threads stay free.

HTTP(S) proxies from the environment (``http_proxy``, ``https_proxy``,
``all_proxy``, ``no_proxy``) are honoured as httpx does; SOCKS proxies are not
supported.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import httpcore
import httpx

from werkbaum_core.errors import SourceUnavailable

DEADLINE_SECONDS = 30.0
"""Total time of one store call (a read, or a write with its reads), all retries included."""

MAX_BACKEND_CALLS = 8
"""Store calls in flight at once: a fifth of anyio's 40 worker threads, so that
calls waiting for slow backends leave the rest to everything else."""

WRITE_SLICE = 64 * 1024
"""Bytes per socket write, so that each write is bounded by the time left."""


class BackendCalls:
    """Admission and deadline of a store's calls; a call nested in a call is part of it."""

    def __init__(self, limit: int = MAX_BACKEND_CALLS, deadline: float = DEADLINE_SECONDS) -> None:
        if limit < 1 or deadline <= 0:
            raise ValueError("a store needs at least one call slot and a positive deadline")
        self.limit = limit
        self.deadline = deadline
        self._slots = threading.BoundedSemaphore(limit)
        self._local = threading.local()

    @contextlib.contextmanager
    def call(self, source: str) -> Iterator[None]:
        """Run one store call: admitted now or ``source_unavailable``, done by the deadline."""
        if self._until() is not None:
            yield  # nested: the outer call's slot and deadline hold
            return
        if not self._slots.acquire(blocking=False):
            raise SourceUnavailable(
                f"{self.limit} calls to document backends are already waiting for an answer; "
                "retry when one has finished",
                source=source,
                busy=True,
            )
        self._local.until = time.monotonic() + self.deadline
        try:
            yield
        finally:
            self._local.until = None
            self._slots.release()

    def _until(self) -> float | None:
        until: float | None = getattr(self._local, "until", None)
        return until

    def remaining(self) -> float | None:
        """Seconds left for the running call of this thread (None outside a call)."""
        until = self._until()
        return None if until is None else until - time.monotonic()

    def expired(self) -> bool:
        left = self.remaining()
        return left is not None and left <= 0


def _bounded(timeout: float | None, left: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to the time left; ``error`` at once when nothing is left."""
    if left is None:
        return timeout
    if left <= 0:
        raise error("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, left: Callable[[], float | None]) -> None:
        self._inner = inner
        self._left = left

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bounded(timeout, self._left(), httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        view = memoryview(buffer)
        for start in range(0, len(view), WRITE_SLICE):
            piece = bytes(view[start : start + WRITE_SLICE])
            self._inner.write(piece, _bounded(timeout, self._left(), httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, self._left(), httpcore.ConnectTimeout)
        return _BoundedStream(
            self._inner.start_tls(ssl_context, server_hostname, bounded), self._left
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, left: Callable[[], float | None]) -> None:
        self._inner = httpcore.SyncBackend()
        self._left = left

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        bounded = _bounded(timeout, self._left(), httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, bounded, local_address, socket_options)
        return _BoundedStream(stream, self._left)

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class DeadlineTransport(httpx.BaseTransport):
    """httpx's transport, with every socket operation bounded by :class:`BackendCalls`."""

    def __init__(self, calls: BackendCalls) -> None:
        self._backend = _BoundedBackend(calls.remaining)
        self._ssl = httpx.create_ssl_context(trust_env=True)
        self._direct = httpcore.ConnectionPool(
            ssl_context=self._ssl, network_backend=self._backend, keepalive_expiry=5.0
        )
        self._proxies: dict[str, httpcore.HTTPProxy] = {}
        self._lock = threading.Lock()

    def _pool(self, url: httpx.URL) -> httpcore.ConnectionPool:
        proxy = _environment_proxy(url)
        if proxy is None:
            return self._direct
        with self._lock:
            if proxy not in self._proxies:
                self._proxies[proxy] = httpcore.HTTPProxy(
                    proxy_url=proxy,
                    ssl_context=self._ssl,
                    network_backend=self._backend,
                    keepalive_expiry=5.0,
                )
            return self._proxies[proxy]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            answer = self._pool(request.url).handle_request(core)
        assert isinstance(answer.stream, Iterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream),
            extensions=answer.extensions,
        )

    def close(self) -> None:
        self._direct.close()
        with self._lock:
            for pool in self._proxies.values():
                pool.close()


class _Body(httpx.SyncByteStream):
    def __init__(self, inner: Iterable[bytes]) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors():
            yield from self._inner

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    """httpcore's exceptions as httpx's namesakes (the store catches httpx's)."""
    try:
        yield
    except Exception as exc:
        for cls in type(exc).__mro__:
            if not cls.__module__.startswith("httpcore"):
                continue
            twin = getattr(httpx, cls.__name__, None)
            if isinstance(twin, type) and issubclass(twin, httpx.HTTPError):
                raise twin(str(exc)) from exc
        raise


def _environment_proxy(url: httpx.URL) -> str | None:
    """The HTTP(S) proxy the environment names for ``url``, as httpx would use it."""
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or not proxy.startswith(("http://", "https://")):
        return None
    if urllib.request.proxy_bypass(url.host):
        return None
    return proxy


def read_bounded(response: httpx.Response, limit: int) -> bytes | None:
    """The body, or None as soon as it (or its declared length) exceeds ``limit`` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    if response.is_stream_consumed:  # made in memory (a test transport's answer)
        return response.content if len(response.content) <= limit else None
    parts: list[bytes] = []
    size = 0
    for part in response.iter_raw():
        size += len(part)
        if size > limit:
            return None
        parts.append(part)
    return b"".join(parts)
