"""The stdio file store: roots, reads, compare-and-swap writes, listing, and
what two processes (or a killed one) do to a shared plan file."""

from __future__ import annotations

import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    BOM,
    PLAN,
    Touched,
    dukpy_fixture,
    outside_fixture,
    plan_file,
    root_fixture,
    store_fixture,
    touched_fixture,
)
from tests.stdio.file_writers import CHURN_VERSIONS, RACE_NODES, churn_version, race_plan
from werkbaum_core import (
    Conflict,
    Engine,
    ForbiddenSource,
    InvalidArgument,
    NotFound,
    SourceUnavailable,
    TooLarge,
    checksum,
)
from werkbaum_core.rules.pipeline import WriteRequest, write
from werkbaum_core.stores import Base
from werkbaum_core.text import MAX_TEXT_CHARS
from werkbaum_stdio.files import TEMP_SUFFIX, FileStore
from werkbaum_stdio.roots import Roots

HELPER = Path(__file__).with_name("file_writers.py")


def listed(store: FileStore, **options: Any) -> list[Path]:
    """The paths of the first page of ``list_plans``."""
    return [plan.path for plan in store.list_plans(**options).plans]


def set_status(engine: Engine, store: FileStore, source: str, node: str, status: str) -> Any:
    base = store.read(source).base
    return write(
        engine, store, WriteRequest(source, base, "setStatus", {"id": node, "status": status})
    )


# --- roots ---------------------------------------------------------------------------------


def test_an_absolute_path_outside_the_roots_is_refused_unread(
    store: FileStore, outside: Path, touched: Touched
) -> None:
    with pytest.raises(ForbiddenSource):
        store.read(str(outside / "secret.werkbaum"))
    with pytest.raises(ForbiddenSource):
        store.base_text(str(outside / "secret.werkbaum"), Base(checksum("x")))
    assert touched.files == [] and touched.dirs == set()


def test_a_dotdot_escape_is_refused_unread(
    store: FileStore, root: Path, outside: Path, touched: Touched
) -> None:
    (root / "sub").mkdir()
    for source in (
        "../outside/secret.werkbaum",
        "sub/../../outside/secret.werkbaum",
        f"{root}/../outside/secret.werkbaum",
    ):
        with pytest.raises(ForbiddenSource):
            store.read(source)
    assert touched.files == []
    assert not touched.outside(outside), "the ancestors of the root are opened, nothing else"


def test_a_symlink_inside_pointing_outside_is_refused_unread(
    store: FileStore, root: Path, outside: Path, touched: Touched
) -> None:
    (root / "link.werkbaum").symlink_to(outside / "secret.werkbaum")
    (root / "linked-dir").symlink_to(outside, target_is_directory=True)
    (root / "relative-dir").symlink_to("../outside", target_is_directory=True)
    for source in (
        "link.werkbaum",
        str(root / "link.werkbaum"),
        "linked-dir/secret.werkbaum",
        "relative-dir/secret.werkbaum",
    ):
        with pytest.raises(ForbiddenSource):
            store.read(source)
    assert touched.files == []
    assert not touched.outside(outside), "the ancestors of the root are opened, nothing else"


def test_etc_passwd_is_refused_and_the_error_names_the_roots(
    store: FileStore, root: Path, touched: Touched
) -> None:
    with pytest.raises(ForbiddenSource) as info:
        store.read("/etc/passwd")
    body = info.value.to_json()["error"]
    assert body["code"] == "forbidden_source"
    assert str(root) in body["message"] and "--root" in body["message"]
    assert body["roots"] == [str(root)]
    assert touched.files == [] and touched.dirs == set()


def test_a_write_outside_the_roots_is_refused_and_writes_nothing(
    store: FileStore, outside: Path
) -> None:
    secret = outside / "secret.werkbaum"
    before = secret.read_bytes()
    with pytest.raises(ForbiddenSource):
        store.write(str(secret), Base(checksum(before.decode())), [], "[x] #secret: Mine\n")
    assert secret.read_bytes() == before
    assert sorted(os.listdir(outside)) == ["secret.werkbaum"]


