"""``werkbaum`` when its standard streams fail: a full disk, a closed descriptor, a reader
that leaves early, and Ctrl-C. Real processes: ``/dev/full``, descriptors closed by a
shell (``>&-``, ``<&-``), pipes closed by the reader, SIGINT to the process group and a
real Ctrl-C typed on a pty.
"""

from __future__ import annotations

import fcntl
import os
import platform
import pty
import select
import signal
import subprocess
import termios
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.cli.scripts import BIN, PLAIN_ENV, run
from tests.conftest import REPO

BROKEN = "[ ] Plan\n  - [ ] A\n  | [ ] B\n"
CLEAN = REPO / "examples" / "launch.werkbaum"
FULL = "werkbaum: cannot write to standard output: no space left on device\n"
CLOSED = "werkbaum: cannot write to standard output: it is closed or not open for writing\n"

WRITING = [
    ("check", "--format", "sarif", "broken.werkbaum"),
    ("check", "broken.werkbaum"),
    ("check", "--format", "github", "broken.werkbaum"),
    ("inspect", str(CLEAN)),
    ("inspect", "--json", str(CLEAN)),
    ("render", str(CLEAN)),
    ("--version",),
    ("check", "--version"),
    ("--help",),
    ("check", "--help"),
    ("mirror", "--help"),
]
"""Every command that writes to stdout, and click's own --help and --version."""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "broken.werkbaum").write_text(BROKEN, encoding="utf-8")
    return tmp_path


