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
write stands) and has changed nothing in the file. A symlink in place of the
file is one too: the user put it there, the rename would replace the link
(the text it leads to would neither be written nor stashed), and git would
see a regular file where the user made a link.

A person's editor takes no lock, so the mirror never replaces a file it has
not just compared: :meth:`MirrorTarget.write_over` reads the file again with
the new file complete, right before the rename, and replaces it only if it
holds exactly the bytes and mode the mirror decided on (:class:`FileChanged`
otherwise). What remains is the moment between the start of that read and
the rename (one read of a local file, no wait on anything else): a save
landing exactly there is replaced unseen. No portable call closes it;
``renameat2(RENAME_EXCHANGE)`` would only narrow it to an editor writing
into the old file through a descriptor it opened before.
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


class FileChanged(FileProblem):
    """The file is not what the mirror expected any more (saved meanwhile); nothing written."""


Contents = tuple[bytes, int] | None
"""The file as the mirror reads it: its bytes and mode, None if there is no file."""


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

    def read(self) -> Contents:
        """The file's bytes and mode; None if it is missing. A symlink there is refused."""
        with self._place() as place:
            return self._contents(place)

    def write(self, data: bytes, mode: int | None = None) -> None:
        """Replace the file with ``data``, whatever it holds (``werkbaum mirror`` without git).

        Its mode: ``mode``, else the replaced file's.
        """
        with self._place() as place:
            _checked(lambda: replace_file(place, data, str(self.path), mode))

    def write_over(self, expected: Contents, data: bytes, mode: int | None = None) -> None:
        """Replace the file with ``data`` only if it is still ``expected``; else
        :class:`FileChanged` and the file is left as it is. The compare is the last
        step before the rename (see the module's text for the moment that remains)."""
        with self._place() as place:

            def still_expected() -> None:
                if self._contents(place) != expected:
                    raise FileChanged(f"{self.path} changed while the mirror was writing it")

            _checked(lambda: replace_file(place, data, str(self.path), mode, check=still_expected))

    def remove_if(self, data: bytes) -> None:
        """Remove the file if it still holds ``data`` (putting back a file that did not
        exist: it has the mode a new file gets); :class:`FileChanged` if it does not."""
        with self._place() as place:
            found = self._contents(place)
            if found is None or found[0] != data:
                raise FileChanged(f"{self.path} changed after the mirror wrote it")
            try:
                os.unlink(place.name, dir_fd=place.fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise FileProblem(unavailable(str(self.path), exc).message) from None

    def _contents(self, place: Place) -> Contents:
        found = _checked(lambda: read_bytes(place, str(self.path)))
        if found is None:
            try:
                link = os.readlink(place.name, dir_fd=place.fd)
            except OSError:
                return None  # missing (or it changed kind again: the next step sees it)
            raise FileProblem(
                f"{self.path} is a symbolic link now (to {link}); the mirror writes only the "
                "regular file it was started with and does not replace a link — remove the "
                "link (or move it away), then write again"
            )
        return found

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
