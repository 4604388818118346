"""Which JS executor the HTTP server runs, and why it is ``node`` when it can be.

One uvicorn worker is one asyncio event loop. The tool handlers run in worker
threads (``anyio.to_thread``), which is enough for I/O, but the default
``dukpy`` executor holds the GIL for a whole JS evaluation: while it analyses
a large plan (tens to hundreds of milliseconds), no other request of that
worker makes progress — not even a ``/healthz`` or a quick 503 from the call
cap. The ``node`` executor runs the same modules (the conformance suite proves
identical results) in a separate process; the worker thread waits on a pipe
with the GIL released, so the event loop keeps answering. It is also killed
and restarted when a call exceeds its time limit, which dukpy cannot offer.

So the HTTP server picks, in order: ``--engine``, ``WERKBAUM_ENGINE``, then
``node`` if it is on the PATH, else ``dukpy`` (with a start-up warning that
recommends ``--workers`` or installing node). ``--workers N`` multiplies
either choice across processes; the server is stateless, so that is safe.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from werkbaum_core.engine.node_executor import node_binary

DUKPY_WARNING = (
    "engine dukpy holds the GIL during each JS call, so a long analysis stalls this "
    "worker's other requests; install node (the default when present) or run --workers N"
)


def choose_engine(requested: str | None, environ: Mapping[str, str] | None = None) -> str:
    """``requested``, else ``WERKBAUM_ENGINE``, else ``node`` when installed, else ``dukpy``."""
    env = os.environ if environ is None else environ
    if requested:
        return requested
    if env.get("WERKBAUM_ENGINE"):
        return env["WERKBAUM_ENGINE"]
    return "node" if node_binary() is not None else "dukpy"
