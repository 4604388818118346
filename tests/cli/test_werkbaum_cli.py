"""``werkbaum check`` and ``werkbaum inspect`` as a user runs them (the installed script)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REFERENCE_PLAN, REPO

WERKBAUM = Path(sys.executable).with_name("werkbaum")
BROKEN = "[ ] Plan\n  - [ ] A (S)\n  | [ ] B (S)\n  - [z] C\n"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(WERKBAUM), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def test_reference_plan_is_clean() -> None:
    result = run("check", REFERENCE_PLAN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_structural_warnings_give_file_line_diagnostics_and_exit_1(tmp_path: Path) -> None:
    plan = tmp_path / "broken.werkbaum"
    plan.write_text(BROKEN, encoding="utf-8")
    result = run("check", plan)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith(f"{plan}:2: mixedGate: ") for line in lines), lines
    assert any(line.startswith(f"{plan}:4: unknownStatus: ") for line in lines), lines


def test_content_warnings_pass_unless_strict(tmp_path: Path) -> None:
    plan = tmp_path / "content.werkbaum"
    plan.write_text("[ ] Plan :#missing\n", encoding="utf-8")
    relaxed = run("check", plan)
    assert relaxed.returncode == 0
    assert f"{plan}:1: unknownDep: " in relaxed.stdout
    assert run("check", "--strict", plan).returncode == 1


@pytest.mark.parametrize("content", [None, b"\xff\xfe- [ ] A"], ids=["missing", "not-utf8"])
def test_unreadable_input_exits_2_with_a_reason(tmp_path: Path, content: bytes | None) -> None:
    plan = tmp_path / "plan.werkbaum"
    if content is not None:
        plan.write_bytes(content)
    result = run("check", plan)
    assert result.returncode == 2
    assert str(plan) in result.stderr


def test_inspect_shows_tree_and_stations() -> None:
    example = REPO / "examples" / "launch.werkbaum"
    result = run("inspect", example)
    assert result.returncode == 0, result.stderr
    assert "Cheapest path:" in result.stdout
    assert "◀ station" in result.stdout


def test_inspect_json_is_the_analysis() -> None:
    result = run("inspect", "--json", REFERENCE_PLAN)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["warnings"] == []
    assert len(data["path"]["stations"]) == 30


def test_bundled_example_is_clean() -> None:
    assert run("check", "--strict", REPO / "examples" / "launch.werkbaum").returncode == 0
