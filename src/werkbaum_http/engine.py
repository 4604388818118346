"""Which JS executor the HTTP server runs, and why it is ``v8`` or ``node`` when it can be.

One uvicorn worker is one asyncio event loop. The tool handlers run in worker
threads (``anyio.to_thread``), which is enough for I/O, but the default
``dukpy`` executor holds the GIL for a whole JS evaluation: while it analyses
a large plan (tens to hundreds of milliseconds), no other request of that
worker makes progress — not even a ``/healthz`` or a quick 503 from the call
cap. The ``node`` executor runs the same modules (the conformance suite proves
identical results) in a separate process; the worker thread waits on a pipe
with the GIL released, so the event loop keeps answering. It is also killed
and restarted when a call exceeds its time limit, which dukpy cannot offer here
(it can be interrupted only on the main thread; tool calls run on worker threads).

So the HTTP server picks like every entry point of the product
(:func:`werkbaum_core.engine.choose_executor`): ``--engine``, ``WERKBAUM_ENGINE``,
then ``v8`` if installed (V8 in the process, the GIL released during a call),
``node`` if it is on the PATH, else ``dukpy`` — here with a start-up warning that
recommends ``--workers`` or installing v8 or node. ``--workers N`` multiplies
either choice across processes; the server is stateless, so that is safe.
"""

from __future__ import annotations

DUKPY_WARNING = (
    "engine dukpy holds the GIL during each JS call and, on this server's worker "
    "threads, has no time limit: a long analysis stalls this worker's other requests "
    "until it ends; install werkbaum-mcp[v8] or node (preferred when present) or run "
    "--workers N"
)
