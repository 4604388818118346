"""The allowed roots of the stdio server (spec §3, §10): files only under them.

An agent names a file by a source string it chose itself, so every file
source goes through :meth:`Roots.resolve` first: the path is made absolute,
resolved with ``realpath`` (symlinks followed, ``..`` collapsed) and then
compared against the roots' own realpaths. Only a path that lands under a
root is ever opened; anything else is refused before the file is touched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from werkbaum_core.errors import ForbiddenSource, InvalidArgument

PROJECT_DIR_VAR = "CLAUDE_PROJECT_DIR"
"""Set by Claude Code for the servers it starts: the project the user opened."""

ORIGIN_FLAG = "--root"
ORIGIN_PROJECT_DIR = PROJECT_DIR_VAR
ORIGIN_CWD = "the working directory"


@dataclass(frozen=True)
class Roots:
    """The directories file sources must lie in, and where relative sources start.

    ``paths`` are realpaths, so a symlinked root is compared by where it
    really is. ``base`` is the directory relative sources are joined to.
    ``origin`` says which default was used (``--root``, ``CLAUDE_PROJECT_DIR``
    or the working directory) so that a refusal can tell the user which
    setting to change. ``base`` is a realpath too, so paths from
    :meth:`resolve` and ``FileStore.list_plans`` can be made relative to it.
    """

    paths: tuple[Path, ...]
    base: Path
    origin: str

    @classmethod
    def from_args(
        cls,
        roots: Sequence[str],
        env: Mapping[str, str] = os.environ,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Roots:
        """The roots from ``--root`` flags, else ``CLAUDE_PROJECT_DIR``, else the cwd.

        Relative ``--root`` values and relative sources start at the working
        directory — except when the roots come from ``CLAUDE_PROJECT_DIR``:
        then the agent's relative paths mean the project directory, as the
        host that set the variable intends. A root that is not an existing
        directory is an error at start-up rather than a silent empty set.
        """
        workdir = Path(os.path.realpath(cwd if cwd is not None else os.getcwd()))
        project_dir = env.get(PROJECT_DIR_VAR, "")
        if roots:
            origin, given, base = ORIGIN_FLAG, list(roots), workdir
        elif project_dir:
            origin, given = ORIGIN_PROJECT_DIR, [project_dir]
            base = Path(os.path.realpath(workdir / project_dir))  # == the root's realpath
        else:
            origin, given, base = ORIGIN_CWD, [str(workdir)], workdir
        paths = tuple(dict.fromkeys(_root_path(workdir, root, origin) for root in given))
        return cls(paths=paths, base=base, origin=origin)

    def describe(self) -> str:
        """The roots and where they came from, for error messages and server instructions."""
        listed = ", ".join(str(path) for path in self.paths)
        return f"{listed} (from {self.origin})"

    def contains(self, real: str | os.PathLike[str]) -> bool:
        """Whether an already resolved (realpath) path lies under one of the roots.

        A purely lexical test: callers pass realpaths, so no ``..`` or symlink
        remains that could make the comparison lie.
        """
        path = Path(real)
        return any(path.is_relative_to(root) for root in self.paths)

    def resolve(self, source: str) -> Path:
        """The realpath of a file source, or ``ForbiddenSource`` if it leaves the roots.

        ``realpath`` only reads symlinks along the way; the file itself is not
        opened or stat'ed here, so a refused source is never read.
        """
        if not source:
            raise InvalidArgument("the file source is empty", source=source)
        if "\0" in source:
            raise InvalidArgument("the file source contains a NUL byte", source=source)
        real = Path(os.path.realpath(self.base / source))
        if not self.contains(real):
            raise ForbiddenSource(
                f"{source} resolves to {real}, which is outside the allowed roots "
                f"{self.describe()}; only files under these roots can be used",
                source=source,
                roots=[str(path) for path in self.paths],
            )
        return real


def _root_path(workdir: Path, root: str, origin: str) -> Path:
    """One root as a realpath; it must be an existing directory."""
    if not root or "\0" in root:
        raise InvalidArgument(f"invalid root {root!r} (from {origin})", root=root)
    real = Path(os.path.realpath(workdir / root))
    if not real.is_dir():
        raise InvalidArgument(
            f"root {root} (from {origin}) is not an existing directory", root=root
        )
    return real
