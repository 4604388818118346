"""Shared fixtures: the test data in ``tests/data``, the tools the tests need, one engine
per executor, and the reproducible Hypothesis profile."""

from __future__ import annotations

import gc
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.backend import Backend, BackendConfig, running_backend
from tests.backend.human import Human
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, Engine
from werkbaum_core.engine import LazyEngine

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
FIXTURES = DATA / "plans"
REFERENCE_PLAN = FIXTURES / "werkbaum.werkbaum"
CONFORMANCE_JS = REPO / "tests" / "js" / "conformance.js"

settings.register_profile("repro", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "repro")
"""Property tests are reproducible by default: the same examples on every run, no example
database, nothing written to ``.hypothesis/`` (so a failure found once cannot make every
later run fail). ``HYPOTHESIS_PROFILE=explore`` searches at random, with the database in
``.hypothesis/``, for a local hunt; a failure it finds is pinned as an ``@example``."""
settings.load_profile(HYPOTHESIS_PROFILE)
if HYPOTHESIS_PROFILE == "repro":
    # Hypothesis also caches the constants it mines from source files under
    # ``.hypothesis/``; keep even that out of the checkout.
    os.environ.setdefault(
        "HYPOTHESIS_STORAGE_DIRECTORY",
        str(Path(tempfile.gettempdir()) / f"werkbaum-mcp-hypothesis-{os.getuid()}"),
    )


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Nothing frozen out of the garbage collector's walk before and after the test
    (the servers' :func:`~werkbaum_stdio.collector.freeze_startup_objects`): the test
    process is shared."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def walked(obj: object) -> bool:
    """Whether the garbage collector's walk reaches ``obj`` (frozen objects are left out)."""
    return any(candidate is obj for candidate in gc.get_objects())


def fixture_plans() -> list[Path]:
    """The real plans of ``tests/data/plans``."""
    return sorted(p for p in FIXTURES.iterdir() if p.is_file())


SEPARATE = "/process"
"""Suffix of an executor kind run in a child process of its own (the servers' dukpy)."""


def engine_on(kind: str, *extra_entries: Path) -> Iterator[Engine]:
    """The bundled modules (plus test-only entry modules) on executor ``kind`` (with
    :data:`SEPARATE`: in a child process); a missing executor fails the test with one
    line saying what to install."""
    separate = kind.endswith(SEPARATE)
    kind = kind.removesuffix(SEPARATE)
    if kind == "node":
        require_tool("node")
    with Engine.create(
        kind, frontend="", extra_entries=extra_entries, separate_process=separate
    ) as eng:
        yield eng


@pytest.fixture(scope="session", params=EXECUTORS)
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """The bundled modules on each executor (the same suite runs on all of them)."""
    yield from engine_on(request.param)


@pytest.fixture(scope="session", params=(*EXECUTORS, "dukpy" + SEPARATE))
def conformance_engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine that also loads the test-only conformance harness; the conformance
    suite also runs on dukpy in a child process, as the servers run it."""
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


@pytest.fixture
def node_installed() -> str:
    """``node`` for a test that needs it (one-line failure when it is missing)."""
    return require_tool("node")


@pytest.fixture
def git_installed() -> str:
    """``git`` for a test that needs it (one-line failure when it is missing)."""
    return require_tool("git")
