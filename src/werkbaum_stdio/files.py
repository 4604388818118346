"""The file store of the stdio adapter (spec §3, §4, §6, §10).

Plans are ``*.werkbaum`` files under the allowed roots. A read gives the
LF-normalised text (a UTF-8 BOM stripped) and its checksum; a write is a
compare-and-swap against the agent's base, done atomically under a
cross-process lock, so that two servers (or two agents) editing one file never
lose an update and a crash never leaves half a file.

Design, in short:

* **Lock on the directory, not on a file.** The write replaces the plan by
  ``os.replace`` — a new inode — so a lock held on the plan itself would guard
  an inode that is gone after the first write, and a second writer that opened
  the new inode would not wait. A sidecar ``.<name>.lock`` would work, but it
  is litter in the user's git work tree (``git status`` shows it, ``git add
  -A`` commits it), and deleting it after use re-opens the race. So the lock
  is ``flock(LOCK_EX)`` on the plan's directory: the directory's inode does
  not change, no file is created, the kernel drops the lock when a process
  dies (even by SIGKILL), and ``flock`` — unlike ``fcntl`` record locks — also
  excludes two threads of one process. It serialises writes of all plans in
  one directory, which is harmless: a write holds it for milliseconds. (On NFS
  Linux emulates ``flock`` with record locks, which need a writable fd; there
  the lock fails with a clear ``source_unavailable``.)
* **Atomic write.** Temp file in the same directory (so the rename stays on
  one file system), bytes written, the old file's mode applied, ``fsync``,
  ``os.replace``, then ``fsync`` of the directory so the rename itself is
  durable. A reader sees the old or the new file, never a mix. Temp files are
  hidden (``.<name>.<random>.werkbaum-tmp``) and never end in ``.werkbaum``;
  one left by a killed writer is removed by the next writer of that plan (it
  holds the directory lock, so no live writer can own such a file).
* **Line endings and BOM are the file's, not the agent's.** The text an agent
  sees is LF-only and BOM-free (checksums are defined over that); a write puts
  back CRLF if the current file has any ``\\r\\n``, and the BOM if it had one.
* **Errors** are the core's typed errors: missing file → ``not_found``
  (writing a new file is not supported: agents change existing plans); a
  directory, a FIFO, a permission problem → ``source_unavailable`` with the
  OS reason; more than 2,000,000 characters → ``too_large``; bytes that are
  not UTF-8 → ``invalid_argument`` naming the byte offset — the source names a
  file that is not a plan (plans are UTF-8, spec §3), which no retry or
  reconnect fixes, unlike the transient failures ``source_unavailable`` means.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from werkbaum_core.errors import InvalidArgument, NotFound, SourceUnavailable, TooLarge
from werkbaum_core.stores.protocol import Base, Op, Snapshot, conflict, current_as_base
from werkbaum_core.text import MAX_TEXT_CHARS, checksum, normalize_newlines
from werkbaum_stdio.roots import Roots

PLAN_SUFFIX = ".werkbaum"
BOM = b"\xef\xbb\xbf"
TEMP_SUFFIX = ".werkbaum-tmp"
"""Temp files end here (never in ``.werkbaum``), so no listing takes one for a plan."""

MAX_LISTED_PLANS = 1000
"""``list_plans`` stops after this many plans (a resource list must stay small)."""
MAX_WALKED_DIRS = 10_000
"""``list_plans`` visits at most this many directories, so a huge tree cannot hang it."""
SKIPPED_DIRS = frozenset({".git", "node_modules"})
"""Never walked (besides every hidden folder): version-control data and dependencies."""

LOCK_TIMEOUT = 10.0
"""Seconds a writer waits for the directory lock before giving up with a clear error."""

_MAX_BYTES_PER_CHAR = 4


@dataclass(frozen=True)
class _Raw:
    """A file as read: the agent's text plus what a write must put back."""

    text: str
    crlf: bool
    bom: bool
    mode: int

    @property
    def snapshot(self) -> Snapshot:
        return Snapshot(text=self.text, base=Base(checksum=checksum(self.text), version=None))


