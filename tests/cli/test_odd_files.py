"""``werkbaum check`` on files that are not plain plans (hardening item 8): never a hang,
never an unbounded read, one diagnostic per bad file, and the other files still checked.

Real FIFOs, symlinks to ``/dev/zero``, directories, a file its reader may not open,
bytes that are not UTF-8, and files past the size limit.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.scripts import BIN, PLAIN_ENV, run
from werkbaum_core import MAX_TEXT_CHARS
from werkbaum_stdio.file_text import BOM
from werkbaum_stdio.plan_names import PlanNames
from werkbaum_stdio.planfiles import PlanArg, Unreadable, expand, read_plan

GOOD = "[ ] Plan\n  - [ ] A (S)\n"
BROKEN = "[z] Plan\n"


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    """A folder with a clean and a broken plan next to the odd file a test adds."""
    (tmp_path / "good.werkbaum").write_text(GOOD, encoding="utf-8")
    (tmp_path / "broken.werkbaum").write_text(BROKEN, encoding="utf-8")
    return tmp_path


def check_with(folder: Path, odd: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``werkbaum check good broken ODD`` in ``folder``, within ``timeout`` seconds."""
    return run("check", "good.werkbaum", odd, "broken.werkbaum", cwd=folder, timeout=timeout)


def assert_reported(result: subprocess.CompletedProcess[str], odd: str, reason: str) -> None:
    """Exit 2 for the bad file, its one diagnostic, and the broken plan still checked."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        f"{odd}: error unreadable: {reason}",
        "broken.werkbaum:1:1: error unknownStatus: unknown status box [z]; use one of"
        " ? ~ / x ^ - ! or a space, or remove the box.",
    ]
    assert result.stderr == "1 error, 0 warnings in 1 file; 1 file not read (2 checked)\n"


def test_a_fifo_without_a_writer_is_refused_at_once(plans: Path) -> None:
    os.mkfifo(plans / "pipe.werkbaum")
    started = time.monotonic()
    result = check_with(plans, "pipe.werkbaum")
    assert_reported(result, "pipe.werkbaum", "a FIFO, not a plan file")
    assert time.monotonic() - started < 30  # no wait for a writer


def test_a_fifo_in_a_walked_directory_is_reported_too(plans: Path) -> None:
    os.mkfifo(plans / "pipe.werkbaum")
    result = run("check", ".", cwd=plans, timeout=60)
    assert result.returncode == 2
    assert "./pipe.werkbaum: error unreadable: a FIFO, not a plan file" in result.stdout


def test_a_symlink_to_dev_zero_is_refused_without_reading(plans: Path) -> None:
    (plans / "zero.werkbaum").symlink_to("/dev/zero")
    assert_reported(
        check_with(plans, "zero.werkbaum"), "zero.werkbaum", "a character device, not a plan file"
    )


def test_endless_stdin_stops_at_the_byte_bound() -> None:
    with open("/dev/zero", "rb") as zero:
        result = run("check", "-", stdin=zero.fileno(), timeout=60)
    assert result.returncode == 2
    assert result.stdout == (
        "<stdin>: error unreadable: over 8,000,003 bytes: more than the limit of 2,000,000 "
        "characters takes in UTF-8\n"
    )


def test_a_directory_is_no_plan(plans: Path) -> None:
    (plans / "folder.werkbaum").mkdir()
    result = run("inspect", "folder.werkbaum", cwd=plans)
    assert result.returncode == 2
    assert result.stderr == "werkbaum: folder.werkbaum: a directory, not a plan file\n"
    # As a check argument, a directory is walked: its plans are checked.
    (plans / "folder.werkbaum" / "inner.werkbaum").write_text(BROKEN, encoding="utf-8")
    walked = run("check", "folder.werkbaum", cwd=plans)
    assert walked.stdout.startswith("folder.werkbaum/inner.werkbaum:1:1: error unknownStatus")


def test_a_missing_file_is_one_diagnostic(plans: Path) -> None:
    assert_reported(check_with(plans, "gone.werkbaum"), "gone.werkbaum", "no such file")


def test_bytes_that_are_not_utf8(plans: Path) -> None:
    (plans / "latin1.werkbaum").write_bytes("[ ] Größe\n".encode("latin-1"))
    assert_reported(
        check_with(plans, "latin1.werkbaum"),
        "latin1.werkbaum",
        "not UTF-8 text (byte 0xf6 at offset 6)",
    )


def test_a_plan_one_character_over_the_limit(plans: Path) -> None:
    (plans / "huge.werkbaum").write_text("x" * (MAX_TEXT_CHARS + 1), encoding="utf-8")
    assert_reported(
        check_with(plans, "huge.werkbaum"),
        "huge.werkbaum",
        "2,000,001 characters; the limit is 2,000,000 characters",
    )


def test_a_huge_sparse_file_is_not_read_to_its_end(plans: Path) -> None:
    with open(plans / "sparse.werkbaum", "wb") as handle:
        handle.truncate(64 * 1024**3)  # 64 GiB of holes: reading it all would take minutes
    started = time.monotonic()
    result = check_with(plans, "sparse.werkbaum")
    assert_reported(
        result,
        "sparse.werkbaum",
        "over 8,000,003 bytes: more than the limit of 2,000,000 characters takes in UTF-8",
    )
    assert time.monotonic() - started < 30
    (plans / "sparse.werkbaum").unlink()


def test_a_file_its_reader_may_not_open(plans: Path) -> None:
    """Mode 0000. Root reads anything through CAP_DAC_OVERRIDE, so as root the CLI runs
    without that capability (and CAP_DAC_READ_SEARCH): a real permission denial."""
    secret = plans / "secret.werkbaum"
    secret.write_text(GOOD, encoding="utf-8")
    secret.chmod(0o000)
    result = _check_as_user(plans, secret, "good.werkbaum", "secret.werkbaum", "broken.werkbaum")
    assert_reported(result, "secret.werkbaum", "permission denied")


def _check_as_user(folder: Path, secret: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``werkbaum check ARGS…`` in ``folder`` as a process that may not read ``secret``."""
    as_user = _without_read_override(secret) if os.geteuid() == 0 else {}
    return subprocess.run(
        [str(BIN / "werkbaum"), "check", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=PLAIN_ENV,
        stdin=subprocess.DEVNULL,
        timeout=120,
        **as_user,
    )


UNLISTED = "a directory that cannot be listed: permission denied"


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[Path]:
    """``folder`` with a plan inside, made and then locked (mode 0000) while in use."""
    folder.mkdir(parents=True)
    (folder / "inside.werkbaum").write_text(BROKEN, encoding="utf-8")
    folder.chmod(0o000)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


def test_a_directory_that_cannot_be_listed_is_one_diagnostic(plans: Path) -> None:
    """Named as an argument (the walk's top) it is the one diagnostic, exit 2; not the note
    "no plan files …" and exit 0."""
    with locked(plans / "locked") as secret:
        result = _check_as_user(plans, secret, "locked")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == f"locked: error unreadable: {UNLISTED}\n"
    assert result.stderr == "1 file not read (0 checked)\n"


def test_a_directory_below_that_cannot_be_listed_is_reported_in_walk_order(plans: Path) -> None:
    with locked(plans / "a" / "locked") as secret:
        (plans / "a" / "z.werkbaum").write_text(BROKEN, encoding="utf-8")
        result = _check_as_user(plans, secret, ".")
    assert result.returncode == 2, result.stdout + result.stderr
    assert [line.split(": error ")[0] for line in result.stdout.splitlines()] == [
        "./broken.werkbaum:1:1",
        "./a/z.werkbaum:1:1",  # a folder's files come before its subfolders
        "./a/locked",
    ]
    assert f"./a/locked: error unreadable: {UNLISTED}" in result.stdout
    assert result.stderr == "2 errors, 0 warnings in 2 files; 1 file not read (3 checked)\n"


def test_every_directory_the_walk_cannot_list_is_a_plan_with_its_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where permissions cannot be tested (root with its capabilities, other systems): the
    walk's listing fails as it would, through ``os.walk``'s own ``scandir``."""
    (tmp_path / "deep" / "gone").mkdir(parents=True)
    (tmp_path / "deep" / "p.werkbaum").write_text(GOOD, encoding="utf-8")
    real = os.scandir

    def scandir(path: str) -> object:
        if os.path.basename(path) in ("gone", "top"):
            raise OSError(errno.EIO, "Input/output error", path)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    (tmp_path / "top").mkdir()
    names = PlanNames.with_globs(())
    found = expand([str(tmp_path / "deep"), str(tmp_path / "top")], names, "<stdin>")
    assert [(Path(p.name).relative_to(tmp_path).as_posix(), p.problem) for p in found] == [
        ("deep/p.werkbaum", None),
        ("deep/gone", "a directory that cannot be listed: input/output error"),
        ("top", "a directory that cannot be listed: input/output error"),
    ]
    with pytest.raises(Unreadable, match="cannot be listed"):
        read_plan(found[1])


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def _drop_read_override() -> None:
    """In the child before exec: drop the two capabilities from the bounding set, so the
    exec'd root process does not get them back (``prctl(2)``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


_PROBE = "import os, sys; p = sys.argv[1]; os.listdir(p) if os.path.isdir(p) else open(p, 'rb')"
"""Read the file or list the directory named by the argument."""


def _without_read_override(secret: Path) -> dict[str, object]:
    """``subprocess`` arguments for a root child that file modes apply to, after checking
    that the child really cannot read the file or list the directory ``secret`` (else the
    test is skipped, saying why)."""
    try:
        probe = subprocess.run(
            [sys.executable, "-c", _PROBE, str(secret)],
            preexec_fn=_drop_read_override,
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE here: {exc}")
    if b"PermissionError" not in probe.stderr:
        pytest.skip("running as root, and without CAP_DAC_OVERRIDE it is still readable")
    return {"preexec_fn": _drop_read_override}


def test_a_crlf_plan_reads_as_the_servers_file_store_reads_it(tmp_path: Path) -> None:
    # A comment and a continuation at the end of CRLF lines: the file store turns CRLF into
    # LF before the engine sees the text, and check, inspect and stdin must do the same.
    lf = "- [ ] A (S) %% note\n- [ ] B (S) \\\n  continued\n[z] Broken\n"
    (tmp_path / "lf.werkbaum").write_text(lf, encoding="utf-8", newline="")
    (tmp_path / "crlf.werkbaum").write_bytes(lf.replace("\n", "\r\n").encode("utf-8"))
    for command in (("inspect", "--json"), ("check", "--format", "json")):
        want = run(*command, "lf.werkbaum", cwd=tmp_path).stdout.replace("lf.werkbaum", "X")
        got = run(*command, "crlf.werkbaum", cwd=tmp_path).stdout.replace("crlf.werkbaum", "X")
        assert got == want, command
    assert (
        '"label": "B continued"' in run("inspect", "--json", "crlf.werkbaum", cwd=tmp_path).stdout
    )
    piped = run("inspect", "--json", "-", stdin=lf.replace("\n", "\r\n").encode("utf-8"))
    assert '"label": "B continued"' in piped.stdout


def test_the_largest_plan_the_server_reads_is_checked(plans: Path) -> None:
    """2,000,000 four-byte characters and a BOM: 8,000,003 bytes, within the text limit, and
    the stdio server reads it; `check` said "more than 8,000,000 bytes" (round 26
    attack-files F8: its byte bound left out the BOM)."""
    (plans / "widest.werkbaum").write_bytes(BOM + ("\U0001f600" * MAX_TEXT_CHARS).encode())
    assert read_plan(PlanArg("widest.werkbaum", plans / "widest.werkbaum")) == (
        "\U0001f600" * MAX_TEXT_CHARS
    )


def test_a_utf16_plan_is_named_as_such(plans: Path) -> None:
    """Round 26 attack-files F9: a Windows editor's "Unicode" save was "byte 0xff at offset 0"."""
    (plans / "unicode.werkbaum").write_bytes(GOOD.encode("utf-16"))
    assert_reported(
        check_with(plans, "unicode.werkbaum"),
        "unicode.werkbaum",
        "UTF-16 text (a UTF-16 byte-order mark), not UTF-8: save it as UTF-8",
    )
