"""The stdio server exempts its start-up objects from the garbage collector.

A full collection walked the ~100,000 objects start-up made and held the event
loop 60-100 ms under load (BENCHMARKS.md, /healthz p99); once a server is ready
they are frozen out of the collector's walk. The HTTP side:
``tests/http/test_collector.py``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from tests.conftest import walked
from tests.stdio.conftest import make_server
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio import server as stdio_server
from werkbaum_stdio.collector import freeze_startup_objects

pytestmark = pytest.mark.usefixtures("unfrozen")


def test_what_is_alive_is_frozen_and_what_comes_later_is_collected() -> None:
    before = [object()]
    assert walked(before)
    assert freeze_startup_objects() == gc.get_freeze_count() > 0
    assert not walked(before)
    later: list[object] = []
    later.append(later)  # a reference cycle: only the collector frees it
    assert walked(later)
    del later
    gc.collect()
    assert not any(type(o) is list and len(o) == 1 and o[0] is o for o in gc.get_objects())


@pytest.mark.anyio
async def test_the_stdio_server_freezes_before_it_reads_a_message(
    plans: Path, shared_engine: LazyEngine, audit_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = make_server(plans, shared_engine, audit_file)
    built = [object()]
    frozen_when_served: list[int] = []

    @contextlib.asynccontextmanager
    async def gone_host() -> AsyncIterator[tuple[object, object]]:
        # The session's streams, the host gone at once: the server serves, then ends.
        to_session, from_host = anyio.create_memory_object_stream[object](1)
        to_host, from_session = anyio.create_memory_object_stream[object](1)
        frozen_when_served.append(gc.get_freeze_count())
        await to_session.aclose()
        async with from_host, to_host, from_session:
            yield from_host, to_host

    monkeypatch.setattr(stdio_server, "stdio_pipes", gone_host)
    assert gc.get_freeze_count() == 0
    await stdio_server.serve_stdio(server)
    assert frozen_when_served and frozen_when_served[0] > 0
    assert not walked(built)
