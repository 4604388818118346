"""The file store of the stdio adapter (spec §3, §4, §6, §10; hardening items 1-3, 12).

Plans are plan files (``*.werkbaum`` and ``--plan-glob`` patterns,
:mod:`.plan_names`) under the allowed roots (:mod:`.roots`). A read gives the
agent's text (:mod:`.file_text`: BOM removed, CRLF as LF) and its checksum;
a write is a compare-and-swap against the agent's base, done atomically
under a cross-process lock, so that two servers (or two agents) editing one
file never lose an update and a crash never leaves half a file; a create
makes a new plan without ever replacing one.

What the store guarantees, and how:

* **Only plan files, only under the roots, whatever races.** The source's
  name is checked before anything is opened; then the path is walked from
  the root's directory descriptor, one component at a time with
  ``O_NOFOLLOW``, links resolved and checked at each step
  (:mod:`.confined`); the real name is checked again; only then is the file
  opened — relative to the held directory descriptor, with ``O_NOFOLLOW``
  and ``O_NONBLOCK`` (a FIFO cannot hang the server), and ``fstat`` must
  show a regular file. The lock, the temp file, the rename and the fsync all
  use that same descriptor. A component swapped for a symlink at any moment
  makes the call fail with a documented error — or, if the swap came before
  the walk reached it, be followed under the containment rule — but never
  reach a file outside. A file that changes kind between the walk and the
  open (it became a symlink) is retried twice, then ``source_unavailable``
  with ``reason: "changing"``.
* **Not a file linked in, not a file or folder the person locked.** A file with more
  than one hard link is refused for reads and writes (``forbidden_source``,
  ``reason: "hard_link"``): the other name may be outside the roots, and a
  rename would split the two silently. A write to a file without its
  owner's write bit, or that the server's user may not write, is refused
  (``forbidden_source``, ``reason: "read_only"``) — also for root, which the
  kernel would let through: the mode is the person's intent, and a rename
  would replace the file regardless of it. The same holds for the plan's
  directory, where writes and creates put their new file.
* **Lock on the directory, not on a file.** A write replaces the plan by a
  rename — a new inode — so a lock held on the plan itself would guard an
  inode that is gone after the first write. A sidecar ``.<name>.lock`` is
  litter in the user's git work tree. So the lock is ``flock(LOCK_EX)`` on
  the plan's directory (the held descriptor): its inode does not change, no
  file is created, the kernel drops the lock when a process dies (even by
  SIGKILL), and ``flock`` also excludes two threads of one process. It
  serialises writes of all plans in one directory — milliseconds each. (On
  NFS the lock fails with a clear ``source_unavailable``.)
* **Atomic write.** A hidden temp file in the same directory
  (``.werkbaum-<16 hex>.werkbaum-tmp``: never a plan name, and of one length
  whatever the plan's name, so every name up to ``NAME_MAX`` can be
  written), the bytes, what the old file carried besides (its mode without
  set-ID bits, ACL, ``user.*`` attributes, group — and owner, when running as
  root: :func:`_keep_identity`), ``fsync``. A person's editor takes no lock,
  so right before the swap the plan must still be the file that was read —
  device, inode, size, mtime, change time (which no save can put back) and
  the bytes themselves;
  then ``renameat2(RENAME_EXCHANGE)`` swaps the new file in and the old one
  out under the temp name, where it is checked once more (same inode, same
  bytes) and only then removed; a change found either time is swapped back
  and retried, so it ends as ``conflict`` if the text changed. What remains
  is a program that opened the plan before and writes into it after that
  last check. Without the exchange (another OS or file system) a plain
  ``renameat`` follows the first check. Then ``fsync`` of the directory. A
  reader sees the old or the new file, never a mix. A temp file
  left by a killed writer is removed by the next writer in that directory
  (it holds the lock, so no live writer owns one). A stop signal
  (SIGTERM, SIGINT, SIGHUP: :mod:`werkbaum_core.engine.lifetime`) removes the
  temp files of writes in flight before the process dies, and no new one is
  made after it; the plan is then the old file (or, if the rename came
  first, the new one).
* **Atomic create.** The same temp file, then ``renameat2(RENAME_NOREPLACE)``
  (``link`` + ``unlink`` where the file system lacks it): the plan name
  appears with its whole text or not at all, an existing file is never
  replaced, and of two racing creators one gets ``conflict``. No directory is
  created: the directory must exist under a root.
* **Line endings and BOM are the file's.** Untouched lines keep their exact
  bytes; CRLF, LF and a lone CR each end a line; see :mod:`.file_text` for the
  rules and how they stay consistent with the documents API's checksum.
* **Also for the git mirror.** :func:`read_bytes` and :func:`replace_file`
  give :mod:`werkbaum_stdio.mirror` the same reads and the same temp file,
  lock and rename, in a directory it reached with the same walk.
* **Errors** are the core's typed errors, never raw ``[Errno …]`` text:
  missing file or directory → ``not_found``; a directory, a FIFO, a
  permission problem, a link loop → ``source_unavailable`` with the OS
  reason; more than 2,000,000 characters → ``too_large``; bytes that are not
  UTF-8 → ``invalid_argument`` naming the byte offset (plans are UTF-8,
  spec §3; no retry fixes it).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from werkbaum_core.engine.lifetime import on_stop
from werkbaum_core.errors import (
    Conflict,
    ForbiddenSource,
    InvalidArgument,
    NotFound,
    SourceUnavailable,
    TooLarge,
    WerkbaumError,
)
from werkbaum_core.stores.protocol import Base, Op, Snapshot, conflict, current_as_base
from werkbaum_core.text import MAX_TEXT_CHARS, checksum
from werkbaum_stdio import plan_list
from werkbaum_stdio.confined import Changed, Place, unavailable, walk
from werkbaum_stdio.file_text import BOM, FileText, decode, encode_new, encode_update, utf16
from werkbaum_stdio.plan_list import PlanPage
from werkbaum_stdio.plan_names import TEMP_SUFFIX, PlanNames
from werkbaum_stdio.roots import Roots, check_source, split_path

__all__ = ["TEMP_SUFFIX", "FileStore", "PlanPage", "read_bytes", "replace_file"]

MAX_WALKED_DIRS = plan_list.MAX_WALKED_DIRS

LOCK_TIMEOUT = 10.0
"""Seconds a writer waits for the directory lock before giving up with a clear error."""
ATTEMPTS = 3
"""Tries of one read or write when the file changes kind between walk and open."""

MAX_BYTES_PER_CHAR = 4
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC
TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
TEMP_PREFIX = ".werkbaum-"
TEMP_NAME = re.compile(rf"{re.escape(TEMP_PREFIX)}[0-9a-f]{{16}}{re.escape(TEMP_SUFFIX)}")
"""The store's temp file names (39 bytes): the plan's name is not part of them, so a plan
name of any legal length still leaves room, and a name of exactly this shape is one of
ours (removed as an orphan under the directory lock)."""

T = TypeVar("T")

Attributes = tuple[tuple[str, bytes], ...]
"""Extended attributes of a file, ``(name, value)``."""
ACL_ACCESS = "system.posix_acl_access"

Stamp = tuple[int, int, int, int, int]
"""``(device, inode, size, mtime_ns, ctime_ns)`` of a file: any write, truncate, chmod or
``utime`` moves the change time, and nothing can set it back (a save that keeps the size and
puts the old mtime back, as ``cp -p`` and ``rsync -t`` do, changes it still)."""


@attrs.frozen
class _Current:
    """A plan file as read: its text and what a write must keep or check."""

    file: FileText
    raw: bytes
    """The file's bytes as read: compared again right before and right after the swap."""
    mode: int
    uid: int
    gid: int
    stamp: Stamp
    """What ``stat`` said when it was read; compared again before the swap."""
    attributes: Attributes = ()
    """For a write: the extended attributes the new file gets (:func:`_attributes`)."""

    @property
    def snapshot(self) -> Snapshot:
        return _snapshot(self.file)


