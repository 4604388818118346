"""``werkbaum check`` as a linter: per-file results, locations, severities, exit status.

Through the installed script, on every executor where the engine's facts matter.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.cli.scripts import BIN, PLAIN_ENV, run
from tests.conftest import REFERENCE_PLAN, REPO
from tests.tools import require_tool
from werkbaum_core import EXECUTORS, __version__

BROKEN = "[ ] Plan\n  - [ ] A (S)\n  | [ ] B (S)\n  - [z] C :#nope\n"
"""Line 3's gate differs from the group's first child (line 2); line 4 has an unknown
status box and a dependency on no node."""


def plan(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("executor", EXECUTORS)
def test_diagnostics_have_line_column_severity_and_no_repeated_line(
    tmp_path: Path, executor: str
) -> None:
    if executor == "node":
        require_tool("node")
    broken = plan(tmp_path, "broken.werkbaum", BROKEN)
    result = run("check", "--engine", executor, "broken.werkbaum", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        'broken.werkbaum:3:3: error mixedGate: the children of "Plan" mix gate kinds; use only'
        " - and + (all of), only | (any of) or only = (exactly one) within one group. The"
        ' group\'s first child is "A" (line 2).',
        "broken.werkbaum:4:5: error unknownStatus: unknown status box [z]; use one of ? ~ / x"
        " ^ - ! or a space, or remove the box.",
        "broken.werkbaum:4:11: warning unknownDep: dependency :#nope points to no node; give a"
        " node the id #nope or correct the reference.",
    ]
    assert broken.read_text(encoding="utf-8").splitlines()[2][2] == "|"  # column 3 is the gate
    assert result.stderr == "2 errors, 1 warning in 1 file (1 checked)\n"


@pytest.mark.parametrize(
    ("text", "where", "token"),
    [
        ("[ ] P\n  - [ ] #a: A\n  - [ ] #a: B\n", "3:9", "#a"),
        ("[ ] P (S)\n  - [ ] A (m)\n", "1:7", "(S)"),
        ("[ ] P\n  - [ ] A :#x,#zz\n  - [ ] #x: X\n", "2:15", "#zz"),
        ("[ ] P\n---\n#ghost\n  text\n", "3:1", "#ghost"),
        ("\t[ ] P\n\t\t= [x] A\n\t\t= [x] B\n", "3:3", "= [x] B"),
        ("[ ] P\n  - [ ] A \\\n    more :#nope\n", "3:10", ":#nope"),
        ("[ ] P \\\n  (S)\n  - [ ] A (m)\n", "2:3", "(S)"),
    ],
    ids=[
        "duplicateId",
        "sizeConflict",
        "unknownDep-in-list",
        "unknownDesc",
        "xorConflict-tabs",
        "unknownDep-on-a-continuation-line",
        "sizeConflict-on-a-continuation-line",
    ],
)
def test_the_column_is_where_the_offending_token_starts(
    tmp_path: Path, text: str, where: str, token: str
) -> None:
    plan(tmp_path, "p.werkbaum", text)
    result = run("check", "p.werkbaum", cwd=tmp_path)
    located = [
        line for line in result.stdout.splitlines() if line.startswith(f"p.werkbaum:{where}:")
    ]
    assert located, result.stdout
    line, column = map(int, where.split(":"))
    assert text.split("\n")[line - 1][column - 1 :].startswith(token)


def test_one_unreadable_file_hides_nothing_else(tmp_path: Path) -> None:
    plan(tmp_path, "mixed.werkbaum", BROKEN)
    plan(tmp_path, "dup.werkbaum", "[ ] P\n  - [ ] #a: A\n  - [ ] #a: B\n")
    (tmp_path / "binary.werkbaum").write_bytes(b"\xff\xfe- [ ] A")
    plan(tmp_path, "clean.werkbaum", "[ ] P\n  - [ ] A (S)\n")
    result = run(
        "check", "mixed.werkbaum", "dup.werkbaum", "binary.werkbaum", "clean.werkbaum", cwd=tmp_path
    )
    assert result.returncode == 2  # the worst of all: one file could not be read
    files = [line.split(":")[0] for line in result.stdout.splitlines()]
    assert files == ["mixed.werkbaum"] * 3 + ["dup.werkbaum", "binary.werkbaum"]
    assert (
        "binary.werkbaum: error unreadable: not UTF-8 text (byte 0xff at offset 0)" in result.stdout
    )
    assert result.stderr == "3 errors, 1 warning in 2 files; 1 file not read (3 checked)\n"


def test_content_warnings_pass_unless_strict(tmp_path: Path) -> None:
    plan(tmp_path, "content.werkbaum", "[ ] Plan :#missing\n")
    relaxed = run("check", "content.werkbaum", cwd=tmp_path)
    assert relaxed.returncode == 0
    assert relaxed.stdout.startswith("content.werkbaum:1:10: warning unknownDep: dependency")
    assert run("check", "--strict", "content.werkbaum", cwd=tmp_path).returncode == 1
    assert run("check", "--no-strict", "content.werkbaum", cwd=tmp_path).returncode == 0


def test_clean_plans_print_nothing_on_stdout_and_a_summary_on_stderr() -> None:
    example = REPO / "examples" / "launch.werkbaum"
    result = run("check", "--strict", REFERENCE_PLAN, example)
    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "no problems (2 files checked)\n"
    quiet = run("check", "-q", REFERENCE_PLAN)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_no_files_is_exit_0_with_a_note(tmp_path: Path) -> None:
    """Exit 0 (``xargs`` runs the command once, file-less, for no input), with a note no one
    takes for a pass: it read "no plan files to check" in a folder full of plans (round 26
    newcomer M1), and for folders whose plans were all skipped."""
    empty = tmp_path / "repo"
    (empty / "docs").mkdir(parents=True)
    (empty / "docs" / "readme.md").write_text("no plans here\n", encoding="utf-8")
    (empty / "node_modules").mkdir()
    (empty / "node_modules" / "skipped.werkbaum").write_text("[z] broken\n", encoding="utf-8")
    skipped = (
        "nothing checked (*.werkbaum, or --plan-glob; hidden folders, node_modules and "
        "symlinked folders are skipped)\n"
    )
    expected = {
        (): "werkbaum: no files given, nothing checked (every plan below here: werkbaum check .)\n",
        (empty,): f"werkbaum: no plan files in {empty}, {skipped}",
        (empty, empty / "docs", empty / "docs", tmp_path): (
            f"werkbaum: no plan files in {empty}, {empty / 'docs'}, {empty / 'docs'} "
            f"and 1 more, {skipped}"
        ),
    }
    for args, note in expected.items():
        result = run("check", *args)
        assert (result.returncode, result.stdout) == (0, ""), result.stderr
        assert result.stderr == note
    assert run("check", "-q").stderr == ""
    sarif = run("check", "--format", "sarif")  # an upload step still gets a valid log
    assert (sarif.returncode, json.loads(sarif.stdout)["runs"][0]["results"]) == (0, [])


def test_an_unknown_engine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    plan(tmp_path, "p.werkbaum", "[ ] P\n")
    result = run("check", "--engine", "nope", "p.werkbaum", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert (
        result.stderr.startswith("werkbaum: unknown engine 'nope'")
        and result.stderr.count("\n") == 1
    )


def test_a_directory_stands_for_its_plans_without_hidden_folders(tmp_path: Path) -> None:
    plan(tmp_path, "top.werkbaum", "[ ] Top\n")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    plan(tmp_path / "sub" / "deeper", "b.werkbaum", "[z] B\n")
    plan(tmp_path / "sub", "a.werkbaum", "[ ] A :#nope\n")
    plan(tmp_path / "sub", "notes.txt", "[z] not a plan by name\n")
    plan(tmp_path / "sub", "extra.plan", "[z] a plan by --plan-glob\n")
    (tmp_path / ".git").mkdir()
    plan(tmp_path / ".git", "x.werkbaum", "[z] inside .git\n")
    (tmp_path / ".cache").mkdir()
    plan(tmp_path / ".cache", "y.werkbaum", "[z] hidden\n")
    (tmp_path / "linked").symlink_to(tmp_path / "sub", target_is_directory=True)
    result = run("check", ".", cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == [
        "./sub/a.werkbaum",
        "./sub/deeper/b.werkbaum",
    ]
    assert result.stderr.endswith("(3 checked)\n")
    more = run("check", "--plan-glob", "*.plan", "sub", cwd=tmp_path)
    assert "sub/extra.plan:1:1: error unknownStatus" in more.stdout


def test_a_walk_takes_the_names_and_skips_the_folders_the_server_does(tmp_path: Path) -> None:
    # The MCP server's listing and `werkbaum check DIR` share one rule for both.
    (tmp_path / "node_modules" / "pkg").mkdir(parents=True)
    plan(tmp_path / "node_modules" / "pkg", "dep.werkbaum", "[z] a dependency's plan\n")
    plan(tmp_path, "own.werkbaum", "[z] Own\n")
    plan(tmp_path, "draft.werkbaum-tmp", "[z] the store's temp file\n")
    result = run("check", "--plan-glob", "*.werkbaum-tmp", ".", cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["./own.werkbaum"]
    bad = run("check", "--plan-glob", "plans/*.plan", ".", cwd=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        "werkbaum: --plan-glob 'plans/*.plan': a pattern matches a file name "
        "(no '/', not empty), e.g. '*.plan'\n"
    )


def test_stdin_is_checked_under_its_given_name(tmp_path: Path) -> None:
    result = run("check", "-", stdin=BROKEN.encode())
    assert result.returncode == 1
    assert result.stdout.startswith("<stdin>:3:3: error mixedGate")
    named = run("check", "--stdin-filename", "plans/app.werkbaum", "-", stdin=b"[z] A\n")
    assert named.stdout.startswith("plans/app.werkbaum:1:1: error unknownStatus")
    plan(tmp_path, "p.werkbaum", "[ ] A\n")  # the name of stdin, but no - to read
    unused = run("check", "--stdin-filename", "app.werkbaum", "p.werkbaum", cwd=tmp_path)
    assert unused.returncode == 2
    assert "--stdin-filename names standard input; - is not among the files" in unused.stderr


def test_colour_only_when_asked_or_on_a_terminal(tmp_path: Path) -> None:
    plan(tmp_path, "p.werkbaum", "[z] A\n")
    piped = run("check", "p.werkbaum", cwd=tmp_path)
    assert "\x1b[" not in piped.stdout
    forced = run("check", "p.werkbaum", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert "\x1b[31m" in forced.stdout and "\x1b[0m" in forced.stdout  # red "error"
    vetoed = run("check", "p.werkbaum", cwd=tmp_path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in vetoed.stdout
    machine = run(
        "check", "--format", "github", "p.werkbaum", cwd=tmp_path, env={"FORCE_COLOR": "1"}
    )
    assert "\x1b[" not in machine.stdout  # only the text format is ever coloured


def test_colour_on_a_real_terminal(tmp_path: Path) -> None:
    """A pseudo-terminal as stdout: colour without FORCE_COLOR, none with NO_COLOR."""
    plan(tmp_path, "p.werkbaum", "[z] A\n")
    for extra, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        controller, terminal = pty.openpty()
        with subprocess.Popen(
            [str(BIN / "werkbaum"), "check", "p.werkbaum"],
            cwd=tmp_path,
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env={**PLAIN_ENV, "TERM": "xterm", **extra},
        ) as proc:
            os.close(terminal)
            chunks = []
            while True:
                try:
                    chunk = os.read(controller, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            proc.wait(timeout=120)
        os.close(controller)
        output = b"".join(chunks).decode()
        assert "unknownStatus" in output
        assert ("\x1b[" in output) is coloured, output


def test_version_on_every_command_and_script() -> None:
    for args, script in [
        (["--version"], "werkbaum"),
        (["check", "--version"], "werkbaum"),
        (["inspect", "--version"], "werkbaum"),
        (["mirror", "--version"], "werkbaum"),
        (["--version"], "werkbaum-mcp"),
        (["--version"], "werkbaum-mcp-http"),
    ]:
        result = run(*args, script=script)
        assert result.returncode == 0, (args, script, result.stderr)
        assert result.stdout == f"{script} {__version__}\n"


def test_the_readme_example_is_real_output(tmp_path: Path) -> None:
    """The README's first console lines: ``werkbaum check plans/`` and what it prints."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ werkbaum check plans/", 1)[1].split("\n$ echo", 1)[0]
    shown = block.splitlines()[1:]
    (tmp_path / "plans").mkdir()
    plan(
        tmp_path / "plans",
        "app.werkbaum",
        "[ ] Plan\n  - [ ] A (S)\n  | [ ] B (S)\n  - [ ] C :#nope\n",
    )
    for name in ("a", "b", "c"):
        plan(tmp_path / "plans", f"{name}.werkbaum", "[ ] Clean\n")
    result = run("check", "plans/", cwd=tmp_path)
    assert result.returncode == 1
    assert (result.stdout + result.stderr).splitlines() == shown