def test_a_symlink_inside_pointing_inside_is_read_and_written(store: FileStore, root: Path) -> None:
    (root / "plans").mkdir()
    target = plan_file(root / "plans")
    link = root / "alias.werkbaum"
    link.symlink_to(target)
    snapshot = store.read("alias.werkbaum")
    assert snapshot.text == PLAN
    store.write("alias.werkbaum", snapshot.base, [], PLAN.replace("#a", "#a2"))
    assert link.is_symlink(), "the write replaces the target, not the link"
    assert target.read_text() == PLAN.replace("#a", "#a2")


def test_empty_and_nul_sources_are_invalid(store: FileStore) -> None:
    for source in ("", "plan\0.werkbaum"):
        with pytest.raises(InvalidArgument):
            store.read(source)


def test_a_source_ending_in_a_folder_step_names_no_file(store: FileStore, root: Path) -> None:
    """``plan.werkbaum/`` is a folder to POSIX: it neither reads the file nor creates one."""
    target = plan_file(root)
    (root / "sub").mkdir()
    sources = ("plan.werkbaum/", "plan.werkbaum/.", "plan.werkbaum//", "sub/..", ".", f"{target}/")
    for source in sources:
        with pytest.raises(InvalidArgument) as raised:
            store.read(source)
        assert raised.value.to_json()["error"]["reason"] == "not_a_file", source
        assert "names a folder" in str(raised.value)
    for source in ("new.werkbaum/", "new.werkbaum/."):
        with pytest.raises(InvalidArgument):
            store.create(source, PLAN)
    assert sorted(os.listdir(root)) == ["plan.werkbaum", "sub"]
    assert store.read("plan.werkbaum").text == PLAN


