"""The mirror file, reached as the file store reaches a plan: no path name is used twice.

The mirror writes a file under the roots after every agent write, while any
local process may rename things in the work tree. Opening the file by its
path would follow a directory swapped for a symlink in the meantime and
write outside the roots. So every access walks from the root's descriptor
(:func:`werkbaum_stdio.confined.walk`, ``O_NOFOLLOW`` at each step) and
reads, writes (temp file, fsync, rename, under the directory lock) or
removes the file relative to the directory descriptor that walk holds —
the file store's own code (:func:`werkbaum_stdio.files.read_bytes`,
:func:`~werkbaum_stdio.files.replace_file`). The walk must end in the very
directory named at start-up: a link on the way, even one to another place
inside the roots, is refused, since git commits the file by that name.

A refusal is a :class:`FileProblem`: the mirror reports it (the document
write stands) and has changed nothing in the file.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import attrs

from werkbaum_core.errors import NotFound, WerkbaumError
from werkbaum_stdio.confined import Place, unavailable, walk
from werkbaum_stdio.files import read_bytes, replace_file
from werkbaum_stdio.roots import Roots

T = TypeVar("T")

OWN_DIRECTORY = "the mirror file's directory"
"""The origin named in refusals when no roots confine the file (``werkbaum mirror``)."""


class FileProblem(Exception):
    """The mirror file could not be used safely; the message says what and where."""


@attrs.frozen
class MirrorTarget:
    """Where the mirror file is: its realpath, the root it lies under and the way down."""

    path: Path
    roots: Roots
    root: Path
    below: tuple[str, ...]

    @classmethod
    def at(cls, path: Path, roots: Roots | None) -> MirrorTarget:
        """The target for the realpath ``path``, confined to ``roots`` (None: its directory).

        ``werkbaum mirror`` has no roots: the user names the file in their own
        shell, so its directory (reached from ``/`` without a symlink) is the
        only place it may be written.
        """
        if roots is None:
            roots = Roots(paths=(path.parent,), base=path.parent, origin=OWN_DIRECTORY)
        located = roots.locate(str(path))
        if located is None:
            raise roots.outside(str(path))
        root, below = located
        return cls(path=path, roots=roots, root=root, below=tuple(below))

    def read(self) -> tuple[bytes, int] | None:
        """The file's bytes and mode; None if it is missing or a symlink (both get replaced)."""
        with self._place() as place:
            return _checked(lambda: read_bytes(place, str(self.path)))

    def write(self, data: bytes, mode: int | None = None) -> None:
        """Replace the file with ``data``; its mode: ``mode``, else the replaced file's."""
        with self._place() as place:
            _checked(lambda: replace_file(place, data, str(self.path), mode))

    def remove(self) -> None:
        """Remove the file if it is there (putting back a file that did not exist)."""
        with self._place() as place:
            try:
                os.unlink(place.name, dir_fd=place.fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise FileProblem(unavailable(str(self.path), exc).message) from None

    @contextlib.contextmanager
    def _place(self) -> Iterator[Place]:
        """The file's directory, walked now and held; it must be the one named at start-up."""
        source = str(self.path)
        try:
            place = walk(self.roots, self.root, list(self.below), source, follow=False)
        except NotFound:
            raise FileProblem(f"the directory of {source} does not exist any more") from None
        except WerkbaumError as exc:
            raise FileProblem(exc.message) from None
        with place:
            if place.path != self.path:
                raise FileProblem(
                    f"{source} is reached through a symlink now (it leads to {place.path}); "
                    "the mirror writes only the file it was started with"
                )
            yield place


def _checked(action: Callable[[], T]) -> T:
    """``action()``, with the file store's refusals as a :class:`FileProblem`."""
    try:
        return action()
    except WerkbaumError as exc:
        raise FileProblem(exc.message) from None
