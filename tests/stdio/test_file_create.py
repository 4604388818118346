"""Creating a plan file (agent economy item 7, store side) and where relative sources
resolve (item 6): exclusive and atomic, only plan names, only in existing directories
under a root, two racing processes → one plan and one ``conflict``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.stdio.file_fixtures import (  # noqa: F401 (the fixtures)
    BOM,
    PLAN,
    outside_fixture,
    plan_file,
    root_fixture,
    store_fixture,
)
from tests.stdio.file_writers import created_text
from werkbaum_core import (
    Conflict,
    ForbiddenSource,
    InvalidArgument,
    NotFound,
    TooLarge,
    checksum,
)
from werkbaum_core.text import MAX_TEXT_CHARS
from werkbaum_stdio import files
from werkbaum_stdio.confined import Place
from werkbaum_stdio.files import TEMP_SUFFIX, FileStore
from werkbaum_stdio.mirror import MirrorFiles
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.sources import LocalSources, file_path, file_uri

HELPER = Path(__file__).with_name("file_writers.py")
ROUNDS = 12


def test_a_created_plan_has_exactly_the_text_and_a_new_files_mode(
    store: FileStore, root: Path
) -> None:
    (root / "plans").mkdir()
    old_umask = os.umask(0o027)
    try:
        snapshot = store.create("plans/new.werkbaum", PLAN.replace("\n", "\r\n"))
    finally:
        os.umask(old_umask)
    path = root / "plans" / "new.werkbaum"
    assert path.read_bytes() == PLAN.replace("\n", "\r\n").encode()
    assert path.stat().st_mode & 0o777 == 0o640
    assert snapshot == store.read("plans/new.werkbaum")
    assert snapshot.base.checksum == checksum(PLAN)
    assert store.create("bom.werkbaum", "\ufeff" + PLAN).text == PLAN
    assert (root / "bom.werkbaum").read_bytes() == BOM + PLAN.encode()
    assert sorted(os.listdir(root)) == ["bom.werkbaum", "plans"], "no temp file is left"


def test_an_existing_name_is_a_conflict_and_stays_as_it_was(
    store: FileStore, root: Path, outside: Path
) -> None:
    path = plan_file(root, PLAN)
    with pytest.raises(Conflict) as info:
        store.create("plan.werkbaum", "[ ] #mine: Mine\n")
    current = {"text": PLAN, "base": {"version": None, "checksum": checksum(PLAN)}}
    assert info.value.to_json()["error"]["current"] == current
    assert path.read_text() == PLAN
    (root / "dir.werkbaum").mkdir()
    (root / "dangling.werkbaum").symlink_to(root / "nowhere.werkbaum")
    (root / "out.werkbaum").symlink_to(outside / "new.werkbaum")
    for name in ("dir.werkbaum", "dangling.werkbaum", "out.werkbaum"):
        with pytest.raises(Conflict) as info:
            store.create(name, PLAN)
        assert "current" not in info.value.to_json()["error"]
    assert not (root / "nowhere.werkbaum").exists(), "a create never follows a link"
    assert sorted(os.listdir(outside)) == ["secret.werkbaum"]


def test_a_create_needs_a_plan_name_an_existing_directory_and_a_bounded_text(
    store: FileStore, root: Path
) -> None:
    with pytest.raises(NotFound, match="directories are not created"):
        store.create("missing/new.werkbaum", PLAN)
    assert os.listdir(root) == []
    for source in ("notes.txt", ".git/new.werkbaum", "../escape.werkbaum"):
        with pytest.raises(ForbiddenSource):
            store.create(source, PLAN)
    with pytest.raises(TooLarge):
        store.create("big.werkbaum", "x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(InvalidArgument, match="UTF-8"):
        store.create("bad.werkbaum", "[ ] #a: \ud800\n")
    assert os.listdir(root) == []


def test_check_new_answers_as_a_create_would_and_writes_nothing(
    store: FileStore, root: Path
) -> None:
    plan_file(root, PLAN)
    with pytest.raises(Conflict) as info:
        store.check_new("plan.werkbaum")
    assert info.value.to_json()["error"]["current"]["base"]["checksum"] == checksum(PLAN)
    with pytest.raises(NotFound, match="directories are not created"):
        store.check_new("missing/new.werkbaum")
    with pytest.raises(ForbiddenSource):
        store.check_new("notes.txt")
    (root / "sub").mkdir()
    store.check_new("sub/new.werkbaum")
    store.check_new("new.werkbaum")
    assert sorted(os.listdir(root)) == ["plan.werkbaum", "sub"] and os.listdir(root / "sub") == []


def test_the_no_replace_rename_and_its_fallback_both_refuse_an_existing_name(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the lock (another program may create the name meanwhile), the kernel decides."""
    for fallback in (False, True):
        if fallback:
            monkeypatch.setattr(files, "_renameat2", lambda: None)  # link + unlink instead
        name = f"raced-{fallback}.werkbaum"
        original = files._lstat

        def raced(place: Place, source: str, name: str = name) -> os.stat_result | None:
            plan_file(root, "[ ] #first: First\n", name)  # the other creator wins the race
            return None

        monkeypatch.setattr(files, "_lstat", raced)
        with pytest.raises(Conflict, match="same moment"):
            store.create(name, PLAN)
        monkeypatch.setattr(files, "_lstat", original)
        assert (root / name).read_text() == "[ ] #first: First\n"
        store.create(f"fresh-{fallback}.werkbaum", PLAN)
        assert (root / f"fresh-{fallback}.werkbaum").read_text() == PLAN
    assert not [name for name in os.listdir(root) if name.endswith(TEMP_SUFFIX)]


