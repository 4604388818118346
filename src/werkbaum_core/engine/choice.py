"""Which executor runs the modules when nobody says: ``auto``.

Every executor gives identical results (the conformance suite runs on each),
so the servers and the command line pick the fastest one present, as the spec
allows, in this order:

1. ``v8`` (the ``werkbaum-mcp[v8]`` extra): V8 in the process. As fast as
   node on large plans, no subprocess and no pipe to cross, the GIL released
   during a call, a time limit per call and a heap limit.
2. ``node``, when it is on the PATH: V8 in a child process of its own; a
   call that exceeds its time limit is killed with the process.
3. ``dukpy``: QuickJS, needs nothing installed, the slowest; it analyses
   plans up to a line limit. In the process it holds the GIL during a call and
   has a time limit only for calls on the main thread (see ``dukpy_executor``);
   the servers run it in a child process (``dukpy_process``), where it has
   both.

``v8`` is passed over for a checkout's module set that its linker cannot
translate (:class:`~werkbaum_core.engine.linker.LinkRefused`): node and
dukpy load ES modules natively. The Python API (``Engine.create()`` without a
kind) picks the first in-process executor: ``v8`` when installed, else
``dukpy`` — a library call should not start a subprocess unless asked; without
the extra it then has dukpy's limits (no time limit off the main thread).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

AUTO = "auto"
EXECUTORS = ("dukpy", "node", "v8")
"""Every executor the engine knows (the conformance suite runs on each)."""


def choose_executor(
    requested: str | None,
    environ: Mapping[str, str] | None = None,
    *,
    frontend: str | Path | None = None,
) -> str:
    """``requested``, else ``WERKBAUM_ENGINE``, else ``auto``: the first of v8, node
    and dukpy that is installed and can load the module set of ``frontend``."""
    env = os.environ if environ is None else environ
    kind = requested or env.get("WERKBAUM_ENGINE") or AUTO
    if kind != AUTO:
        return kind
    if _v8_usable(frontend):
        return "v8"
    from werkbaum_core.engine.node_executor import node_binary  # only when choosing

    return "node" if node_binary() is not None else "dukpy"


def in_process_executor(frontend: str | Path | None = None) -> str:
    """The Python API's default: ``v8`` when installed and able to link, else ``dukpy``."""
    return "v8" if _v8_usable(frontend) else "dukpy"


def _v8_usable(frontend: str | Path | None) -> bool:
    from werkbaum_core.engine.v8_executor import available

    if not available():
        return False
    if not frontend:
        return True  # the bundled modules link (tests/core/test_linker.py)
    from werkbaum_core.engine.linker import LinkRefused, link
    from werkbaum_core.engine.modules import ENTRIES, ModuleSet
    from werkbaum_core.errors import WerkbaumError

    try:
        link(ModuleSet.from_frontend(frontend).locate, ENTRIES)
    except LinkRefused:
        return False
    except WerkbaumError:
        return True  # a module set no executor can load: v8 says why as well as any
    return True
