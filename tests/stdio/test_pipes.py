"""The stdio transport (``werkbaum_stdio.pipes``) seen from a raw pipe client.

What a host relies on: every request is answered with a whole line even when the
host sends far more than the pipes hold before reading anything; a line that
is not JSON-RPC does not end the session; closing stdin ends the server only
after every answer is written; a host that stops reading does not hang it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.stdio.conftest import audit_lines, claude_code_style, raw_handshake
from werkbaum_core import checksum
from werkbaum_stdio.pipes import DUPLICATE_ID

HANDSHAKE = raw_handshake("init", "pipe-test")


def inspect_request(request_id: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "werkbaum_inspect", "arguments": {"source": "werkbaum.werkbaum"}},
    }


def start(project: Path, *extra: str) -> subprocess.Popen[bytes]:
    params = claude_code_style(project, *extra)
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=params.env,
    )


def send_all(process: subprocess.Popen[bytes], lines: list[bytes], close: bool) -> None:
    """Write from a thread: the server may answer before it has read everything."""
    assert process.stdin is not None
    stdin = process.stdin

    def write() -> None:
        stdin.write(b"".join(lines))
        stdin.flush()
        if close:
            stdin.close()

    writer = threading.Thread(target=write)
    writer.start()
    writer.join(timeout=120)
    assert not writer.is_alive(), "the server stopped reading its input"


def answers(process: subprocess.Popen[bytes]) -> list[dict[str, Any]]:
    """Everything the server writes until it exits (stdin is closed by now)."""
    assert process.stdout is not None and process.stderr is not None
    stderr = process.stderr
    err: list[bytes] = []
    drain = threading.Thread(target=lambda: err.append(stderr.read()))
    drain.start()
    out = process.stdout.read()
    drain.join(timeout=60)
    assert process.wait(timeout=60) == 0, b"".join(err).decode(errors="replace")[-2000:]
    return [json.loads(line) for line in out.splitlines()]


def encoded(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_many_large_answers_sent_before_reading_all_arrive_whole(
    project: Path,
) -> None:
    # 40 answers of ~150 KB are ~6 MB: far more than the widened 1 MiB pipe, so
    # the writer blocks, answers queue up and the event loop has to wait for it.
    ids = list(range(100, 140))
    lines = [encoded(m) for m in HANDSHAKE] + [encoded(inspect_request(i)) for i in ids]
    process = start(project)
    send_all(process, lines, close=True)
    tool_answers = [m for m in answers(process) if m.get("id") in ids]
    assert sorted(m["id"] for m in tool_answers) == ids  # JSON-RPC allows any order
    first = tool_answers[0]["result"]
    assert len(first["content"][0]["text"]) > 50_000
    assert all(m["result"] == first for m in tool_answers)
    assert json.loads(first["content"][0]["text"]) == first["structuredContent"]


def test_a_line_that_is_not_json_rpc_does_not_end_the_session(project: Path) -> None:
    process = start(project)
    lines = [
        *(encoded(m) for m in HANDSHAKE),
        b"this is not JSON\n",
        b'{"jsonrpc": "2.0", "id": 5, "method": "tools/list"}\n',
    ]
    send_all(process, lines, close=True)
    by_id = {m.get("id"): m for m in answers(process)}
    assert len(by_id[5]["result"]["tools"]) == 10


def test_closing_stdin_right_after_the_requests_still_answers_them_all(
    project: Path,
) -> None:
    process = start(project)
    lines = [encoded(m) for m in HANDSHAKE] + [encoded(inspect_request(i)) for i in (1, 2, 3)]
    send_all(process, lines, close=True)
    got = [m["id"] for m in answers(process) if m.get("id") in (1, 2, 3)]
    assert sorted(got) == [1, 2, 3]


def set_status(
    request_id: int | str, source: str, text: str, node: str, status: str = "x"
) -> dict[str, Any]:
    base = {"version": None, "checksum": checksum(text)}
    arguments = {"source": source, "base": base, "id": node, "status": status}
    params = {"name": "werkbaum_set_status", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_second_request_under_an_unanswered_id_is_refused_and_the_first_completes(
    project: Path,
) -> None:
    """Two writes with id 7, then end of input: the drain counted ids in a set and ended
    with the first answer, so the other write was cancelled and answered "Connection
    closed". Now the second is refused (-32600) before it runs; "7" is the same id
    to the SDK. An id is free again once its answer is out (id 9 twice, in turn)."""
    big = "[ ] #r: R (L)\n" + "".join(f"  - [ ] #n{i}: N {i} (S)\n" for i in range(20_000))
    small = "[ ] #s: S (S)\n  - [ ] #b: B (S)\n"
    (project / "big.werkbaum").write_text(big, encoding="utf-8")
    (project / "small.werkbaum").write_text(small, encoding="utf-8")
    audit = project / "audit.jsonl"
    process = start(project, "--audit-log", str(audit))
    lines = [
        *(encoded(m) for m in HANDSHAKE),
        encoded(set_status(7, "big.werkbaum", big, "n5")),
        encoded(set_status(7, "small.werkbaum", small, "b")),
        encoded(set_status("7", "small.werkbaum", small, "b")),
    ]
    send_all(process, lines, close=True)
    got = [m for m in answers(process) if m.get("id") in (7, "7")]
    refused = {"code": -32600, "message": DUPLICATE_ID}
    assert sorted(json.dumps(m.get("error")) for m in got) == sorted(
        json.dumps(e) for e in [None, refused, refused]
    ), got
    assert "[x] #n5" in (project / "big.werkbaum").read_text(encoding="utf-8")
    assert (project / "small.werkbaum").read_text(encoding="utf-8") == small
    assert [line["outcome"] for line in audit_lines(audit)] == ["ok"]

    process = start(project)
    assert process.stdin is not None and process.stdout is not None
    for m in HANDSHAKE:
        process.stdin.write(encoded(m))
    for status in ("~", "x"):
        text = (project / "small.werkbaum").read_text(encoding="utf-8")
        process.stdin.write(encoded(set_status(9, "small.werkbaum", text, "b", status)))
        process.stdin.flush()
        while (answer := json.loads(process.stdout.readline())).get("id") != 9:
            pass
        assert "result" in answer and not answer["result"]["isError"], answer
    process.stdin.close()
    answers(process)
    assert "[x] #b" in (project / "small.werkbaum").read_text(encoding="utf-8")


def test_a_host_that_stops_reading_does_not_hang_the_server(project: Path) -> None:
    process = start(project)
    assert process.stdout is not None and process.stdin is not None
    process.stdout.close()  # answers now fail with EPIPE
    lines = [encoded(m) for m in HANDSHAKE] + [encoded(inspect_request(i)) for i in range(10)]
    with contextlib.suppress(BrokenPipeError):  # the server may already have gone
        send_all(process, lines, close=True)
    process.wait(timeout=60)
    assert process.stderr is not None
    process.stderr.close()


ECHO_SERVER = """
import os, subprocess, sys
import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from werkbaum_stdio.pipes import stdio_pipes