def shell(
    redirect: str,
    args: Sequence[str],
    cwd: Path,
    stdin: int | None = None,
    script: str = "werkbaum",
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``SCRIPT ARGS… REDIRECT`` through ``sh``, which closes or redirects as a user's
    shell does; stdout and stderr are captured unless the redirection takes them."""
    if input is None and stdin is None:
        stdin = subprocess.DEVNULL
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", str(BIN / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=PLAIN_ENV,
        stdin=stdin,
        input=input,
        timeout=120,
    )


@pytest.mark.parametrize("args", WRITING, ids=" ".join)
def test_a_full_disk_is_one_line_and_exit_2(folder: Path, args: Sequence[str]) -> None:
    result = shell("> /dev/full", args, folder)
    assert (result.returncode, result.stderr) == (2, FULL)


@pytest.mark.parametrize("args", WRITING, ids=" ".join)
def test_a_closed_stdout_is_one_line_and_exit_2(folder: Path, args: Sequence[str]) -> None:
    result = shell(">&-", args, folder)
    assert (result.returncode, result.stderr) == (2, CLOSED)


SERVERS = [
    (script, (option,))
    for script in ("werkbaum-mcp", "werkbaum-mcp-http")
    for option in ("--version", "--help")
]
"""What the servers write on stdout themselves (werkbaum-mcp's stdout is otherwise the wire)."""


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"], ids=["full", "closed"])
@pytest.mark.parametrize(("script", "option"), SERVERS, ids=" ".join)
def test_the_servers_help_and_version_fail_in_one_line_too(
    tmp_path: Path, redirect: str, script: str, option: tuple[str, ...]
) -> None:
    result = shell(redirect, option, tmp_path, script=script)
    reason = FULL if redirect == "> /dev/full" else CLOSED
    assert (result.returncode, result.stderr) == (2, reason.replace("werkbaum:", f"{script}:"))


def test_a_stdio_server_started_with_stdout_closed_does_not_crash(tmp_path: Path) -> None:
    """The closed descriptor is held (by /dev/null), so the server's own files and pipes
    cannot take its number; the answers have nowhere to go and are dropped, and the
    server ends at the end of its input as always (it was a traceback: the stdin
    claim's /dev/null got number 1 and the wire was set up on it)."""
    hello = (
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
        '"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )
    result = shell(">&-", ["--root", str(tmp_path)], tmp_path, script="werkbaum-mcp", input=hello)
    assert (result.returncode, result.stderr) == (0, "")


def test_render_names_what_it_could_not_write(folder: Path) -> None:
    to_file = run("render", str(CLEAN), "-o", "/dev/full/plan.html", cwd=folder)
    assert (to_file.returncode, to_file.stderr) == (
        2,
        "werkbaum: /dev/full/plan.html: Not a directory\n",
    )
    assert "None" not in shell("> /dev/full", ["render", str(CLEAN)], folder).stderr


def test_nothing_to_write_is_no_failure(folder: Path) -> None:
    """A clean check writes nothing on stdout: a full or closed stdout loses nothing."""
    for redirect in ("> /dev/full", ">&-"):
        result = shell(redirect, ["check", str(CLEAN)], folder)
        assert (result.returncode, result.stderr) == (0, "no problems (1 file checked)\n")


def test_a_failing_stderr_is_exit_2_too(folder: Path) -> None:
    """The summary on stderr cannot be written: exit 2, never a traceback's exit 1."""
    for redirect in ("2> /dev/full", "2>&-"):
        result = shell(redirect, ["check", str(CLEAN)], folder)
        assert (result.returncode, result.stdout) == (2, "")


def test_a_closed_stdin_is_an_unreadable_plan(folder: Path) -> None:
    check = shell("<&-", ["check", "-"], folder)
    assert check.returncode == 2, check.stderr
    assert check.stdout == "<stdin>: error unreadable: standard input is closed\n"
    assert check.stderr == "1 file not read (0 checked)\n"
    for command in ("inspect", "render"):
        result = shell("<&-", [command, "-"], folder)
        assert (result.returncode, result.stderr) == (2, "werkbaum: -: standard input is closed\n")


def test_a_stdin_open_for_writing_only_is_an_unreadable_plan(folder: Path) -> None:
    with (folder / "sink").open("wb") as sink:
        result = run("check", "-", cwd=folder, stdin=sink.fileno())
    assert result.returncode == 2, result.stderr
    assert (
        result.stdout
        == "<stdin>: error unreadable: standard input: closed or not open for reading\n"
    )


def many_warnings() -> str:
    """Content warnings only (exit 0): 3,000 dependencies on no node, about 450 KB of
    text output, far more than a pipe holds."""
    return "[ ] Plan\n" + "".join(f"  - [ ] Step {i} :#missing{i}\n" for i in range(3000))


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (("check", "many.werkbaum"), 0, "0 errors, 3,000 warnings in 1 file (1 checked)\n"),
        (
            ("check", "--strict", "many.werkbaum"),
            1,
            "0 errors, 3,000 warnings in 1 file (1 checked)\n",
        ),
        (
            ("check", "--format", "sarif", "many.werkbaum"),
            0,
            "0 errors, 3,000 warnings in 1 file (1 checked)\n",
        ),
        (("inspect", "many.werkbaum"), 0, ""),
        (("render", "many.werkbaum"), 0, ""),
        (("--help",), 0, ""),
    ],
    ids=["check", "check --strict", "check sarif", "inspect", "render", "help"],
)
def test_a_reader_that_leaves_early_ends_the_output_quietly(
    tmp_path: Path, args: Sequence[str], code: int, stderr: str
) -> None:
    """``| head -1``: no traceback, no message, and the command's own exit status (check's
    is about the plans, so a warnings-only run stays 0)."""
    (tmp_path / "many.werkbaum").write_text(many_warnings(), encoding="utf-8")
    env = {k: v for k, v in PLAIN_ENV.items() if k != "PYTHONUNBUFFERED"}
    process = subprocess.Popen(
        [str(BIN / "werkbaum"), *args],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()  # as head does after its line
    code_seen = process.wait(timeout=120)
    assert (code_seen, process.stderr.read().decode("utf-8")) == (code, stderr)


SYSCALL_READ = {"x86_64": 0, "aarch64": 63}


def wait_until_reading_stdin(pid: int) -> None:
    """Until the process blocks in ``read(0, …)`` (``/proc/PID/syscall``): its SIGINT
    handler is in place and it waits for input, so a Ctrl-C now is the user's."""
    number = SYSCALL_READ.get(platform.machine())
    if number is None or not Path(f"/proc/{pid}/syscall").exists():
        pytest.skip("cannot see what the process waits for (/proc/PID/syscall) here")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            fields = Path(f"/proc/{pid}/syscall").read_text().split()
        except PermissionError:
            pytest.skip("/proc/PID/syscall is not readable here")
        if fields[:2] == [str(number), "0x0"]:
            return
        time.sleep(0.05)
    raise AssertionError("the CLI never read its standard input")


def test_ctrl_c_is_exit_130_and_one_line(tmp_path: Path) -> None:
    """SIGINT to the process group, as a terminal sends it; stderr is a file here, so
    no line break for a ``^C`` echo comes first."""
    process = subprocess.Popen(
        [str(BIN / "werkbaum"), "check", "-"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,  # kept open: the check waits for the plan
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=PLAIN_ENV,
        start_new_session=True,
    )
    try:
        wait_until_reading_stdin(process.pid)
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert (process.returncode, out, err) == (130, b"", b"werkbaum: aborted\n")


def _controlling_terminal() -> None:
    """In the child: a session of its own with the pty (its stdin) as the terminal, so
    that a Ctrl-C typed there reaches it."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_ctrl_c_typed_on_a_terminal(tmp_path: Path) -> None:
    """The terminal echoes ``^C``; "werkbaum: aborted" follows on a line of its own,
    with no blank line between."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(BIN / "werkbaum"), "check", "-"],
            cwd=tmp_path,
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            env=PLAIN_ENV,
            preexec_fn=_controlling_terminal,
        )
        os.close(terminal)
        try:
            wait_until_reading_stdin(process.pid)
            os.write(controller, b"\x03")
            assert process.wait(timeout=60) == 130
        finally:
            process.kill()
        seen = b""
        while select.select([controller], [], [], 5)[0]:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the last process holding the terminal is gone
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(controller)
    assert seen == b"^C\r\nwerkbaum: aborted\r\n"
