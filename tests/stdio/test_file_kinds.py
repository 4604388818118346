"""What is not a regular file is refused without being opened (round 26, attack-files F13).

Opening has effects of its own: a FIFO opened for reading releases a writer waiting in
its ``open`` (which then writes into a pipe nobody reads), and some devices act on open
(a watchdog starts counting, a tape rewinds). The store refused such a file only after
opening it (``O_NONBLOCK``, then ``fstat``); it looks at the name's kind first now. The
open is watched with inotify, which reports every open of the watched file.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    PLAN,
    root_fixture,
    store_fixture,
)
from werkbaum_core import SourceUnavailable, checksum
from werkbaum_core.stores import Base
from werkbaum_stdio.files import FileStore

IN_OPEN = 0x20
_EVENT = struct.Struct("iIII")


class Opens:
    """The opens of one file, as inotify reports them."""

    def __init__(self, path: Path) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            pytest.skip(f"inotify: {os.strerror(ctypes.get_errno())}")
        if self.libc.inotify_add_watch(self.fd, os.fsencode(path), IN_OPEN) < 0:
            code = ctypes.get_errno()
            os.close(self.fd)
            pytest.skip(f"inotify_add_watch: {os.strerror(code)}")

    def count(self) -> int:
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return 0
        seen, offset = 0, 0
        while offset < len(data):
            _, mask, _, size = _EVENT.unpack_from(data, offset)
            seen += bool(mask & IN_OPEN)
            offset += _EVENT.size + size
        return seen

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture(name="fifo")
def fifo_fixture(root: Path) -> Iterator[Path]:
    path = root / "plan.werkbaum"
    os.mkfifo(path)
    yield path


def test_a_fifo_is_refused_unopened(store: FileStore, fifo: Path) -> None:
    opens = Opens(fifo)
    try:
        assert opens.count() == 0
        base = Base(checksum=checksum(PLAN), version=None)
        for call in (
            lambda: store.read("plan.werkbaum"),
            lambda: store.write("plan.werkbaum", base, [], PLAN),
        ):
            with pytest.raises(SourceUnavailable) as info:
                call()
            assert info.value.details["reason"] == "is not a regular file"
        assert opens.count() == 0
    finally:
        opens.close()


def test_a_device_is_refused_unopened(store: FileStore, root: Path) -> None:
    path = root / "plan.werkbaum"
    try:
        os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers
    except OSError as exc:
        if exc.errno in (errno.EPERM, errno.EACCES):
            pytest.skip("making a device node needs root")
        raise
    opens = Opens(path)
    try:
        with pytest.raises(SourceUnavailable):
            store.read("plan.werkbaum")
        assert opens.count() == 0
    finally:
        opens.close()
