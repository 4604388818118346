"""Fixtures of the document-store suite: the stand-in backend on a loopback port, and a human.

Everything goes over real HTTP; an httpx transport is only swapped in where a
test injects a network fault or counts requests.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.backend import Backend
from werkbaum_core.stores.documents import DocumentStore


@pytest.fixture
def store(backend: Backend) -> Iterator[DocumentStore]:
    with DocumentStore([backend.base_url]) as documents:
        yield documents


class Recording(httpx.BaseTransport):
    """A real ``HTTPTransport`` that remembers ``(method, path)`` of every request."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.calls: list[tuple[str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls.append((request.method, request.url.path))
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()
