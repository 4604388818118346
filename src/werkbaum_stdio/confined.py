"""Paths under the roots without a check-then-use race (hardening: no escape by a swap).

Checking a path with ``realpath`` and then opening it by name leaves a window:
a directory component swapped for a symlink in between sends the open (or
the rename of a write) outside the roots. So the store never uses a path
twice. It opens each root from ``/`` one component at a time with
``O_NOFOLLOW``, then every component of the source relative to the
descriptor of the directory before it (``openat``), and holds the last
directory's descriptor: the file is opened, locked, created and renamed
relative to that descriptor only. A swap after a component was opened no
longer matters (the descriptor is the directory that was inside); a swap
before it is seen by ``O_NOFOLLOW``.

Symlinks inside the roots keep working, resolved here, component by
component, as the kernel would, but with containment checked at each step:

* a relative link target continues from the link's directory; its ``..``
  goes back to the directory the walk came from — re-opened and checked to
  be that same directory (device and inode), so a directory moved away
  meanwhile cannot redirect it — and a ``..`` above the root is refused;
* an absolute target must lie under a root (:meth:`Roots.locate`), and the
  walk restarts from that root's descriptor;
* at most :data:`MAX_SYMLINKS` links per path (a loop is an error, not a hang);
* no component may be a ``.git`` directory (:mod:`.plan_names`), also not one
  a link leads through.

So at no moment can a swap of any component make a read or write leave the
roots; the worst a concurrent swap can do is make the operation fail with a
documented error (``not_found``, ``forbidden_source``, ``source_unavailable``).
A directory moved out of a root *while* a write holds it takes that write
with it — the file written is still the one that was inside, never one that
was outside.
"""

from __future__ import annotations

import errno
import os
from collections import deque
from pathlib import Path

from werkbaum_core.errors import ForbiddenSource, NotFound, SourceUnavailable
from werkbaum_stdio.plan_names import is_git_dir
from werkbaum_stdio.roots import Roots, split_path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_PATH: int | None = getattr(os, "O_PATH", None)
"""Linux: a descriptor that only names the directory (no read permission needed)."""
MAX_SYMLINKS = 40
"""Links followed per path, as Linux allows (``ELOOP`` beyond)."""

_Identity = tuple[int, int]


class Changed(Exception):
    """A component changed between two steps of one operation; the caller may retry."""


