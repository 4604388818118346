"""The mirror after agent writes (spec §8): real pipeline, real backend on loopback, real git."""

from __future__ import annotations

import re
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.backend import Backend
from tests.backend.faults import Huge
from tests.backend.human import Human
from tests.mirror.conftest import (
    AGENT,
    OPERATOR,
    PLAN,
    Agent,
    commits,
    git,
    make_repo,
    message,
    pause,
    trailers,
)
from werkbaum_core import Engine
from werkbaum_core.rules.catalogue import CATALOGUE, Caller, Resolved, Services
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror, after_write_hook
from werkbaum_stdio.roots import Roots

REL = "plans/plan.werkbaum"
SUBJECT = re.compile(
    r"^Werkbaum-Stand vom (?P<stamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}) — „(?P<title>[^“]*)“ "
    r"\(Version (?P<version>\d+)(?:, via (?P<via>[^)]+))?\)$"
)


def mirror_in(repo: Path, store: DocumentStore, doc_id: str, rel: str = REL) -> Mirror:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    return Mirror.create(doc_id, repo / rel, store, Roots.from_args([str(repo)]))


@pytest.fixture
def setup(
    repo: Path, human: Human, store: DocumentStore, engine: Engine
) -> tuple[str, Mirror, Agent]:
    doc_id = human.create(PLAN)
    mirror = mirror_in(repo, store, doc_id)
    return doc_id, mirror, Agent(engine, store, mirror)


def server_bytes(human: Human, doc_id: str) -> bytes:
    return str(human.get(doc_id)["content"]).encode("utf-8")


def body(repo: Path, rev: str = "HEAD") -> str:
    """The paragraph between subject and trailers."""
    return message(repo, rev).split("\n\n")[1]


def test_one_agent_write_gives_exactly_one_commit_with_the_server_text(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, _mirror, agent = setup
    before = commits(repo)
    started = datetime.now().replace(second=0, microsecond=0)
    result, outcome = agent.write("setStatus", {"id": "a", "status": "x"})
    finished = datetime.now()
    head = git(repo, "rev-parse", "HEAD").strip()
    assert outcome == {"commit": head, "version": 2}
    assert result.base.version == 2
    assert commits(repo)[1:] == before  # exactly one new commit on top
    expected = server_bytes(human, doc_id)
    assert b"  - [x] #a: A (S)\n" in expected and expected.endswith(b"\n")
    assert (repo / REL).read_bytes() == expected
    assert git(repo, "show", f"HEAD:{REL}").encode("utf-8") == expected
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == [REL]
    assert git(repo, "status", "--porcelain").strip() == ""
    # the subject: local time of the mirror run, title, version and the agent
    match = SUBJECT.match(message(repo).splitlines()[0])
    assert match is not None, message(repo)
    assert (match["title"], match["version"], match["via"]) == ("Plan", "2", AGENT)
    assert started <= datetime.strptime(match["stamp"], "%Y-%m-%d %H:%M") <= finished
    # the body names every version since the start; the trailers the agent and the version
    assert body(repo) == "v1 (unnamed) · v2 Claude Code"
    assert trailers(repo) == ["Werkbaum-Changed-By: Claude Code", "Werkbaum-Version: 2"]
    # the git author stays the operator; the agent is no co-author
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn").strip() == (
        f"{OPERATOR[0]} <{OPERATOR[1]}>|{OPERATOR[0]}"
    )
    assert "co-authored-by" not in message(repo).lower()


