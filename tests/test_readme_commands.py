"""The README's two commands: what a newcomer runs on a fresh machine.

Command 1 must run the CLI from an environment without the development tools;
command 2 is what CI runs, through ``.ci/run``, word for word.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.tools import require_tool

DEV_ONLY = ("pytest", "hypothesis", "ruff", "mypy")


def readme_command(number: int) -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"^# {number}\. .*\n(.+)$", readme, re.MULTILINE)
    assert match, f"README has no command {number}"
    return match.group(1).strip()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1].strip() == readme_command(2).replace("pip install", "pip install --quiet", 1)


def test_the_main_job_runs_without_the_development_tools(tmp_path: Path) -> None:
    uv = require_tool("uv")
    command = readme_command(1)
    assert command.startswith("pip install uv && ")
    clone = tmp_path / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, tracked):
        target = clone / os.fsdecode(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / os.fsdecode(name), target)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_PROJECT"))}
    steps = command.removeprefix("pip install uv && ").split(" && ")
    for step in steps:
        assert step.startswith("uv run --locked --no-dev "), step
        done = subprocess.run(
            [uv, *step.split()[1:]], cwd=clone, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    assert "Launch the web shop" in done.stdout  # the last step inspects the example
    site = next((clone / ".venv" / "lib").glob("python*/site-packages"))
    installed = {p.name.split("-")[0].lower() for p in site.iterdir()}
    assert "werkbaum_mcp" in installed
    assert not installed.intersection(DEV_ONLY), sorted(installed.intersection(DEV_ONLY))


def test_the_python_api_example_runs_as_pasted(tmp_path: Path) -> None:
    """The README's first Python block, run as a newcomer would: beside a plan.werkbaum."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python API") :]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    shutil.copy(REPO / "examples" / "launch.werkbaum", tmp_path / "plan.werkbaum")
    (tmp_path / "example.py").write_text(example, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert done.returncode == 0, done.stderr
    assert "#shop.live Go live" in done.stdout
