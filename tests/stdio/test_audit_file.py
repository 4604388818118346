"""An ``--audit-log FILE`` that cannot take a line (round 26, process lifecycle).

The write it records has happened. A full disk made the audit append raise, and the
write's answer became ``Error executing tool …`` while the plan was changed (the agent
would redo a write that landed); a FIFO nobody reads made the append wait for good,
holding the audit lock, so that every later write call hung too. Now the line goes to
stderr with a note, and the write answers as it went. A real server over real pipes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.rawrpc import PipeClient
from tests.stdio.conftest import SERVER
from werkbaum_core import checksum

PLAN = "[ ] #plan: Plan\n  - [ ] #a: A (S)\n"
ANSWER_SECONDS = 30.0


def unwritable(kind: str, tmp_path: Path) -> Path:
    if kind == "full disk":
        if not Path("/dev/full").exists():
            pytest.skip("no /dev/full here")
        return Path("/dev/full")
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)  # nobody opens it for reading
    return fifo


@pytest.mark.parametrize("kind", ["full disk", "FIFO nobody reads"])
def test_a_write_that_landed_answers_ok_when_its_audit_line_cannot_be_appended(
    kind: str, tmp_path: Path
) -> None:
    audit = unwritable(kind, tmp_path)
    (tmp_path / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    err = tmp_path / "stderr.txt"
    argv = [str(SERVER), "--root", str(tmp_path), "--audit-log", str(audit)]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    with err.open("wb") as stderr:
        client = PipeClient(argv, tmp_path, env, stderr=stderr.fileno())
    try:
        client.handshake()
        base = {"version": None, "checksum": checksum(PLAN)}
        for number, status in enumerate(["x", "/"]):  # a second write: nothing held
            arguments = {"source": "plan.werkbaum", "base": base, "id": "a", "status": status}
            params = {"name": "werkbaum_set_status", "arguments": arguments}
            client.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
            result = client.receive(number, timeout=ANSWER_SECONDS)["result"]
            assert not result.get("isError"), result
            base = json.loads(result["content"][0]["text"])["base"]
        assert "- [/] #a" in (tmp_path / "plan.werkbaum").read_text(encoding="utf-8")
        assert client.close(timeout=ANSWER_SECONDS) == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()
            client.close(timeout=ANSWER_SECONDS)
    said = err.read_text(encoding="utf-8").splitlines()
    notes = [line for line in said if line.startswith("werkbaum: cannot append to the audit log")]
    lines = [json.loads(line) for line in said if line.startswith("{")]
    assert len(notes) == 2, said
    assert [line["outcome"] for line in lines] == ["ok", "ok"]