class FileStore:
    """The :class:`~werkbaum_core.stores.protocol.Store` for plan files under the roots.

    ``plan_globs`` are the ``--plan-glob`` patterns (file names that are
    plans besides ``*.werkbaum``).
    """

    def __init__(
        self,
        roots: Roots,
        *,
        plan_globs: Sequence[str] = (),
        max_chars: int = MAX_TEXT_CHARS,
        lock_timeout: float = LOCK_TIMEOUT,
    ) -> None:
        self.roots = roots
        self.plan_names = PlanNames.with_globs(plan_globs)
        self.max_chars = max_chars
        self.lock_timeout = lock_timeout

    # ------------------------------------------------------------------ the Store protocol

    def read(self, source: str) -> Snapshot:
        """The current text (see :mod:`.file_text`) with ``Base(checksum, version=None)``."""
        return _retrying(source, lambda: self._read_once(source))

    def base_text(self, source: str, base: Base) -> tuple[str, Snapshot]:
        """The current text if it is still the agent's base; files keep no history."""
        return current_as_base(source, self.read(source), base)

    def write(
        self, source: str, base: Base, ops: list[Op], new_text: str, *, author: str = "Agent"
    ) -> Snapshot:
        """Replace the file by ``new_text`` iff it still has the ``base`` checksum.

        ``ops`` are not needed: the file is replaced as a whole, atomically,
        and the compare-and-swap under the lock guarantees they applied to
        exactly the base. ``author`` is ignored: a file has no place for it
        (git records who commits). Returns the snapshot of what the file now
        holds (which a later read returns unchanged).
        """
        self._check_text(new_text, source)
        return _retrying(source, lambda: self._write_once(source, base, new_text))

    # ------------------------------------------------------------------ beyond the protocol

    def create(self, source: str, text: str) -> Snapshot:
        """Create the plan file ``source`` with ``text``; it must not exist yet.

        The name must be a plan file's, and its directory must exist under a
        root (relative: the root that has that directory; several → ``invalid_argument``).
        ``conflict`` if the file exists — also when another process creates it
        at the same moment; its ``current`` carries the existing plan's text
        and base when it can be read, so the agent can write against it. The
        file gets the text's bytes (a leading U+FEFF as its BOM) and the mode a
        new file gets (0666 minus the umask).
        """
        self._check_text(text, source)
        data = encode_new(text)
        created = _snapshot(decode(data))
        with self._place(source, follow=False) as place, _locked(place, source, self.lock_timeout):
            existing = _lstat(place, source)
            if existing is not None:
                raise self._exists_conflict(place, source, existing)
            _check_directory_writable(place, source)
            _remove_orphans(place)
            with _temp_file(place, data, source, None, None) as temp:
                _publish_new(place, temp, source)
            _fsync_dir(place.fd)
        return created

    def check_new(self, source: str) -> None:
        """What :meth:`create` would say about the name, writing nothing (a dry run):
        ``conflict`` if it exists, ``not_found`` if its directory does not, the plan-file
        and root rules as for every source."""
        with self._place(source, follow=False) as place:
            existing = _lstat(place, source)
            if existing is not None:
                raise self._exists_conflict(place, source, existing)
            _check_directory_writable(place, source)

    def list_plans(
        self,
        cursor: str | None = None,
        *,
        limit: int = plan_list.DEFAULT_PAGE,
        lines: bool = True,
        max_dirs: int = MAX_WALKED_DIRS,
    ) -> PlanPage:
        """One page of the plan files under the roots, in a stable order.

        For ``resources/list`` and ``werkbaum_list``: call with ``cursor=None``,
        then with the page's ``next_cursor`` until it is None. Each
        :class:`~werkbaum_stdio.plan_list.PlanEntry` has ``source`` (relative
        to its root, absolute when another root has the same relative path —
        what to pass back as a source, or as ``werkbaum://file/`` +
        :func:`werkbaum_stdio.sources.file_uri`), ``path`` and ``lines`` (the
        line count a read reports; None with ``lines=False``, or for a file over
        the size limit). ``limit`` (default 100) is clamped to 1…1,000; at most
        ``max_dirs`` directories are opened per call, and a page the bound cut
        short still has a ``next_cursor``. The cursor is opaque (a position,
        not an offset: plans added or removed elsewhere neither repeat nor skip
        the rest); one this server did not make is ``invalid_argument``. Order,
        skipped entries and bounds: :mod:`werkbaum_stdio.plan_list`.
        """
        return plan_list.list_page(
            self.roots,
            self.plan_names,
            cursor,
            limit=limit,
            lines=lines,
            max_dirs=max_dirs,
            max_bytes=_max_bytes(self.max_chars),
        )

    # ------------------------------------------------------------------ finding the file

    def _place(self, source: str, *, follow: bool = True) -> Place:
        """Where ``source`` is, as a held directory and a name; every rule checked.

        ``follow``: for an existing file (a final symlink inside the roots is
        resolved); without it, for a file to create (the name as given). The roots
        are read once: the client may change them (MCP roots) while a call runs, and
        every step of one call must check against the same ones.
        """
        check_source(source)
        roots = self.roots
        if os.path.isabs(source):
            located = roots.locate(source)
            if located is None:
                raise roots.outside(source)
            root, parts = located
            self.plan_names.check(source, parts)
        else:
            parts = split_path(source)
            self.plan_names.check(source, parts)
            probe = functools.partial(self._probe, roots, follow, parts, source)
            chosen = roots.candidate(source, probe)
            if chosen is None:
                raise _nowhere(roots, source, follow)
            root = chosen
        try:
            place = walk(roots, root, parts, source, follow=follow)
        except NotFound:
            if follow:
                raise
            raise _nowhere(roots, source, existing=False) from None
        try:
            self.plan_names.check(source, [place.name])
        except BaseException:
            place.close()
            raise
        return place

    @staticmethod
    def _probe(
        roots: Roots, follow: bool, parts: list[str], source: str, root: Path
    ) -> Hashable | None:
        """Probe of :meth:`Roots.candidate`: what ``source`` is under ``root``, if anything.

        For an existing file (``follow``) the file's identity; for a create the
        identity of its directory (that directory exists there).
        """
        try:
            place = walk(roots, root, parts, source, follow=follow)
        except NotFound:
            return None
        with place:
            if not follow:
                info = os.fstat(place.fd)
                return info.st_dev, info.st_ino, place.name
            existing = _lstat(place, source)
            return None if existing is None else (existing.st_dev, existing.st_ino)

    # ------------------------------------------------------------------ reading and writing

    def _read_once(self, source: str) -> Snapshot:
        with self._place(source) as place:
            return self._load(place, source).snapshot

    def _load(self, place: Place, source: str, *, attributes: bool = False) -> _Current:
        """Open the plan relative to its held directory, check it, read and decode it
        (``attributes``: for a write, with the extended attributes it keeps)."""
        data, info, kept = _read_regular(
            place, source, self.max_chars, single_name=True, attributes=attributes
        )
        try:
            file = decode(data)
        except UnicodeDecodeError as exc:
            why = f"invalid byte at offset {exc.start}"
            if utf16(data):
                why = "it is UTF-16: it starts with a UTF-16 byte-order mark; save it as UTF-8"
            raise InvalidArgument(
                f"{source} is not UTF-8 ({why}); plans are UTF-8 text",
                source=source,
                offset=exc.start,
            ) from None
        _check_size(file.text, source, self.max_chars)
        return _Current(
            file=file,
            raw=data,
            mode=stat.S_IMODE(info.st_mode),
            uid=info.st_uid,
            gid=info.st_gid,
            stamp=_stamp_of(info),
            attributes=kept,
        )

    def _write_once(self, source: str, base: Base, new_text: str) -> Snapshot:
        with self._place(source) as place, _locked(place, source, self.lock_timeout):
            current = self._load(place, source, attributes=True)
            _check_writable(current, source, place)
            _check_directory_writable(place, source)
            _check_replaceable(place, current, source)
            if current.snapshot.base.checksum != base.checksum:
                raise conflict(source, current.snapshot)
            _remove_orphans(place)
            data = encode_update(new_text, current.file)
            if data == current.raw:  # the same bytes: no new file (an editor would reload)
                return current.snapshot
            written = decode(data)
            _check_size(written.text, source, self.max_chars)
            _replace_atomically(place, data, current, source)
            _fsync_dir(place.fd)
        return _snapshot(written)

    def _exists_conflict(self, place: Place, source: str, existing: os.stat_result) -> Conflict:
        """The ``conflict`` of a create whose name exists (with the plan, if it is one)."""
        message = f"{source} exists already; read it and write against its base instead"
        try:
            if not stat.S_ISREG(existing.st_mode):
                raise Changed  # a link, a directory …: nothing to offer as a base
            current = self._load(place, source).snapshot
        except (WerkbaumError, Changed):
            return Conflict(message, source=source)
        return Conflict(
            message, source=source, current={"text": current.text, "base": current.base.to_json()}
        )

    def _check_text(self, text: str, source: str) -> None:
        """Refuse, before anything is locked, a text too large or not storable as UTF-8."""
        _check_size(text, source, self.max_chars)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidArgument(
                f"the new text for {source} cannot be stored as UTF-8 (character {exc.start})",
                source=source,
                offset=exc.start,
            ) from None


