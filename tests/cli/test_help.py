"""``--help`` reads well: real metavariables, an example per command, English only, and
no names of tools a user of this project does not have."""

from __future__ import annotations

import re

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
NOT_IN_HELP = re.compile(
    r"<(bool|str|int|float|path|list\[\w+\])>|\{\w+\}|pull-doc|[äöüÄÖÜß]|\b(nichts|und|oder|Datei)\b"
)
"""typer's type tags (``<bool>``, ``<list[str]>``), its ``{files}`` usage, a tool users do
not have, and German."""


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
