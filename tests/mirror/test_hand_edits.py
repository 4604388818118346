"""The mirror keeps hand edits (issue 13, item 11): real repositories, real hooks, real git.

The server stays the source — the file gets the server's text — but an
uncommitted hand edit is first stashed where ``git stash list`` shows it, the
write result and the commit say which stash, and a failing commit leaves the
file and the index exactly as they were.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation

from tests.backend import Backend
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, Agent, commits, git, make_repo, message, trailers
from tests.mirror.test_sync import REL, mirror_in, server_bytes
from tests.stdio.conftest import structured
from werkbaum_core import Engine
from werkbaum_core.engine import LazyEngine
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror
from werkbaum_stdio.roots import Roots
from werkbaum_stdio.server import StdioConfig, build_server

HAND = "[ ] #plan: Plan\n  - [ ] #h: written by hand (XS)\n"
STAGED = "[ ] #plan: Plan\n  - [ ] #s: staged by hand (XS)\n"


@pytest.fixture
def setup(repo: Path, human: Human, store: DocumentStore, engine: Engine) -> tuple[str, Agent]:
    doc_id = human.create(PLAN)
    agent = Agent(engine, store, mirror_in(repo, store, doc_id))
    agent.write("setStatus", {"id": "a", "status": "x"})  # the file is committed: version 2
    return doc_id, agent


def stashes(repo: Path) -> list[str]:
    return git(repo, "stash", "list", "--format=%H %s").splitlines()


def index_state(repo: Path) -> str:
    return git(repo, "ls-files", "--stage", "--", REL) + git(repo, "diff", "--cached", "--stat")


def failing_hook(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'plan check failed' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)


def test_an_uncommitted_hand_edit_is_stashed_before_the_commit(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    doc_id, agent = setup
    (repo / "other.txt").write_text("staged by someone\n", encoding="utf-8")
    git(repo, "add", "other.txt")
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and "commit" in outcome
    sha = outcome["handEditStash"]
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)  # the server is the source
    [entry] = stashes(repo)
    assert entry.startswith(sha)
    assert f"hand edit of plan.werkbaum, overwritten by {agent.mirror.document} version 3" in entry
    assert git(repo, "show", f"{sha}:{REL}") == HAND  # where a person finds it
    assert f"Werkbaum-Hand-Edit: kept in git stash {sha}" in trailers(repo)
    assert trailers(repo)[-1] == "Werkbaum-Version: 3"
    assert git(repo, "status", "--porcelain") == "A  other.txt\n"  # untouched, still staged
    assert "other.txt" not in git(repo, "show", "--stat", "HEAD")
    assert "+  - [ ] #h: written by hand (XS)" in git(repo, "stash", "show", "-p", sha)


def test_a_staged_hand_edit_keeps_its_staged_text_too(repo: Path, setup: tuple[str, Agent]) -> None:
    _, agent = setup
    (repo / REL).write_text(STAGED, encoding="utf-8")
    git(repo, "add", REL)
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None
    sha = outcome["handEditStash"]
    assert git(repo, "show", f"{sha}:{REL}") == HAND  # the work tree
    assert git(repo, "show", f"{sha}^2:{REL}") == STAGED  # the index
    assert git(repo, "status", "--porcelain") == ""


def test_a_hand_edit_with_nothing_new_from_the_server_is_stashed_too(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    doc_id, agent = setup
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = commits(repo)
    outcome = agent.mirror.sync(None).to_json()
    assert outcome["unchanged"] is True and outcome["version"] == 2
    assert git(repo, "show", f"{outcome['handEditStash']}:{REL}") == HAND
    assert commits(repo) == before
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)


def test_a_file_already_holding_the_server_text_needs_no_stash(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    doc_id, agent = setup
    human.patch(doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [~] #b: B (M)"]}])
    (repo / REL).write_bytes(server_bytes(human, doc_id))  # e.g. pasted from the editor
    outcome = agent.mirror.sync(None).to_json()
    assert "commit" in outcome and "handEditStash" not in outcome
    assert stashes(repo) == []


def test_an_untracked_file_at_the_mirror_path_is_stashed(
    repo: Path, human: Human, store: DocumentStore, engine: Engine
) -> None:
    doc_id = human.create(PLAN)
    mirror = mirror_in(repo, store, doc_id)
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = Agent(engine, store, mirror).write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None and "commit" in outcome
    untracked = f"{outcome['handEditStash']}^3:{REL}"  # a stash keeps untracked files here
    assert git(repo, "show", untracked) == HAND


def test_a_failing_commit_puts_back_the_hand_edit_and_the_index(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    doc_id, agent = setup
    (repo / REL).write_text(STAGED, encoding="utf-8")
    git(repo, "add", REL)
    (repo / REL).write_text(HAND, encoding="utf-8")
    (repo / REL).chmod(0o600)
    index_before, before = index_state(repo), commits(repo)
    failing_hook(repo)
    result, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert result.base.version == 3 == human.get(doc_id)["version"]  # the write stands
    assert outcome is not None
    error = outcome["error"]
    assert "plan check failed" in error and "the file and the index are as they were" in error
    assert (repo / REL).read_text(encoding="utf-8") == HAND
    assert stat.S_IMODE((repo / REL).stat().st_mode) == 0o600
    assert index_state(repo) == index_before
    assert git(repo, "show", f":{REL}") == STAGED
    assert commits(repo) == before and stashes(repo) == []


def test_a_failing_commit_without_a_hand_edit_leaves_the_committed_file(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    _, agent = setup
    committed = (repo / REL).read_bytes()
    failing_hook(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and "plan check failed" in outcome["error"]
    assert (repo / REL).read_bytes() == committed
    assert git(repo, "status", "--porcelain") == ""
    (repo / ".git" / "hooks" / "pre-commit").unlink()
    assert "commit" in agent.mirror.sync(None).to_json()  # the next run catches up


def test_without_a_first_commit_a_hand_edit_stops_the_mirror_untouched(
    tmp_path: Path, human: Human, store: DocumentStore, engine: Engine
) -> None:
    repo = make_repo(tmp_path / "fresh", initial_commit=False)
    mirror = mirror_in(repo, store, human.create(PLAN))
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = Agent(engine, store, mirror).write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None and "no commit yet" in outcome["error"]
    assert (repo / REL).read_text(encoding="utf-8") == HAND


def test_the_cron_command_reports_the_stash(repo: Path, human: Human, store: DocumentStore) -> None:
    doc_id = human.create(PLAN, title="Cron")
    mirror = Mirror.create(doc_id, repo / "cron.werkbaum", store, None)
    assert "commit" in mirror.sync(None).to_json()
    (repo / "cron.werkbaum").write_text(HAND, encoding="utf-8")
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [~] #a: A (S)"]}])
    outcome = mirror.sync(None)
    assert outcome.kept is not None
    stash = outcome.kept[:7]
    assert outcome.describe().endswith(
        f"Hand edit kept: git stash {stash} (git stash show -p {stash})."
    )
    assert message(repo).splitlines()[0].endswith("(Version 2)")


def test_a_run_that_only_puts_the_file_back_says_so(
    repo: Path, human: Human, store: DocumentStore
) -> None:
    """Round 26 newcomer M5: with nothing to commit, a run that replaced a hand edit said
    "Unchanged: … nothing to do. Hand edit kept: …" — the file had changed under the
    person's eyes."""
    doc_id = human.create(PLAN, title="Cron")
    mirror = Mirror.create(doc_id, repo / "cron.werkbaum", store, None)
    assert "commit" in mirror.sync(None).to_json()
    (repo / "cron.werkbaum").write_text(HAND, encoding="utf-8")
    outcome = mirror.sync(None)
    assert outcome.kind == "unchanged" and outcome.kept is not None
    stash = outcome.kept[:7]
    assert outcome.describe() == (
        "Restored: “Cron” (version 1), committed already; the file had a hand edit. "
        f"Hand edit kept: git stash {stash} (git stash show -p {stash})."
    )


