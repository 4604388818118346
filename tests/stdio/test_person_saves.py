"""A person's save while a server writes the same plan file (round 25, attack-writers F1,
F2, F7): it ends as ``conflict`` and the person's text stays, whatever kind of save it is
and wherever it lands before the new file is in place.

An editor takes no lock, so the store cannot keep it out; it checks instead, right before
and right after it swaps the new file in. The windows are opened deterministically: the
save is made from inside the store's own steps (the ``fsync`` of its temp file; the moment
after its last check before the swap). The save itself is a real write to the real file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    PLAN,
    plan_file,
    root_fixture,
    store_fixture,
)
from werkbaum_core import Conflict, ForbiddenSource, NotFound
from werkbaum_stdio import files
from werkbaum_stdio.files import TEMP_SUFFIX, FileStore

AGENT = PLAN + "  - [ ] #agent: Added by the agent (XS)\n"
SAVED = PLAN.replace("[ ] #b", "[x] #b")  # a status box: the file keeps its length


def in_place_keeping_the_times(path: Path) -> None:
    """A same-size save in place that puts the old times back (``cp -p``, ``rsync -t``,
    ``touch -r``): inode, size and mtime stay as they were."""
    before = path.stat()
    with path.open("r+b") as handle:
        handle.write(SAVED.encode())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def by_rename(path: Path) -> None:
    """An editor's atomic save: a new file renamed over the plan."""
    fresh = path.with_name(".plan.werkbaum.swp")
    fresh.write_text(SAVED, encoding="utf-8")
    os.replace(fresh, path)


def in_place(path: Path) -> None:
    path.write_text(SAVED, encoding="utf-8")


SAVES: dict[str, Callable[[Path], None]] = {
    "in place, times put back": in_place_keeping_the_times,
    "by rename": by_rename,
    "in place": in_place,
}


