"""The allowed roots of the stdio server (spec §3, §10): files only under them.

An agent names a file by a source string it chose itself. An absolute source
must lie under a root; a relative source is looked up under every root (the
root that has it; several → an error naming them), never under the working
directory, so a host that starts the server in ``/`` with ``--root
~/project`` can still say ``plan.werkbaum``.

This module maps sources to roots; it opens nothing. The file store then
walks from the chosen root's directory descriptor (:mod:`.confined`), so a
mapping that a concurrent rename made stale can at worst fail, never lead
out of the roots. :meth:`Roots.resolve` (``realpath``-based) serves callers
that need a path and do their own file handling, such as the git mirror.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from werkbaum_core import display
from werkbaum_core.errors import ForbiddenSource, InvalidArgument, SourceUnavailable, WerkbaumError
from werkbaum_core.text import check_source_length

PROJECT_DIR_VAR = "CLAUDE_PROJECT_DIR"
"""Set by Claude Code for the servers it starts: the project the user opened."""

ORIGIN_FLAG = "--root"
ORIGIN_PROJECT_DIR = PROJECT_DIR_VAR
ORIGIN_CWD = "the working directory"

UNNAMEABLE = "(each \\xNN is a byte that is not UTF-8, so no source can spell that path)"
"""Said where a path that is not UTF-8 is shown to an agent who may want to use it."""


@dataclass(frozen=True)
class Roots:
    """The directories file sources must lie in.

    ``paths`` are realpaths, so a symlinked root is compared by where it
    really is. ``origin`` says which default was used (``--root``,
    ``CLAUDE_PROJECT_DIR`` or the working directory) so that a refusal can
    tell the user which setting to change. ``base`` is the directory the
    ``--root`` values were given relative to (kept for the git mirror's file
    matching; relative *sources* start at the roots, see :meth:`candidate`).
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

        Relative ``--root`` values start at the working directory. A root that
        is not an existing directory is an error at start-up rather than a
        silent empty set.
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

    @property
    def whole_file_system(self) -> bool:
        """Whether the working directory was taken as the root and it is ``/`` (a host
        that starts servers there, as Claude Desktop does, without a workspace)."""
        return self.origin == ORIGIN_CWD and self.paths == (Path("/"),)

    def describe(self) -> str:
        """The roots and where they came from, for error messages, logs and the server
        instructions: each in its display form (a root may be named in bytes that are
        not UTF-8, such as a Latin-1 ``café``, which the handshake could not carry)."""
        listed = ", ".join(display.text(path) for path in self.paths)
        return f"{listed} (from {self.origin})"

    def contains(self, real: str | os.PathLike[str]) -> bool:
        """Whether an already resolved (realpath) path lies under one of the roots.

        A purely lexical test: callers pass realpaths, so no ``..`` or symlink
        remains that could make the comparison lie.
        """
        path = Path(real)
        return any(path.is_relative_to(root) for root in self.paths)

    def locate(self, path: str) -> tuple[Path, list[str]] | None:
        """The root an absolute path lies under, and its components below that root.

        Lexically first: ``""`` and ``"."`` components are dropped, ``..`` is
        kept for the walk to apply to the real directories (``a/link/..`` is
        the link target's parent, not ``a``); of several matching roots the
        outermost wins, so a ``..`` has the most room. If no root is a prefix,
        the path's realpath is tried, which finds a root spelled through a
        symlink (``/var`` → ``/private/var``). Either way this is only a
        guess of where to start: the caller walks the components from the
        root's descriptor, so no answer here can lead out of the roots.
        """
        found = self._prefix_root(split_path(path))
        if found is None:
            found = self._prefix_root(split_path(str(real_path(path, path))))
        return found

    def _prefix_root(self, parts: list[str]) -> tuple[Path, list[str]] | None:
        for root in sorted(self.paths, key=lambda root: len(root.parts)):
            below = list(root.parts[1:])
            if parts[: len(below)] == below:
                return root, parts[len(below) :]
        return None

    def candidate(self, source: str, probe: Callable[[Path], Hashable | None]) -> Path | None:
        """The root a relative ``source`` is meant under: the one root that has it.

        ``probe(root)`` answers what ``source`` is under ``root``: an identity
        (say ``(st_dev, st_ino)``) if it exists there, None if not, or raises
        ``ForbiddenSource`` if it would lead out. With one root no probe is
        made (the caller's own walk gives its errors). Two roots holding the
        same file are one candidate; two different files are
        ``InvalidArgument`` naming both, since guessing could edit the wrong
        plan. None if no root has it (a refusal seen on the way is raised
        then: it explains more than "not found").
        """
        if len(self.paths) == 1:
            return self.paths[0]
        found: dict[Hashable, Path] = {}
        refusal: WerkbaumError | None = None
        for root in self.paths:
            try:
                identity = probe(root)
            except ForbiddenSource as exc:
                refusal = refusal or exc
                continue
            if identity is not None:
                found.setdefault(identity, root)
        if len(found) > 1:
            paths = [root / source for root in found.values()]
            candidates = [display.text(path) for path in paths]
            unnameable = "" if all(display.is_text(str(p)) for p in paths) else f" {UNNAMEABLE}"
            raise InvalidArgument(
                f"{source} exists under several roots ({', '.join(candidates)}); "
                f"give the absolute path of the one you mean{unnameable}",
                source=source,
                candidates=candidates,
            )
        if found:
            return next(iter(found.values()))
        if refusal is not None:
            raise refusal
        return None

    def resolve(self, source: str) -> Path:
        """The realpath of a file source, or ``ForbiddenSource`` if it leaves the roots.

        For callers that handle the file themselves (the git mirror); the file
        store walks instead. A relative source is taken under the root that
        has it (:meth:`candidate`); if none has it (a file still to be
        created), under the first root that has its directory, else the first
        root. ``realpath`` only reads symlinks along the way; the file itself
        is not opened or stat'ed here, so a refused source is never read.
        """
        check_source(source)
        if os.path.isabs(source):
            real = real_path(source, source)
        else:

            def existing(root: Path) -> Path | None:
                path = root / source
                return real_path(path, source) if os.path.lexists(path) else None

            root = self.candidate(source, existing) or self._root_with_dir(source)
            real = real_path(root / source, source)
        if not self.contains(real):
            raise self.outside(source, f"resolves to {real}, which is")
        return real

    def _root_with_dir(self, source: str) -> Path:
        """For a relative path that exists nowhere: the first root that has its directory."""
        for root in self.paths:
            if os.path.isdir(os.path.dirname(root / source)):
                return root
        return self.paths[0]

    def outside(self, source: str, how: str = "is") -> ForbiddenSource | InvalidArgument:
        """The refusal of a source that is not under any root.

        A source that spells a root in its display form (``…/caf\\xe9/plan.werkbaum``,
        copied from a message) is no path to that root: its name is not UTF-8, which no
        source can carry. That is said, instead of "outside the roots".
        """
        for root in self.paths:
            shown = display.text(root)
            if shown != str(root) and (source == shown or source.startswith(f"{shown}/")):
                return InvalidArgument(
                    f"{source} names the root {shown} in its display form {UNNAMEABLE}; "
                    "name its files relative to the root",
                    source=source,
                    reason="not_utf8",
                )
        return ForbiddenSource(
            f"{source} {how} outside the allowed roots {self.describe()}; "
            "only files under these roots can be used",
            source=source,
            roots=[display.text(path) for path in self.paths],
            reason="outside_roots",
        )


