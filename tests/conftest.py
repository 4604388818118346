"""Shared fixtures: the reference material beside the repository and one engine per executor."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.backend import Backend, BackendConfig, running_backend
from tests.backend.human import Human
from werkbaum_core import EXECUTORS, Engine
from werkbaum_core.engine import LazyEngine
from werkbaum_core.engine.node_executor import node_binary

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIXTURES = SHARED / "fixtures" / "plans"
CONFORMANCE_JS = REPO / "tests" / "js" / "conformance.js"


def shared_path(*parts: str) -> Path:
    """A file of ../shared; the tests cannot run without it."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.fail(f"reference material missing: {path} (tests expect ../shared beside the repo)")
    return path


def fixture_plans() -> list[Path]:
    return sorted(p for p in FIXTURES.iterdir() if p.is_file())


def _available(kind: str) -> bool:
    if kind == "node" and node_binary() is None:
        # CI must run every executor; locally a missing node only skips.
        if os.environ.get("CI"):
            pytest.fail("CI needs `node` on the PATH to run the node executor's suite")
        return False
    return True


def engine_on(kind: str, *extra_entries: Path) -> Iterator[Engine]:
    """The bundled modules (plus test-only entry modules) on executor ``kind``,
    or a skip when that executor is not installed."""
    if not _available(kind):
        pytest.skip(f"{kind} executor not available")
    with Engine.create(kind, frontend="", extra_entries=extra_entries) as eng:
        yield eng


@pytest.fixture(scope="session", params=EXECUTORS)
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """The bundled modules on each executor (the same suite runs on all of them)."""
    yield from engine_on(request.param)


@pytest.fixture(scope="session", params=EXECUTORS)
def conformance_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine that also loads the test-only conformance harness."""
    yield from engine_on(request.param, CONFORMANCE_JS)


@pytest.fixture(scope="session")
def shared_engine() -> Iterator[LazyEngine]:
    """One in-process engine for the servers built in-process by the tests."""
    engine = LazyEngine("dukpy", "")
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def backend() -> Iterator[Backend]:
    """The documents backend stand-in on a loopback port, with upstream's test settings."""
    with running_backend(BackendConfig.test_profile()) as server:
        yield server


@pytest.fixture(scope="module")
def human(backend: Backend) -> Iterator[Human]:
    """A co-editor who changes documents directly on the backend (clientId ``c-human``)."""
    person = Human(backend)
    yield person
    person.http.close()


_LOOPBACK = ("127.", "::1", "localhost", "0:0:0:0:0:0:0:1")


def _is_loopback(host: object) -> bool:
    text = str(host).strip("[]").lower()
    return text.startswith(_LOOPBACK) or text in ("", "0.0.0.0")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests talk to servers on this machine only: any other address is a bug in the test
    (and traffic that must never leave a CI machine). Enforced for in-process code."""
    import socket

    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host is not None and not _is_loopback(host):
            raise OSError(f"test tried to resolve {host!r}: only loopback is allowed")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    def connect(self: socket.socket, address: object) -> object:
        if isinstance(address, tuple) and not _is_loopback(address[0]):
            raise OSError(f"test tried to connect to {address!r}: only loopback is allowed")
        return real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