def _max_bytes(max_chars: int) -> int:
    """The most bytes a text of ``max_chars`` characters can take in a file (UTF-8 and a BOM)."""
    return max_chars * MAX_BYTES_PER_CHAR + len(BOM)


def _snapshot(file: FileText) -> Snapshot:
    return Snapshot(text=file.text, base=Base(checksum=checksum(file.text), version=None))


def _retrying(source: str, attempt: Callable[[], T]) -> T:
    """Run ``attempt`` again when the file changed kind under it; then give up clearly."""
    for _ in range(ATTEMPTS):
        try:
            return attempt()
        except Changed:
            continue
    raise SourceUnavailable(
        f"{source} kept changing while it was used; try again", source=source, reason="changing"
    )


def _check_plain_file(info: os.stat_result, source: str, path: Path, *, single_name: bool) -> None:
    """A regular file (with one name, if ``single_name``), or the documented refusal."""
    if not stat.S_ISREG(info.st_mode):
        reason = "is a directory" if stat.S_ISDIR(info.st_mode) else "is not a regular file"
        raise SourceUnavailable(f"{source} ({path}) {reason}", source=source, reason=reason)
    if single_name and info.st_nlink > 1:
        raise ForbiddenSource(
            f"{source} has {info.st_nlink} hard links; a plan file with other names is refused "
            "(another name may lie outside the roots)",
            source=source,
            reason="hard_link",
        )