def test_a_write_that_changes_nothing_commits_nothing(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, mirror, agent = setup
    agent.write("setStatus", {"id": "a", "status": "x"})
    before = commits(repo)
    result, outcome = agent.write("setStatus", {"id": "a", "status": "x"})
    assert result.ops == ()
    assert outcome == {"unchanged": True, "version": 2}
    assert commits(repo) == before
    assert human.get(doc_id)["version"] == 2
    assert mirror.sync(None).to_json() == {"unchanged": True, "version": 2}


def test_a_human_change_between_agent_writes_is_in_body_and_trailers(
    repo: Path, backend: Backend, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, _mirror, agent = setup
    agent.write("setStatus", {"id": "a", "status": "x"})
    anna = human.patch(
        doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [~] #b: B (M)"]}]
    )
    pause(backend)  # Anna stops typing: her version becomes a milestone and stays in the history
    _, outcome = agent.write("setStatus", {"id": "c", "status": "~"})
    assert outcome is not None and outcome["version"] == anna + 1 == 4
    assert body(repo) == "v3 Anna · v4 Claude Code"
    assert trailers(repo) == [
        "Werkbaum-Changed-By: Anna",
        "Werkbaum-Changed-By: Claude Code",
        "Werkbaum-Version: 4",
    ]
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)
    assert "  - [~] #b: B (M)" in git(repo, "show", f"HEAD:{REL}")


def test_a_sync_version_the_history_does_not_show_is_named_from_the_change_feed(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    """Without a pause Anna's sync version is neither a milestone nor the latest, so the
    history lacks it (§5.4); the change feed, which the mirror reads instead (round 25
    soak F2: the history's texts made every mirrored write slower as a document aged),
    names every version not yet compacted."""
    doc_id, _mirror, agent = setup
    agent.write("setStatus", {"id": "a", "status": "x"})
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [~] #b: B (M)"]}])
    agent.write("setStatus", {"id": "c", "status": "~"})
    assert body(repo) == "v3 Anna · v4 Claude Code"
    assert trailers(repo) == [
        "Werkbaum-Changed-By: Anna",
        "Werkbaum-Changed-By: Claude Code",
        "Werkbaum-Version: 4",
    ]


def test_a_mirrored_write_does_not_read_the_documents_history(
    repo: Path, backend: Backend, setup: tuple[str, Mirror, Agent]
) -> None:
    """The history holds every milestone's whole text: read after every write, it made a
    mirrored write slower as the document aged, until its 30 s deadline failed every run
    (round 25 soak F2). A history of 300 MB here: the mirror neither waits for it nor fails."""
    _doc_id, _mirror, agent = setup
    with backend.faults.injected(Huge(path="/history")):
        _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and "commit" in outcome, outcome
    assert trailers(repo)[-1] == "Werkbaum-Version: 2"


def test_other_staged_files_stay_staged_and_uncommitted(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    _doc_id, _mirror, agent = setup
    (repo / "README.md").write_text("readme, edited\n", encoding="utf-8")
    (repo / "notes.md").write_text("notes\n", encoding="utf-8")
    git(repo, "add", "README.md", "notes.md")
    (repo / "unstaged.txt").write_text("mine\n", encoding="utf-8")
    _, outcome = agent.write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None and "commit" in outcome
    assert git(repo, "show", "--format=", "--name-only", "HEAD").split() == [REL]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["README.md", "notes.md"]
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [
        "?? unstaged.txt",
        "A  notes.md",
        "M  README.md",
    ]
    assert git(repo, "show", "HEAD:README.md") == "readme\n"


def test_a_committed_hand_edit_is_overwritten_and_the_diff_shows_it(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, _mirror, agent = setup
    agent.write("setStatus", {"id": "a", "status": "x"})
    path = repo / REL
    path.write_text(path.read_text(encoding="utf-8") + "  - [ ] #h: by hand (XS)\n", "utf-8")
    git(repo, "commit", "-q", "-am", "edit the mirror by hand")
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and "commit" in outcome
    assert path.read_bytes() == server_bytes(human, doc_id)
    diff = git(repo, "diff", "HEAD~1", "HEAD", "--", REL)
    assert "\n-  - [ ] #h: by hand (XS)\n" in diff  # the deviation shows, undone
    assert "\n+  - [~] #b: B (M)\n" in diff
    # the hand commit has no trailer: the lower bound comes from the mirror commit before it
    assert body(repo) == "v3 Claude Code"


def test_an_uncommitted_hand_edit_is_overwritten_once_it_is_stashed(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    """The server is the source (spec §8); the hand edit survives in a stash (issue 13)."""
    doc_id, mirror, agent = setup
    agent.write("setStatus", {"id": "a", "status": "x"})
    path = repo / REL
    path.write_text("vandalised\n", encoding="utf-8")
    before = commits(repo)
    # the server did not change: the file is restored, and there is nothing to commit
    outcome = mirror.sync(None).to_json()
    assert outcome == {"unchanged": True, "version": 2, "handEditStash": outcome["handEditStash"]}
    assert commits(repo) == before
    assert path.read_bytes() == server_bytes(human, doc_id)
    assert git(repo, "status", "--porcelain") == ""
    path.write_text("vandalised again\n", encoding="utf-8")
    git(repo, "add", REL)  # staged as well
    _, written = agent.write("setStatus", {"id": "b", "status": "~"})
    assert written is not None and "commit" in written
    assert path.read_bytes() == server_bytes(human, doc_id)
    assert "vandalised" not in git(repo, "log", "-p", "--", REL)  # not in the history ...
    kept = git(repo, "stash", "list", "-p")
    assert "+vandalised\n" in kept and "+vandalised again\n" in kept  # ... but in the stashes


def test_a_file_that_matches_but_is_not_committed_gets_committed(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    """As pull-doc: a file written earlier without a commit does not stay uncommitted."""
    doc_id, mirror, _agent = setup
    (repo / REL).write_bytes(server_bytes(human, doc_id))
    outcome = mirror.sync(None).to_json()
    assert outcome == {"commit": git(repo, "rev-parse", "HEAD").strip(), "version": 1}
    assert message(repo).splitlines()[0].endswith("— „Plan“ (Version 1)")
    assert body(repo) == "v1 (unnamed)"
    assert trailers(repo) == ["Werkbaum-Version: 1"]


def test_an_old_pull_doc_commit_gives_the_lower_bound(
    repo: Path, backend: Backend, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, _mirror, agent = setup
    human.patch(doc_id, [{"op": "insert", "index": 4, "lines": ["  - [ ] #d: D (S)"]}], "Bert")
    pause(backend)
    (repo / REL).write_bytes(server_bytes(human, doc_id))
    git(repo, "add", REL)
    git(repo, "commit", "-q", "-m", "Werkbaum-Stand vom 2026-08-27 11:53 — „Plan“ (Version 2)")
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [~] #a: A (S)"]}])
    pause(backend)
    agent.write("setStatus", {"id": "c", "status": "~"})
    assert body(repo) == "v3 Anna · v4 Claude Code"  # not v1 (unnamed) nor v2 Bert
    assert trailers(repo) == [
        "Werkbaum-Changed-By: Anna",
        "Werkbaum-Changed-By: Claude Code",
        "Werkbaum-Version: 4",
    ]


def test_the_first_commit_of_an_empty_repository(
    tmp_path: Path, human: Human, store: DocumentStore, engine: Engine
) -> None:
    repo = make_repo(tmp_path / "fresh", initial_commit=False)
    mirror = mirror_in(repo, store, human.create(PLAN, title="Neu"))
    _, outcome = Agent(engine, store, mirror).write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None and "commit" in outcome
    assert len(commits(repo)) == 1
    assert "— „Neu“ (Version 2, via Claude Code)" in message(repo)


def test_a_failing_commit_hook_is_reported_and_the_write_stands(
    repo: Path, human: Human, store: DocumentStore, engine: Engine
) -> None:
    """Through the catalogue's own write tool: the result carries ``mirror: {error}``."""
    doc_id = human.create(PLAN)
    mirror = mirror_in(repo, store, doc_id)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nread line\necho 'plan check failed' >&2\nexit 1\n", "utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    before = commits(repo)
    out = _set_status(engine, store, after_write_hook({mirror.document: mirror}), doc_id)
    assert out["base"]["version"] == 2 == human.get(doc_id)["version"]  # the write stands
    error = out["mirror"]["error"]
    assert "git commit failed" in error and "plan check failed" in error
    assert commits(repo) == before
    # the file holds the server text; the next successful run commits it
    hook.unlink()
    assert "commit" in mirror.sync(AGENT).to_json()
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)


class _Documents:
    def __init__(self, store: DocumentStore) -> None:
        self.store = store

    def resolve(self, source: str) -> Resolved:
        return Resolved(store=self.store, key=self.store.parse(source).url)


def _set_status(engine: Engine, store: DocumentStore, hook: Any, doc_id: str) -> dict[str, Any]:
    tool = next(spec for spec in CATALOGUE if spec.name == "werkbaum_set_status")
    services = Services(engine=engine, sources=_Documents(store), after_write=hook)
    args = {"source": doc_id, "base": store.read(doc_id).base.to_json(), "id": "a", "status": "x"}
    return tool.handler(services, args, Caller(display_name=AGENT))


def test_an_unreachable_backend_is_reported_not_raised(repo: Path, unused_port: int) -> None:
    with DocumentStore([f"http://127.0.0.1:{unused_port}"]) as dead:
        mirror = mirror_in(repo, dead, "00000000-0000-4000-8000-000000000000")
        hook = after_write_hook({mirror.document: mirror})
        out = hook(Resolved(store=dead, key=mirror.document), {}, Caller(display_name=AGENT))
    assert out is not None and "cannot be reached" in out["error"]
    assert not (repo / REL).exists()


def test_a_repository_that_went_away_is_reported(
    repo: Path, human: Human, setup: tuple[str, Mirror, Agent]
) -> None:
    doc_id, _mirror, agent = setup
    shutil.rmtree(repo / ".git")
    _, outcome = agent.write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None and set(outcome) == {"error"}
    assert "any more" in outcome["error"]
    assert human.get(doc_id)["version"] == 2


def test_the_hook_ignores_documents_without_a_mirror(
    setup: tuple[str, Mirror, Agent], store: DocumentStore, human: Human
) -> None:
    _doc_id, mirror, _agent = setup
    other = store.parse(human.create(PLAN)).url
    hook = after_write_hook({mirror.document: mirror})
    assert hook(Resolved(store=store, key=other), {}, Caller()) is None
    assert hook(Resolved(store=store, key="plans/x.werkbaum"), {}, Caller()) is None


def test_the_subject_is_in_local_time(
    repo: Path, human: Human, store: DocumentStore, local_tz: None
) -> None:
    """The clock's instant, shown as the local wall time (TZ is +05:45 here)."""
    doc_id = human.create(PLAN)
    (repo / "plans").mkdir()
    mirror = Mirror.create(
        doc_id,
        repo / REL,
        store,
        Roots.from_args([str(repo)]),
        now=lambda: datetime(2026, 8, 27, 6, 8, tzinfo=UTC),
    )
    assert "commit" in mirror.sync(None).to_json()
    assert (
        message(repo).splitlines()[0] == "Werkbaum-Stand vom 2026-08-27 11:53 — „Plan“ (Version 1)"
    )
