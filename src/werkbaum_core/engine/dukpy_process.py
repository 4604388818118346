"""The dukpy executor for servers: QuickJS in a child Python process of its own.

In the process, dukpy holds the GIL for a whole evaluation and can be stopped
only by a signal on the main thread, while the servers call the engine from
worker threads: one slow analysis would stall every other request and could run
for as long as it likes. In a child, the caller waits on a pipe with the GIL
released, a call over its time limit is killed with the process (the next call
starts a fresh one), and the interpreter's memory is not the server's. The
results are the in-process executor's, byte for byte: the child runs a
:class:`~werkbaum_core.engine.dukpy_executor.DukpyExecutor` on its main thread
(``dukpy_host``) and hands its JSON text on unchanged.

The price: a Python interpreter to start (~0.2 s, ~26 MiB before the modules),
and the text and answer crossing a pipe (well under a millisecond for the
reference plan, against dukpy's tens of milliseconds).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from werkbaum_core.engine.dukpy_executor import check_lines, plan_texts
from werkbaum_core.engine.host_process import HostedExecutor, HostProcess
from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import JSON, LIMITS, Limits

HOST_MODULE = "werkbaum_core.engine.dukpy_host"

CHILD_MARGIN = 10.0
"""Seconds the child's own time limit for a call lies beyond the parent's: the
parent's kill is the limit that counts, and it says ``engine_timeout``."""


class DukpyProcessExecutor(HostedExecutor):
    name = "dukpy"
    start_margin = 5.0  # a Python interpreter starts before the modules load
    keeps_files = True  # the child starts a fresh interpreter after a large call

    def __init__(self, program: Program, *, limits: Limits = LIMITS) -> None:
        self._program = program
        super().__init__(limits=limits)

    @contextmanager
    def _launch(self) -> Iterator[HostProcess]:
        with self._program.materialized() as directory:
            spec = {
                "directory": str(directory),
                "entries": list(self._program.entries),
                "limits": {"call": self._limits.call + CHILD_MARGIN, "start": self._limits.start},
            }
            # -P: no script or working directory on the path (a dukpy.py there must
            # not be imported); the parent's path instead, which found this package.
            # A minimal environment otherwise: dukpy hands it to JS as process.env.
            path = os.pathsep.join(entry for entry in sys.path if entry)
            env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": path}
            command = [sys.executable, "-P", "-s", "-m", HOST_MODULE]
            yield HostProcess(self.name, command, [json.dumps(spec)], env)

    def call_text(self, entry: str, payload: JSON) -> str:
        for text in plan_texts(payload):
            check_lines(text)  # too_large here, before the text crosses the pipe
        return super().call_text(entry, payload)
