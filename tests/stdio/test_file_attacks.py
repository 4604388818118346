"""Attacks on the file store, one class each (hardening items 1-3): what a steered agent
or a hostile local process tries — non-plan files, ``.git``, components swapped for
symlinks in a tight loop by another process, hard links, read-only files — with real
processes, links and permissions. Nothing outside the roots may be read or changed, and
every refusal is a documented error, never ``[Errno …]`` text."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.stdio.conftest import SERVER, structured
from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    PLAN,
    Touched,
    outside_fixture,
    plan_file,
    root_fixture,
    store_fixture,
    touched_fixture,
)
from werkbaum_core import Conflict, ForbiddenSource, InvalidArgument, WerkbaumError, checksum
from werkbaum_core.stores import Base
from werkbaum_stdio.files import TEMP_SUFFIX, FileStore
from werkbaum_stdio.roots import Roots

SWAPPER = Path(__file__).with_name("swapper.py")
SECRET = "[ ] #secret: SECRET (S)\n"
DOCUMENTED = {"not_found", "forbidden_source", "source_unavailable", "conflict"}
RACE_SECONDS = 0.8
NOBODY = 65534


def state_of(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file below ``directory`` with its bytes, inode and mtime: any change shows."""
    found = {}
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            found[str(path.relative_to(directory))] = (
                path.read_bytes(),
                info.st_ino,
                info.st_mtime_ns,
            )
    return found


def refusal(
    call: Callable[[], object], kind: type[WerkbaumError] = ForbiddenSource
) -> dict[str, str]:
    """The error body of a call that must be refused as ``kind`` (``forbidden_source``)."""
    with pytest.raises(kind) as info:
        call()
    body: dict[str, str] = info.value.to_json()["error"]
    return body


