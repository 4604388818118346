"""``werkbaum check``, ``inspect`` and ``render`` on names and labels that are foreign data
(round 21, findings 5, 6 and 13): a file name that is not UTF-8 or holds a newline, a
label with terminal escape sequences, C1 controls and a bidi override.

The terminal formats print each in its terminal form (``\\xe9``, ``\\x1b``, ``\\u202e``);
the machine formats stay valid for their readers and exact by their own rules. The
commands run as installed, with a strict UTF-8 stdout (any locale but C) and under C.UTF-8.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest

from tests.cli.scripts import run
from tests.cli.test_formats import SARIF_SCHEMA

CLEAN = "[ ] Plan\n  - [ ] A (S)\n"
BROKEN = "[z] Plan\n"
LATIN_CLEAN = os.fsdecode(b"caf\xe9.werkbaum")
LATIN_BROKEN = os.fsdecode(b"b\xe4d.werkbaum")
LATIN_BINARY = os.fsdecode(b"x\xff.werkbaum")
NEWLINE = "new\nline.werkbaum"
UNKNOWN_Z = "unknown status box [z]; use one of ? ~ / x ^ - ! or a space, or remove the box."
LOCALES = [{"PYTHONIOENCODING": "utf-8:strict"}, {"LC_ALL": "C.UTF-8"}]
"""A strict UTF-8 stdout, as every UTF-8 locale has, and the C.UTF-8 locale."""

HOSTILE_LABEL = "Title\x1b]0;PWNED\x07 \x1b[8mhidden\x1b[0m \x9b2J \u202eevil"
"""Sets the window title, hides text, a C1 CSI (erase the screen), a right-to-left override."""
TERMINAL_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""What no terminal output may hold (but the newlines that end its lines)."""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / LATIN_CLEAN).write_text(CLEAN, encoding="utf-8")
    (tmp_path / LATIN_BROKEN).write_text(BROKEN, encoding="utf-8")
    (tmp_path / NEWLINE).write_text(BROKEN, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("locale", LOCALES, ids=["strict-utf8", "C.UTF-8"])
def test_names_that_are_not_utf8_or_hold_a_newline_in_every_format(
    folder: Path, locale: dict[str, str]
) -> None:
    def check(fmt: str) -> str:
        result = run("check", "--format", fmt, ".", cwd=folder, env=locale)  # decodes strictly
        assert result.returncode == 1, result.stderr  # two broken plans, no crash
        assert result.stderr == "2 errors, 0 warnings in 2 files (3 checked)\n"
        return result.stdout

    assert check("text").splitlines() == [
        f"./b\\xe4d.werkbaum:1:1: error unknownStatus: {UNKNOWN_Z}",
        f"./new\\x0aline.werkbaum:1:1: error unknownStatus: {UNKNOWN_Z}",
    ]
    document = json.loads(check("json"))
    assert [d["file"] for d in document["diagnostics"]] == ["./b\\xe4d.werkbaum", f"./{NEWLINE}"]
    annotations = check("github").splitlines()
    assert [line.split(",")[0] for line in annotations] == [
        "::error file=b\\xe4d.werkbaum",  # as GitHub places it: no ./ (formats/places.py)
        "::error file=new%0Aline.werkbaum",
    ]
    log = json.loads(check("sarif"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(log)
    uris = [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
    ]
    assert uris == ["b%E4d.werkbaum", "new%0Aline.werkbaum"]  # the name's bytes, exactly


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif"])
def test_such_names_keep_the_documented_exit_status(folder: Path, fmt: str) -> None:
    clean = run("check", "--format", fmt, LATIN_CLEAN, cwd=folder, env=LOCALES[0])
    assert (clean.returncode, clean.stderr) == (0, "no problems (1 file checked)\n")
    (folder / LATIN_BINARY).write_bytes(b"\x00\xff")
    unreadable = run("check", "--format", fmt, LATIN_BINARY, cwd=folder, env=LOCALES[0])
    assert unreadable.returncode == 2, unreadable.stderr
    if fmt == "text":
        assert unreadable.stdout.startswith("x\\xff.werkbaum: error unreadable: not UTF-8 text")


def test_inspect_and_render_show_a_latin1_name_in_display_form(folder: Path) -> None:
    shown = run("inspect", LATIN_CLEAN, cwd=folder, env=LOCALES[0])
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("caf\\xe9.werkbaum: 2 nodes, 0 warnings\n")
    drawn = run("render", LATIN_CLEAN, "-o", "plan.html", cwd=folder, env=LOCALES[0])
    assert drawn.returncode == 0, drawn.stderr
    page = (folder / "plan.html").read_text(encoding="utf-8")
    assert "<title>caf\\xe9.werkbaum — Werkbaum plan</title>" in page


def test_escape_sequences_in_labels_never_reach_the_terminal(tmp_path: Path) -> None:
    name = "esc\x1b[2K.werkbaum"
    (tmp_path / name).write_text(f"[ ] #a: {HOSTILE_LABEL}\n  - [ ] B\n  | [ ] C\n", "utf-8")
    shown = "Title\\x1b]0;PWNED\\x07 \\x1b[8mhidden\\x1b[0m \\u009b2J \\u202eevil"

    inspected = run("inspect", name, cwd=tmp_path, env={"COLUMNS": "200"})
    assert inspected.returncode == 0, inspected.stderr
    assert not TERMINAL_UNSAFE.search(inspected.stdout), inspected.stdout
    assert inspected.stdout.startswith("esc\\x1b[2K.werkbaum: 3 nodes, 1 error, 0 warnings\n")
    assert f"L1  [ ] {shown} (~M) #a" in inspected.stdout

    checked = run("check", name, cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert checked.returncode == 1
    body = re.sub("\x1b\\[[0-9;]*m", "", checked.stdout)  # the checker's own colours
    assert not TERMINAL_UNSAFE.search(body), body
    assert body.startswith(f'esc\\x1b[2K.werkbaum:3:3: error mixedGate: the children of "{shown}"')

    # Machine formats are exact by their own rules: JSON escapes controls itself.
    document = json.loads(run("check", "--format", "json", name, cwd=tmp_path).stdout)
    assert document["diagnostics"][0]["file"] == name
    assert f'"{HOSTILE_LABEL}"' in document["diagnostics"][0]["message"]

    missing = run("inspect", "gone\x1b]0;X\x07.werkbaum", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        2,
        "werkbaum: gone\\x1b]0;X\\x07.werkbaum: no such file\n",
    )
