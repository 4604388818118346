"""``werkbaum render`` as a user runs it (the installed script): formats, options, errors."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REFERENCE_PLAN, REPO
from tests.render.pictures import node_boxes, svg_root

WERKBAUM = Path(sys.executable).with_name("werkbaum")
LAUNCH = REPO / "examples" / "launch.werkbaum"


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(WERKBAUM), *map(str, args)], capture_output=True, timeout=120, cwd=cwd
    )


def test_stdout_gets_the_html_page() -> None:
    result = run("render", "--engine", "dukpy", LAUNCH)
    assert result.returncode == 0, result.stderr
    page = result.stdout.decode("utf-8")
    assert page.startswith("<!DOCTYPE html>\n")
    assert "<title>launch.werkbaum — Werkbaum plan</title>" in page
    assert page.endswith("</html>\n")


def test_a_terminal_gets_a_hint_instead_of_the_page(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [str(WERKBAUM), "render", "--engine", "dukpy", str(LAUNCH)],
            stdout=terminal,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
            cwd=tmp_path,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    assert done.returncode == 2
    assert b"not writing the picture to a terminal: pass -o FILE.html" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("engine", ["dukpy", "node"])
def test_output_file_format_follows_its_suffix(tmp_path: Path, engine: str) -> None:
    if engine == "node":
        from tests.tools import require_tool

        require_tool("node")
    target = tmp_path / "plan.svg"
    result = run("render", "--engine", engine, REFERENCE_PLAN, "-o", target, "--expand")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    svg = target.read_bytes()
    assert svg.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    assert len(node_boxes(svg_root(svg.decode("utf-8")))) == 233
    other = run("render", "--engine", engine, REFERENCE_PLAN, "--format", "svg", "--expand")
    assert other.stdout == svg


def test_engines_write_identical_files(tmp_path: Path, node_installed: str) -> None:
    for engine in ("dukpy", "node"):
        target = tmp_path / f"{engine}.html"
        assert run("render", "--engine", engine, REFERENCE_PLAN, "-o", target).returncode == 0
    assert (tmp_path / "dukpy.html").read_bytes() == (tmp_path / "node.html").read_bytes()


def test_a_subtree_by_id() -> None:
    result = run("render", "--engine", "dukpy", LAUNCH, "--format", "svg", "--id", "#shop.pay")
    assert result.returncode == 0, result.stderr
    refs = [b.get("data-ref") for b in node_boxes(svg_root(result.stdout.decode("utf-8")))]
    assert refs == ["#shop.pay", "#shop.pay.stripe", "#shop.pay.invoice"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "plan.png"], "cannot tell the format from the suffix"),
        (["--format", "pdf"], "Invalid value for '--format'"),
        (["--id", "nope"], "no node with id #nope"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = run("render", "--engine", "dukpy", LAUNCH, *args, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert result.stdout == b""
    assert list(tmp_path.iterdir()) == []


def test_unreadable_plan_and_unwritable_output_exit_2(tmp_path: Path) -> None:
    missing = run("render", tmp_path / "missing.werkbaum")
    assert missing.returncode == 2
    assert b"missing.werkbaum" in missing.stderr
    blocked = run("render", "--engine", "dukpy", LAUNCH, "-o", tmp_path / "no" / "dir.svg")
    assert blocked.returncode == 2
    assert b"dir.svg" in blocked.stderr


def test_standard_input_is_a_plan_too() -> None:
    done = subprocess.run(
        [str(WERKBAUM), "render", "--engine", "dukpy", "--format", "svg", "-"],
        input=LAUNCH.read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    svg = done.stdout.decode("utf-8")
    assert 'aria-label="Plan picture: plan"' in svg
    assert len(node_boxes(svg_root(svg))) == 13