# --- 1. plan files only ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (".env", "not_a_plan"),
        ("notes.txt", "not_a_plan"),
        ("plan.werkbaum.bak", "not_a_plan"),
        (f".plan.werkbaum.k1ll3d{TEMP_SUFFIX}", "not_a_plan"),
        ("sub/", "not_a_file"),
        ("sub/..", "not_a_file"),
        (".git/config", "git"),
        (".git/x.werkbaum", "git"),
        (".GIT/x.werkbaum", "git"),
        ("sub/.Git/hooks/x.werkbaum", "git"),
        ("alias-env.werkbaum", "not_a_plan"),
        ("alias-git.werkbaum", "git"),
    ],
)
def test_what_is_not_a_plan_file_is_forbidden_before_it_is_opened(
    store: FileStore, root: Path, touched: Touched, source: str, reason: str
) -> None:
    for rel in (".env", "notes.txt", "plan.werkbaum.bak", ".git/config", ".git/x.werkbaum"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(SECRET)
    (root / "sub").mkdir()
    (root / "alias-env.werkbaum").symlink_to(".env")
    (root / "alias-git.werkbaum").symlink_to(root / ".git" / "x.werkbaum")
    before = state_of(root)
    touched.files.clear()
    base = Base(checksum(SECRET))
    kind = InvalidArgument if reason == "not_a_file" else ForbiddenSource
    for call in (lambda: store.read(source), lambda: store.write(source, base, [], PLAN)):
        body = refusal(call, kind)
        assert body["reason"] == reason and "SECRET" not in body["message"]
    assert touched.files == [], "no file was opened, only directories on the way"
    if source.startswith("alias"):  # a create never follows a link: the name is taken
        with pytest.raises(Conflict) as info:
            store.create(source, PLAN)
        assert "current" not in info.value.to_json()["error"]
        assert touched.files == [source], "only lstat'ed"
    else:
        assert refusal(lambda: store.create(source, PLAN), kind)["reason"] == reason
        assert touched.files == []
    assert state_of(root) == before


def test_plan_globs_add_names_but_never_git_or_temp_files(root: Path) -> None:
    (root / ".git").mkdir()
    for rel in ("a.plan", "PLAN", "b.werkbaum", ".git/c.plan", f".a.plan.x{TEMP_SUFFIX}"):
        plan_file(root, PLAN, rel)
    store = FileStore(Roots.from_args([str(root)], env={}, cwd="/"), plan_globs=["*.plan", "PLAN"])
    for source in ("a.plan", "PLAN", "b.werkbaum"):
        assert store.read(source).text == PLAN
    assert [plan.source for plan in store.list_plans().plans] == ["PLAN", "a.plan", "b.werkbaum"]
    anything = FileStore(Roots.from_args([str(root)], env={}, cwd="/"), plan_globs=["*"])
    for source in (".git/c.plan", f".a.plan.x{TEMP_SUFFIX}"):
        refusal(lambda: anything.read(source))  # noqa: B023 (called at once)
    assert FileStore(Roots.from_args([str(root)], env={}, cwd="/")).plan_names.globs == (
        "*.werkbaum",
    )
    for pattern in ("plans/*.werkbaum", ""):
        with pytest.raises(InvalidArgument, match="--plan-glob"):
            FileStore(Roots.from_args([str(root)], env={}, cwd="/"), plan_globs=[pattern])


# --- 2. no check-then-use race ---------------------------------------------------------------

Layout = Callable[[Path, Path, str], tuple[str, Path, str]]
"""Builds a plan inside and a decoy outside; returns the source, the entry to swap and
the symlink target the swapper exchanges it with."""


def directory_link(root: Path, outside: Path, decoy: str) -> tuple[str, Path, str]:
    (root / "sub").mkdir()
    plan_file(root / "sub", PLAN)
    plan_file(outside, decoy)
    return "sub/plan.werkbaum", root / "sub", str(outside)


def relative_link(root: Path, outside: Path, decoy: str) -> tuple[str, Path, str]:
    source, swapped, _ = directory_link(root, outside, decoy)
    return source, swapped, os.path.relpath(outside, root)


def deep_link(root: Path, outside: Path, decoy: str) -> tuple[str, Path, str]:
    (root / "a" / "b" / "c").mkdir(parents=True)
    (outside / "b" / "c").mkdir(parents=True)
    plan_file(root / "a" / "b" / "c", PLAN)
    plan_file(outside / "b" / "c", decoy)
    return str(root / "a" / "b" / "c" / "plan.werkbaum"), root / "a", str(outside)


def file_link(root: Path, outside: Path, decoy: str) -> tuple[str, Path, str]:
    plan_file(root, PLAN)
    plan_file(outside, decoy)
    return "plan.werkbaum", root / "plan.werkbaum", str(outside / "plan.werkbaum")


LAYOUTS = [directory_link, relative_link, deep_link, file_link]


@contextlib.contextmanager
def swapping(stop: Path, entry: Path, target: str) -> Iterator[list[int]]:
    """A separate process exchanging ``entry`` with a symlink to ``target`` in a tight loop."""
    command = [sys.executable, str(SWAPPER), "swap", str(entry.parent), entry.name, target]
    process = subprocess.Popen(
        [*command, str(stop)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    swaps: list[int] = []
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield swaps
    finally:
        stop.touch()
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    swaps.append(int(out.strip()))


def hammer(call: Callable[[int], None], seconds: float = RACE_SECONDS) -> Counter[str]:
    """Run ``call`` from two threads until the time is up; count outcomes by error code."""
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def run(worker: int) -> None:
        count = 0
        while time.monotonic() < deadline:
            try:
                call(worker * 1_000_000 + count)
                outcome = "ok"
            except WerkbaumError as exc:
                body = exc.to_json()["error"]
                assert "Errno" not in body["message"], body
                outcome = body["code"]
            with lock:
                outcomes[outcome] += 1
            count += 1

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(run, range(2)))
    return outcomes


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.__name__)
def test_no_swap_of_any_component_lets_a_read_return_an_outside_byte(
    tmp_path: Path, root: Path, outside: Path, store: FileStore, layout: Layout
) -> None:
    source, entry, target = layout(root, outside, SECRET)
    texts: set[str] = set()
    with swapping(tmp_path / "stop", entry, target) as swaps:
        outcomes = hammer(lambda _: texts.add(store.read(source).text))
    assert texts == {PLAN}, "only the plan inside was ever returned"
    assert set(outcomes) <= {"ok"} | DOCUMENTED, outcomes
    assert outcomes["ok"] and sum(outcomes.values()) > outcomes["ok"], f"no race seen: {outcomes}"
    assert swaps[0] > 0


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.__name__)
def test_no_swap_of_any_component_lets_a_write_or_create_change_an_outside_file(
    tmp_path: Path, root: Path, outside: Path, store: FileStore, layout: Layout
) -> None:
    # The decoy holds the plan's own text: a write that reached it would pass the compare.
    source, entry, target = layout(root, outside, PLAN)
    before = state_of(outside)
    versions = [PLAN, PLAN.replace("[ ] #a", "[x] #a")]
    directory = os.path.dirname(source)

    def write_or_create(index: int) -> None:
        if index % 3 == 2:
            store.create(os.path.join(directory, f"new-{index}.werkbaum"), PLAN)
            return
        snapshot = store.read(source)
        following = versions[(versions.index(snapshot.text) + 1) % 2]
        store.write(source, snapshot.base, [], following)

    with swapping(tmp_path / "stop", entry, target) as swaps:
        outcomes = hammer(write_or_create)
    assert state_of(outside) == before, "no outside file was written, replaced or created"
    assert set(outcomes) <= {"ok"} | DOCUMENTED, outcomes
    assert outcomes["ok"] and sum(outcomes.values()) > outcomes["ok"], f"no race seen: {outcomes}"
    assert swaps[0] > 0
    for path in root.rglob("*.werkbaum"):
        assert path.read_text() in versions, "every plan inside is whole"


