"""The plan files under the roots, page by page (``resources/list``, ``werkbaum_list``).

A listing is for an agent choosing a plan, so it must stay small, stable and
bounded however large the tree is:

* **Order.** Roots in their order; in each, depth-first, and in every
  directory its plan files (names sorted by code point) before its
  subdirectories (sorted likewise). The order only depends on the names, so
  it is the same on every call while the tree is unchanged.
* **Pages and cursors.** ``list_page(cursor=None, limit=n)`` gives the first
  ``n`` plans and, if more may follow, ``next_cursor``: an opaque string for
  the next call. A cursor names a *position* in that order (the last plan
  returned, or the directory where the walk stopped), not an offset, so
  plans added or removed elsewhere neither repeat nor skip the rest; the
  walk skips every directory that sorts before the position without opening
  it. A cursor the server did not make is ``invalid_argument``.
* **Bounds.** At most :data:`MAX_PAGE` plans per page, at most ``max_dirs``
  directories opened per call (the directories leading to the cursor not
  counted, so every call makes progress) — when the bound stops a page
  early, ``next_cursor`` continues there —, at most :data:`MAX_DEPTH` levels
  deep.
* **Skipped.** Hidden entries (``.git``, ``.cache``, temp files, editor
  backups), ``node_modules``, symlinks (files and directories: never
  followed, so the walk cannot leave the roots — a plan reached through a
  link is listed where it really is, if that is under a root), names that
  are not valid UTF-8 (they come back with surrogates, which no JSON source
  can spell; nor the absolute path through such a root), anything that is
  not a regular file with one link, a directory that is another root (it
  is listed under that root).
* **Entries.** ``source``: the path relative to its root — what a relative
  source resolves back to — or the absolute path when another root has the
  same relative path; ``path``: where it is; ``lines``: the line count a
  read would report (omitted with ``lines=False``, and None for a file over
  the size limit, which a read answers with ``too_large``).

The walk opens directories relative to their parent's descriptor with
``O_NOFOLLOW`` (:mod:`.confined`), as reads and writes do.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import attrs

from werkbaum_core import display
from werkbaum_core.errors import InvalidArgument, WerkbaumError
from werkbaum_stdio.confined import DIR_FLAGS, open_root
from werkbaum_stdio.plan_names import PlanNames, walked_dir
from werkbaum_stdio.roots import Roots

DEFAULT_PAGE = 100
MAX_PAGE = 1000
"""The largest page (``resources/list`` shows one page of this size)."""
MAX_WALKED_DIRS = 10_000
"""Directories one call opens at most, so a huge tree cannot hang a listing."""
MAX_DEPTH = 32
"""Directory levels below a root that are walked (plans live near the top)."""

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

_FILE, _DIR = 0, 1
_Key = tuple[tuple[int, str], ...]
"""A position below a root: ``(kind, name)`` per level, files (0) before directories (1)."""


@attrs.frozen
class PlanEntry:
    """One listed plan file."""

    source: str
    """What to pass as a ``source``: relative to its root, absolute if ambiguous."""
    path: Path
    """Where the file is (its root joined with the walked names: no symlinks)."""
    lines: int | None = None
    """Its line count as a read reports it; None when not counted or over the size limit."""


@attrs.frozen
class PlanPage:
    """One page of a listing: the plans, and the cursor of the next page if there is one."""

    plans: tuple[PlanEntry, ...]
    next_cursor: str | None = None


def list_page(
    roots: Roots,
    names: PlanNames,
    cursor: str | None = None,
    *,
    limit: int = DEFAULT_PAGE,
    lines: bool = True,
    max_dirs: int = MAX_WALKED_DIRS,
    max_bytes: int,
) -> PlanPage:
    """One page of the plans under ``roots`` after ``cursor`` (see the module docstring).

    ``limit`` is clamped to 1…:data:`MAX_PAGE`; ``max_bytes`` is the size
    above which a file's lines are not counted.
    """
    start = _decode_cursor(cursor, len(roots.paths)) if cursor else None
    walk = _Walk(roots, names, max(1, min(limit, MAX_PAGE)), lines, max_dirs, max_bytes)
    for index, root in enumerate(roots.paths):
        if start is not None and index < start[0]:
            continue
        floor = start[1] if start is not None and index == start[0] else None
        if not walk.root(index, root, floor):
            break
    return PlanPage(plans=tuple(walk.found), next_cursor=walk.next_cursor)


class _Walk:
    def __init__(
        self, roots: Roots, names: PlanNames, limit: int, lines: bool, max_dirs: int, max_bytes: int
    ) -> None:
        self.roots = roots
        self.names = names
        self.limit = limit
        self.lines = lines
        self.budget = max_dirs
        self.max_bytes = max_bytes
        self.found: list[PlanEntry] = []
        self.next_cursor: str | None = None
        self.index = 0
        self.root_path = Path("/")
        self.other_roots: set[tuple[int, int]] = set()
        self.last: tuple[int, _Key] = (0, ())
        """Root index and key of the last plan found: the cursor of a full page."""

    def root(self, index: int, root: Path, floor: _Key | None) -> bool:
        """Walk one root; False once the page is complete (stop)."""
        self.index, self.root_path = index, root
        if not self._spend((), floor):
            return False
        try:
            fd = open_root(root, str(root))
        except WerkbaumError:
            return True  # a root that vanished lists nothing; the others still count
        self.other_roots = self._other_roots(root)
        try:
            return self._directory(fd, (), (), floor)
        finally:
            os.close(fd)

    def _directory(self, fd: int, parts: tuple[str, ...], key: _Key, floor: _Key | None) -> bool:
        files, dirs = self._entries(fd)
        for name in files:
            here = (*key, (_FILE, name))
            if floor is not None and here <= floor:
                continue
            if len(self.found) == self.limit:
                self.next_cursor = _cursor(*self.last)
                return False
            entry = self._entry(fd, (*parts, name))
            if entry is not None:
                self.found.append(entry)
                self.last = (self.index, here)
        if len(parts) >= MAX_DEPTH:
            return True
        for name in dirs:
            here = (*key, (_DIR, name))
            sub_floor: _Key | None = None
            if floor is not None:
                cut = floor[: len(here)]
                if here < cut:
                    continue
                sub_floor = floor if here == cut else None
            if not self._spend(here, sub_floor):
                return False
            if not self._subdirectory(fd, name, (*parts, name), here, sub_floor):
                return False
        return True

    def _subdirectory(
        self, fd: int, name: str, parts: tuple[str, ...], key: _Key, floor: _Key | None
    ) -> bool:
        try:
            child = os.open(name, DIR_FLAGS, dir_fd=fd)
        except OSError:
            return True  # gone, swapped for a symlink, or not readable: nothing to list
        try:
            info = os.fstat(child)
            if (info.st_dev, info.st_ino) in self.other_roots:
                return True
            return self._directory(child, parts, key, floor)
        finally:
            os.close(child)

    def _spend(self, key: _Key, floor: _Key | None) -> bool:
        """Count one directory against the bound; at the bound, end the page before it."""
        on_the_way = floor is not None and len(floor) > len(key)
        if on_the_way:
            return True
        if self.budget <= 0:
            self.next_cursor = _cursor(self.index, key)
            return False
        self.budget -= 1
        return True

    def _entries(self, fd: int) -> tuple[list[str], list[str]]:
        """The plan-file names and walkable directory names in ``fd``, each sorted."""
        files: list[str] = []
        dirs: list[str] = []
        with contextlib.suppress(OSError), os.scandir(fd) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith(".") or not display.is_text(name):
                    continue
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        if walked_dir(name):
                            dirs.append(name)
                    elif entry.is_file(follow_symlinks=False) and self.names.matches(name):
                        files.append(name)
        return sorted(files), sorted(dirs)

    def _entry(self, fd: int, parts: tuple[str, ...]) -> PlanEntry | None:
        """The entry of one plan file, or None if it is not a plain file after all, or if
        its source would be an absolute path through a root whose name is not UTF-8."""
        relative = "/".join(parts)
        path = self.root_path / relative
        source = self._source(relative, path)
        if not display.is_text(source):
            return None
        try:
            file = os.open(parts[-1], FILE_FLAGS, dir_fd=fd)
        except OSError:
            return None
        try:
            info = os.fstat(file)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
                return None
            fits = info.st_size <= self.max_bytes  # a huge file is not read to say so
            count = _count_lines(file, self.max_bytes) if self.lines and fits else None
        except OSError:
            return None
        finally:
            os.close(file)
        return PlanEntry(source=source, path=path, lines=count)

    def _source(self, relative: str, path: Path) -> str:
        others = (root for root in self.roots.paths if root != self.root_path)
        if any(os.path.lexists(root / relative) for root in others):
            return str(path)
        return relative

    def _other_roots(self, root: Path) -> set[tuple[int, int]]:
        found = set()
        for other in self.roots.paths:
            if other != root and other.is_relative_to(root):
                with contextlib.suppress(OSError):
                    info = os.stat(other)
                    found.add((info.st_dev, info.st_ino))
        return found


def _cursor(index: int, key: _Key) -> str:
    raw = json.dumps([index, [list(step) for step in key]], ensure_ascii=False)
    return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")


def _count_lines(fd: int, max_bytes: int) -> int | None:
    """``\\n`` count + 1, as ``Snapshot.lines`` counts; None beyond ``max_bytes``."""
    newlines = 0
    seen = 0
    for chunk in _chunks(fd):
        seen += len(chunk)
        if seen > max_bytes:
            return None
        newlines += chunk.count(b"\n")
    return newlines + 1


def _chunks(fd: int) -> Iterator[bytes]:
    while chunk := os.read(fd, 1 << 20):
        yield chunk


def _decode_cursor(cursor: str, roots: int) -> tuple[int, _Key]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        index, steps = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        key = tuple((int(kind), str(name)) for kind, name in steps)
        if not (0 <= int(index) < roots) or any(kind not in (_FILE, _DIR) for kind, _ in key):
            raise ValueError(cursor)
        return int(index), key
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        raise InvalidArgument(
            "the cursor is not one this server gave out; start again without a cursor",
            cursor=cursor[:100],
        ) from None
