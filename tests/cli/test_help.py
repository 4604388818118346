"""``--help`` reads well: real metavariables, an example per command, English only, and
no names of tools a user of this project does not have; the same for the two MCP servers,
whose help also states the current defaults of ``--root`` and ``--engine``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli.scripts import run

COMMANDS = {
    (): ["COMMAND [ARGS]...", "check", "inspect", "mirror"],
    ("check",): [
        "[FILE|DIR|-]…",
        "--strict / --no-strict",
        "--format [text|json|github|sarif]",
        "-q, --quiet",
        "--plan-glob PATTERN",
        "--engine NAME",
        "--frontend DIR",
    ],
    ("inspect",): ["FILE|-", "--width N", "--id ID", "--json"],
    ("mirror",): ["DOCUMENT FILE", "--git-commit / --no-git-commit", "--server URL"],
}
SERVERS = {
    "werkbaum-mcp": [
        "Usage: werkbaum-mcp [OPTIONS]",
        "--root DIR",
        "--server URL",
        "--mirror DOCUMENT=FILE",
        "--plan-glob PATTERN",
        "--name NAME",
        "--read-only Offer only the read tools.",
        "--audit-log FILE",
        "--engine NAME",
        "--frontend DIR",
        "--log-level [debug|info|warning|error|critical]",
        "[default: warning]",
        "Without it: $CLAUDE_PROJECT_DIR, else the client's MCP roots, else the working directory.",
        "auto (v8 if installed, else node, else dukpy)",
        "Stdout carries JSON-RPC only",
    ],
    "werkbaum-mcp-http": [
        "Usage: werkbaum-mcp-http [OPTIONS]",
        "--host HOST Interface to listen on. [default: 127.0.0.1]",
        "--port PORT Port to listen on. [default: 8000]",
        "--server URL",
        "--engine NAME",
        "--frontend DIR",
        "--read-only Offer only the read tools, to every token.",
        "--allowed-host HOST",
        "default: 127.0.0.1:* and localhost:*",
        "--workers N Worker processes sharing the port (at least 1). [default: 1]",
        "(at least 1). [default: 16]",
        "--log-level [debug|info|warning|error|critical]",
        "auto (v8 if installed, else node, else dukpy)",
        "WERKBAUM_MCP_TOKEN",
        "WERKBAUM_MCP_READ_TOKEN",
    ],
}
NOT_IN_HELP = re.compile(
    r"<(bool|str|int|float|path|list\[\w+\]|int range)>|\bx[<>]=|\{\w+\}|pull-doc|[äöüÄÖÜß]"
    r"|\b(nichts|und|oder|Datei)\b"
)
"""typer's type tags (``<bool>``, ``<list[str]>``, ``<int range> [x>=1]``), its ``{files}``
usage, a tool users do not have, and German."""


@pytest.mark.parametrize("command", list(COMMANDS), ids=lambda c: " ".join(c) or "werkbaum")
def test_help_names_real_metavariables_and_shows_an_example(command: tuple[str, ...]) -> None:
    result = run(*command, "--help", env={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for expected in COMMANDS[command]:
        assert expected in text, (expected, text)
    assert "Examples:\n    werkbaum " in text
    assert not NOT_IN_HELP.search(text), NOT_IN_HELP.search(text)
    assert run(*command, "-h", env={"COLUMNS": "100"}).stdout == text


@pytest.mark.parametrize("script", list(SERVERS))
def test_server_help_names_real_metavariables_and_shows_examples(script: str) -> None:
    result = run("--help", script=script, env={"COLUMNS": "100"})
    assert result.returncode == 0, result.stderr
    text = result.stdout
    flat = " ".join(text.split())  # click wraps long help lines at 100 columns
    for expected in SERVERS[script]:
        assert expected in flat, (expected, text)
    assert f"Examples:\n    {script} --" in text
    assert not NOT_IN_HELP.search(text), NOT_IN_HELP.search(text)
    assert max(map(len, text.splitlines())) <= 100
    assert run("-h", script=script, env={"COLUMNS": "100"}).stdout == text


@pytest.mark.parametrize(
    ("script", "args", "message"),
    [
        (
            "werkbaum-mcp",
            ["--root", ".", "--frobnicate"],
            "No such option '--frobnicate' (did you mean '--frontend'?)",
        ),
        (
            "werkbaum-mcp",
            ["--log-level", "chatty"],
            "Invalid value for '--log-level': 'chatty' is not one of 'debug', 'info', "
            "'warning', 'error', 'critical'",
        ),
        (
            "werkbaum-mcp-http",
            ["--workers", "0"],
            "Invalid value for '--workers': 0 is not at least 1",
        ),
        (
            "werkbaum-mcp-http",
            ["--port", "eighty"],
            "Invalid value for '--port': 'eighty' is not a valid integer",
        ),
    ],
)
def test_a_bad_server_argument_is_one_line_on_stderr_and_nothing_on_stdout(
    script: str, args: list[str], message: str
) -> None:
    """For ``werkbaum-mcp`` stdout is the JSON-RPC channel: not even an error goes there."""
    result = run(*args, script=script)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"{script}: {message}; see {script} --help\n"


def test_the_server_still_takes_a_log_level_in_any_case(tmp_path: Path) -> None:
    """click's choice is case-insensitive as typer's was; stdin at its end: a clean exit."""
    result = run("--root", tmp_path, "--log-level", "ERROR", script="werkbaum-mcp")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_bad_argument_is_one_clear_line_and_exit_2() -> None:
    result = run("check", "--format", "xml", "plan.werkbaum")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "werkbaum check: Invalid value for '--format': 'xml' is not one of 'text', 'json', "
        "'github', 'sarif'; see werkbaum check --help\n"
    )
    missing = run("inspect")
    assert (missing.returncode, missing.stderr) == (
        2,
        "werkbaum inspect: Missing argument 'FILE|-'; see werkbaum inspect --help\n",
    )
