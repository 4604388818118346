"""Project tasks. ``nox`` alone runs what CI runs: tests, lint, typecheck.

Every session installs from ``uv.lock`` (``uv sync --locked``) into its own
environment, so a fresh machine needs only Python, ``pip install nox uv`` and
node (for the node executor and the MCP Inspector); ``tests`` installs Debian's
chromium for the browser tests when it runs as root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
TEST_TOOLS = {
    "node": "node 20 or newer (Debian/Ubuntu: apt install nodejs; or https://nodejs.org)",
    "npm": "npm (it comes with node; Debian/Ubuntu: apt install npm)",
    "git": "git (Debian/Ubuntu: apt install git)",
}
"""Programs the tests need that nox cannot install into an environment."""
CHROMIUM = "/usr/bin/chromium"
"""Debian's browser for the browser tests; ``_install_chromium`` adds it when missing."""


def _sync(session: nox.Session) -> None:
    session.run_install(
        "uv",
        "sync",
        "--locked",
        "--group",
        "dev",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


def _npm_install(session: nox.Session) -> None:
    """The MCP Inspector CLI (an independent client for the protocol tests), pinned in
    package-lock.json; reinstalled only when the lock file is newer than the install.

    ``npm install --no-save`` rather than ``npm ci``: the Inspector's tree names an
    optional dependency that the registry does not serve, so the lock file cannot
    record it and ``npm ci`` refuses the lock as out of sync. ``install`` still takes
    every locked version and leaves the lock untouched.
    """
    marker = Path("node_modules/.package-lock.json")
    lock = Path("package-lock.json")
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        session.run(
            "npm",
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            external=True,
        )


def _require_tools(session: nox.Session) -> None:
    missing = [need for tool, need in TEST_TOOLS.items() if shutil.which(tool) is None]
    if missing:
        session.error("the tests need " + "; ".join(missing) + " on the PATH")


def _install_chromium(session: nox.Session) -> None:
    """Debian's chromium for the browser tests (tests/render/test_browser.py).

    Installed with apt-get when it is missing and nox runs as root (CI, fresh machines);
    otherwise the session stops with the one command to run. Playwright's own browser
    downloads are never used: the tests drive this binary through ``executable_path``.
    """
    if os.environ.get("WERKBAUM_CHROMIUM") or Path(CHROMIUM).exists():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        session.error(f"the browser tests need {CHROMIUM}: run `sudo apt-get install chromium`")
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    session.run("apt-get", "update", "-q", external=True, env=env)
    session.run("apt-get", "install", "-y", "-q", "chromium", external=True, env=env)


MAX_WORKERS = 8
"""Test processes at most: each holds its own servers and engines (up to ~0.5 GB here),
and beyond this the suite's time is that of its longest tests."""


def _parallel(posargs: list[str]) -> list[str]:
    """pytest-xdist options: one test process per usable core (at most ``MAX_WORKERS``),
    idle ones taking tests queued on busy ones.

    Much of the suite waits on real processes, sockets and deadlines, so on the two cores
    of a CI machine the whole suite takes 8-9 minutes instead of 15; ``worksteal`` keeps
    the half-minute tests (a real 30 s deadline, pre-commit's ``try-repo``) from ending
    up together at the end of one queue. Every test keeps to its own temporary
    directory, ports and processes, and test ids are fixed (each process must collect
    the same). ``-n N`` among the arguments chooses the count, ``-p no:xdist`` one process.
    """
    if any(arg in ("-n", "--numprocesses", "no:xdist") for arg in posargs):
        return []
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return ["-n", str(min(MAX_WORKERS, usable or 1)), "--dist", "worksteal"]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole test suite (conformance on every executor, protocol, CLI, backend)."""
    _require_tools(session)
    _install_chromium(session)
    _sync(session)
    _npm_install(session)
    session.run("pytest", "-q", *_parallel(session.posargs), *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff: style and common bugs."""
    _sync(session)
    session.run("ruff", "check", "src", "tests", "noxfile.py", "bench", "examples")
    session.run("ruff", "format", "--check", "src", "tests", "noxfile.py", "bench", "examples")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the three packages, the benchmarks (which import them) and the
    examples (which a reader copies)."""
    _sync(session)
    session.run("mypy")
    session.run("mypy", "bench")
    session.run("mypy", "examples")


@nox.session(python=PYTHON)
def pictures(session: nox.Session) -> None:
    """Redraw the README's picture (docs/launch.svg) from examples/launch.werkbaum.

    ``tests/render/test_readme_picture.py`` fails while the checked-in file is stale.
    """
    _sync(session)
    session.run("werkbaum", "render", "examples/launch.werkbaum", "-o", "docs/launch.svg")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Medians and ratios for BENCHMARKS.md (never run as part of the tests)."""
    _sync(session)
    session.run("python", "-m", "bench", *session.posargs)
