"""The child side of :mod:`werkbaum_core.engine.dukpy_process`: ``python -m`` this.

Arguments: the answer pipe's file descriptor, then a JSON object naming the
directory the parent copied the modules to (it keeps it while this process
lives), the entries and the limits. Loads the modules on a
:class:`~werkbaum_core.engine.dukpy_executor.DukpyExecutor` (on this process's
main thread, so its own time limits hold), says ready with the exports, then
answers one request line at a time until stdin ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO

from werkbaum_core.engine.dukpy_executor import DukpyExecutor
from werkbaum_core.engine.modules import Copied
from werkbaum_core.engine.protocol import Limits
from werkbaum_core.errors import EngineTimeout, WerkbaumError


def main(argv: list[str]) -> int:
    answers = open(int(argv[0]), "w", encoding="utf-8")  # noqa: SIM115 (lives as long as we do)
    spec = json.loads(argv[1])
    program = Copied(Path(spec["directory"]), tuple(spec["entries"]))
    try:
        executor = DukpyExecutor(program, limits=Limits(**spec["limits"]))
    except WerkbaumError as exc:
        failed = {"error": exc.message, "timeout": isinstance(exc, EngineTimeout)}
        _send(answers, json.dumps(failed))
        return 1
    _send(answers, json.dumps({"ready": True, "exports": executor.exports()}))
    for line in sys.stdin:
        _send(answers, _answer(executor, line))
    executor.close()
    return 0


def _answer(executor: DukpyExecutor, line: str) -> str:
    request_id = None
    try:
        request = json.loads(line)
        request_id = request["id"]
        result = executor.call_text(request["entry"], request["payload"])
        return f'{{"id":{json.dumps(request_id)},"result":{result}}}'
    except WerkbaumError as exc:
        return json.dumps({"id": request_id, "error": exc.message})
    except Exception as exc:  # a malformed request: the parent's bug, said, not fatal
        return json.dumps({"id": request_id, "error": f"{type(exc).__name__}: {exc}"})


def _send(stream: IO[str], line: str) -> None:
    stream.write(line + "\n")
    stream.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
