"""Start-up validation of mirrors (spec §8, §3), ``--mirror`` parsing and the file redirect."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.mirror.conftest import git, make_repo
from werkbaum_core.errors import ForbiddenSource, InvalidArgument
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror, MirrorFiles, WorkTree, build_mirrors, parse_mirror_spec
from werkbaum_stdio.mirror.git import Committed
from werkbaum_stdio.roots import Roots

UUID = "0b7e3a52-5d0c-4a51-9a37-3f1c2f0e9c11"
OTHER = "6f1d2c3b-4a59-4e7f-8c6d-5b4a3c2d1e0f"
DOC = f"https://werkbaum.example/api/v1/documents/{UUID}"


@pytest.fixture
def store() -> DocumentStore:
    """No request is made at start-up, so no backend is needed here."""
    return DocumentStore(["https://werkbaum.example"])


def roots_of(*paths: Path) -> Roots:
    return Roots.from_args([str(p) for p in paths])


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (f"{DOC}=plans/a.werkbaum", (DOC, "plans/a.werkbaum")),
        (
            f"https://h.example/?live={DOC}=a.werkbaum",
            (f"https://h.example/?live={DOC}", "a.werkbaum"),
        ),
        (f"{UUID}=/abs/a b.werkbaum", (UUID, "/abs/a b.werkbaum")),
    ],
)
def test_a_mirror_spec_splits_at_the_last_equals_sign(spec: str, expected: tuple[str, str]) -> None:
    assert parse_mirror_spec(spec) == expected


@pytest.mark.parametrize("spec", ["plan.werkbaum", f"={UUID}", f"{UUID}=", "", "="])
def test_a_malformed_mirror_spec_is_an_invalid_argument(spec: str) -> None:
    with pytest.raises(InvalidArgument, match="<document>=<file>"):
        parse_mirror_spec(spec)


def test_a_valid_mirror_resolves_document_and_file(tmp_path: Path, store: DocumentStore) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "plans").mkdir()
    link = tmp_path / "link"
    link.symlink_to(repo)
    mirror = Mirror.create(
        f"https://werkbaum.example/?live={DOC}",
        link / "plans" / "a.werkbaum",
        store,
        roots_of(repo),
    )
    assert mirror.document == DOC
    assert mirror.file == repo.resolve() / "plans" / "a.werkbaum"
    assert mirror.repo is not None and mirror.repo.top == repo.resolve()
    assert not mirror.file.exists()  # nothing is written at start-up


def test_a_file_outside_the_roots_is_refused(tmp_path: Path, store: DocumentStore) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "root").mkdir()
    with pytest.raises(ForbiddenSource, match="outside the allowed roots"):
        Mirror.create(DOC, repo / "a.werkbaum", store, roots_of(tmp_path / "root"))
    sneaky = tmp_path / "root" / "out"
    sneaky.symlink_to(repo)
    with pytest.raises(ForbiddenSource):
        Mirror.create(DOC, sneaky / "a.werkbaum", store, roots_of(tmp_path / "root"))


def test_a_file_outside_a_work_tree_is_refused(tmp_path: Path, store: DocumentStore) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InvalidArgument, match="not inside a git work tree"):
        Mirror.create(DOC, plain / "a.werkbaum", store, roots_of(plain))
    # without git (``werkbaum mirror`` without --git-commit) any directory will do
    assert Mirror.create(DOC, plain / "a.werkbaum", store, None, git=False).repo is None


def test_a_file_inside_the_git_directory_is_refused(tmp_path: Path, store: DocumentStore) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(InvalidArgument, match="not inside a git work tree"):
        Mirror.create(DOC, repo / ".git" / "a.werkbaum", store, roots_of(repo))


def test_an_ignored_file_is_refused(tmp_path: Path, store: DocumentStore) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("*.werkbaum\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="ignored by git"):
        Mirror.create(DOC, repo / "a.werkbaum", store, roots_of(repo))


@pytest.mark.parametrize(
    ("document", "file", "match"),
    [
        ("not a document", "a.werkbaum", "not a"),
        ("https://werkbaum.example/other/path", "a.werkbaum", "not a Werkbaum document"),
        (DOC, ".", "is a directory"),
        (DOC, "missing/a.werkbaum", "does not exist"),
    ],
)
def test_bad_documents_and_files_are_refused(
    tmp_path: Path, store: DocumentStore, document: str, file: str, match: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    with pytest.raises(InvalidArgument, match=match):
        Mirror.create(document, repo / file, store, roots_of(repo))


def test_build_mirrors_refuses_doubles(tmp_path: Path, store: DocumentStore) -> None:
    repo = make_repo(tmp_path / "repo")
    roots = roots_of(repo)
    a, b = repo / "a.werkbaum", repo / "b.werkbaum"
    mirrors = build_mirrors([f"{DOC}={a}", f"{OTHER}={b}"], store, roots)
    assert set(mirrors) == {DOC, DOC.replace(UUID, OTHER)}
    with pytest.raises(InvalidArgument, match="mirrored twice"):
        build_mirrors([f"{DOC}={a}", f"{UUID}={b}"], store, roots)
    with pytest.raises(InvalidArgument, match="is the mirror of"):
        build_mirrors([f"{DOC}={a}", f"{OTHER}={repo}/./a.werkbaum"], store, roots)


def test_mirror_files_redirect_every_spelling_of_the_file(
    tmp_path: Path, store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "plans").mkdir()
    (repo / "alias").symlink_to(repo / "plans")
    monkeypatch.chdir(repo)
    roots = roots_of(repo)
    mirrors = build_mirrors([f"{DOC}=plans/a.werkbaum"], store, roots)
    files = MirrorFiles.of(mirrors, roots)
    for source in (
        "plans/a.werkbaum",
        "./plans/../plans/a.werkbaum",
        "alias/a.werkbaum",
        str(repo / "plans" / "a.werkbaum"),
    ):
        assert files.redirect(source) == DOC, source
    for source in ("plans/b.werkbaum", "a.werkbaum", DOC, UUID, "", "a\0b", "https://x.example/"):
        assert files.redirect(source) is None, source


def commit_text(repo: WorkTree, name: str, data: bytes) -> str | None:
    """Commit ``data`` as the file ``name`` (git is given the bytes, as the mirror gives them,
    with the index held, as the mirror holds it); the commit's sha."""
    with repo.hold_index() as held:
        made = repo.commit(name, repo.entry_of(name, data, 0o644, None), "message\n", held)
    return made.sha if isinstance(made, Committed) else None


def test_a_glob_like_file_name_is_committed_literally(tmp_path: Path, store: DocumentStore) -> None:
    """Pathspecs are literal: ``*.werkbaum`` is that one file, not every plan."""
    repo = make_repo(tmp_path / "repo")
    mirror = Mirror.create(DOC, repo / "*.werkbaum", store, roots_of(repo))
    assert mirror.repo is not None
    (repo / "other.werkbaum").write_text("staged\n", encoding="utf-8")
    git(repo, "add", "other.werkbaum")
    assert commit_text(mirror.repo, mirror.file.name, b"text\n")
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == ["*.werkbaum"]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["other.werkbaum"]


def test_git_inherits_no_repository_from_the_environment(
    tmp_path: Path, store: DocumentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server started from a git hook has GIT_DIR set; the mirror must not follow it."""
    repo = make_repo(tmp_path / "repo")
    elsewhere = make_repo(tmp_path / "elsewhere")
    monkeypatch.setenv("GIT_DIR", str(elsewhere / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(elsewhere / ".git" / "index"))
    mirror = Mirror.create(DOC, repo / "a.werkbaum", store, roots_of(repo))
    assert mirror.repo is not None and mirror.repo.top == repo.resolve()
    assert commit_text(mirror.repo, mirror.file.name, b"text\n")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert git(elsewhere, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"
    assert os.environ.get("GIT_DIR") is None