@pytest.mark.anyio
async def test_the_write_result_over_mcp_names_the_stash(
    repo: Path, backend: Backend, human: Human, shared_engine: LazyEngine
) -> None:
    doc = human.create(PLAN)
    mirror_file = repo / "plan.werkbaum"
    config = StdioConfig(
        roots=Roots.from_args([str(repo)]),
        servers=(backend.base_url,),
        mirrors=(f"{doc}={mirror_file}",),
    )
    info = Implementation(name="claude-code", version="2")
    async with Client(build_server(config, shared_engine), client_info=info) as client:
        path = str(mirror_file)
        snapshot = structured(await client.call_tool("werkbaum_read", {"source": path}))
        args = {"source": path, "base": snapshot["base"], "id": "a", "status": "~"}
        first = structured(await client.call_tool("werkbaum_set_status", args))
        assert "handEditStash" not in first["mirror"]
        mirror_file.write_text(HAND, encoding="utf-8")
        args = {"source": path, "base": first["base"], "id": "b", "status": "~"}
        result = structured(await client.call_tool("werkbaum_set_status", args))
    sha = result["mirror"]["handEditStash"]
    assert git(repo, "show", f"{sha}:plan.werkbaum") == HAND
    assert result["mirror"]["commit"] == git(repo, "rev-parse", "HEAD").strip()


