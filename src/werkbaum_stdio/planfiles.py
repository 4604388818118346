"""Plan files as the human CLI finds and reads them: arguments, directories, stdin.

A command line names whatever a shell glob or ``git ls-files`` produced, so
any argument may be something odd: a FIFO (reading it blocks until a writer
comes), a symlink to ``/dev/zero`` (reading it never ends), a directory, a
binary. Each is one :class:`Unreadable` with a reason, never a hang or an
unbounded read, so ``werkbaum check`` reports it and goes on with the others.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import attrs

from werkbaum_core.text import MAX_TEXT_CHARS
from werkbaum_stdio.file_text import BOM, decode, utf16
from werkbaum_stdio.plan_names import PlanNames, walked_dir

STDIN = "-"
"""The argument that means "read the plan from standard input"."""
MAX_BYTES = MAX_TEXT_CHARS * 4 + len(BOM)
"""UTF-8 needs at most 4 bytes per character, and a BOM may come first: more bytes than
this cannot be within the text limit, so no read goes further (a ``/dev/zero`` behind a
symlink stops here). The stdio server's file store reads the same bytes."""
_CHUNK = 1 << 20

_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class Unreadable(Exception):
    """A plan that cannot be read, with the reason a person can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@attrs.frozen
class PlanArg:
    """One plan to check: ``name`` as shown in diagnostics; ``path`` None is stdin.

    ``problem`` is why it cannot be read, known before reading (a directory of a walk
    that could not be listed).
    """

    name: str
    path: Path | None
    problem: str | None = None


def expand(args: Sequence[str], names: PlanNames, stdin_name: str) -> list[PlanArg]:
    """The plans that the arguments name, in argument order.

    A directory stands for the plan files below it (the names the file store takes
    for plans, sorted, depth first; the folders its listing skips — hidden ones such
    as ``.git``, ``node_modules`` — and symlinked folders below it are skipped); a
    directory that cannot be listed, the argument or one below it, is a plan with a
    :attr:`PlanArg.problem`. Every other argument is taken as given, even when it does
    not exist or is no plan file: the reader reports it, so nothing is dropped
    silently. A file reached twice is checked once.
    """
    seen: set[str] = set()
    out: list[PlanArg] = []
    for arg in args:
        if arg == STDIN:
            found: Iterable[PlanArg] = [PlanArg(stdin_name, None)]
        elif os.path.isdir(arg):
            found = _walk(arg, names)
        else:
            found = [PlanArg(arg, Path(arg))]
        for plan in found:
            key = plan.name if plan.path is None else os.path.normpath(plan.name)
            if key not in seen:
                seen.add(key)
                out.append(plan)
    return out


def _walk(top: str, names: PlanNames) -> Iterator[PlanArg]:
    """The plans below ``top``, and each directory ``os.walk`` could not list, in walk
    order (``os.walk`` reports those to ``onerror`` and goes on, else silently)."""
    unlisted: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(top, onerror=unlisted.append, followlinks=False):
        yield from _unlisted(unlisted, top)
        dirnames[:] = sorted(d for d in dirnames if walked_dir(d))
        for name in sorted(filenames):
            if names.matches(name):
                path = os.path.join(dirpath, name)
                yield PlanArg(path, Path(path))
    yield from _unlisted(unlisted, top)


def _unlisted(errors: list[OSError], top: str) -> Iterator[PlanArg]:
    for exc in errors:
        where = exc.filename if isinstance(exc.filename, str) else top
        yield PlanArg(where, Path(where), f"a directory that cannot be listed: {_os_reason(exc)}")
    errors.clear()


def read_plan(plan: PlanArg) -> str:
    """The plan's text (UTF-8, a leading BOM dropped), or :class:`Unreadable`."""
    if plan.problem is not None:
        raise Unreadable(plan.problem)
    if plan.path is None:
        return _decode(_read_stdin())
    return _decode(_read_regular_file(plan.path))


def _read_stdin() -> bytes:
    if sys.stdin is None:  # the descriptor was closed when the process started
        raise Unreadable("standard input is closed")
    try:
        return _read_bounded(sys.stdin.buffer)
    except OSError as exc:
        raise Unreadable(f"standard input: {_os_reason(exc)}") from None


def _read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file, at most :data:`MAX_BYTES` of them.

    ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for a
    writer; ``fstat`` on the open descriptor (not the name, which could be
    swapped) then refuses everything that is not a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise Unreadable(_os_reason(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise Unreadable(f"{kind}, not a plan file")
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return _read_bounded(stream)
    except OSError as exc:
        raise Unreadable(_os_reason(exc)) from None
    finally:
        os.close(fd)


def _read_bounded(stream: BinaryIO) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        chunk = stream.read(min(_CHUNK, MAX_BYTES + 1 - size))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    raise Unreadable(
        f"over {MAX_BYTES:,} bytes: more than the limit of {MAX_TEXT_CHARS:,} characters "
        "takes in UTF-8"
    )


def _decode(data: bytes) -> str:
    """The text as the stdio server's file store reads it (``file_text.decode``: BOM
    removed, every line end as LF), so that ``check`` and the server see the same plan."""
    try:
        text = decode(data).text
    except UnicodeDecodeError as exc:
        if utf16(data):
            raise Unreadable(
                "UTF-16 text (a UTF-16 byte-order mark), not UTF-8: save it as UTF-8"
            ) from None
        raise Unreadable(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start:,})"
        ) from None
    if len(text) > MAX_TEXT_CHARS:
        raise Unreadable(f"{len(text):,} characters; the limit is {MAX_TEXT_CHARS:,} characters")
    return text


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.EBADF:
        return "closed or not open for reading"
    return (exc.strerror or str(exc)).lower()
