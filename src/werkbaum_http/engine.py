"""Which JS executor the HTTP server runs, and why it is ``v8`` or ``node`` when it can be.

One uvicorn worker is one asyncio event loop. The tool handlers run in worker
threads (``anyio.to_thread``); an engine call must not hold the GIL meanwhile,
or no other request of that worker makes progress — not even a ``/healthz``
or a quick 503 from the call cap. None does: ``v8`` releases the GIL while JS
runs, ``node`` is a child process the thread waits on, and ``dukpy`` runs in
a child Python process of its own in the servers
(:mod:`werkbaum_core.engine.dukpy_process`), so every executor's calls have a
time limit here too.

What stays is speed: dukpy is about 10-20x slower than V8 (BENCHMARKS.md), and each
worker's engine runs one call at a time. So the HTTP server picks like every
entry point of the product (:func:`werkbaum_core.engine.choose_executor`):
``--engine``, ``WERKBAUM_ENGINE``, then ``v8`` if installed, ``node`` if it is on
the PATH, else ``dukpy`` — here with a start-up warning that recommends
installing v8 or node, or ``--workers``. ``--workers N`` multiplies any choice
across processes; the server is stateless, so that is safe.
"""

from __future__ import annotations

DUKPY_WARNING = (
    "engine dukpy is the slowest executor (each worker runs one JS call at a time, "
    "about 10-20x slower than V8); install werkbaum-mcp[v8] or node "
    "(preferred when present) or run --workers N"
)