def _check_writable(current: _Current, source: str, place: Place) -> None:
    """Refuse a write the file's mode says no to — for every user, root included.

    The mode bits are the intent: the owner's write bit must be set, and the bit
    that applies to the server's user too. The kernel's own test (``faccessat``)
    must agree as well, which honours what the mode bits do not show: an ACL that
    gives a user other than root read access only, an immutable or append-only
    file (``chattr +i``/``+a``, binding root too), a read-only file system. Each
    is the person's no, although the rename that replaces the file would not ask
    (or would fail only after the new file is written).
    """
    path = place.path
    if not _writable(current.mode, current.uid, current.gid):
        raise ForbiddenSource(
            f"{source} ({path}) is read-only (mode {current.mode:04o}); the server does not "
            "write files made read-only — make it writable (chmod u+w) if agents may change it",
            source=source,
            reason="read_only",
        )
    if _may_write(place):
        return
    if os.fstatvfs(place.fd).f_flag & os.ST_RDONLY:
        why = "it is on a read-only file system (mounted read-only)"
    elif os.geteuid() == 0:
        why = "it is immutable or append-only (chattr +i / +a)"
    else:
        why = (
            f"the server's user (uid {os.geteuid()}) may not write it: its ACL, or an "
            "immutable or append-only attribute (chattr +i / +a), says no"
        )
    raise ForbiddenSource(
        f"{source} ({path}) is read-only: {why}; the server does not write it",
        source=source,
        reason="read_only",
    )


def _may_write(place: Place) -> bool:
    """The kernel's answer to "may this process write the file ``place`` names?"."""
    try:
        return os.access(place.name, os.W_OK, dir_fd=place.fd, effective_ids=True)
    except (OSError, NotImplementedError):
        return True  # no answer here: the mode bits decided


def _check_directory_writable(place: Place, source: str) -> None:
    """The same for the plan's directory, where a write or create puts its new file: a
    directory made read-only keeps its plans as they are, also from a server run as root;
    so does a file system mounted read-only. (And a directory this user cannot list —
    held as a path only — is no place for a write: a dry run says so as a create would.)"""
    if fcntl.fcntl(place.fd, fcntl.F_GETFL) & getattr(os, "O_PATH", 0):
        raise _unlistable(place, source)
    if os.fstatvfs(place.fd).f_flag & os.ST_RDONLY:
        raise ForbiddenSource(
            f"{source}: its directory {place.path.parent} is on a read-only file system "
            "(mounted read-only); the server does not write there",
            source=source,
            reason="read_only",
        )
    info = os.fstat(place.fd)
    if not _writable(stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid):
        directory = place.path.parent
        raise ForbiddenSource(
            f"{source}: its directory {directory} is read-only (mode "
            f"{stat.S_IMODE(info.st_mode):04o}); the server does not write into a directory "
            "made read-only — make it writable (chmod u+w) if agents may change its plans",
            source=source,
            reason="read_only",
        )