def test_a_dotdot_through_a_symlink_goes_back_where_the_walk_came_from(
    store: FileStore, root: Path, outside: Path
) -> None:
    (root / "plans" / "deep").mkdir(parents=True)
    plan_file(root / "plans", PLAN)
    (root / "up").symlink_to("plans/deep/..")
    (root / "loop.werkbaum").symlink_to("loop.werkbaum")
    (root / "escape").symlink_to("plans/../..")
    assert store.read("up/plan.werkbaum").text == PLAN
    assert refusal(lambda: store.read("escape/outside/secret.werkbaum"))["reason"] == (
        "outside_roots"
    )
    with pytest.raises(WerkbaumError, match="symbolic links") as info:
        store.read("loop.werkbaum")
    assert info.value.to_json()["error"]["code"] == "source_unavailable"


# --- 3. hard links and permissions -----------------------------------------------------------


def test_a_hard_link_to_an_outside_file_is_neither_read_nor_written(
    store: FileStore, root: Path, outside: Path
) -> None:
    secret = outside / "secret.werkbaum"
    os.link(secret, root / "linked.werkbaum")
    before = state_of(outside)
    body = refusal(lambda: store.read("linked.werkbaum"))
    assert body["reason"] == "hard_link" and "2 hard links" in body["message"]
    known = Base(checksum(secret.read_text()))  # an attacker may well know the text
    assert refusal(lambda: store.write("linked.werkbaum", known, [], SECRET))["reason"] == (
        "hard_link"
    )
    assert store.list_plans().plans == ()
    assert state_of(outside) == before


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o466, 0o555])
def test_a_read_only_plan_is_never_written_even_by_root(
    store: FileStore, root: Path, mode: int
) -> None:
    path = plan_file(root)
    path.chmod(mode)
    before = state_of(root)
    snapshot = store.read("plan.werkbaum")
    body = refusal(lambda: store.write("plan.werkbaum", snapshot.base, [], PLAN + "x\n"))
    assert body["reason"] == "read_only"
    assert f"mode {mode:04o}" in body["message"] and "chmod u+w" in body["message"]
    assert state_of(root) == before
    path.chmod(0o644)
    store.write("plan.werkbaum", snapshot.base, [], PLAN + "x\n")  # the person allowed it


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another user needs root")
def test_a_plan_the_servers_user_may_not_write_is_refused() -> None:
    shared = Path(tempfile.mkdtemp(dir="/tmp"))  # reachable by another user, unlike tmp_path
    try:
        shared.chmod(0o777)  # the directory would allow the rename
        theirs = plan_file(shared, PLAN, "theirs.werkbaum")  # root's, 0644
        mine = plan_file(shared, PLAN, "mine.werkbaum")
        mine.chmod(0o666)
        before = theirs.read_bytes(), theirs.stat().st_ino
        store = FileStore(Roots.from_args([str(shared)], env={}, cwd="/"))
        outcomes = as_nobody(store, ["theirs.werkbaum", "mine.werkbaum"])
        assert outcomes == ["forbidden_source:read_only", "ok"]
        assert (theirs.read_bytes(), theirs.stat().st_ino) == before
        assert mine.read_text() == PLAN + "x\n"
    finally:
        shutil.rmtree(shared)