def test_claude_project_dir_is_the_default_root_and_base(tmp_path: Path, root: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan_file(root)
    plan_file(elsewhere, "[ ] #other: Other\n")
    roots = Roots.from_args([], env={"CLAUDE_PROJECT_DIR": str(root)}, cwd=elsewhere)
    assert roots.paths == (root,)
    assert roots.origin == "CLAUDE_PROJECT_DIR"
    assert roots.resolve("plan.werkbaum") == root / "plan.werkbaum"
    assert FileStore(roots).read("plan.werkbaum").text == PLAN
    with pytest.raises(ForbiddenSource, match="CLAUDE_PROJECT_DIR"):
        roots.resolve(str(elsewhere / "plan.werkbaum"))


def test_without_root_or_project_dir_the_working_directory_is_the_root(root: Path) -> None:
    roots = Roots.from_args([], env={"CLAUDE_PROJECT_DIR": ""}, cwd=root)
    assert roots.paths == (root,)
    assert roots.origin == "the working directory"
    assert roots.resolve("a/b.werkbaum") == root / "a" / "b.werkbaum"


def test_explicit_roots_win_and_relative_sources_start_at_the_roots(
    tmp_path: Path, root: Path, outside: Path
) -> None:
    roots = Roots.from_args(["root"], env={"CLAUDE_PROJECT_DIR": str(outside)}, cwd=tmp_path)
    assert roots.paths == (root,)
    assert roots.origin == "--root"
    assert roots.resolve("plan.werkbaum") == root / "plan.werkbaum"
    assert roots.resolve("root/plan.werkbaum") == root / "root" / "plan.werkbaum"
    with pytest.raises(ForbiddenSource):
        roots.resolve("../outside/secret.werkbaum")


def test_a_missing_root_is_an_error_at_start_up(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="not an existing directory"):
        Roots.from_args([str(tmp_path / "missing")], env={}, cwd=tmp_path)
    with pytest.raises(InvalidArgument, match="CLAUDE_PROJECT_DIR"):
        Roots.from_args([], env={"CLAUDE_PROJECT_DIR": str(tmp_path / "gone")}, cwd=tmp_path)


# --- reads and writes ----------------------------------------------------------------------


def test_read_write_round_trip_through_the_pipeline(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root)
    snapshot = store.read("plan.werkbaum")
    assert snapshot.text == PLAN
    assert snapshot.base == Base(checksum=checksum(PLAN), version=None)
    result = set_status(dukpy, store, "plan.werkbaum", "a", "x")
    expected = PLAN.replace("[ ] #a", "[x] #a")
    assert path.read_text() == expected
    assert result.base == store.read("plan.werkbaum").base == Base(checksum(expected))


def test_a_stale_base_is_a_conflict_with_the_current_text_and_the_file_untouched(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root)
    before = path.stat()
    stale = Base(checksum(PLAN.replace("(S)", "(M)")))
    request = WriteRequest("plan.werkbaum", stale, "setStatus", {"id": "a", "status": "x"})
    with pytest.raises(Conflict) as info:
        write(dukpy, store, request)
    current = {"text": PLAN, "base": {"version": None, "checksum": checksum(PLAN)}}
    assert info.value.to_json()["error"]["current"] == current
    with pytest.raises(Conflict) as direct:
        store.write("plan.werkbaum", stale, [], "[x] #plan: Overwritten\n")
    assert direct.value.to_json()["error"]["current"] == current
    after = path.stat()
    assert path.read_bytes() == PLAN.encode()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_crlf_files_stay_crlf(dukpy: Engine, store: FileStore, root: Path) -> None:
    path = plan_file(root, PLAN.replace("\n", "\r\n"))
    snapshot = store.read("plan.werkbaum")
    assert snapshot.text == PLAN, "the agent sees LF only"
    assert snapshot.base.checksum == checksum(PLAN)
    set_status(dukpy, store, "plan.werkbaum", "b", "~")
    expected = PLAN.replace("[ ] #b", "[~] #b").replace("\n", "\r\n").encode()
    assert path.read_bytes() == expected


def test_lf_files_stay_lf(dukpy: Engine, store: FileStore, root: Path) -> None:
    path = plan_file(root)
    set_status(dukpy, store, "plan.werkbaum", "b", "~")
    data = path.read_bytes()
    assert b"\r" not in data
    assert data == PLAN.replace("[ ] #b", "[~] #b").encode()


def test_a_bom_is_stripped_for_the_text_and_kept_on_write(
    dukpy: Engine, store: FileStore, root: Path
) -> None:
    path = plan_file(root, BOM + PLAN.replace("\n", "\r\n").encode())
    snapshot = store.read("plan.werkbaum")
    assert snapshot.text == PLAN and not snapshot.text.startswith("\ufeff")
    assert snapshot.base.checksum == checksum(PLAN)
    set_status(dukpy, store, "plan.werkbaum", "a", "/")
    expected = PLAN.replace("[ ] #a", "[/] #a").replace("\n", "\r\n")
    assert path.read_bytes() == BOM + expected.encode()


@pytest.mark.parametrize("prefix", [b"", BOM], ids=["plain", "bom"])
def test_bytes_that_are_not_utf8_name_the_offset(
    store: FileStore, root: Path, prefix: bytes
) -> None:
    data = prefix + b"[ ] #plan: Pl\xe4n\n"
    plan_file(root, data)
    with pytest.raises(InvalidArgument) as info:
        store.read("plan.werkbaum")
    body = info.value.to_json()["error"]
    offset = data.index(b"\xe4")
    assert body["offset"] == offset
    assert f"offset {offset}" in body["message"] and "UTF-8" in body["message"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_a_utf16_plan_is_named_as_such(store: FileStore, root: Path, encoding: str) -> None:
    """Round 26 attack-files F9: Windows editors save "Unicode" as UTF-16 with a byte-order
    mark; "invalid byte at offset 0" left the person guessing what to change."""
    data = ("\ufeff" if encoding.endswith("be") else "") + "[ ] #plan: Plan\n"
    plan_file(root, data.encode(encoding))
    with pytest.raises(InvalidArgument) as info:
        store.read("plan.werkbaum")
    assert "it is UTF-16" in info.value.message and "save it as UTF-8" in info.value.message


def test_a_missing_file_is_not_found_and_is_not_created_by_a_write(
    store: FileStore, root: Path
) -> None:
    with pytest.raises(NotFound):
        store.read("new.werkbaum")
    with pytest.raises(NotFound):
        store.write("new.werkbaum", Base(checksum("")), [], PLAN)
    assert os.listdir(root) == []
    plan_file(root)
    with pytest.raises(NotFound):
        store.read("plan.werkbaum/inside.werkbaum")


def test_a_directory_a_fifo_and_a_permission_error_are_unavailable(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "dir.werkbaum").mkdir()
    os.mkfifo(root / "pipe.werkbaum")
    with pytest.raises(SourceUnavailable, match="is a directory"):
        store.read("dir.werkbaum")
    with pytest.raises(SourceUnavailable, match="not a regular file"):
        store.read("pipe.werkbaum")
    plan_file(root)

    def denied(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(SourceUnavailable, match="Permission denied") as info:
        store.read("plan.werkbaum")
    assert info.value.to_json()["error"]["reason"] == "Permission denied"


def test_oversized_files_and_texts_are_too_large(store: FileStore, root: Path) -> None:
    plan_file(root, "x" * (MAX_TEXT_CHARS + 1), "big.werkbaum")
    with pytest.raises(TooLarge) as info:
        store.read("big.werkbaum")
    assert info.value.to_json()["error"]["limit"] == MAX_TEXT_CHARS
    path = plan_file(root)
    with pytest.raises(TooLarge):
        store.write("plan.werkbaum", Base(checksum(PLAN)), [], "y" * (MAX_TEXT_CHARS + 1))
    assert path.read_text() == PLAN


def test_a_write_keeps_the_file_mode_and_leaves_no_temp_file(store: FileStore, root: Path) -> None:
    path = plan_file(root)
    path.chmod(0o640)
    new = PLAN + "  - [ ] #c: C (XS)\n"
    snapshot = store.write("plan.werkbaum", Base(checksum(PLAN)), [], new)
    assert snapshot == store.read("plan.werkbaum")
    assert snapshot.base == Base(checksum(new))
    assert path.stat().st_mode & 0o7777 == 0o640
    assert os.listdir(root) == ["plan.werkbaum"]


def test_a_writer_waits_for_the_directory_lock_and_gives_up_clearly(root: Path) -> None:
    path = plan_file(root)
    store = FileStore(Roots.from_args([str(root)], env={}, cwd=root), lock_timeout=0.2)
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(SourceUnavailable, match="another process") as info:
            store.write("plan.werkbaum", Base(checksum(PLAN)), [], PLAN + "x\n")
        assert time.monotonic() - started >= 0.2
        assert info.value.to_json()["error"]["reason"] == "locked"
        assert path.read_text() == PLAN
    finally:
        os.close(fd)
    store.write("plan.werkbaum", Base(checksum(PLAN)), [], PLAN + "x\n")
    assert path.read_text() == PLAN + "x\n"


def test_orphaned_temp_files_in_the_directory_are_removed_by_the_next_write(
    store: FileStore, root: Path
) -> None:
    """Every writer of a directory holds its lock while its temp file exists, so each temp
    file of the store's shape found under the lock is an orphan, whichever plan it was for;
    other names, even with the store's suffix, are someone else's."""
    plan_file(root)
    orphans = [
        root / f".werkbaum-{'0' * 15}1{TEMP_SUFFIX}",
        root / f".werkbaum-{'f' * 16}{TEMP_SUFFIX}",
    ]
    for orphan in orphans:
        orphan.write_text("half a pl")
    others = [
        root / f".werkbaum-{'0' * 15}{TEMP_SUFFIX}",
        root / f".plan.werkbaum.k1ll3d{TEMP_SUFFIX}",
        root / ".plan.werkbaum.notes",
    ]
    for other in others:
        other.write_text("not ours")
    assert listed(store) == [root / "plan.werkbaum"]
    store.write("plan.werkbaum", Base(checksum(PLAN)), [], PLAN + "\n")
    assert not any(orphan.exists() for orphan in orphans)
    assert all(other.exists() for other in others)


LONGEST_NAMES = {
    "ascii": "q" * (255 - len(".werkbaum")) + ".werkbaum",
    "utf-8": "ä" * 123 + ".werkbaum",  # 2 bytes a letter: 255 bytes, 132 characters
}


@pytest.mark.parametrize("name", LONGEST_NAMES.values(), ids=LONGEST_NAMES.keys())
def test_a_plan_with_the_longest_legal_name_is_written_and_created(
    store: FileStore, root: Path, name: str
) -> None:
    """The temp file's name does not grow with the plan's, so NAME_MAX (255 bytes) is the
    only limit: what can be read can be written."""
    assert len(os.fsencode(name)) == 255
    (root / "old").mkdir()
    plan_file(root / "old", PLAN, name)
    snapshot = store.read(f"old/{name}")
    store.write(f"old/{name}", snapshot.base, [], PLAN + "\n")
    assert (root / "old" / name).read_text() == PLAN + "\n"
    store.create(name, PLAN)
    assert (root / name).read_text() == PLAN
    assert listed(store) == [root / name, root / "old" / name]
    assert sorted(os.listdir(root)) == sorted([name, "old"]) and os.listdir(root / "old") == [name]
    with pytest.raises(SourceUnavailable, match="File name too long"):
        store.create("q" + name, PLAN)  # 256 bytes: the file system's own limit, said clearly


# --- listing -------------------------------------------------------------------------------


def test_list_plans_skips_git_node_modules_hidden_links_and_outside(
    store: FileStore, root: Path, outside: Path
) -> None:
    for rel in (
        "a.werkbaum",
        "sub/b.werkbaum",
        "sub/deeper/c.werkbaum",
        ".git/x.werkbaum",
        ".GIT/x.werkbaum",
        "node_modules/pkg/y.werkbaum",
        ".hidden/z.werkbaum",
        "sub/.cache/w.werkbaum",
        ".dotfile.werkbaum",
        "notes.txt",
        ".env",
        "sub/plan.werkbaum.bak",
        f"sub/.b.werkbaum.x{TEMP_SUFFIX}",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(PLAN)
    (root / "out.werkbaum").symlink_to(outside / "secret.werkbaum")
    (root / "out-dir").symlink_to(outside, target_is_directory=True)
    (root / "sub" / "same.werkbaum").symlink_to(root / "a.werkbaum")
    os.link(outside / "secret.werkbaum", root / "hard.werkbaum")
    os.mkfifo(root / "fifo.werkbaum")
    expected = [root / "a.werkbaum", root / "sub/b.werkbaum", root / "sub/deeper/c.werkbaum"]
    page = store.list_plans()
    assert [plan.path for plan in page.plans] == expected
    assert [plan.source for plan in page.plans] == [
        "a.werkbaum",
        "sub/b.werkbaum",
        "sub/deeper/c.werkbaum",
    ]
    assert {plan.lines for plan in page.plans} == {PLAN.count("\n") + 1}
    assert page.next_cursor is None
    assert store.list_plans() == page, "the order is deterministic"
    assert {plan.lines for plan in store.list_plans(lines=False).plans} == {None}


def test_list_plans_pages_with_a_cursor_in_a_stable_order(store: FileStore, root: Path) -> None:
    rels = [
        "a.werkbaum",
        "b.werkbaum",
        "x/a.werkbaum",
        "x/y/z.werkbaum",
        "x/zz.werkbaum",
        "y/p.werkbaum",
    ]
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        plan_file(root, PLAN + "x\n" * len(rel), rel)
    expected = ["a.werkbaum", "b.werkbaum", "x/a.werkbaum", "x/zz.werkbaum", "x/y/z.werkbaum"]
    expected.append("y/p.werkbaum")  # files before subdirectories, names sorted, depth-first

    def all_pages(limit: int, **options: Any) -> tuple[list[str], int]:
        sources: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = store.list_plans(cursor, limit=limit, **options)
            sources += [plan.source for plan in page.plans]
            pages += 1
            assert pages < 50, "the cursor must make progress"
            if page.next_cursor is None:
                return sources, pages
            cursor = page.next_cursor

    assert all_pages(100) == (expected, 1)
    assert all_pages(2) == (expected, 3)
    assert all_pages(1) == (expected, 6)
    assert all_pages(1000, max_dirs=1)[0] == expected, "the walk bound only splits pages"
    first = store.list_plans(limit=3)
    assert [plan.lines for plan in first.plans] == [PLAN.count("\n") + 1 + len(r) for r in rels[:3]]
    # Plans added before the cursor's position are not repeated, the rest is not skipped.
    plan_file(root, PLAN, "0.werkbaum")
    (root / "x" / "a.werkbaum").unlink()
    rest = store.list_plans(first.next_cursor, limit=100)
    assert [plan.source for plan in rest.plans] == expected[3:]


def test_list_plans_refuses_a_cursor_it_did_not_make(store: FileStore) -> None:
    for cursor in ("garbage", "W10", "WzUsIFtdXQ"):  # not base64 JSON; []; [5, []]
        with pytest.raises(InvalidArgument, match="cursor"):
            store.list_plans(cursor)


def test_list_plans_bounds_the_walk_per_call(store: FileStore, root: Path) -> None:
    for index in range(6):
        (root / f"d{index}").mkdir()
        plan_file(root, PLAN, f"d{index}/p.werkbaum")
    page = store.list_plans(max_dirs=3)  # the root, d0, d1
    assert [plan.source for plan in page.plans] == ["d0/p.werkbaum", "d1/p.werkbaum"]
    assert page.next_cursor is not None
    again = store.list_plans(page.next_cursor, max_dirs=3)
    assert [plan.source for plan in again.plans] == [f"d{i}/p.werkbaum" for i in (2, 3, 4)]


def test_list_plans_over_two_roots_names_ambiguous_plans_absolutely(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for directory in (first, second, second / "nested"):
        directory.mkdir()
    plan_file(first, PLAN, "same.werkbaum")
    plan_file(second, PLAN, "same.werkbaum")
    plan_file(second, PLAN, "own.werkbaum")
    plan_file(second / "nested", PLAN, "n.werkbaum")
    roots = Roots.from_args([str(first), str(second), str(second / "nested")], env={}, cwd="/")
    store = FileStore(roots)
    sources = [plan.source for plan in store.list_plans().plans]
    # nested/ is a root of its own: listed once, under it
    same = [str(first / "same.werkbaum"), str(second / "same.werkbaum")]
    assert sources == [same[0], "own.werkbaum", same[1], "n.werkbaum"]
    for source in sources:
        assert store.read(source).text == PLAN, "every listed source reads back"
    with pytest.raises(InvalidArgument) as info:
        store.read("same.werkbaum")
    assert info.value.to_json()["error"]["candidates"] == same


# --- processes -----------------------------------------------------------------------------


def spawn(*args: object, stdin: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    command = [sys.executable, str(HELPER), *map(str, args)]
    return subprocess.Popen(
        command, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate(timeout=10)


def test_two_server_processes_racing_lose_no_update(tmp_path: Path, root: Path) -> None:
    path = plan_file(root, race_plan(), "race.werkbaum")
    go = tmp_path / "go"
    half = RACE_NODES // 2
    writers = [spawn("race", root, "race.werkbaum", first, half, go) for first in (0, half)]
    try:
        for writer in writers:
            assert writer.stdout is not None
            assert writer.stdout.readline().strip() == "ready"
        go.touch()
        outputs = [writer.communicate(timeout=60) for writer in writers]
    finally:
        for writer in writers:
            stop(writer)
    for writer, (_, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
    runs = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert max(run["start"] for run in runs) < min(run["end"] for run in runs), "they overlapped"
    expected = race_plan().replace("  - [ ] #n", "  - [x] #n")
    assert path.read_text() == expected, f"lost updates ({runs})"


def wait_for_a_write(path: Path, timeout: float = 10.0) -> None:
    """Until the file changes, so that each writer makes progress before its kill."""

    def stamp() -> tuple[int, int]:
        info = path.stat()
        return info.st_ino, info.st_mtime_ns

    before = stamp()
    deadline = time.monotonic() + timeout
    while stamp() == before:
        assert time.monotonic() < deadline, "the writer did not complete a write"
        time.sleep(0.0005)


def test_a_writer_killed_mid_write_leaves_the_old_or_the_new_file(root: Path) -> None:
    path = plan_file(root, churn_version(0), "churn.werkbaum")
    valid = {churn_version(i).encode() for i in range(CHURN_VERSIONS)}
    store = FileStore(Roots.from_args([str(root)], env={}, cwd=root))
    forker = spawn("forker", root, "churn.werkbaum", stdin=subprocess.PIPE)
    assert forker.stdin is not None and forker.stdout is not None
    rng = random.Random(20)
    seen: set[bytes] = set()
    orphans: set[str] = set()
    kills = 0
    pid = 0
    try:
        assert forker.stdout.readline().strip() == "ready"
        # At least 20 kills; more (up to 80) until one has hit the temp-file phase.
        while kills < 20 or (not orphans and kills < 80):
            forker.stdin.write("fork\n")
            forker.stdin.flush()
            pid = int(forker.stdout.readline())
            wait_for_a_write(path)
            time.sleep(rng.uniform(0.0, 0.03))
            os.kill(pid, signal.SIGKILL)
            status = int(forker.stdout.readline().split()[1])
            pid = 0
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
            kills += 1
            data = path.read_bytes()
            assert data in valid, f"kill {kills}: a partial or foreign file ({len(data)} bytes)"
            data.decode("utf-8")
            seen.add(data)
            orphans |= {name for name in os.listdir(root) if name.endswith(TEMP_SUFFIX)}
            assert listed(store) == [path]
    finally:
        if pid:  # a churning writer the forker has not reaped: it must not outlive the test
            os.kill(pid, signal.SIGKILL)
        stop(forker)
    assert len(seen) >= 2
    assert orphans, f"none of {kills} kills landed while a temp file existed"
    snapshot = store.read("churn.werkbaum")
    store.write("churn.werkbaum", snapshot.base, [], churn_version(0))
    assert os.listdir(root) == ["churn.werkbaum"], "the next write cleared the orphans"


STOP_ROUNDS = 20


def wait_for_a_temp_file(root: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not any(name.endswith(TEMP_SUFFIX) for name in os.listdir(root)):
        assert time.monotonic() < deadline, "the writer made no temp file"
        time.sleep(0.0002)


def test_a_writer_stopped_by_sigterm_mid_write_leaves_no_temp_file(root: Path) -> None:
    """SIGTERM, as a host stops a server, each time while a temp file exists: the signal
    handler removes it before the process dies, and the plan is the old or the new text."""
    path = plan_file(root, churn_version(0), "churn.werkbaum")
    valid = {churn_version(i).encode() for i in range(CHURN_VERSIONS)}
    forker = spawn("forker", root, "churn.werkbaum", "stoppable", stdin=subprocess.PIPE)
    assert forker.stdin is not None and forker.stdout is not None
    pid = 0
    try:
        assert forker.stdout.readline().strip() == "ready"
        for round_ in range(STOP_ROUNDS):
            forker.stdin.write("fork\n")
            forker.stdin.flush()
            pid = int(forker.stdout.readline())
            wait_for_a_temp_file(root)
            os.kill(pid, signal.SIGTERM)
            status = int(forker.stdout.readline().split()[1])
            pid = 0
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
            assert path.read_bytes() in valid, f"round {round_}: a partial or foreign file"
            assert os.listdir(root) == ["churn.werkbaum"], f"round {round_}: a temp file is left"
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
        stop(forker)
