"""SIGTERM to the HTTP server during a write (spec §6.5): uvicorn's graceful shutdown.

uvicorn stops accepting connections at once, lets every request in flight end
(there is no ``timeout_graceful_shutdown``), then ends the app and dies of the
signal. A write past its store step so gets its answer and its audit line; the
HTTP server has no mirror step. A second SIGINT makes uvicorn quit at once; a write
past its store step still gets up to STOP_WAIT, and exactly one audit line.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.backend import Backend
from tests.backend.faults import Delayed
from tests.http.conftest import create_document, server_process
from tests.http.test_audit import audit_of, set_status
from werkbaum_core import checksum
from werkbaum_core.in_flight import STOP_WAIT

DELAY = 2.0
"""Seconds the stand-in holds the answer of the PATCH it has applied."""


def a_document(backend: Backend) -> tuple[str, dict[str, Any]]:
    """A new document on the stand-in and its base."""
    document = create_document(backend)
    current = httpx.get(document).json()
    return document, {"version": current["version"], "checksum": checksum(current["content"])}


def until_applied(document: str) -> None:
    """Until the backend holds the write (version 2): its answer is what is held."""
    deadline = time.monotonic() + 30
    while httpx.get(document).json()["version"] < 2:
        assert time.monotonic() < deadline, "the write never reached the backend"
        time.sleep(0.02)


def test_sigterm_lets_a_write_in_flight_finish_with_its_answer_and_audit_line(
    backend: Backend, tmp_path: Path
) -> None:
    document, base = a_document(backend)
    log = tmp_path / "server.log"
    answers: list[Any] = []
    with (
        server_process(["--server", backend.base_url], log) as served,
        backend.faults.injected(Delayed(method="PATCH", path="/content", seconds=DELAY)),
    ):
        writer = threading.Thread(
            target=lambda: answers.append(set_status(served.base_url, document, base, "w-1"))
        )
        writer.start()
        until_applied(document)
        served.process.send_signal(signal.SIGTERM)
        status = served.process.wait(timeout=DELAY + 20)
        writer.join(timeout=5)
    assert status == -signal.SIGTERM
    [answer] = answers
    assert answer["result"]["structuredContent"]["base"]["version"] == 2
    [line] = audit_of(log)
    assert (line["requestId"], line["outcome"], line["new"]["version"]) == ("w-1", "ok", 2)


@pytest.mark.parametrize(("held", "outcome"), [(DELAY, "ok"), (8.0, "stopped")])
def test_a_second_sigint_leaves_a_landed_write_audited_as_it_ended(
    backend: Backend, tmp_path: Path, held: float, outcome: str
) -> None:
    """Round 24 F4: uvicorn quits at once on a second SIGINT, cancelling the requests but
    not the threads that write; the app then closed the store under them, and four
    landed writes were audited ``error``. Now a write past its store step gets up to
    STOP_WAIT before the store closes: it ends ``ok``, or gets its ``stopped`` line with
    ``applied: "unknown"`` — one line either way."""
    document, base = a_document(backend)
    log = tmp_path / "server.log"
    with (
        server_process(["--server", backend.base_url], log) as served,
        backend.faults.injected(Delayed(method="PATCH", path="/content", seconds=held)),
    ):

        def call() -> None:
            with contextlib.suppress(Exception):  # its request is cancelled: no answer to read
                set_status(served.base_url, document, base, "w-2")

        writer = threading.Thread(target=call, daemon=True)
        writer.start()
        until_applied(document)
        served.process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        served.process.send_signal(signal.SIGINT)
        served.process.wait(timeout=STOP_WAIT + held + 20)
    [line] = audit_of(log)
    assert (line["requestId"], line["outcome"]) == ("w-2", outcome), line
    if outcome == "stopped":
        assert line["applied"] == "unknown"