def saving_once(save: Callable[[], None], step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` that makes the person's save once, right after its first call."""
    done: list[bool] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        result = step(*args, **kwargs)
        if not done:
            done.append(True)
            save()
        return result

    return wrapped


def temp_files(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.name.endswith(TEMP_SUFFIX)]


@pytest.mark.parametrize("how", SAVES)
@pytest.mark.parametrize("window", ["while the new file is written", "after the last check"])
def test_a_save_during_a_write_ends_as_conflict_and_stays(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch, how: str, window: str
) -> None:
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    save = SAVES[how]
    if window == "while the new file is written":  # before the store's last look at the plan
        monkeypatch.setattr(os, "fsync", saving_once(lambda: save(path), os.fsync))
    else:  # between that look and the swap
        monkeypatch.setattr(
            files, "_open_as_read", saving_once(lambda: save(path), files._open_as_read)
        )
    with pytest.raises(Conflict) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert path.read_text(encoding="utf-8") == SAVED  # the person's save, not the agent's
    assert info.value.details["current"]["text"] == SAVED
    assert temp_files(root) == []


def test_without_a_save_the_write_lands_and_leaves_no_temp_file(
    store: FileStore, root: Path
) -> None:
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    written = store.write("plan.werkbaum", base, [], AGENT)
    assert path.read_text(encoding="utf-8") == AGENT == written.text
    assert temp_files(root) == []


def test_a_directory_made_read_only_is_not_written_into_even_by_root(
    store: FileStore, root: Path
) -> None:
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    root.chmod(0o555)
    try:
        for attempt in (
            lambda: store.write("plan.werkbaum", base, [], AGENT),
            lambda: store.create("new.werkbaum", PLAN),
            lambda: store.check_new("new.werkbaum"),
        ):
            with pytest.raises(ForbiddenSource) as info:
                attempt()
            assert info.value.details["reason"] == "read_only"
            assert f"its directory {root} is read-only (mode 0555)" in info.value.message
    finally:
        root.chmod(0o755)
    assert path.read_text(encoding="utf-8") == PLAN
    assert not (root / "new.werkbaum").exists()
    store.write("plan.werkbaum", base, [], AGENT)  # the person allowed it again


def git_checkout_around_the_swap(
    path: Path, monkeypatch: pytest.MonkeyPatch, recreate: bool
) -> None:
    """A save that removes the plan first and creates it again (``git checkout``, vim
    without a backup copy): its unlink lands right before the store's swap, its create
    (with ``recreate``) right after it."""
    real = files._renameat2_flags
    done: list[bool] = []

    def exchanging(dir_fd: int, old: str, new: str, flags: int) -> bool:
        if done or flags != files.RENAME_EXCHANGE:
            return real(dir_fd, old, new, flags)
        done.append(True)
        path.unlink()
        try:
            return real(dir_fd, old, new, flags)
        finally:
            if recreate:
                path.write_text(SAVED, encoding="utf-8")

    monkeypatch.setattr(files, "_renameat2_flags", exchanging)


def test_a_save_that_removes_the_plan_first_ends_as_conflict(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 26 attack-files F3: the swap found the name gone and the agent got
    ``source_unavailable`` "No such file or directory" (2 of 5,300 writes raced by a
    vim-style save), though the plan was there again a moment later."""
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    git_checkout_around_the_swap(path, monkeypatch, recreate=True)
    with pytest.raises(Conflict) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert path.read_text(encoding="utf-8") == SAVED
    assert info.value.details["current"]["text"] == SAVED
    assert temp_files(root) == []


def test_a_plan_deleted_right_before_the_swap_is_not_found_and_stays_deleted(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    git_checkout_around_the_swap(path, monkeypatch, recreate=False)
    with pytest.raises(NotFound):
        store.write("plan.werkbaum", base, [], AGENT)
    assert not path.exists()
    assert temp_files(root) == []


def test_a_plan_made_read_only_right_before_the_swap_is_not_written(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 26 attack-files F11: a chmod a-w between the store's last look and its swap
    was not seen (the check after the swap compares size, mtime and bytes; a chmod
    changes none of them), and the agent's text replaced a plan just made read-only."""
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    monkeypatch.setattr(
        files, "_open_as_read", saving_once(lambda: path.chmod(0o444), files._open_as_read)
    )
    with pytest.raises(ForbiddenSource) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert info.value.details["reason"] == "read_only"
    assert path.read_text(encoding="utf-8") == PLAN
    assert temp_files(root) == []


def test_a_write_that_changes_nothing_leaves_the_file_alone(store: FileStore, root: Path) -> None:
    """Round 26 attack-files F12: a write whose text is the plan's (a status set to what it
    is, a whole text written back) replaced the file with the same bytes — a new inode and
    mtime, so an editor that has the plan open asks to reload it and file watchers fire."""
    path = plan_file(root, PLAN.replace("\n", "\r\n"))
    before = path.stat()
    base = store.read("plan.werkbaum").base
    written = store.write("plan.werkbaum", base, [], PLAN)
    after = path.stat()
    assert written.base == base
    assert (after.st_ino, after.st_mtime_ns, after.st_ctime_ns) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_ctime_ns,
    )
    assert path.read_bytes() == PLAN.replace("\n", "\r\n").encode()


def test_a_save_into_the_old_file_whose_name_is_gone_gets_the_name_back(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 26 attack-files F6: after the swap, the old file (under the temp name) was
    written by a program that had it open, and the plan's name was removed meanwhile. The
    swap back failed (no name to exchange with), the error said the person's text was
    kept under the temp name — and the next write in the folder removed it as an orphan.
    Now it gets the plan's name back and the write is a conflict with that text."""
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    real = files._swapped_out_as_read

    def meanwhile(place: Any, temp: str, held: int, current: Any) -> bool:
        (root / temp).write_text(SAVED, encoding="utf-8")  # the old file, written in place
        path.unlink()  # the agent's new file, removed
        return bool(real(place, temp, held, current))

    monkeypatch.setattr(files, "_swapped_out_as_read", meanwhile)
    with pytest.raises(Conflict) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    monkeypatch.setattr(files, "_swapped_out_as_read", real)
    assert info.value.details["current"]["text"] == SAVED
    assert path.read_text(encoding="utf-8") == SAVED
    assert temp_files(root) == []
    store.write("plan.werkbaum", store.read("plan.werkbaum").base, [], AGENT)  # it goes on
    assert path.read_text(encoding="utf-8") == AGENT


def test_a_rename_save_landing_before_the_swap_back_is_not_removed(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 26 attack-files O2: after the swap, a program that had the old file open wrote
    into it (so the store swaps back), and an editor's rename-save landed on the plan's
    name (replacing the agent's new file). The swap back exchanged with that save, and the
    cleanup removed what came out — the person's latest save. The save keeps the name; the
    old file the program wrote into (which that save superseded) is kept aside, not lost."""
    path = plan_file(root)
    base = store.read("plan.werkbaum").base
    latest = SAVED.replace("[ ] #a", "[x] #a")
    real = files._swapped_out_as_read

    def meanwhile(place: Any, temp: str, held: int, current: Any) -> bool:
        (root / temp).write_text(SAVED, encoding="utf-8")  # the old file, written in place
        fresh = root / ".plan.werkbaum.swp"
        fresh.write_text(latest, encoding="utf-8")
        os.replace(fresh, path)  # the editor's save, over the agent's new file
        return bool(real(place, temp, held, current))

    monkeypatch.setattr(files, "_swapped_out_as_read", meanwhile)
    with pytest.raises(Conflict) as info:
        store.write("plan.werkbaum", base, [], AGENT)
    assert path.read_text(encoding="utf-8") == latest
    assert info.value.details["current"]["text"] == latest
    kept = [p for p in root.iterdir() if p.name.startswith(".werkbaum-kept-")]
    assert [p.read_text(encoding="utf-8") for p in kept] == [SAVED]
    assert temp_files(root) == []
