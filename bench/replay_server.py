"""A stand-in that does no server work: what a round trip costs the client and the pipes.

``python -P replay_server.py SERVER [ARG ...]`` starts the real stdio server
behind it and relays every line both ways, but answers a ``tools/call`` it has
answered before (same tool, same arguments) itself: the recorded answer line,
byte for byte, with only the request's id put in. A warm call through it costs
what the client, the pipes and this relay cost for exactly the bytes the real
server sends, with none of the server's own work. The stdio section times the
same calls through it and through the server, so a run shows which share of a
round trip the server can change at all (the answer's size and shape are fixed
by the spec, §5: the result as ``structuredContent`` and as its text).

A plain script (no imports from the project): it runs as its own interpreter,
and ``-P`` keeps ``bench/`` off ``sys.path`` (its ``stdio.py`` would shadow the
standard library's).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any, BinaryIO


class Relay:
    """Both directions between the client (this process's stdin/stdout) and the server."""

    def __init__(self, server: subprocess.Popen[bytes]) -> None:
        self._server = server
        self._recorded: dict[str, bytes] = {}
        self._waiting: dict[str, str] = {}
        """Request id (as JSON) → recording key, for tools/call answers not yet recorded."""
        self._lock = threading.Lock()
        self._out: BinaryIO = sys.stdout.buffer

    def _write(self, data: bytes) -> None:
        with self._lock:
            self._out.write(data)
            self._out.flush()

    def from_server(self) -> None:
        """Relay the server's lines, keeping the body of each awaited tools/call answer."""
        assert self._server.stdout is not None
        for line in self._server.stdout:
            message = json.loads(line)
            request_id = json.dumps(message.get("id"))
            with self._lock:
                key = self._waiting.pop(request_id, None)
            prefix = _prefix(request_id)
            if key is not None and line.startswith(prefix):
                self._recorded[key] = line[len(prefix) :]
            self._write(line)

    def from_client(self, stdin: BinaryIO) -> None:
        """Answer repeated tools/calls from the recording; pass everything else on."""
        assert self._server.stdin is not None
        for line in stdin:
            message: dict[str, Any] = json.loads(line)
            if message.get("method") == "tools/call" and "id" in message:
                params = message.get("params") or {}
                key = json.dumps([params.get("name"), params.get("arguments")], sort_keys=True)
                request_id = json.dumps(message["id"])
                body = self._recorded.get(key)
                if body is not None:
                    self._write(_prefix(request_id) + body)
                    continue
                with self._lock:
                    self._waiting[request_id] = key
            self._server.stdin.write(line)
            self._server.stdin.flush()
        self._server.stdin.close()


def _prefix(request_id: str) -> bytes:
    """How the server's answer line starts, up to its result (``{"jsonrpc":"2.0","id":7,``)."""
    return b'{"jsonrpc":"2.0","id":' + request_id.encode() + b","


def main(argv: list[str]) -> int:
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    relay = Relay(server)
    answers = threading.Thread(target=relay.from_server)
    answers.start()
    relay.from_client(sys.stdin.buffer)
    code = server.wait(timeout=30)
    answers.join(timeout=30)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
