"""The ``werkbaum-check`` hook of ``.pre-commit-hooks.yaml``, run by the real pre-commit.

``pre-commit try-repo`` clones this checkout (its committed state; tracked files with
uncommitted changes are included through a shadow commit, new untracked files are
not), builds the hook's environment with pip from the package index, and runs the
hook on a temporary git repository: first with a clean plan, then with a broken one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.scripts import PLAIN_ENV
from tests.conftest import REPO
from tests.tools import require_tool

PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
CLEAN = "[ ] Plan\n  - [ ] A (S)\n  - [ ] B (S)\n"
BROKEN = "[ ] Plan\n  - [ ] A (S)\n  | [ ] B (S)\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with one committed clean plan (and a file the hook must skip)."""
    require_tool("git")
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "test@example.org")
    git(repo, "config", "user.name", "Test")
    (repo / "plans").mkdir()
    (repo / "plans" / "clean.werkbaum").write_text(CLEAN, encoding="utf-8")
    (repo / "notes.txt").write_text("[z] not a plan file\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "plans")
    return repo


def try_repo(project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**PLAIN_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(REPO), "werkbaum-check", "--all-files", "--verbose"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,  # the first run builds the hook's environment from the package index
    )


def test_try_repo_passes_a_clean_plan_and_fails_a_broken_one(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "pre-commit-home"
    clean = try_repo(project, home)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "werkbaum check" in clean.stdout and "Passed" in clean.stdout
    assert "notes.txt" not in clean.stdout

    (project / "plans" / "broken.werkbaum").write_text(BROKEN, encoding="utf-8")
    git(project, "add", "plans/broken.werkbaum")
    broken = try_repo(project, home)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "Failed" in broken.stdout
    assert "- exit code: 1" in broken.stdout
    assert "plans/broken.werkbaum:3:3: error mixedGate: " in broken.stdout
    assert "plans/clean.werkbaum:" not in broken.stdout
    assert os.listdir(home)  # the hook's environment was really built there

    # Round 24 F4: pre-commit passes names without a `--` of its own; a broken plan
    # named like an option was taken as the option's value (the hook passed) and a plan
    # named `-…` could not be committed ("No such option").
    git(project, "rm", "-q", "-f", "plans/broken.werkbaum")
    (project / "--plan-glob=x.werkbaum").write_text(BROKEN, encoding="utf-8")
    (project / "-dash.werkbaum").write_text(CLEAN, encoding="utf-8")
    git(project, "add", "--", "--plan-glob=x.werkbaum", "-dash.werkbaum")
    dashed = try_repo(project, home)
    assert dashed.returncode == 1, dashed.stdout + dashed.stderr
    assert "--plan-glob=x.werkbaum:3:3: error mixedGate: " in dashed.stdout
    assert "No such option" not in dashed.stdout
