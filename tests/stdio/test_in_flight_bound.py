"""A host that pipelines many large requests and reads stdout slowly (round 26).

Every request read is run, and its answer is held until the host reads it: 300
``werkbaum_read`` calls of a 1.3 MB plan sent at once, stdout not read, grew the server
to 986 MiB. Now at most :data:`~werkbaum_stdio.pipes.IN_FLIGHT` requests are unanswered;
the rest wait in the stdin pipe (the server does not read them yet) and are all answered
once the host reads. Seen here from the host's side: the bytes left unread in the stdin
pipe (``FIONREAD``). A real server over real pipes; every wait has a deadline.
"""

from __future__ import annotations

import array
import fcntl
import io
import json
import os
import select
import termios
import threading
import time
from pathlib import Path

from tests.rawrpc import PipeClient
from tests.stdio.conftest import SERVER
from werkbaum_stdio.pipes import IN_FLIGHT

NODES = 20_000
"""A plan whose werkbaum_read answer is ~1.3 MB: a few fill the answer pipe."""
REQUESTS = IN_FLIGHT * 8
DEADLINE = 60.0


def unread(fd: int) -> int:
    """Bytes in the pipe that ``fd`` writes to, not read yet."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def read_answers(client: PipeClient, count: int) -> dict[int, str]:
    """The next ``count`` answers, in whatever order they come: id → the tool's text."""
    assert client.process.stdout is not None
    fd = client.process.stdout.fileno()
    answers: dict[int, str] = {}
    buffer = b""
    deadline = time.monotonic() + DEADLINE
    while len(answers) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 1 << 20)
            assert chunk, "the server closed stdout"
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                message = json.loads(line)
                answers[message["id"]] = message["result"]["content"][0]["text"]
    return answers


def test_the_server_reads_no_more_requests_while_many_answers_wait_for_the_host(
    tmp_path: Path,
) -> None:
    nodes = (f"  - [ ] #n{i}: Node number {i} with some words (S) @anna" for i in range(NODES))
    (tmp_path / "big.werkbaum").write_text("\n".join(["[ ] #plan: Plan", *nodes]) + "\n")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    client = PipeClient([str(SERVER), "--root", str(tmp_path)], tmp_path, env)
    try:
        client.handshake()
        assert client.process.stdin is not None
        stdin = client.process.stdin
        params = {"name": "werkbaum_read", "arguments": {"source": "big.werkbaum"}}
        requests = [
            {"jsonrpc": "2.0", "id": 1000 + n, "method": "tools/call", "params": params}
            for n in range(REQUESTS)
        ]
        data = b"".join(json.dumps(r).encode() + b"\n" for r in requests)
        assert len(data) < 60_000, "all of it fits in the stdin pipe: the host never waits"
        writer = threading.Thread(target=lambda: (stdin.write(data), stdin.flush()))
        writer.start()
        writer.join(DEADLINE)
        # Until the server stops taking requests (or has taken them all).
        deadline = time.monotonic() + DEADLINE
        left, steady_since = unread(stdin.fileno()), time.monotonic()
        while time.monotonic() - steady_since < 2.0 and time.monotonic() < deadline:
            time.sleep(0.1)
            now = unread(stdin.fileno())
            if now != left:
                left, steady_since = now, time.monotonic()
        # The reader's buffer holds up to a block of what it took from the pipe.
        per_request = len(data) // REQUESTS
        expected = (REQUESTS - IN_FLIGHT - 2) * per_request - io.DEFAULT_BUFFER_SIZE
        assert left >= expected, f"{left} bytes left unread; {per_request} a request"
        answers = read_answers(client, len(requests))  # the host reads at last
        assert sorted(answers) == [r["id"] for r in requests]
        assert all('"lines":20002' in text for text in answers.values())
        assert client.close(timeout=DEADLINE) == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.close(timeout=DEADLINE)
