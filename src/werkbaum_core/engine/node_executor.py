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


def node_binary() -> str | None:
    """The ``node`` executable, or None when it is not installed."""
    return shutil.which(os.environ.get("WERKBAUM_NODE", "node"))


class NodeExecutor(HostedExecutor):
    name = "node"
    suspects = (
        "a module that changes JSON or Object.prototype, or WERKBAUM_NODE naming "
        "something other than node"
    )

    def __init__(self, program: Program, *, limits: Limits = LIMITS) -> None:
        binary = node_binary()
        if binary is None:
            raise EngineError("the node executor needs `node` on the PATH")
        self._binary = binary
        self._program = program
        super().__init__(limits=limits)

    @contextmanager
    def _launch(self) -> Iterator[HostProcess]:
        # The modules are copied for the start only: once loaded, node needs no files.
        # A minimal environment: the plan modules must not see the server's secrets.
        with self._program.materialized() as directory:
            yield HostProcess(
                self.name,
                [self._binary, str(HOST)],
                [str(directory), *self._program.entries],
                {"PATH": os.environ.get("PATH", "")},
            )