def as_nobody(store: FileStore, sources: list[str]) -> list[str]:
    """Write each source from a forked child running as ``nobody``; the outcomes."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            seen = []
            for source in sources:
                try:
                    store.write(source, Base(checksum(PLAN)), [], PLAN + "x\n")
                    seen.append("ok")
                except WerkbaumError as exc:
                    body = exc.to_json()["error"]
                    seen.append(f"{body['code']}:{body.get('reason')}")
            os.write(write_end, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    outcomes: list[str] = json.loads(data)
    return outcomes


# --- the same rules at the server, started as a host starts it -------------------------------


@pytest.mark.anyio
async def test_a_steered_agent_gets_only_plans_from_a_real_server(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".git").mkdir(parents=True)
    outside.mkdir()
    (project / ".env").write_text("TOKEN=SECRET\n")
    config = project / ".git" / "config"
    config.write_text("[core]\n\tbare = false\n")
    plan_file(project, PLAN)
    plan_file(project, PLAN, "notes.plan")
    os.link(plan_file(outside, SECRET, "secret.werkbaum"), project / "linked.werkbaum")
    before = state_of(project)
    # Started in / (as Claude Desktop does) with an absolute root: relative sources work.
    params = StdioServerParameters(
        command=str(SERVER),
        args=["--root", str(project), "--plan-glob", "*.plan"],
        cwd="/",
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )
    seen: list[str] = []
    async with Client(params) as client:

        async def call(tool: str, **args: object) -> dict[str, object]:
            result = await client.call_tool(tool, dict(args))
            seen.append(result.content[0].text)  # type: ignore[union-attr]
            body: dict[str, object] = structured(result)
            return body

        for source in (".env", ".git/config", "linked.werkbaum", "werkbaum://file/.env"):
            error = (await call("werkbaum_read", source=source))["error"]
            assert error["code"] == "forbidden_source", error  # type: ignore[index]
        base = {"version": None, "checksum": checksum(config.read_text())}
        hook = "[core]\n\tfsmonitor = touch /tmp/pwned\n"
        error = (await call("werkbaum_write", source=".git/config", base=base, text=hook))["error"]
        assert error["code"] == "forbidden_source"  # type: ignore[index]
        assert (await call("werkbaum_read", source="plan.werkbaum"))["text"] == PLAN
        assert (await call("werkbaum_read", source="werkbaum://file/notes.plan"))["text"] == PLAN
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        assert listed == {
            "werkbaum://guide",
            "ui://werkbaum/plan-view.html",  # the MCP App view: package code, no file
            "werkbaum://file/plan.werkbaum",
            "werkbaum://file/notes.plan",
        }
        with pytest.raises(Exception, match=r"forbidden_source|not a plan"):
            await client.read_resource("werkbaum://file/.env")
    assert not any("SECRET" in text for text in seen)
    assert state_of(project) == before