def _check_replaceable(place: Place, current: _Current, source: str) -> None:
    """Refuse up front what the kernel would refuse at the swap: in a sticky directory
    (mode 1777, as ``/tmp``) only the file's owner, the directory's owner and root may
    replace a file (round 26 F5: "Operation not permitted" after the whole temp file)."""
    info = os.fstat(place.fd)
    euid = os.geteuid()
    if info.st_mode & stat.S_ISVTX and euid not in (0, current.uid, info.st_uid):
        raise ForbiddenSource(
            f"{source} ({place.path}) belongs to another user (uid {current.uid}) in a sticky "
            f"directory (mode {stat.S_IMODE(info.st_mode):04o}, as /tmp), where only its "
            "owner may replace it; the server writes a plan by replacing it — move it to a "
            "folder of its own, or let its owner write it",
            source=source,
            reason="read_only",
        )


def _cannot_replace(source: str, exc: OSError, path: Path) -> SourceUnavailable:
    """The swap's failure as the documented error; a mount point says what to do."""
    if exc.errno == errno.EBUSY:
        return SourceUnavailable(
            f"{source} ({path}) is a mount point — a file mounted into place on its own, as "
            "`docker run -v FILE:…` does — and cannot be replaced; the server writes a plan "
            "by renaming a new file over it: mount its folder instead",
            source=source,
            reason="mount_point",
        )
    return unavailable(source, exc, path)


def _writable(mode: int, uid: int, gid: int) -> bool:
    euid = os.geteuid()
    if euid == 0 or uid == euid:
        return bool(mode & stat.S_IWUSR)
    if gid == os.getegid() or gid in os.getgroups():
        return bool(mode & stat.S_IWUSR) and bool(mode & stat.S_IWGRP)
    return bool(mode & stat.S_IWUSR) and bool(mode & stat.S_IWOTH)


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
        raise unavailable(source, exc, path) from None
    return b"".join(chunks)


def _check_size(text: str, source: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise _too_large(source, max_chars, len(text))


def _too_large(source: str, max_chars: int, size: int | None) -> TooLarge:
    return TooLarge.over(source, max_chars, size=size, source=source)


@contextlib.contextmanager
def _locked(place: Place, source: str, timeout: float) -> Iterator[None]:
    """Hold ``flock(LOCK_EX)`` on the place's directory (released when its fd closes).

    Polls with ``LOCK_NB`` instead of blocking, so a stuck peer gives a clear
    error after ``timeout`` seconds instead of a hung tool call.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            fcntl.flock(place.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
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
            if exc.errno == errno.EBADF:  # held as a path only (:func:`.confined.open_dir`)
                raise _unlistable(place, source) from None
            raise unavailable(source, exc, place.path.parent) from None
    try:
        yield
    finally:
        fcntl.flock(place.fd, fcntl.LOCK_UN)


def _unlistable(place: Place, source: str) -> SourceUnavailable:
    mode = stat.S_IMODE(os.fstat(place.fd).st_mode)
    return SourceUnavailable(
        f"{source}: its directory {place.path.parent} cannot be listed by the server's user "
        f"(mode {mode:04o}), and a write locks and lists it — make it readable (chmod u+r) "
        "if agents may change its plans",
        source=source,
        reason="unlistable",
    )


def _lstat(place: Place, source: str) -> os.stat_result | None:
    """The entry under the name, if any (a dangling symlink counts: never create through one)."""
    try:
        return os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise unavailable(source, exc, place.path) from None


def _remove_orphans(place: Place) -> None:
    """Delete temp files left in the directory by a killed writer (caller holds the lock).

    Every writer of this directory — of any plan, in any process, the git
    mirror too — makes its temp file only while it holds the lock, so each
    one found now is an orphan.
    """
    with contextlib.suppress(OSError):
        for name in os.listdir(place.fd):
            if TEMP_NAME.fullmatch(name):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=place.fd)


class _LiveTemps:
    """The temp files of writes in flight, for a stop signal to remove before the process dies.

    The signal handler runs in the main thread while writes go on in worker
    threads, and the process then dies without unwinding them. Creating a
    temp file and noting it happen under one lock, so the handler sees every
    temp file there is; after it, none is made (the write fails, the plan
    stays as it was). A noted descriptor is the writer's held directory,
    open until the note is gone.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.files: set[tuple[int, str]] = set()
        self.stopping = False

    def create(self, place: Place, name: str, mode: int) -> int:
        with self.lock:
            if self.stopping:
                raise InterruptedError(errno.EINTR, "the server is stopping")
            fd = os.open(name, TEMP_FLAGS, mode, dir_fd=place.fd)
            self.files.add((place.fd, name))
        return fd

    def forget(self, place: Place, name: str) -> None:
        with self.lock:
            self.files.discard((place.fd, name))

    def remove_all(self) -> None:
        """Remove every temp file in flight; called from a signal handler, so bounded."""
        if not self.lock.acquire(timeout=1.0):
            return
        try:
            self.stopping = True
            for dir_fd, name in self.files:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dir_fd)
        finally:
            self.lock.release()


_LIVE = _LiveTemps()
on_stop(_LIVE.remove_all)