class Place:
    """An entry under a root: a held descriptor of its directory and its name in it.

    ``parts`` are the directory's components below ``root`` as walked (real
    directories, no links), so ``path`` names where the entry really is.
    Close it (or use it as a context manager): it holds a descriptor.
    """

    def __init__(self, fd: int, root: Path, parts: tuple[str, ...], name: str) -> None:
        self.fd = fd
        self.root = root
        self.parts = parts
        self.name = name

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.parts, self.name)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Place:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_dir(name: str, dir_fd: int) -> int:
    """The directory ``name`` in ``dir_fd``, never through a symlink; for reading if this
    user may list it, else (Linux) as a path only: a folder one may pass through but not
    list (mode 0711, as ``/home`` on shared hosts) is on the way to many roots, and the
    walk only opens, stats and reads links relative to it. Raises what ``open`` raises
    (``PermissionError`` when not even passing through is allowed)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except PermissionError:
        if _O_PATH is None:
            raise
        return os.open(name, _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)


def open_root(root: Path, source: str) -> int:
    """A descriptor of ``root``, reached from ``/`` without following any symlink.

    Roots are realpaths taken at start-up; if a component has become a
    symlink since, the root is refused rather than followed.
    """
    fd = -1
    try:
        fd = os.open("/", DIR_FLAGS)
        for part in root.parts[1:]:
            child = open_dir(part, fd)
            os.close(fd)
            fd = child
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        reason = "it is not a directory reached without symlinks any more"
        if not isinstance(exc, NotADirectoryError) and exc.errno != errno.ELOOP:
            reason = exc.strerror or type(exc).__name__
        raise SourceUnavailable(
            f"cannot use {source}: the root {root} cannot be opened ({reason})",
            source=source,
            reason=reason,
        ) from None
    return fd


def walk(roots: Roots, root: Path, parts: list[str], source: str, *, follow: bool) -> Place:
    """Walk ``parts`` below ``root``; the :class:`Place` of the last component.

    ``follow``: a final symlink is resolved too (reads and writes of an
    existing file); without it the final name is taken as it is (creating).
    The final component itself is never opened here — only ``readlink`` —
    so the caller can check its real name before opening it.
    Raises ``NotFound`` (a directory on the way is missing or no directory),
    ``ForbiddenSource`` (the path leads out of the roots or through
    ``.git``), ``SourceUnavailable`` (permissions, a link loop, a directory
    that moved during the walk).
    """
    return _Walk(roots, source).run(root, parts, follow)


class _Walk:
    def __init__(self, roots: Roots, source: str) -> None:
        self.roots = roots
        self.source = source
        self.links = 0

    def run(self, root: Path, parts: list[str], follow: bool) -> Place:
        fd = open_root(root, self.source)
        trail: list[tuple[str, _Identity]] = [("", _identity(fd))]
        pending = deque(parts)
        try:
            while pending:
                name = pending.popleft()
                if name == "..":
                    if len(trail) == 1:
                        raise self.roots.outside(self.source, "leads above its root, so it is")
                    trail.pop()
                    fd = self._parent(fd, trail[-1][1])
                    continue
                if is_git_dir(name):
                    raise ForbiddenSource(
                        f"{self.source} leads through a .git directory; version-control data "
                        "is never a plan source",
                        source=self.source,
                        reason="git",
                    )
                if not pending:
                    target = _readlink(name, fd, self.source) if follow else None
                    if target is None:
                        place = Place(fd, root, tuple(n for n, _ in trail[1:]), name)
                        fd = -1
                        return place
                else:
                    child = self._child(fd, name)
                    if child is not None:
                        os.close(fd)
                        fd = child
                        trail.append((name, _identity(fd)))
                        continue
                    target = _readlink(name, fd, self.source)
                    if target is None:
                        raise self._not_found(trail, name)
                root, fd, trail = self._link(target, pending, root, fd, trail)
            raise ForbiddenSource(
                f"{self.source} names a directory, not a plan file",
                source=self.source,
                reason="not_a_plan",
            )
        finally:
            if fd >= 0:
                os.close(fd)

    def _child(self, fd: int, name: str) -> int | None:
        """The descriptor of directory ``name``, or None if it is a symlink (or no directory)."""
        try:
            return open_dir(name, fd)
        except FileNotFoundError:
            raise NotFound(f"no file {self.source}", source=self.source) from None
        except NotADirectoryError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return None
            raise unavailable(self.source, exc) from None

    def _parent(self, fd: int, expected: _Identity) -> int:
        """Back to the directory the walk came from, which must still be that directory."""
        try:
            parent = open_dir("..", fd)
        except OSError as exc:
            raise unavailable(self.source, exc) from None
        finally:
            os.close(fd)
        if _identity(parent) != expected:
            os.close(parent)
            raise SourceUnavailable(
                f"a directory on the way to {self.source} moved while it was resolved; try again",
                source=self.source,
                reason="changed",
            )
        return parent

    def _link(
        self,
        target: str,
        pending: deque[str],
        root: Path,
        fd: int,
        trail: list[tuple[str, _Identity]],
    ) -> tuple[Path, int, list[tuple[str, _Identity]]]:
        """Continue with a symlink's target: from its directory, or from the root it names."""
        self.links += 1
        if self.links > MAX_SYMLINKS:
            raise SourceUnavailable(
                f"{self.source}: more than {MAX_SYMLINKS} symbolic links (a loop?)",
                source=self.source,
                reason="symlink_loop",
            )
        if not target.startswith("/"):
            pending.extendleft(reversed(split_path(target)))
            return root, fd, trail
        located = self.roots.locate(target)
        if located is None:
            raise self.roots.outside(self.source, f"leads through a symlink to {target}, which is")
        new_root, below = located
        new_fd = open_root(new_root, self.source)
        os.close(fd)
        pending.extendleft(reversed(below))
        return new_root, new_fd, [("", _identity(new_fd))]

    def _not_found(self, trail: list[tuple[str, _Identity]], name: str) -> NotFound:
        where = "/".join([*(n for n, _ in trail[1:]), name])
        return NotFound(f"no file {self.source} ({where} is not a directory)", source=self.source)


def _readlink(name: str, fd: int, source: str) -> str | None:
    """The target if ``name`` is a symlink; None if it is something else or missing."""
    try:
        return os.readlink(name, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return None
        raise unavailable(source, exc) from None


def _identity(fd: int) -> _Identity:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def unavailable(source: str, exc: OSError, where: Path | str | None = None) -> SourceUnavailable:
    """An OS failure as the documented error: the reason, never raw ``[Errno …]`` text."""
    reason = exc.strerror or type(exc).__name__
    shown = f" ({where})" if where is not None else ""
    return SourceUnavailable(f"cannot use {source}{shown}: {reason}", source=source, reason=reason)
