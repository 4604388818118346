"""Module sets: which notation modules an executor loads, and from where.

A Werkbaum checkout's ``frontend/src`` replaces the bundled modules one by
one (spec §2.1, drop-in rule): every module the checkout has wins, every one it
lacks comes from the package. Both are copied into one private directory so
that the modules' relative imports (``./parser.js``) resolve to the chosen
files on every executor.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path

import attrs

from werkbaum_core.errors import ModuleSetError

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

REPLACEABLE = (*REQUIRED_EXPORTS, "render.js")
"""Modules a checkout may supply; the facade and the executor hosts always come from us."""


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
            own = self.frontend / name if self.frontend else None
            if own is not None and own.is_file():
                result[name] = str(own)
            elif (bundled_dir() / name).is_file():
                result[name] = "bundled"
        return result

    def materialize(self, extra_files: Iterable[Path] = ()) -> Path:
        """Copy the chosen modules (plus test entries) into a fresh private directory.

        The caller owns the directory; executors delete it on close.
        """
        target = Path(tempfile.mkdtemp(prefix="werkbaum-js-"))
        for item in bundled_dir().iterdir():
            if item.is_file():
                shutil.copy2(item, target / item.name)
        if self.frontend is not None:
            for item in self.frontend.iterdir():
                if item.is_file() and item.suffix in (".js", ".mjs"):
                    shutil.copy2(item, target / item.name)
        for extra in extra_files:
            shutil.copy2(extra, target / extra.name)
        return target


def missing_exports(found: Mapping[str, Iterable[str]]) -> list[str]:
    """``module.export`` names the contract needs but the loaded modules lack."""
    missing: list[str] = []
    for module, names in REQUIRED_EXPORTS.items():
        have = set(found.get(module, ()))
        missing.extend(f"{module}: {name}" for name in names if name not in have)
    return missing