@contextlib.contextmanager
def _temp_file(
    place: Place,
    data: bytes,
    source: str,
    mode: int | None,
    owner: tuple[int, int] | None,
    attributes: Attributes = (),
) -> Iterator[str]:
    """A complete, durable temp file with ``data`` in the held directory; its name.

    The body renames (or links) it into place; whatever ends the body
    otherwise, the temp file is removed. With ``mode`` it is created 0600 and
    then given what the file it replaces had (:func:`_keep_identity`: owner or
    group, ACL and attributes, ``mode``), so a private plan is never readable by
    others on the way; without, 0666 minus the umask, as any new file.
    """
    name = f"{TEMP_PREFIX}{secrets.token_hex(8)}{TEMP_SUFFIX}"
    try:
        fd = _LIVE.create(place, name, 0o666 if mode is None else 0o600)
    except OSError as exc:
        raise unavailable(source, exc, place.path.parent) from None
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if mode is not None:
                    _keep_identity(handle.fileno(), mode, owner, attributes)
                os.fsync(handle.fileno())
        except OSError as exc:
            raise unavailable(source, exc, place.path) from None
        yield name
    except _Kept:
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=place.fd)
        raise
    finally:
        _LIVE.forget(place, name)


def _keep_identity(
    fd: int, mode: int, owner: tuple[int, int] | None, attributes: Attributes
) -> None:
    """Give the new file ``fd`` what the file it replaces had besides its bytes.

    * ``owner`` (uid, gid of the file replaced; None where none is, as for a git mirror
      file still to be made): both when running as root; otherwise the group, when it
      is one of the server user's (chown's own rule) — a plan shared through its group stays
      writable for the group. Best effort: where the kernel says no, the file is the
      server user's, as any file it creates.
    * with ``owner``, ``attributes`` (:func:`_attributes`): the POSIX ACL and the
      ``user.*`` attributes. A plan that had no ACL gets none, also where the folder's
      default ACL gave the new file one.
    * ``mode``, last (an ACL sets the group bits as its mask; a chown clears set-id
      bits), without the set-user-ID and set-group-ID bits: a write clears those, as
      the kernel does for any write by an unprivileged process — a set-ID plan of
      another user must not become a set-ID file of the server's user with the text an
      agent wrote.
    """
    if owner is not None:  # a file is replaced
        uid, gid = owner
        with contextlib.suppress(OSError):
            if os.geteuid() == 0:
                os.fchown(fd, uid, gid)
            elif os.fstat(fd).st_gid != gid:
                os.fchown(fd, -1, gid)
        if ACL_ACCESS not in dict(attributes) and hasattr(os, "removexattr"):  # Linux
            with contextlib.suppress(OSError):
                os.removexattr(fd, ACL_ACCESS)
        for name, value in attributes:
            with contextlib.suppress(OSError):
                os.setxattr(fd, name, value)
    os.fchmod(fd, mode & ~(stat.S_ISUID | stat.S_ISGID))


def _attributes(fd: int) -> Attributes:
    """The extended attributes of the file ``fd`` that a write keeps: its POSIX ACL
    (``system.posix_acl_access``) and the ``user.*`` ones tools put on a file. Not the
    ``security.*`` and ``trusted.*`` ones (labels and capabilities are the system's to
    give a new file). Those this user may not read are left out; none where Python has
    no ``os.listxattr`` (it is Linux's)."""
    if not hasattr(os, "listxattr"):
        return ()
    try:
        names = os.listxattr(fd)
    except OSError:
        return ()
    found: list[tuple[str, bytes]] = []
    for name in names:
        if name == ACL_ACCESS or name.startswith("user."):
            with contextlib.suppress(OSError):
                found.append((name, os.getxattr(fd, name)))
    return tuple(found)


def _replace_atomically(place: Place, data: bytes, current: _Current, source: str) -> None:
    """Put a temp file with ``data`` (and the old mode and owner) in place of the plan as read.

    A person's editor takes no lock, so the plan may change at any moment
    before the new file is in place; such a change must end as ``conflict``
    (the write retries, reads again and compares), never be replaced. Right
    before the swap the plan must still be the file that was read: same
    stamp, same bytes. The swap is ``renameat2(RENAME_EXCHANGE)``: the plan's
    name gets the new file and the temp name the old one, which is then
    checked again — still the file that was read, with the same bytes, mode and
    owner — and only then removed; if it changed, the two are swapped back (a
    name found gone at the swap is read again too: a save that removes the
    file before it makes the new one; and if what the swap back took from the
    name is not the new file but an editor's save that replaced it meanwhile,
    that save gets the name again). What remains
    is a program that opened the plan before and writes into it after that
    last check (the old file is gone by then). Where the file system has no
    exchange, a plain rename follows the first check.
    """
    owner = (current.uid, current.gid)
    with _temp_file(place, data, source, current.mode, owner, current.attributes) as temp:
        ours = _entry_identity(place, temp)
        held = _open_as_read(place, current)
        try:
            try:
                exchanged = _renameat2_flags(place.fd, temp, place.name, RENAME_EXCHANGE)
            except FileNotFoundError:  # removed since the check (``git checkout``, a delete)
                raise Changed from None  # read again: it is back (compare) or gone (not found)
            if not exchanged:
                _rename(place, temp, source)
                return
            if not _swapped_out_as_read(place, temp, held, current):
                _swap_back(place, temp, source)
                if _entry_identity(place, temp) not in (ours, None):
                    _newer_save_back(place, temp, source)
                raise Changed  # changed by a process outside the lock: read and compare again
            with contextlib.suppress(OSError):  # else the next writer's orphan sweep does it
                os.unlink(temp, dir_fd=place.fd)  # the old plan
        except OSError as exc:
            raise _cannot_replace(source, exc, place.path) from None
        finally:
            os.close(held)


