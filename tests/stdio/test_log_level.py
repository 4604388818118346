"""At the default log level a session writes nothing to stderr but audit lines (issue 14,
item 8); ``--log-level`` chooses more."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.stdio.conftest import PLAN, claude_code_style, raw_handshake
from tests.stdio.test_pipes import encoded
from werkbaum_core import checksum

ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "log-test", "version": "0"},
}


def session(modern: bool) -> list[dict[str, Any]]:
    """Every kind of request a host sends, a write and a tool error among them."""
    base = {"version": None, "checksum": checksum(PLAN)}
    requests: list[tuple[str, dict[str, Any]]] = [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "werkbaum://guide"}),
        ("resources/read", {"uri": "werkbaum://file/plan.werkbaum"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "werkbaum/review", "arguments": {"source": "plan.werkbaum"}}),
        ("tools/call", {"name": "werkbaum_read", "arguments": {"source": "plan.werkbaum"}}),
        ("tools/call", {"name": "werkbaum_inspect", "arguments": {"source": "plan.werkbaum"}}),
        ("tools/call", {"name": "werkbaum_read", "arguments": {"source": "missing.werkbaum"}}),
        (
            "tools/call",
            {
                "name": "werkbaum_set_status",
                "arguments": {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x"},
            },
        ),
    ]
    messages = [] if modern else raw_handshake("init", "log-test")
    for number, (method, params) in enumerate(requests):
        if modern:
            params = {**params, "_meta": ENVELOPE}
        messages.append({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
    return messages


def serve(project: Path, messages: list[dict[str, Any]], *flags: str) -> tuple[bytes, str]:
    params = claude_code_style(project, *flags)
    done = subprocess.run(
        [params.command, *params.args],
        input=b"".join(encoded(m) for m in messages),
        capture_output=True,
        cwd=project,
        env=params.env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout, done.stderr.decode()


def test_a_session_writes_only_audit_lines_to_stderr(project: Path) -> None:
    for modern in (False, True):
        (project / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
        messages = session(modern)
        out, err = serve(project, messages)
        answers = [json.loads(line) for line in out.splitlines()]
        assert len(answers) == len([m for m in messages if "id" in m])
        assert all("error" not in a for a in answers), answers
        lines = err.splitlines()
        assert len(lines) == 1, err  # the one write's audit line, nothing else
        audit = json.loads(lines[0])
        assert (audit["tool"], audit["outcome"]) == ("werkbaum_set_status", "ok")


def test_log_level_debug_shows_the_sdk_at_work(project: Path) -> None:
    (project / "plan.werkbaum").write_text(PLAN, encoding="utf-8")
    _, err = serve(project, session(modern=False), "--log-level", "debug")
    lines = err.splitlines()
    assert any(" DEBUG mcp.server." in line for line in lines), err[-2000:]
    assert sum(line.startswith('{"time"') for line in lines) == 1


def test_an_unknown_log_level_is_a_usage_error(project: Path) -> None:
    params = claude_code_style(project, "--log-level", "chatty")
    done = subprocess.run(
        [params.command, *params.args], capture_output=True, text=True, env=params.env, timeout=60
    )
    assert done.returncode == 2
    assert "--log-level" in done.stderr