def test_the_stash_is_what_git_stash_list_and_show_present(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    """Built from objects (git never touches the file), yet laid out as ``git stash push``
    lays it out: the list line, a diff of the mirror file alone (someone's staged file is
    not part of it), HEAD and the index as parents, and ``git stash branch`` gives the
    hand edit back with its staged text."""
    _, agent = setup
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / "other.txt").write_text("staged by someone\n", encoding="utf-8")
    git(repo, "add", "other.txt")
    (repo / REL).write_text(STAGED, encoding="utf-8")
    git(repo, "add", REL)
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and "commit" in outcome
    sha = outcome["handEditStash"]
    document = agent.mirror.document
    assert git(repo, "stash", "list") == (
        f"stash@{{0}}: On main: werkbaum-mcp: hand edit of plan.werkbaum, overwritten by "
        f"{document} version 3\n"
    )
    assert git(repo, "rev-parse", "stash@{0}").strip() == sha
    shown = git(repo, "stash", "show", "-p")
    assert f"diff --git a/{REL} b/{REL}" in shown and "other.txt" not in shown
    assert "+  - [ ] #h: written by hand (XS)" in shown
    assert git(repo, "rev-parse", f"{sha}^1").strip() == head
    assert git(repo, "log", "-1", "--format=%s", f"{sha}^2").startswith("index on main: ")
    assert git(repo, "diff", "--name-only", head, f"{sha}^2").split() == [REL]
    assert git(repo, "rev-parse", "-q", "--verify", f"{sha}^3", check=False) == ""
    git(repo, "reset", "-q", "--hard")
    git(repo, "stash", "branch", "kept")
    assert (repo / REL).read_text(encoding="utf-8") == HAND
    assert git(repo, "show", f":{REL}") == STAGED
    assert stashes(repo) == []


def test_an_untracked_hand_edit_shows_with_git_stash_show_include_untracked(
    repo: Path, human: Human, store: DocumentStore, engine: Engine
) -> None:
    mirror = mirror_in(repo, store, human.create(PLAN))
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = Agent(engine, store, mirror).write("setStatus", {"id": "a", "status": "x"})
    assert outcome is not None
    sha = outcome["handEditStash"]
    assert git(repo, "stash", "show", "-p", sha) == ""  # not in the index, so not in ^2 either
    assert "+  - [ ] #h: written by hand (XS)" in git(
        repo, "stash", "show", "-p", "--include-untracked", sha
    )
    assert git(repo, "ls-tree", "-r", "--name-only", f"{sha}^3").split() == [REL]
    assert git(repo, "log", "-1", "--format=%s", f"{sha}^3").startswith("untracked files on main")


def test_during_a_merge_the_mirror_does_not_commit_and_puts_everything_back(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    """As git refuses ``git commit -- <file>`` then: a commit of the scratch index would be
    a merge commit."""
    _, agent = setup
    head = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".git" / "MERGE_HEAD").write_text(f"{head}\n", encoding="utf-8")
    committed, before = (repo / REL).read_bytes(), commits(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None
    assert "cannot commit plans/plan.werkbaum during a merge" in outcome["error"]
    assert (repo / REL).read_bytes() == committed and commits(repo) == before
    assert git(repo, "status", "--porcelain") == ""