async def main():
    async with stdio_pipes() as (read, write):
        async for item in read:
            print("stray print")
            sys.stdout.flush()
            os.write(1, b"stray fd write\\n")
            subprocess.run(["echo", "stray child"], check=True)
            answer = types.JSONRPCResponse(
                jsonrpc="2.0", id=item.message.id, result={"echo": item.message.method}
            )
            await write.send(SessionMessage(answer))
    print("after the transport", flush=True)

anyio.run(main)
"""


def test_stray_output_goes_to_stderr_while_serving_and_stdout_comes_back_after() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ECHO_SERVER],
        input=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\nnot json\n',
        capture_output=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.decode().splitlines()
    answered = sorted((json.loads(line) for line in lines[:2]), key=lambda m: str(m["id"]))
    assert answered == [
        {"jsonrpc": "2.0", "id": 1, "result": {"echo": "ping"}},
        # answered by the transport itself: the session never sees the line
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32700,
                "message": "Parse error: the line is not JSON (Expecting value at character 0)",
            },
        },
    ]
    assert lines[2:] == ["after the transport"]
    stray = done.stderr.decode()
    assert stray.count("stray print") == stray.count("stray fd write") == 1
    assert stray.count("stray child") == 1


def children(pid: int) -> list[str]:
    """Names of the direct child processes of ``pid`` (Linux /proc)."""
    names = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone meanwhile
        name, rest = text.split("(", 1)[1].rsplit(")", 1)
        if int(rest.split()[1]) == pid:  # field 4, after the state
            names.append(name)
    return names


def engine_loaded(pid: int) -> list[str]:
    """The engines a process holds: a node child, V8 mapped in (mini-racer)."""
    mapped = Path(f"/proc/{pid}/maps").read_text()
    return children(pid) + (["v8"] if "libmini_racer" in mapped else [])


@pytest.mark.usefixtures("node_installed")
@pytest.mark.parametrize(("args", "engine"), [((), "v8"), (("--engine", "node"), "node")])
def test_the_default_engine_is_v8_and_starts_on_the_first_call(
    project: Path, args: tuple[str, ...], engine: str
) -> None:
    process = start(project, *args)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        stdin.write(encoded(message))
        stdin.flush()
        while True:
            answer: dict[str, Any] = json.loads(stdout.readline())
            if answer.get("id") == message["id"]:
                return answer

    try:
        ask(HANDSHAKE[0])
        stdin.write(encoded(HANDSHAKE[1]))
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert engine_loaded(process.pid) == []  # idle: no engine yet
        inspected = ask(inspect_request(3))
        assert inspected["result"]["structuredContent"]["warnings"] == []
        assert engine_loaded(process.pid) == [engine]
    finally:
        stdin.close()
        answers(process)