def test_two_processes_creating_the_same_plans_get_one_plan_and_one_conflict(
    tmp_path: Path, root: Path
) -> None:
    command = [sys.executable, str(HELPER), "creator", str(root)]
    creators = [
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    texts = {created_text(creator.pid).encode() for creator in creators}
    torn: list[int] = []
    stop = threading.Event()

    def watch() -> None:  # a reader that must never see a half-written plan
        while not stop.is_set():
            for index in range(ROUNDS):
                try:
                    data = (root / f"p{index}.werkbaum").read_bytes()
                except FileNotFoundError:
                    continue
                if data not in texts:
                    torn.append(len(data))

    watcher = threading.Thread(target=watch)
    try:
        for creator in creators:
            assert creator.stdout is not None and creator.stdout.readline().strip() == "ready"
        watcher.start()
        for index in range(ROUNDS):
            go = tmp_path / f"go{index}"
            for creator in creators:
                assert creator.stdin is not None
                creator.stdin.write(f"p{index}.werkbaum {go}\n")
                creator.stdin.flush()
            go.touch()
            outcomes = sorted(creator.stdout.readline().strip() for creator in creators)  # type: ignore[union-attr]
            assert outcomes == ["conflict", "ok"], f"round {index}"
            assert (root / f"p{index}.werkbaum").read_bytes() in texts
    finally:
        stop.set()
        if watcher.is_alive():
            watcher.join()
        for creator in creators:
            creator.kill()
            creator.communicate(timeout=10)
    assert torn == [], "a reader saw a partial plan under its name"
    assert sorted(os.listdir(root)) == sorted(f"p{index}.werkbaum" for index in range(ROUNDS))


# --- where relative sources resolve --------------------------------------------------------


def test_relative_sources_resolve_under_the_roots_whatever_the_working_directory(
    tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan_file(root, PLAN)
    monkeypatch.chdir("/")  # as Claude Desktop starts its servers
    store = FileStore(Roots.from_args([str(root)]))
    assert store.read("plan.werkbaum").text == PLAN
    (root / "sub").mkdir()
    assert store.read("./sub/../plan.werkbaum").text == PLAN
    store.create("second.werkbaum", PLAN)
    assert (root / "second.werkbaum").read_text() == PLAN
    assert not Path("/second.werkbaum").exists()


def test_with_several_roots_the_one_that_has_it_and_ambiguity_is_an_error(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for directory in (one, two, one / "only-one", two / "shared", one / "shared"):
        directory.mkdir()
    plan_file(two, PLAN, "in-two.werkbaum")
    plan_file(one, PLAN, "both.werkbaum")
    plan_file(two, PLAN, "both.werkbaum")
    store = FileStore(Roots.from_args([str(one), str(two)], env={}, cwd="/"))
    assert store.read("in-two.werkbaum").text == PLAN
    with pytest.raises(InvalidArgument) as info:
        store.read("both.werkbaum")
    error = info.value.to_json()["error"]
    assert error["candidates"] == [str(one / "both.werkbaum"), str(two / "both.werkbaum")]
    assert str(one) in error["message"] and "absolute path" in error["message"]
    assert store.read(str(two / "both.werkbaum")).text == PLAN
    with pytest.raises(NotFound, match="under the roots"):
        store.read("nowhere.werkbaum")
    store.create("only-one/new.werkbaum", PLAN)
    assert (one / "only-one" / "new.werkbaum").exists()
    with pytest.raises(InvalidArgument, match="several roots"):
        store.create("shared/new.werkbaum", PLAN)
    with pytest.raises(InvalidArgument, match="several roots"):
        store.create("new.werkbaum", PLAN)  # both roots have the (root) directory
    store.create(str(two / "new.werkbaum"), PLAN)


def test_a_listed_file_uri_is_a_source(store: FileStore, root: Path) -> None:
    (root / "my plans").mkdir()
    plan_file(root / "my plans", PLAN, "a%b.werkbaum")
    [entry] = store.list_plans().plans
    uri = file_uri(entry.source)
    assert uri == "werkbaum://file/my%20plans/a%25b.werkbaum"
    assert file_path(uri) == "my plans/a%b.werkbaum"
    assert file_path("WERKBAUM://file/plan.werkbaum") == "plan.werkbaum"
    sources = LocalSources(store, documents=None)  # type: ignore[arg-type]
    resolved = sources.resolve(uri)
    assert resolved.store is store and resolved.key == "my plans/a%b.werkbaum"
    assert store.read(resolved.key).text == PLAN


def test_a_mirror_file_is_used_as_configured_whatever_its_name(
    store: FileStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = "https://werkbaum.example/api/v1/documents/0b7e3a52-5d0c-4a51-9a37-3f1c2f0e9c11"
    mirror = root / "roadmap.txt"  # not a plan name, and it need not exist yet
    monkeypatch.chdir("/")
    files_of_mirrors = MirrorFiles(base=Path("/"), documents={mirror: document})
    sources = LocalSources(store, documents=None, mirror_files=files_of_mirrors)  # type: ignore[arg-type]
    for spelling in ("roadmap.txt", str(mirror), "werkbaum://file/roadmap.txt"):
        resolved = sources.resolve(spelling)
        assert (resolved.key, resolved.redirected_to) == (document, document), spelling
    with pytest.raises(ForbiddenSource, match="not a plan file"):
        store.read("roadmap.txt")  # as a plain file source it is no plan
