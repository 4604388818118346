"""Load directories of processes that are gone are removed by the next load (round 26
process F10: a dukpy child keeps its copy of the modules for its whole life, and a server
killed outright left it in the temp folder, one per SIGKILL)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from werkbaum_core.engine.modules import ModuleSet, Program


def gone_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_load_removes_the_directories_of_processes_that_are_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"werkbaum-js-{gone_pid()}-abc"
    alive = tmp_path / f"werkbaum-js-{os.getpid()}-def"  # a load of this process
    odd = tmp_path / "werkbaum-js-abc"  # no pid in its name: not ours to judge
    other = tmp_path / "notes-123-x"
    for folder in (dead, alive, odd, other):
        folder.mkdir()
        (folder / "parser.js").write_text("export {}\n", encoding="utf-8")
    link = tmp_path / f"werkbaum-js-{gone_pid()}-link"
    link.symlink_to(other)  # a link is never followed, never removed
    program = Program(ModuleSet(), ("facade.js",))
    with program.materialized() as directory:
        assert directory.parent == tmp_path
        assert directory.name.startswith(f"werkbaum-js-{os.getpid()}-")
        assert not dead.exists()
        assert alive.is_dir() and odd.is_dir() and other.is_dir() and link.is_symlink()
        assert (other / "parser.js").is_file()
    assert not directory.exists()
