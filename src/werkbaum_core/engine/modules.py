"""Module sets: which notation modules an executor loads, and from where.

A Werkbaum checkout's ``frontend/src`` replaces the bundled modules one by
one (spec §2.1, drop-in rule): every contract module (:data:`REPLACEABLE`) the
checkout has wins, every one it lacks comes from the package. The facade, the
executor hosts and their helpers (``facade.js``, ``transport.js``, ``columns.js``
…) always come from the package, whatever files the checkout holds; a checkout
file the package has no module of that name for is used as it is (only the
checkout's own modules can import it). The executors that load ES modules natively (node,
dukpy) get both copied into one private directory, so that the modules' relative
imports (``./parser.js``) resolve to the chosen files; the directory lives only
while the modules load, and is removed even when the process is told to stop
meanwhile (:func:`remove_loading_directories`). The v8 executor links the same
files without copying them (:meth:`Program.locate`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol

import attrs

from werkbaum_core.display import shortened
from werkbaum_core.errors import ModuleSetError
from werkbaum_core.processes import alive

REQUIRED_EXPORTS: Mapping[str, tuple[str, ...]] = {
    "parser.js": (
        "parse",
        "logicalLines",
        "SIZE_RANK",
        "sizeMin",
        "sizeMax",
        "STATUS_BY_CODE",
        "setFoldMark",
        "setStatusBox",
        "expandShortIds",
        "shortIdClosed",
    ),
    "model.js": (
        "gateOf",
        "pathChildren",
        "assumedSize",
        "ownCost",
        "computeCheapPlan",
        "assigneeLoads",
        "overloadedAssignee",
        "effectiveStatus",
        "taigaSlugs",
        "initialCollapsed",
    ),
    "taiga.js": ("ticketRefOf", "collectTicketRefs", "appendToken"),
    "warnings.js": ("warningText",),
    "i18n.js": ("t",),
    "live.js": ("normalize", "lines", "text", "computeOps", "applyOps", "conflicts", "rebaseOps"),
    "edit.js": ("addNodeLine", "moveSubtree", "setSizeToken", "removeSubtree"),
}
"""The module contract (notation.md §25) the facade relies on."""

ENTRIES = ("exports.js", "facade.js", "writes.js", "transport.js")
"""What every executor loads, in order: the export probe first (see exports.js)."""

REPLACEABLE = (*REQUIRED_EXPORTS, "render.js")
"""Modules a checkout may supply; the facade and the executor hosts always come from us."""


@cache
def bundled_dir() -> Path:
    """The package's own ``js`` directory (a real directory: the wheel is unzipped)."""
    return Path(str(resources.files("werkbaum_core") / "js"))


@attrs.frozen
class ModuleSet:
    """Where each replaceable module comes from: ``"bundled"`` or a checkout directory."""

    frontend: Path | None = None

    @classmethod
    def from_frontend(cls, frontend: str | Path | None) -> ModuleSet:
        if frontend is None or str(frontend) == "":
            return cls()
        path = Path(frontend).expanduser().resolve()
        if not path.is_dir():
            raise ModuleSetError(f"--frontend {frontend}: not a directory", path=str(path))
        return cls(path)

    def origins(self) -> dict[str, str]:
        """Module name → ``"bundled"`` or the checkout path it is loaded from."""
        result = {}
        for name in REPLACEABLE:
            path = self.locate(name)
            if path is not None:
                result[name] = "bundled" if path.parent == bundled_dir() else str(path)
        return result

    def locate(self, name: str) -> Path | None:
        """The file the module set uses for module ``name``: the checkout's for a
        replaceable one (or one the package lacks), else ours."""
        bundled = bundled_dir() / name
        if self.frontend is not None and from_checkout(name):
            own = self.frontend / name
            if own.suffix in (".js", ".mjs") and own.is_file():
                return own
        return bundled if bundled.is_file() else None


def from_checkout(name: str) -> bool:
    """Whether a checkout's module ``name`` may be loaded: a contract module, or a
    module the package does not have (never one of the facade's or the hosts')."""
    return name in REPLACEABLE or not (bundled_dir() / name).is_file()


