"""Fixtures and helpers shared by the file store's test modules.

Fixture functions end in ``_fixture`` and register under the short name
(``root``, ``store`` …), so a module imports them without its parameters
shadowing the import.
"""

from __future__ import annotations

import builtins
import io
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from werkbaum_core import Engine
from werkbaum_stdio.files import FileStore
from werkbaum_stdio.roots import Roots

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n  - [ ] #b: B (M)\n"
BOM = b"\xef\xbb\xbf"


@pytest.fixture(name="root")
def root_fixture(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture(name="outside")
def outside_fixture(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.werkbaum").write_text("[ ] #secret: Secret\n")
    return Path(os.path.realpath(path))


@pytest.fixture(name="store")
def store_fixture(root: Path) -> FileStore:
    return FileStore(Roots.from_args([str(root)], env={}, cwd=root))


@pytest.fixture(name="dukpy", scope="module")
def dukpy_fixture() -> Iterator[Engine]:
    with Engine.create("dukpy", frontend="") as engine:
        yield engine


class Touched:
    """What a call opened: ``files`` (anything but a directory, or stat'ed by name) and
    ``dirs`` (the ``(st_dev, st_ino)`` of every directory it opened)."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self.dirs: set[tuple[int, int]] = set()

    def outside(self, *paths: Path) -> bool:
        """Whether one of these directories was opened."""
        return any((p.stat().st_dev, p.stat().st_ino) in self.dirs for p in paths)


@pytest.fixture(name="touched")
def touched_fixture(monkeypatch: pytest.MonkeyPatch) -> Touched:
    """Spies on ``os.open``, ``os.stat`` and ``open`` (``realpath``'s lstat calls not counted)."""
    seen = Touched()
    real_open, real_fstat = os.open, os.fstat

    def spy_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if not flags & os.O_DIRECTORY:
            seen.files.append(str(path))
        fd = real_open(path, flags, *args, **kwargs)
        if flags & os.O_DIRECTORY:
            info = real_fstat(fd)
            seen.dirs.add((info.st_dev, info.st_ino))
        return fd

    def spying(original: Callable[..., Any]) -> Callable[..., Any]:
        def spy(path: Any, *args: Any, **kwargs: Any) -> Any:
            seen.files.append(str(path))
            return original(path, *args, **kwargs)

        return spy

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "stat", spying(os.stat))
    monkeypatch.setattr(builtins, "open", spying(builtins.open))
    monkeypatch.setattr(io, "open", spying(io.open))
    return seen


def plan_file(root: Path, data: bytes | str = PLAN, name: str = "plan.werkbaum") -> Path:
    path = root / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path
