"""Names that are not UTF-8 (round 21, findings 2 and 7): a root, a ``--plan-glob``, a
symlink target, a file or the project directory named in Latin-1 bytes. The server
starts, completes its handshake and answers every call; each such name reaches an
answer, a message, the instructions, an audit line or a log line in its display form
(``caf\\xe9``), and a path no source can spell gets a tool error that says so.

Real directories and links with such names, the real server as a subprocess, the
official client in both protocol eras and the raw pipe client.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Root

from tests.rawrpc import INITIALIZE, INITIALIZED, PipeClient
from tests.stdio.conftest import MODES, SERVER, structured
from werkbaum_core import checksum
from werkbaum_stdio.client_roots import directories

PLAN = "[ ] #a: A (S)\n  - [ ] #b: B (S)\n"
LATIN = os.fsdecode(b"caf\xe9")
"""``café`` in Latin-1: the byte 0xE9 is no UTF-8; Python holds it as U+DCE9."""
SHOWN = "caf\\xe9"
"""The display form of :data:`LATIN`."""


def latin_tree(tmp_path: Path) -> dict[str, Path]:
    """Two roots named in Latin-1, plans in them, links to targets that are not UTF-8."""
    first, second = tmp_path / LATIN, tmp_path / os.fsdecode(b"B\xe9")
    for root in (first, second):
        root.mkdir()
        (root / "both.werkbaum").write_text(PLAN, encoding="utf-8")  # in both roots
    (first / "only.werkbaum").write_text(PLAN, encoding="utf-8")
    (first / os.fsdecode(b"n\xe9.werkbaum")).write_text(PLAN, encoding="utf-8")
    (first / os.fsdecode(b"x.pl\xe4n")).write_text(PLAN, encoding="utf-8")
    outside = tmp_path / os.fsdecode(b"\xff\xfe")
    outside.mkdir()
    (outside / "x.werkbaum").write_text("[ ] #secret: Outside\n", encoding="utf-8")
    (first / "out.werkbaum").symlink_to(outside / "x.werkbaum")
    (first / "latin.werkbaum").symlink_to(os.fsdecode(b"n\xe9.werkbaum"))
    return {"first": first, "second": second, "outside": outside}


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    body: dict[str, Any] = structured(result)["error"]
    return body


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_latin1_roots_globs_and_links_serve_and_answer_in_display_form(
    tmp_path: Path, mode: str
) -> None:
    tree = latin_tree(tmp_path)
    first = tree["first"]
    shown_first = str(first).replace(LATIN, SHOWN)
    audit = tmp_path / "audit.jsonl"
    glob = os.fsdecode(b"*.pl\xe4n")
    roots = ["--root", str(first), "--root", str(tree["second"])]
    params = StdioServerParameters(
        command=str(SERVER),
        args=[*roots, "--plan-glob", glob, "--audit-log", str(audit)],
        cwd="/",
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    async with Client(params, mode=mode) as client:
        instructions = client.instructions or ""
        assert shown_first in instructions and "*.pl\\xe4n" in instructions, instructions

        async def call(tool: str, **args: Any) -> Any:
            return await client.call_tool(tool, args)

        read = structured(await call("werkbaum_read", source="only.werkbaum"))
        assert read["text"] == PLAN
        # A plan behind a link to a Latin-1 name is read as any other.
        assert structured(await call("werkbaum_read", source="latin.werkbaum"))["text"] == PLAN

        missing = error_of(await call("werkbaum_read", source="nope.werkbaum"))
        assert missing["code"] == "not_found" and shown_first in missing["message"], missing
        far = error_of(await call("werkbaum_read", source="/etc/x.werkbaum"))
        assert far["code"] == "forbidden_source"
        assert shown_first in far["roots"], far
        link = error_of(await call("werkbaum_read", source="out.werkbaum"))
        assert link["code"] == "forbidden_source", link
        assert f"{tmp_path}/\\xff\\xfe/x.werkbaum" in link["message"], link
        both = error_of(await call("werkbaum_read", source="both.werkbaum"))
        assert both["code"] == "invalid_argument", both
        assert f"{shown_first}/both.werkbaum" in both["candidates"]
        assert "not UTF-8, so no source can spell that path" in both["message"]
        # The display form copied back as a source: said to be one, not "outside".
        copied = error_of(await call("werkbaum_read", source=f"{shown_first}/only.werkbaum"))
        assert copied["code"] == "invalid_argument" and copied["reason"] == "not_utf8", copied

        listed = structured(await call("werkbaum_list"))["plans"]
        assert [plan["source"] for plan in listed] == ["only.werkbaum"]  # the nameable one
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert "werkbaum://file/only.werkbaum" in uris and len(uris) == 3, uris

        base = read["base"]
        write = await call(
            "werkbaum_set_status", source="only.werkbaum", base=base, id="b", status="x"
        )
        assert structured(write)["base"]["checksum"] == checksum(PLAN.replace("[ ] #b", "[x] #b"))
    assert (first / "only.werkbaum").read_text(encoding="utf-8").endswith("[x] #b: B (S)\n")
    lines = [json.loads(line) for line in audit.read_bytes().decode("utf-8").splitlines()]
    assert {line["outcome"] for line in lines} == {"ok"}


def test_a_latin1_project_directory_completes_the_handshake_over_raw_pipes(
    tmp_path: Path,
) -> None:
    project = tmp_path / LATIN
    project.mkdir()
    (project / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": str(project)}
    with PipeClient([str(SERVER)], cwd=Path("/"), env=env) as server:
        server.send(INITIALIZE)
        answer = server.receive(1)
        assert "error" not in answer, answer
        assert f"{tmp_path}/{SHOWN} (from CLAUDE_PROJECT_DIR)" in answer["result"]["instructions"]
        server.send(INITIALIZED)
        read = server.call_tool("werkbaum_read", {"source": "plan.werkbaum"})
        assert json.loads(read["content"][0]["text"])["text"] == PLAN
        call = {"name": "werkbaum_read", "arguments": {"source": "gone.werkbaum"}}
        server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
        refused = server.receive(7)["result"]
        assert refused["isError"], refused
        error = json.loads(refused["content"][0]["text"])["error"]
        assert error["code"] == "not_found"
        assert f"{project}/gone.werkbaum".replace(LATIN, SHOWN) in error["message"], error
        log = server.stderr_tail()
    assert "cannot be encoded" not in log, log


@pytest.mark.anyio
async def test_a_client_root_uri_with_a_latin1_byte_is_that_directory(tmp_path: Path) -> None:
    root = tmp_path / LATIN
    root.mkdir()
    uri = root.as_uri()
    assert uri.endswith("/caf%E9")
    assert directories([Root(uri=uri)]) == (Path(os.path.realpath(root)),)  # type: ignore[arg-type]


def test_a_name_that_is_not_utf8_is_refused_at_start_up(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(SERVER), "--root", str(tmp_path), "--name", os.fsdecode(b"J\xfcrgen")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode("utf-8") == (
        "werkbaum-mcp: Invalid value for '--name': J\\xfcrgen is not UTF-8 text; "
        "see werkbaum-mcp --help\n"
    )


def test_log_lines_show_names_in_display_form() -> None:
    probe = (
        "import logging\n"
        "from werkbaum_stdio.logs import configure\n"
        "configure()\n"
        "logging.getLogger('probe').warning('root %s', '/tmp/caf\\udce9\\udcff')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=60)
    assert done.stderr.decode("utf-8").endswith(" WARNING probe: root /tmp/caf\\xe9\\xff\n")
