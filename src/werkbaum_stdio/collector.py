"""The garbage collector of a serving process: no long pauses on its event loop.

A full collection of CPython's cyclic collector walks every container object
the process holds, and in a server that is mostly what start-up made: the
SDK's and pydantic's models and schemas, the routes, the catalogue (about
100,000 objects in ``werkbaum-mcp-http``). Under load the steady churn of
answers set off such a collection about once a second, and each one held the
event loop for 60-100 ms: all of ``/healthz``'s p99 under the benchmark's text
load (BENCHMARKS.md). :func:`freeze_startup_objects`, called once a server is
ready to serve, moves everything alive at that moment out of the collector's
walk (``gc.freeze``); later full collections walk only what was made since.
Frozen objects are still freed as usual when their last reference goes; only
garbage in a reference cycle at that moment stays for good (about 200 objects
after start-up, against the 70 ms a collection first would add to every start).
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> int:
    """Exempt every object alive now from later collections; returns their number."""
    gc.freeze()
    return gc.get_freeze_count()