def test_diagnostics_come_in_the_order_of_their_places(tmp_path: Path) -> None:
    # The mixed gate's engine line is the group's first child (2); it points at line 5.
    plan(tmp_path, "p.werkbaum", "[ ] Plan\n  - [ ] A\n  - [ ] B :#nope\n  - [ ] C\n  | [ ] D\n")
    out = run("check", "p.werkbaum", cwd=tmp_path).stdout.splitlines()
    assert [line.split(":")[1] for line in out] == ["3", "5"]
    assert "unknownDep" in out[0] and "mixedGate" in out[1]


def test_columns_count_characters_and_find_the_token_as_written(tmp_path: Path) -> None:
    # The engine finds each warning's token on its line: an astral character before it
    # counts once, and a `:#id` that only starts a longer id is not the one meant.
    text = "- [ ] 🚀 Launch :#nope.x :#nope (s)\n- [z] B\n"
    plan(tmp_path, "p.werkbaum", text)
    lines = run("check", "p.werkbaum", cwd=tmp_path).stdout.splitlines()
    first = text.splitlines()[0]  # Python counts characters as the CLI must
    assert lines[0].startswith(f"p.werkbaum:1:{first.index(':#nope.x') + 1}: warning unknownDep")
    assert lines[1].startswith(f"p.werkbaum:1:{first.rindex(':#nope') + 1}: warning unknownDep")
    assert lines[2].startswith("p.werkbaum:2:3: error unknownStatus")