class FileStore:
    """The :class:`~werkbaum_core.stores.protocol.Store` for file sources under the roots."""

    def __init__(
        self,
        roots: Roots,
        *,
        max_chars: int = MAX_TEXT_CHARS,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        self.roots = roots
        self.max_chars = max_chars
        self.lock_timeout = lock_timeout

    def read(self, source: str) -> Snapshot:
        """The current text (LF, no BOM) with ``Base(checksum, version=None)``."""
        return _read_file(self.roots.resolve(source), source, self.max_chars).snapshot

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        """The current text if it is still the agent's base; files keep no history."""
        return current_as_base(source, self.read(source), base)

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        """Replace the file by ``new_text`` iff it still has the ``base`` checksum.

        ``ops`` are not needed: the file is replaced as a whole, atomically,
        and the compare-and-swap under the lock guarantees they applied to
        exactly the base. The check happens after the lock is taken, so a
        concurrent writer's change is seen and reported as a conflict.
        ``author`` is ignored: a file has no place for it (git records who
        commits).
        """
        path = self.roots.resolve(source)
        text = normalize_newlines(new_text)
        _check_size(text, source, self.max_chars)
        _check_encodable(text, source)
        with _locked_dir(path.parent, source, self.lock_timeout) as dir_fd:
            current = _read_file(path, source, self.max_chars)
            if current.snapshot.base.checksum != base.checksum:
                raise conflict(source, current.snapshot)
            _remove_orphans(path)
            _replace_atomically(path, _encode(text, current), current.mode, source)
            _fsync_dir(dir_fd)
        return Snapshot(text=text, base=Base(checksum=checksum(text), version=None))

    def list_plans(
        self, limit: int = MAX_LISTED_PLANS, *, max_dirs: int = MAX_WALKED_DIRS
    ) -> list[Path]:
        """The ``*.werkbaum`` files under the roots, as absolute realpaths.

        Realpaths because they are what :meth:`Roots.resolve` gives for the
        same file, so a listed path is a valid source as it stands, and a
        plan reachable twice (overlapping roots, a symlink) is listed once.
        Order: roots in the given order, each walked depth-first with names
        sorted — deterministic, so the cut at ``limit`` is too. Skipped:
        ``.git``, ``node_modules``, hidden folders and hidden files (temp
        files and editor backups), symlinked folders (never followed), and
        symlinks that lead out of the roots.
        """
        found: dict[Path, None] = {}
        for path in _walk_plans(self.roots.paths, max_dirs):
            if len(found) >= limit:
                break
            real = Path(os.path.realpath(path))
            if self.roots.contains(real) and real.is_file():
                found.setdefault(real)
        return list(found)


def _read_file(path: Path, source: str, max_chars: int) -> _Raw:
    """Read and decode one plan file, mapping every failure to a typed error.

    ``O_NONBLOCK`` keeps a FIFO from hanging the server, ``O_NOFOLLOW`` refuses
    a final symlink swapped in after the path was resolved, and the size is
    bounded before the bytes are read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NotFound(f"no file {source} ({path})", source=source) from None
    except NotADirectoryError:
        raise NotFound(f"no file {source} ({path})", source=source) from None
    except OSError as exc:
        raise _unavailable(source, path, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = "is a directory" if stat.S_ISDIR(info.st_mode) else "is not a regular file"
            raise SourceUnavailable(f"{source} ({path}) {reason}", source=source, reason=reason)
        max_bytes = max_chars * _MAX_BYTES_PER_CHAR + len(BOM)
        if info.st_size > max_bytes:
            raise _too_large(source, max_chars, None)
        data = _read_all(fd, max_bytes + 1, source, path)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _too_large(source, max_chars, None)
    return _decode(data, source, max_chars, stat.S_IMODE(info.st_mode))


def _read_all(fd: int, limit: int, source: str, path: Path) -> bytes:
    """Up to ``limit`` bytes (the file may grow while it is read)."""
    chunks: list[bytes] = []
    remaining = limit
    try:
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise _unavailable(source, path, exc) from None
    return b"".join(chunks)


def _decode(data: bytes, source: str, max_chars: int, mode: int) -> _Raw:
    """Strip a BOM, decode strictly, normalise newlines, and remember the style."""
    bom = data.startswith(BOM)
    body = data[len(BOM) :] if bom else data
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(BOM) if bom else 0)
        raise InvalidArgument(
            f"{source} is not UTF-8 (invalid byte at offset {offset}); plans are UTF-8 text",
            source=source,
            offset=offset,
        ) from None
    text = normalize_newlines(decoded)
    _check_size(text, source, max_chars)
    return _Raw(text=text, crlf=b"\r\n" in body, bom=bom, mode=mode)


def _encode(text: str, current: _Raw) -> bytes:
    """The bytes to store: the agent's LF text in the file's own line-ending style and BOM."""
    if current.crlf:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    return BOM + data if current.bom else data


def _check_size(text: str, source: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise _too_large(source, max_chars, len(text))


def _check_encodable(text: str, source: str) -> None:
    """Refuse text UTF-8 cannot carry (lone surrogates) before anything is locked."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(
            f"the new text for {source} cannot be stored as UTF-8 (character {exc.start})",
            source=source,
            offset=exc.start,
        ) from None


