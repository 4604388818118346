"""Fixtures of the git-mirror suite: temporary git repositories, the stand-in backend, a human.

Every repository is a real one made with the real ``git``. The global and
system git configuration are switched off, as on a CI runner that has no git
identity: each test repository sets ``user.name``/``user.email`` itself, so
a commit that works here does not lean on the developer's own settings.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.backend import AdjustableClock, Backend
from werkbaum_core import Engine
from werkbaum_core.rules.catalogue import Caller, Resolved
from werkbaum_core.rules.pipeline import WriteRequest, WriteResult, write
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror, after_write_hook

PLAN = """[ ] #plan: Plan
  - [ ] #a: A (S)
  - [ ] #b: B (M)
  - [x] #c: C (S)
"""
AGENT = "Claude Code"
OPERATOR = ("Operator", "operator@example.invalid")


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in ``repo`` (as a test's own inspection); its stdout."""
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, encoding="utf-8", check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def make_repo(path: Path, *, initial_commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", OPERATOR[0])
    git(path, "config", "user.email", OPERATOR[1])
    if initial_commit:
        (path / "README.md").write_text("readme\n", encoding="utf-8")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "init")
    return path


def commits(repo: Path) -> list[str]:
    return git(repo, "rev-list", "HEAD").split()


def message(repo: Path, rev: str = "HEAD") -> str:
    return git(repo, "log", "-1", "--format=%B", rev)


def trailers(repo: Path, rev: str = "HEAD") -> list[str]:
    """The trailers of a commit exactly as ``git interpret-trailers --parse`` reads them."""
    done = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        cwd=repo,
        input=message(repo, rev),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout.splitlines()


@pytest.fixture(autouse=True)
def isolated_git(
    git_installed: str, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git (one-line failure without it), with no global/system config (no identity, no
    hooks path) and no inherited repository."""
    empty = tmp_path_factory.mktemp("gitconfig") / "config"
    empty.write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def local_tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is Nepal's (+05:45, no DST): a UTC instant shows as another wall time."""
    monkeypatch.setenv("TZ", "Asia/Kathmandu")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def unused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def store(backend: Backend) -> Iterator[DocumentStore]:
    with DocumentStore([backend.base_url]) as documents:
        yield documents


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with Engine.create("dukpy") as eng:
        yield eng


def pause(backend: Backend) -> None:
    """Jump over the 30 s milestone pause, so the newest sync version stays in the history."""
    clock = backend.clock
    assert isinstance(clock, AdjustableClock)
    clock.advance(timedelta(seconds=31))


class Agent:
    """An agent's write as the server does it: the real pipeline, then the mirror hook."""

    def __init__(
        self, engine: Engine, store: DocumentStore, mirror: Mirror, name: str = AGENT
    ) -> None:
        self.engine, self.store, self.mirror, self.name = engine, store, mirror, name
        self.hook = after_write_hook({mirror.document: mirror})

    def write(self, verb: str, args: dict[str, Any]) -> tuple[WriteResult, dict[str, Any] | None]:
        source = self.mirror.document
        request = WriteRequest(source, self.store.read(source).base, verb, args, author=self.name)
        result = write(self.engine, self.store, request)
        resolved = Resolved(store=self.store, key=source)
        return result, self.hook(resolved, result.to_json(), Caller(display_name=self.name))