@attrs.frozen
class Program:
    """What an executor loads: ``entries`` in order, from a module set plus extra files.

    ``extras`` are entry modules outside the package (tests add their harness
    this way); they win over a module of the same name.
    """

    modules: ModuleSet
    entries: tuple[str, ...]
    extras: tuple[Path, ...] = ()

    def locate(self, name: str) -> Path | None:
        for extra in self.extras:
            if extra.name == name:
                return extra
        return self.modules.locate(name)

    @contextmanager
    def materialized(self) -> Iterator[Path]:
        """A fresh private directory holding the chosen modules, removed afterwards."""
        with _loading_directory() as target:
            for item in bundled_dir().iterdir():
                if item.is_file():
                    shutil.copy2(item, target / item.name)
            frontend = self.modules.frontend
            if frontend is not None:
                for item in frontend.iterdir():
                    if (
                        item.suffix in (".js", ".mjs")
                        and from_checkout(item.name)
                        and item.is_file()
                    ):
                        shutil.copy2(item, target / item.name)
            for extra in self.extras:
                shutil.copy2(extra, target / extra.name)
            yield target


class Loadable(Protocol):
    """What an executor that loads module files needs: the entries, and a directory
    holding every module while a load runs."""

    @property
    def entries(self) -> tuple[str, ...]: ...

    def materialized(self) -> AbstractContextManager[Path]: ...


@attrs.frozen
class Copied:
    """Modules already copied into ``directory`` by another process, which keeps it
    as long as this one may load from it (:mod:`~werkbaum_core.engine.dukpy_process`)."""

    directory: Path
    entries: tuple[str, ...]

    @contextmanager
    def materialized(self) -> Iterator[Path]:
        yield self.directory


_loading: set[Path] = set()
_loading_lock = threading.Lock()
_PREFIX = "werkbaum-js-"


@contextmanager
def _loading_directory() -> Iterator[Path]:
    with _loading_lock:
        _remove_orphans(Path(tempfile.gettempdir()))
        target = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-"))
        _loading.add(target)
    try:
        yield target
    finally:
        with _loading_lock:
            _loading.discard(target)
        shutil.rmtree(target, ignore_errors=True)


def _remove_orphans(temp: Path) -> None:
    """Remove the load directories of this user's processes that are gone.

    A process killed outright (SIGKILL) removes nothing, and the dukpy child keeps its
    directory for its whole life: each such end left a ``werkbaum-js-*`` copy of the
    modules behind (round 26 process F10). The directory names its creator's pid; one
    whose process no longer exists is removed by the next load. Only real directories
    of this user are touched (``rmtree`` does not follow links).
    """
    with contextlib.suppress(OSError):
        for entry in os.scandir(temp):
            pid = entry.name[len(_PREFIX) :].split("-", 1)[0]
            if not entry.name.startswith(_PREFIX) or not pid.isdigit():
                continue
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False):
                    continue
                if entry.stat(follow_symlinks=False).st_uid != os.getuid() or alive(int(pid)):
                    continue
                shutil.rmtree(entry.path, ignore_errors=True)


def remove_loading_directories() -> None:
    """Remove the directories of loads in progress: for a process that stops right now.

    Called from a signal handler; it must not wait for a load to finish.
    """
    if not _loading_lock.acquire(timeout=1.0):
        return
    try:
        for target in list(_loading):
            shutil.rmtree(target, ignore_errors=True)
    finally:
        _loading_lock.release()


def export_names(found: object) -> dict[str, list[str]]:
    """The export probe's answer, checked: module name → its export names.

    A module set can break the probe's answer (``Object.prototype.toJSON`` set at
    load turns every object into what it returns); it then breaks every answer.
    """
    if isinstance(found, dict) and all(
        isinstance(names, list) and all(isinstance(n, str) for n in names)
        for names in found.values()
    ):
        return found
    shown = shortened(json.dumps(found), 80)
    raise ModuleSetError(
        f"the module set's export probe answered {shown}, not its export names: does a "
        "module change Object.prototype or JSON while it loads?"
    )


def missing_exports(found: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """Module → the export names the contract needs but the loaded module lacks."""
    missing: dict[str, list[str]] = {}
    for module, names in REQUIRED_EXPORTS.items():
        have = set(found.get(module, ()))
        lacking = [name for name in names if name not in have]
        if lacking:
            missing[module] = lacking
    return missing
