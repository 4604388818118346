"""Which executor runs the modules when nobody says: ``auto``.

Every executor gives identical results (the conformance suite runs on each),
so the servers and the command line may pick the fastest one present, as the
spec allows. ``node`` runs the modules on V8, several times faster than
QuickJS on large plans (see BENCHMARKS.md), in its own process: a long
analysis neither holds the server's GIL nor stops its event loop, and a call
that exceeds its time limit is killed. ``dukpy`` needs nothing installed, so
it is what ``auto`` falls back to. The Python API keeps ``dukpy`` as its
default: a library call should not start a subprocess unless asked.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

AUTO = "auto"


def choose_executor(requested: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``requested``, else ``WERKBAUM_ENGINE``, else ``auto``; ``auto`` is ``node``
    when it is on the PATH, else ``dukpy``."""
    env = os.environ if environ is None else environ
    kind = requested or env.get("WERKBAUM_ENGINE") or AUTO
    if kind != AUTO:
        return kind
    from werkbaum_core.engine.node_executor import node_binary  # only when choosing

    return "node" if node_binary() is not None else "dukpy"