def _open_as_read(place: Place, current: _Current) -> int:
    """The plan, opened again, if it is still the file read for ``current``; else ``Changed``."""
    try:
        fd = os.open(place.name, READ_FLAGS, dir_fd=place.fd)
    except OSError:
        raise Changed from None  # gone, or a symlink now: read again
    try:
        if _stamp_of(os.fstat(fd)) != current.stamp or _bytes_at(fd, current.raw) != current.raw:
            raise Changed
    except BaseException:
        os.close(fd)
        raise
    return fd


def _swapped_out_as_read(place: Place, temp: str, held: int, current: _Current) -> bool:
    """Whether the file the swap moved to ``temp`` is ``held``, unchanged since it was read.

    Its change time moved with the rename itself, so size, mtime and the bytes tell — and
    mode and owner, which a ``chmod a-w`` or ``chown`` changes and nothing else does.
    """
    try:
        entry = os.stat(temp, dir_fd=place.fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    info = os.fstat(held)
    read = current.stamp
    return (
        (entry.st_dev, entry.st_ino) == (info.st_dev, info.st_ino)
        and (info.st_size, info.st_mtime_ns) == (read[2], read[3])
        and (stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid)
        == (current.mode, current.uid, current.gid)
        and _bytes_at(held, current.raw) == current.raw
    )


def _swap_back(place: Place, temp: str, source: str) -> None:
    """Give the plan's name back the file the swap took from it (a person's save).

    From here on ``temp`` names that file: a stop signal must not remove it. If the
    plan's name is gone meanwhile (the new file was removed), the file gets the name
    without replacing anything. If that fails too, the file is kept under a name no
    orphan sweep removes (``.werkbaum-kept-<16 hex>``), and the error says where.
    """
    _LIVE.forget(place, temp)
    try:
        for _ in range(ATTEMPTS):
            try:
                if _renameat2_flags(place.fd, temp, place.name, RENAME_EXCHANGE):
                    return
                os.replace(temp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
                return
            except FileNotFoundError:
                pass  # the plan's name is gone: take it, if it is still free
            try:
                _publish_back(place, temp)
                return
            except FileExistsError:
                continue  # a name again: exchange with it
        raise OSError(errno.EEXIST, "the plan's name kept changing")
    except OSError as exc:
        kept = _keep(place, temp)
        raise _Kept(
            f"{source} changed while it was written, and putting the changed file back "
            f"failed ({exc.strerror or exc}); it is {place.path.parent / kept}",
            source=source,
        ) from None


def _entry_identity(place: Place, name: str) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the entry ``name`` in the held directory, if there is one."""
    try:
        info = os.stat(name, dir_fd=place.fd, follow_symlinks=False)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _newer_save_back(place: Place, temp: str, source: str) -> None:
    """The swap back took from the plan's name not the new file but a person's save that
    had replaced it meanwhile (an editor's rename): that save supersedes the old file the
    swap back restored, so it gets the name again; the old file — written into by a
    program that had it open — is kept aside (``.werkbaum-kept-<16 hex>``), not lost."""
    try:
        if _renameat2_flags(place.fd, temp, place.name, RENAME_EXCHANGE):
            _keep(place, temp)
            return
        reason = "the file system has no exchange"
    except OSError as exc:
        reason = exc.strerror or str(exc)
    kept = _keep(place, temp)
    raise _Kept(
        f"{source} changed twice while it was written; putting the later save back failed "
        f"({reason}); it is {place.path.parent / kept}",
        source=source,
    )


def _publish_back(place: Place, temp: str) -> None:
    """``temp`` under the plan's name, replacing nothing (``FileExistsError`` if taken)."""
    if not _rename_noreplace(place.fd, temp, place.name):
        os.link(temp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd, follow_symlinks=False)
        os.unlink(temp, dir_fd=place.fd)


def _keep(place: Place, temp: str) -> str:
    """Move a person's file from the temp name (which the next writer's sweep removes) to
    a hidden name of its own; the name it is under now."""
    kept = f"{TEMP_PREFIX}kept-{secrets.token_hex(8)}"
    with contextlib.suppress(OSError):
        if _rename_noreplace(place.fd, temp, kept):
            return kept
    return temp


class _Kept(SourceUnavailable):
    """A failure that leaves a person's file under the temp name: it is not removed."""


def _bytes_at(fd: int, expected: bytes) -> bytes:
    """The file's bytes from its start, at most one more than ``expected`` has."""
    chunks: list[bytes] = []
    offset, limit = 0, len(expected) + 1
    while offset < limit:
        chunk = os.pread(fd, min(limit - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _rename(place: Place, temp: str, source: str) -> None:
    try:
        os.replace(temp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
    except OSError as exc:
        raise _cannot_replace(source, exc, place.path) from None


def _read_regular(
    place: Place, source: str, max_chars: int, *, single_name: bool, attributes: bool = False
) -> tuple[bytes, os.stat_result, Attributes]:
    """The bytes of the regular file ``place`` names (at most ``max_chars`` worth), its stat
    and, with ``attributes``, the extended attributes a write keeps (:func:`_attributes`).

    ``single_name``: a file with other hard links is refused as well. Raises
    ``NotFound``, ``Changed`` (it is a symlink now), ``SourceUnavailable``,
    ``TooLarge`` — never blocks, and opens nothing but a regular file (a FIFO or a
    device is refused by its kind before any open; one swapped in after that look is
    opened without blocking and refused by ``fstat``).
    """
    max_bytes = _max_bytes(max_chars)
    try:
        # Its kind first: opening a FIFO releases a writer waiting in its open, and some
        # devices act on an open. (A swap after this look is still refused by ``fstat``.)
        entry = os.stat(place.name, dir_fd=place.fd, follow_symlinks=False)
        if stat.S_ISLNK(entry.st_mode):
            raise Changed  # it became a symlink after the walk
        _check_plain_file(entry, source, place.path, single_name=False)
        fd = os.open(place.name, READ_FLAGS, dir_fd=place.fd)
    except FileNotFoundError:
        raise NotFound(f"no file {source} ({place.path})", source=source) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # it became a symlink after the walk
            raise Changed from None
        raise unavailable(source, exc, place.path) from None
    try:
        info = os.fstat(fd)
        _check_plain_file(info, source, place.path, single_name=single_name)
        if info.st_size > max_bytes:
            raise _too_large(source, max_chars, None)
        data = _read_all(fd, max_bytes + 1, source, place.path)
        kept = _attributes(fd) if attributes else ()
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _too_large(source, max_chars, None)
    return data, info, kept


def read_bytes(
    place: Place, source: str, max_chars: int = MAX_TEXT_CHARS
) -> tuple[bytes, int] | None:
    """The bytes and mode of the file ``place`` names; None if it is missing or a symlink.

    For the git mirror, which tells those two apart itself (it refuses a
    link). Its other hard links do not matter there: nothing is written into
    the file, only a new one renamed over the name. Errors as
    :func:`_read_regular`'s.
    """
    try:
        data, info, _ = _read_regular(place, source, max_chars, single_name=False)
    except (NotFound, Changed):
        return None
    return data, stat.S_IMODE(info.st_mode)


def replace_file(
    place: Place,
    data: bytes,
    source: str,
    mode: int | None,
    *,
    lock_timeout: float = LOCK_TIMEOUT,
    check: Callable[[], None] | None = None,
) -> None:
    """Make the file ``place`` names hold ``data``, as a write of the store does.

    Under the directory lock (so the store's writers and this one never
    race), a temp file, fsync, rename, fsync of the directory. The new file
    gets ``mode``, else the mode of the regular file it replaces, else 0666
    minus the umask; and what a write of the store keeps of the file it
    replaces (owner or group, ACL, attributes: :func:`_keep_identity`). For
    the git mirror, which decides from git what may be overwritten: ``check``
    runs with the new file complete, right before the rename, so that the
    file it compares is the one replaced a moment later (a person's editor
    takes no lock); whatever it raises cancels the write.
    """
    with _locked(place, source, lock_timeout):
        _remove_orphans(place)
        owner: tuple[int, int] | None = None
        attributes: Attributes = ()
        existing = _lstat(place, source)
        if existing is not None and stat.S_ISREG(existing.st_mode):
            owner = existing.st_uid, existing.st_gid
            attributes = _attributes_of(place)
            if mode is None:
                mode = stat.S_IMODE(existing.st_mode)
        with _temp_file(place, data, source, mode, owner, attributes) as temp:
            if check is not None:
                check()
            _rename(place, temp, source)
        _fsync_dir(place.fd)


def _attributes_of(place: Place) -> Attributes:
    """:func:`_attributes` of the regular file ``place`` names; none if it cannot be read."""
    try:
        fd = os.open(place.name, READ_FLAGS, dir_fd=place.fd)
    except OSError:
        return ()
    try:
        return _attributes(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else ()
    finally:
        os.close(fd)


def _stamp_of(info: os.stat_result) -> Stamp:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def _publish_new(place: Place, temp: str, source: str) -> None:
    """Give the temp file the plan's name without replacing anything (or ``conflict``)."""
    try:
        if not _rename_noreplace(place.fd, temp, place.name):
            os.link(
                temp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd, follow_symlinks=False
            )
            os.unlink(temp, dir_fd=place.fd)
    except FileExistsError:
        raise Conflict(
            f"{source} was created by someone else at the same moment; read it", source=source
        ) from None
    except OSError as exc:
        raise unavailable(source, exc, place.path) from None


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    """libc's ``renameat2``, if this system has one (Linux with glibc 2.28+)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function: Callable[..., int] = libc.renameat2
    except (OSError, AttributeError):
        return None
    return function


def _rename_noreplace(dir_fd: int, old: str, new: str) -> bool:
    """``renameat2(RENAME_NOREPLACE)``; False if unsupported here (the caller falls back)."""
    return _renameat2_flags(dir_fd, old, new, RENAME_NOREPLACE)


def _renameat2_flags(dir_fd: int, old: str, new: str, flags: int) -> bool:
    """``renameat2`` with ``flags`` in one directory; False if this system or file system
    does not offer it (the caller falls back), ``OSError`` for any other failure."""
    function = _renameat2()
    if function is None:
        return False
    if function(dir_fd, os.fsencode(old), dir_fd, os.fsencode(new), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code))


def _fsync_dir(dir_fd: int) -> None:
    """Make the rename durable, where the file system can.

    Best effort on purpose: the new file is already in place and visible, so
    reporting a failure here would tell the agent its write failed when it
    did not (and some file systems refuse ``fsync`` on a directory).
    """
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def _nowhere(roots: Roots, source: str, existing: bool) -> NotFound:
    described = roots.describe()
    if existing:
        return NotFound(f"no file {source} under the roots {described}", source=source)
    return NotFound(
        f"cannot create {source}: its directory does not exist under the roots {described} "
        "(directories are not created)",
        source=source,
    )
