"""Which file names are plans (hardening: plan files only).

The file store serves plans, not files: an agent steered by a plan's text
must not be able to read ``.env`` or write ``.git/config`` through it. So a
file source must name a *plan file* — a name matching ``*.werkbaum`` or one
of the ``--plan-glob`` patterns — and no component of its path (as given,
nor any directory or link the store passes on the way) may be a ``.git``
directory. The rule is checked on the name the agent gave *and* on the real
name at the end of the walk, both before the file is opened.

Patterns match the file **name** only (``fnmatch``, case-sensitive, as names
are on Linux); a pattern with ``/`` is refused at start-up, so no pattern can
reach into a directory the rule excludes. ``.git`` is compared
case-insensitively: on case-insensitive file systems ``.GIT`` is the same
directory. The store's own temp files (``….werkbaum-tmp``) are never plans,
whatever the patterns say.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence

import attrs

from werkbaum_core import display
from werkbaum_core.errors import ForbiddenSource, InvalidArgument

DEFAULT_GLOB = "*.werkbaum"
TEMP_SUFFIX = ".werkbaum-tmp"
"""The store's temp files end here (never in ``.werkbaum``): never a plan, never listed."""
GIT_DIR = ".git"
SKIPPED_DIRS = frozenset({"node_modules"})
"""Never walked, besides every hidden folder (``.git`` among them): dependencies."""


def is_git_dir(name: str) -> bool:
    """Whether a path component names a ``.git`` directory (any case)."""
    return name.casefold() == GIT_DIR


def walked_dir(name: str) -> bool:
    """Whether a directory walk goes into the folder ``name``: the server's listing of
    plans and ``werkbaum check DIR`` skip the same folders."""
    return not name.startswith(".") and name not in SKIPPED_DIRS


@attrs.frozen
class PlanNames:
    """The plan-file rule: ``*.werkbaum`` plus the configured patterns."""

    globs: tuple[str, ...] = (DEFAULT_GLOB,)

    @classmethod
    def with_globs(cls, extra: Sequence[str]) -> PlanNames:
        """``*.werkbaum`` and the ``--plan-glob`` patterns; a bad pattern is a start-up error."""
        for pattern in extra:
            if not pattern or "/" in pattern or "\0" in pattern:
                raise InvalidArgument(
                    f"--plan-glob {pattern!r}: a pattern matches a file name "
                    "(no '/', not empty), e.g. '*.plan'",
                    pattern=pattern,
                )
        return cls(tuple(dict.fromkeys((DEFAULT_GLOB, *extra))))

    def matches(self, name: str) -> bool:
        """Whether ``name`` (one path component) is a plan file's name."""
        if name in ("", ".", "..") or name.endswith(TEMP_SUFFIX) or is_git_dir(name):
            return False
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.globs)

    def describe(self) -> str:
        """The patterns for messages and the server instructions, in their display form
        (a ``--plan-glob`` value may be bytes that are not UTF-8)."""
        return ", ".join(display.text(pattern) for pattern in self.globs)

    def check(self, source: str, parts: Iterable[str]) -> None:
        """Refuse a path (its components) through ``.git`` or not ending in a plan name.

        ``source`` is what the agent gave, for the message.
        """
        names = list(parts)
        if any(is_git_dir(name) for name in names):
            raise ForbiddenSource(
                f"{source} lies in a .git directory; version-control data is never a plan source",
                source=source,
                reason="git",
            )
        if not names or not self.matches(names[-1]):
            raise ForbiddenSource(
                f"{source} is not a plan file; file sources must be named {self.describe()} "
                "(more patterns with --plan-glob)",
                source=source,
                reason="not_a_plan",
            )