def _too_large(source: str, max_chars: int, size: int | None) -> TooLarge:
    told = f"has {size:,} characters" if size is not None else "is too large"
    return TooLarge(
        f"{source} {told}; the limit is {max_chars:,} characters",
        source=source,
        limit=max_chars,
        size=size,
    )


def _unavailable(source: str, path: Path, exc: OSError) -> SourceUnavailable:
    reason = exc.strerror or type(exc).__name__
    return SourceUnavailable(
        f"cannot use {source} ({path}): {reason}", source=source, reason=reason
    )


@contextlib.contextmanager
def _locked_dir(directory: Path, source: str, timeout: float) -> Iterator[int]:
    """Hold ``flock(LOCK_EX)`` on the directory; yields its fd (also used to fsync it).

    Polls with ``LOCK_NB`` instead of blocking, so a stuck peer gives a clear
    error after ``timeout`` seconds instead of a hung tool call.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unavailable(source, directory, exc) from None
    try:
        _acquire(fd, directory, source, timeout)
        yield fd
    finally:
        os.close(fd)  # closing the only fd of the open file description drops the lock


def _acquire(fd: int, directory: Path, source: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise SourceUnavailable(
                    f"{source} is being written by another process; gave up after {timeout:g} s",
                    source=source,
                    reason="locked",
                ) from None
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
        except OSError as exc:
            raise _unavailable(source, directory, exc) from None


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def _remove_orphans(path: Path) -> None:
    """Delete temp files of this plan left by a killed writer (caller holds the lock)."""
    prefix = _temp_prefix(path)
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _replace_atomically(path: Path, data: bytes, mode: int, source: str) -> None:
    """Write a sibling temp file completely and durably, then rename it over ``path``."""
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=_temp_prefix(path), suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise _unavailable(source, path.parent, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise _unavailable(source, path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _fsync_dir(dir_fd: int) -> None:
    """Make the rename durable, where the file system can.

    Best effort on purpose: the new file is already in place and visible, so
    reporting a failure here would tell the agent its write failed when it
    did not (and some file systems refuse ``fsync`` on a directory).
    """
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def _walk_plans(roots: tuple[Path, ...], max_dirs: int) -> Iterator[str]:
    """Plan file paths under the roots, depth-first with sorted names, within ``max_dirs``."""
    visited = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            visited += 1
            if visited > max_dirs:
                return
            dirnames[:] = sorted(d for d in dirnames if not _skipped_dir(d))
            for name in sorted(filenames):
                if name.endswith(PLAN_SUFFIX) and not name.startswith("."):
                    yield os.path.join(dirpath, name)


def _skipped_dir(name: str) -> bool:
    return name in SKIPPED_DIRS or name.startswith(".")
