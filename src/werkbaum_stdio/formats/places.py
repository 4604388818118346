"""Where a diagnostic's file is, in the terms GitHub places annotations and alerts by.

GitHub matches an annotation's ``file`` (workflow commands: "associate the message with
a particular file in your repository", https://docs.github.com/en/actions/reference/
workflow-commands-for-github-actions) and a SARIF result's relative URI against the
repository's paths: ``plans/a.werkbaum``, not ``./plans/a.werkbaum`` nor the runner's
absolute path, neither of which it places on the file. The checkout is at
``$GITHUB_WORKSPACE`` (https://docs.github.com/en/actions/learn-github-actions/variables),
and a step may run in a folder below it, so paths are made relative to the workspace,
else (outside Actions) to the working directory.
"""

from __future__ import annotations

import os
from pathlib import PurePath


def workspace_path(file: str) -> str:
    """``file`` relative to the workspace, ``/``-separated, without ``.`` or ``..``
    steps; a file outside the workspace keeps its absolute path."""
    try:
        base = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
        full = os.path.abspath(file)
    except OSError:  # the working directory is gone: the name as given is all there is
        return PurePath(os.path.normpath(file)).as_posix()
    inside = _relative(full, os.path.abspath(base))
    if inside is None:  # the workspace may be named through a symlink
        # The file's folder is resolved, not the file: a plan that is itself a link
        # keeps its own name (its target's would be another file, or outside).
        folder, name = os.path.split(full)
        inside = _relative(os.path.join(os.path.realpath(folder), name), os.path.realpath(base))
    return PurePath(full if inside is None else inside).as_posix()


def _relative(path: str, base: str) -> str | None:
    relative = os.path.relpath(path, base)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative
