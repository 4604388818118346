"""``werkbaum mirror`` for cron, as a user runs it (the installed script, real git, loopback)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.backend import Backend
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, commits, git, message, trailers

WERKBAUM = Path(sys.executable).with_name("werkbaum")


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(WERKBAUM), "mirror", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_twice_without_server_changes_is_one_commit_then_none(
    repo: Path, backend: Backend, human: Human
) -> None:
    doc_id = human.create(PLAN, title="Cron")
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [x] #a: A (S)"]}])
    plan = repo / "cron.werkbaum"
    before = commits(repo)
    first = run(doc_id, plan, "--git-commit", "--server", backend.base_url)
    assert first.returncode == 0, first.stderr
    assert commits(repo)[1:] == before
    subject = message(repo).splitlines()[0]
    assert first.stdout.strip() == f"Committed {commits(repo)[0][:7]}: {subject}"
    assert subject.endswith(" — „Cron“ (Version 2)")  # no agent write: no "via"
    assert trailers(repo) == ["Werkbaum-Changed-By: Anna", "Werkbaum-Version: 2"]
    assert plan.read_bytes() == str(human.get(doc_id)["content"]).encode("utf-8")
    second = run(doc_id, plan, "--git-commit", "--server", backend.base_url)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Unchanged: “Cron” (version 2) — nothing to do."
    assert commits(repo)[1:] == before


def test_a_share_link_works_and_without_git_commit_only_the_file_is_written(
    tmp_path: Path, backend: Backend, human: Human
) -> None:
    doc_id = human.create(PLAN, title="Teilen")
    url = f"{backend.base_url}/api/v1/documents/{doc_id}"
    plan = tmp_path / "no-repo" / "shared.werkbaum"
    plan.parent.mkdir()
    first = run(f"{backend.base_url}/?live={url}", plan)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"Written: {plan} — “Teilen” (version 1)"
    assert plan.read_bytes() == PLAN.encode("utf-8")
    again = run(url, plan)
    assert again.returncode == 0 and again.stdout.startswith("Unchanged: “Teilen” (version 1)")


def test_the_user_committing_a_written_file_later_works(
    repo: Path, backend: Backend, human: Human
) -> None:
    """A file written without --git-commit is committed by the next run with it."""
    url = f"{backend.base_url}/api/v1/documents/{human.create(PLAN)}"
    plan = repo / "later.werkbaum"
    assert run(url, plan).returncode == 0
    assert git(repo, "status", "--porcelain") == "?? later.werkbaum\n"
    assert run(url, plan, "--git-commit").returncode == 0
    assert git(repo, "status", "--porcelain") == ""


def test_an_unknown_document_exits_1(repo: Path, backend: Backend) -> None:
    url = f"{backend.base_url}/api/v1/documents/00000000-0000-4000-8000-000000000000"
    result = run(url, repo / "x.werkbaum", "--git-commit")
    assert result.returncode == 1
    assert result.stderr.startswith("werkbaum: ") and "404" in result.stderr
    assert not (repo / "x.werkbaum").exists()


def test_a_dead_backend_exits_1(repo: Path, unused_port: int) -> None:
    url = f"http://127.0.0.1:{unused_port}/api/v1/documents/00000000-0000-4000-8000-000000000000"
    result = run(url, repo / "x.werkbaum", "--git-commit")
    assert result.returncode == 1
    assert "cannot be reached" in result.stderr


def test_usage_errors_exit_2(tmp_path: Path, backend: Backend) -> None:
    url = f"{backend.base_url}/api/v1/documents/00000000-0000-4000-8000-000000000000"
    plain = tmp_path / "plain"
    plain.mkdir()
    cases: list[tuple[tuple[str | Path, ...], str]] = [
        ((), "Missing argument"),
        ((url,), "Missing argument"),
        ((url, plain / "x", "--commit"), "No such option"),
        (("not-a-document", plain / "x"), "not a"),
        (
            ("00000000-0000-4000-8000-000000000000", plain / "x"),
            "needs a default backend (--server URL); or pass the full document URL",
        ),
        ((url, plain / "x", "--server", "ftp://nope"), "backend URL"),
        ((url, plain), "is a directory"),
        ((url, plain / "missing" / "x"), "does not exist"),
        ((url, plain / "x", "--git-commit"), "not inside a git work tree"),
    ]
    for args, said in cases:
        result = run(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert said in result.stderr, (args, result.stderr)
        assert not (plain / "x").exists()


def test_a_failing_commit_exits_3_and_says_why(repo: Path, backend: Backend, human: Human) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'no commits today' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    url = f"{backend.base_url}/api/v1/documents/{human.create(PLAN)}"
    result = run(url, repo / "hooked.werkbaum", "--git-commit")
    assert result.returncode == 3
    assert "git commit failed" in result.stderr and "no commits today" in result.stderr


def test_a_symlink_in_place_of_the_file_is_refused_and_its_target_left_alone(
    repo: Path, backend: Backend, human: Human
) -> None:
    """The cron command resolves the file anew on every run. A symbolic link put in its place
    (by hand, or checked out from a pulled commit) pointing at another file of the repository
    was followed: that file got the plan's text, its own text went to a "hand edit" stash,
    and the plan was committed under its name (round 26 attack-mirror F6). Now it is a usage
    error, as a link in place of a server's mirror file is refused."""
    doc_id = human.create(PLAN, title="Cron")
    plan = repo / "plan.werkbaum"
    assert run(doc_id, plan, "--git-commit", "--server", backend.base_url).returncode == 0
    (repo / "src.py").write_text("print('mine')\n", encoding="utf-8")
    git(repo, "add", "src.py")
    git(repo, "commit", "-q", "-m", "src")
    plan.unlink()
    plan.symlink_to("src.py")
    before = commits(repo)
    result = run(doc_id, plan, "--git-commit", "--server", backend.base_url)
    assert result.returncode == 2
    assert "is a symbolic link (to src.py)" in result.stderr
    assert (repo / "src.py").read_text(encoding="utf-8") == "print('mine')\n"
    assert commits(repo) == before
    assert git(repo, "stash", "list") == ""
