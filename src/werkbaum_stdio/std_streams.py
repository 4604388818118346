"""Standard streams the three command lines can fail on: full, closed or gone.

A CI step writes ``werkbaum check --format sarif . > werkbaum.sarif`` to a disk that
may be full; a hook, cron job or MCP host may start a command with a standard
descriptor closed (a server's stdin and stdout are its pipes: a number left free
there would be taken by the next file opened, and the server would talk to it). Every
write to stdout or stderr therefore goes through :class:`_Guarded`, which turns a
failed write into :class:`OutputFailed` (one line and exit 2 in ``command_line.run``,
never a traceback and never the exit status of a broken plan). A reader that stopped
early (``| head -1``) is no failure: the rest of the output is dropped quietly and the
command ends with its own status, as ``check`` must (its status is about the plans).

A closed descriptor is held by ``/dev/null`` opened the other way round (stdin for
writing, stdout and stderr for reading): the number cannot be reused by a plan file or
an engine's pipe, and every read or write on it still fails as on a closed one.
"""

from __future__ import annotations

import errno
import io
import os
import select
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

_NAMES = {1: "standard output", 2: "standard error"}


class OutputFailed(Exception):
    """A write to stdout or stderr failed for a reason other than a reader that left."""

    def __init__(self, fd: int, error: OSError) -> None:
        super().__init__(f"cannot write to {_NAMES[fd]}: {_reason(error)}")
        self.fd = fd


def _reason(error: OSError) -> str:
    if error.errno == errno.EBADF:
        return "it is closed or not open for writing"
    return (error.strerror or str(error)).lower()


def write_waiting(fd: int, data: ReadableBuffer) -> int:
    """``os.write``, waiting for room as a blocking write would where the host made the
    descriptor non-blocking (node makes its own stdio so; answers were cut off mid-line
    and stderr lines lost); how many bytes it wrote."""
    while True:
        try:
            return os.write(fd, data)
        except BlockingIOError:
            select.select([], [fd], [])


class _Guarded(io.RawIOBase):
    """Descriptor ``fd`` for writing, with failures named (:class:`OutputFailed`)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._dropping = False
        """After a reader left or a failure was raised: the rest is nobody's to read."""

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer, /) -> int:
        size = memoryview(data).nbytes
        if self._dropping:
            return size
        try:
            return write_waiting(self._fd, data)
        except BrokenPipeError:  # the reader left (``| head``)
            self._dropping = True
            return size
        except OSError as exc:
            # Raised once; the flush at exit must not fail (and retry) again.
            self._dropping = True
            raise OutputFailed(self._fd, exc) from None


def _hold(fd: int, flags: int) -> bool:
    """Put ``/dev/null`` (opened with ``flags``) on ``fd`` if it is closed; True if it was."""
    try:
        os.fstat(fd)
    except OSError:
        held = os.open(os.devnull, flags)
        if held != fd:
            os.dup2(held, fd, inheritable=True)
            os.close(held)
        return True
    return False


def _text(fd: int, model: TextIO | None) -> TextIO:
    """A text stream over the guarded ``fd``, encoded as ``model`` was (UTF-8 if none)."""
    raw = _Guarded(fd)
    return io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=getattr(model, "encoding", None) or "utf-8",
        errors=getattr(model, "errors", None) or "strict",
        line_buffering=fd == 2 or raw.isatty(),
    )


def guard() -> None:
    """Guard the standard streams of this process (before anything opens a file)."""
    _hold(0, os.O_WRONLY)  # sys.stdin stays None: a closed stdin reads as closed
    _hold(1, os.O_RDONLY)
    _hold(2, os.O_RDONLY)
    sys.stdout = _text(1, sys.stdout)
    sys.stderr = _text(2, sys.stderr)


def flush() -> None:
    """Write what is buffered on stdout and stderr (:class:`OutputFailed` if it fails).

    To be called before exiting: Python's own flush at exit would report a failure as
    an ignored exception and exit 120.
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