def check_source(source: str) -> None:
    """Refuse file sources no file system path can be: empty, NUL, overlong, or
    ending in a folder step (``plan.werkbaum/``, ``…/.``: POSIX reads such a path as
    a folder, so it must not quietly name the file, nor create one)."""
    if not source:
        raise InvalidArgument("the file source is empty", source=source)
    if "\0" in source:
        raise InvalidArgument("the file source contains a NUL byte", source=source)
    check_source_length(source, "file source")
    last = source.rsplit("/", 1)[-1]
    if last in ("", ".", ".."):
        raise InvalidArgument(
            f"the file source {source} names a folder, not a plan file "
            "(a path that ends in '/', '/.' or '/..' does)",
            source=source,
            reason="not_a_file",
        )


def real_path(path: str | os.PathLike[str], source: str) -> Path:
    """``realpath``, with its failures (a link swapped during the call) as documented errors."""
    try:
        return Path(os.path.realpath(path))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SourceUnavailable(
            f"cannot resolve {source}: {reason} (did it change meanwhile?)",
            source=source,
            reason=reason,
        ) from None


def split_path(path: str) -> list[str]:
    """A path's components without ``""`` and ``"."``; ``..`` stays (the walk applies it)."""
    return [part for part in path.split("/") if part not in ("", ".")]


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