def test_a_file_lists_its_first_1000_findings_and_counts_the_rest_by_type(
    tmp_path: Path,
) -> None:
    """1,500 content warnings, then two structural ones: 1,000 are listed, the structural
    ones among them (round 24 F5: they were behind the cut, and no output said where the
    error was), then one line per type with its count; the summary and exit status count
    all (round 23 F8: a million stray lines printed 216 MB in 35 s with 2 GB)."""
    deps = ",".join(f"#m{i}" for i in range(1500))
    plan(tmp_path, "many.werkbaum", f"[ ] Plan\n  - [ ] D :{deps}\n---\nstray\nstray\n")
    result = run("check", "many.werkbaum", cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stderr
    assert len(lines) == 1001
    assert all(" warning unknownDep: " in line for line in lines[:998])
    assert [line.split(": ")[0:2] for line in lines[998:1000]] == [
        ["many.werkbaum:4:1", "error descStray"],
        ["many.werkbaum:5:1", "error descStray"],
    ]
    rest = "more not listed (at most 1,000 findings of a file are listed)"
    assert lines[1000] == f"many.werkbaum: warning unknownDep: 502 {rest}"
    assert result.stderr == "2 errors, 1,500 warnings in 1 file (1 checked)\n"
    report = json.loads(run("check", "--format", "json", "many.werkbaum", cwd=tmp_path).stdout)
    assert (report["errors"], report["warnings"], len(report["diagnostics"])) == (2, 1500, 1001)
    assert report["diagnostics"][-1] == {
        "file": "many.werkbaum",
        "severity": "warning",
        "type": "unknownDep",
        "message": f"502 {rest}",
        "unlisted": 502,
    }
    sarif = json.loads(run("check", "--format", "sarif", "many.werkbaum", cwd=tmp_path).stdout)
    results = sarif["runs"][0]["results"]
    assert len(results) == 1001
    assert [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results[998:1000]
    ] == [4, 5]


def test_the_counted_rest_names_errors_before_warnings(tmp_path: Path) -> None:
    """Round 26 newcomer L2: the tail was in the engine's order (by count), an error type
    between two warning types, while the listed findings put errors first."""
    deps = ",".join(f"#m{i}" for i in range(60))
    dupes = "".join(f"  - [ ] #d: D{i}\n" for i in range(40))
    stray = "[z] bad\n" * 1100
    plan(tmp_path, "p.werkbaum", f"[ ] Plan\n  - [ ] A :{deps}\n{stray}[ ] Q\n{dupes}")
    lines = run("check", "p.werkbaum", cwd=tmp_path).stdout.splitlines()
    tail = [line.split(": ")[1] for line in lines[1000:]]
    assert tail == ["error unknownStatus", "error duplicateId", "warning unknownDep"], lines[1000:]


def test_the_summary_counts_files_with_thousands_separators_too() -> None:
    """Round 24 F8: ``(5000 checked)`` beside ``1,500 warnings``."""
    from werkbaum_stdio import diagnostics as diag

    found = [diag.Diagnostic(file="a.werkbaum", type="descStray", severity="error", message="m")]
    assert diag.summary(found, 5000) == "1 error, 0 warnings in 1 file (5,000 checked)"
    assert diag.summary([], 5000) == "no problems (5,000 files checked)"
