"""An executor that runs the modules natively in a persistent ``node`` process.

Real isolation and V8 speed, at the price of needing ``node`` on the PATH. The
process and its protocol are :mod:`werkbaum_core.engine.host_process`'s; the host
script is ``node_host.mjs``, which loads the modules as ES modules.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from werkbaum_core.engine.host_process import HostedExecutor, HostProcess
from werkbaum_core.engine.modules import Program
from werkbaum_core.engine.protocol import LIMITS, Limits
from werkbaum_core.errors import EngineError

HOST = Path(__file__).with_name("node_host.mjs")
HEAP_MIB = 1024
"""The node child's heap limit (``--max-old-space-size``), as the v8 executor's: the largest
legal plans analyse well within it, and a runaway call ends with a clear error instead of
growing the child to V8's default limit (4 GB seen, 17-28 s per failing call)."""


def node_binary() -> str | None:
    """The ``node`` executable, or None when it is not installed."""
    return shutil.which(os.environ.get("WERKBAUM_NODE", "node"))


class NodeExecutor(HostedExecutor):
    name = "node"
    suspects = (
        "a module that changes JSON or Object.prototype, or WERKBAUM_NODE naming "
        "something other than node"
    )

    def __init__(
        self, program: Program, *, limits: Limits = LIMITS, heap_mib: int = HEAP_MIB
    ) -> None:
        binary = node_binary()
        if binary is None:
            raise EngineError("the node executor needs `node` on the PATH")
        self._binary = binary
        self._program = program
        self._heap_mib = heap_mib
        super().__init__(limits=limits)

    @contextmanager
    def _launch(self) -> Iterator[HostProcess]:
        # The modules are copied for the start only: once loaded, node needs no files.
        # A minimal environment: the plan modules must not see the server's secrets.
        with self._program.materialized() as directory:
            # The heap limit through NODE_OPTIONS: the command line stays the host's.
            options = f"--max-old-space-size={self._heap_mib}"
            yield HostProcess(
                self.name,
                [self._binary, str(HOST)],
                [str(directory), *self._program.entries],
                {"PATH": os.environ.get("PATH", ""), "NODE_OPTIONS": options},
                heap=f"the call needed more than the node executor's heap limit of "
                f"{self._heap_mib:,} MiB",
            )
