"""The mirror while others write too (round 23, attack-sync F1, F3, F7): a person saving the
mirror file mid-run, a second server or the cron job on the same mirror, a symlink.

Real repositories, real hooks and filters, the stand-in backend on a socket holding one
answer (:class:`tests.backend.faults.Held`) to open the window, and the servers and the
cron command as processes of their own where the finding is between processes.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from tests.backend import Backend
from tests.backend.faults import Held
from tests.backend.human import Human
from tests.mirror.conftest import PLAN, Agent, commits, git, trailers
from tests.mirror.test_cli import WERKBAUM
from tests.mirror.test_hand_edits import HAND, failing_hook, stashes
from tests.mirror.test_sync import REL, mirror_in, server_bytes
from tests.stdio.conftest import SERVER, structured
from werkbaum_core import Engine
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.mirror import Mirror, WorkTree
from werkbaum_stdio.mirror.lock import MirrorBusy, lock_file, mirror_lock

LATE = "  - [ ] #late: saved by hand while the mirror ran (S)\n"
WAIT = 30.0
"""Seconds a test waits for a held request to arrive (generous: the machine is shared)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def setup(repo: Path, human: Human, store: DocumentStore, engine: Engine) -> tuple[str, Agent]:
    doc_id = human.create(PLAN)
    agent = Agent(engine, store, mirror_in(repo, store, doc_id))
    agent.write("setStatus", {"id": "a", "status": "x"})  # committed: version 2
    return doc_id, agent


# ------------------------------------------------------------------ F1: a save mid-run


FILTER = """
import sys
from pathlib import Path

saves, plan, once = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "once"
data = sys.stdin.buffer.read()
made = saves.read_text().split() if saves.exists() else []
if b"#h:" in data and not (once and made):
    with saves.open("a") as out:
        out.write(f"{len(made) + 1}\\n")
    with plan.open("a") as out:
        out.write(f"  - [ ] #late{len(made) + 1}: saved by hand while the mirror ran (S)\\n")
sys.stdout.buffer.write(data)
"""


def saving_filter(repo: Path, *, once: bool) -> Path:
    """A clean filter that saves the mirror file (appends a line) whenever git hashes its
    hand-edited text (``once``: the first time only): a person's save while the mirror
    works on what it read. Returns the file that counts the saves."""
    script, saves = repo.parent / "saving_filter.py", repo.parent / "saves"
    script.write_text(FILTER, encoding="utf-8")
    command = [sys.executable, script, saves, repo / REL, "once" if once else "always"]
    git(repo, "config", "filter.saves.clean", " ".join(f"'{part}'" for part in command))
    (repo / ".git" / "info" / "attributes").write_text(f"{REL} filter=saves\n", encoding="utf-8")
    return saves


def test_a_save_while_the_mirror_works_on_what_it_read_is_stashed_not_lost(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    doc_id, agent = setup
    saves = saving_filter(repo, once=True)
    (repo / REL).write_text(HAND, encoding="utf-8")
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert saves.read_text(encoding="utf-8") == "1\n", "the filter never saved"
    assert outcome is not None and "commit" in outcome, outcome
    late = "  - [ ] #late1: saved by hand while the mirror ran (S)\n"
    assert git(repo, "show", f"{outcome['handEditStash']}:{REL}") == HAND + late
    assert len(stashes(repo)) == 1
    assert (repo / REL).read_bytes() == server_bytes(human, doc_id)


def test_a_file_saved_again_at_every_look_is_left_alone_after_three_tries(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    """A save follows every read before the mirror could replace the file: its compare
    right before the rename sees each one, and it gives up, writing and keeping nothing,
    with every save in the file."""
    _, agent = setup
    saves = saving_filter(repo, once=False)
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = commits(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    made = saves.read_text(encoding="utf-8").split()
    assert len(made) >= 3
    assert outcome == {
        "error": f"{repo / REL} changed 3 times while the mirror was writing it (saved by hand?), "
        "so the mirror left it as it is and committed nothing; the next write or run catches up"
    }
    lines = "".join(f"  - [ ] #late{n}: saved by hand while the mirror ran (S)\n" for n in made)
    assert (repo / REL).read_text(encoding="utf-8") == HAND + lines
    assert stashes(repo) == [] and commits(repo) == before


def test_a_failed_commit_leaves_a_save_made_after_the_mirror_wrote(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    """The person saves on top of the server text while the commit runs (its hook does, then
    fails): the put-back leaves that save, the overwritten hand edit stays in its stash, and
    the error says exactly that."""
    _, agent = setup
    (repo / REL).write_text(HAND, encoding="utf-8")
    before = commits(repo)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nprintf '%s' '{LATE}' >> '{repo / REL}'\nexit 1\n", "utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None
    error = outcome["error"]
    text = (repo / REL).read_text(encoding="utf-8")
    assert text.endswith(LATE) and "  - [~] #b: B (M)" in text  # server text + the save
    [entry] = stashes(repo)
    sha = entry.split()[0]
    assert git(repo, "show", f"{sha}:{REL}") == HAND
    assert "; the file was changed again after the mirror wrote it (by a save, or by a" in error
    assert f"the hand edit the mirror overwrote is in git stash {sha}" in error
    assert "as they were" not in error
    assert commits(repo) == before
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the index is as it was


def test_a_failed_commit_without_a_hand_edit_leaves_a_later_save_too(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    _, agent = setup
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nprintf '%s' '{LATE}' >> '{repo / REL}'\nexit 1\n", "utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None
    assert (repo / REL).read_text(encoding="utf-8").endswith(LATE)
    # The hook that rewrites files (and fails) is named, with what to do about it.
    assert outcome["error"].endswith(
        "by a commit hook that rewrites files, such as end-of-file-fixer: it fails every "
        "mirror commit of this text, so exclude the plan from it), so it was left as it is; "
        "the index is as it was"
    )
    assert stashes(repo) == []


def test_a_failed_commit_still_puts_back_a_file_nobody_touched(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    _, agent = setup
    (repo / REL).write_text(HAND, encoding="utf-8")
    failing_hook(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and outcome["error"].endswith(
        "the file and the index are as they were"
    )
    assert (repo / REL).read_text(encoding="utf-8") == HAND and stashes(repo) == []


@pytest.mark.parametrize("replaced", [False, True], ids=["emptied", "replaced"])
def test_a_hook_meddling_with_the_index_lock_leaves_the_index_and_no_lock_of_the_mirrors(
    repo: Path, setup: tuple[str, Agent], replaced: bool
) -> None:
    """attack-sync F7 was a put-back whose index step failed (a hook left an
    ``index.lock``). Now the mirror holds that lock itself and writes the index only after
    its commit, so a failed commit leaves the index as it was, whatever a hook does to the
    lock file: it is removed if it is still the mirror's, and a lock file someone else
    put in its place is left to them."""
    _, agent = setup
    (repo / REL).write_text(HAND, encoding="utf-8")
    git(repo, "add", REL)
    staged = git(repo, "ls-files", "--stage")
    lock = repo / ".git" / "index.lock"
    meddle = f"rm '{lock}'; echo theirs > '{lock}'" if replaced else f": > '{lock}'"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n{meddle}\nexit 1\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    before = commits(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None
    assert outcome["error"].endswith("; the file and the index are as they were"), outcome
    assert (repo / REL).read_text(encoding="utf-8") == HAND
    assert stashes(repo) == [] and commits(repo) == before
    assert git(repo, "ls-files", "--stage") == staged
    if replaced:
        assert lock.read_text(encoding="utf-8") == "theirs\n"
    else:
        assert not lock.exists()


def test_a_commit_whose_hook_took_the_index_lock_says_the_index_was_not_updated(
    repo: Path, setup: tuple[str, Agent]
) -> None:
    """The commit stands (its hook passed); the mirror does not write the index through a
    lock file that is not its own any more, and the warning says what that leaves."""
    _, agent = setup
    lock = repo / ".git" / "index.lock"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nrm '{lock}'; echo theirs > '{lock}'\n", encoding="utf-8")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome is not None and set(outcome) == {"commit", "version", "warning"}, outcome
    assert outcome["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert outcome["warning"] == (
        f"committed, but then {lock} was replaced while the mirror held it (by a hook?); the "
        f"index still has the old {REL} (`git status` shows a staged change back to it: "
        f"`git restore --staged {REL}` drops it)"
    )
    assert lock.read_text(encoding="utf-8") == "theirs\n"
    lock.unlink()
    assert git(repo, "status", "--porcelain") == f"MM {REL}\n"


def test_the_cron_command_stashes_a_save_made_while_it_waited_for_the_history(
    repo: Path, backend: Backend, human: Human, store: DocumentStore
) -> None:
    """``werkbaum mirror --git-commit`` as its own process; the backend holds its history
    answer while the person saves (attack-sync r1b: the save was in no stash and not in
    the file)."""
    doc_id = human.create(PLAN, title="Cron")
    plan = repo / "cron.werkbaum"
    assert "commit" in Mirror.create(doc_id, plan, store, None).sync(None).to_json()
    plan.write_text(plan.read_text(encoding="utf-8") + "  - [ ] #early: by hand (S)\n", "utf-8")
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": ["  - [~] #a: A (S)"]}])
    with backend.faults.injected(Held(path="/changes")) as held, cron(doc_id, plan, backend) as job:
        assert held.arrived.wait(WAIT), "the cron command never asked for the changes"
        plan.write_text(plan.read_text(encoding="utf-8") + LATE, encoding="utf-8")
        held.released.set()
        out, err = job.communicate(timeout=120)
    assert job.returncode == 0, err
    assert "Hand edit kept: git stash" in out
    [entry] = git(repo, "stash", "list", "--format=%H").split()
    kept = git(repo, "show", f"{entry}:cron.werkbaum")
    assert kept.endswith("  - [ ] #early: by hand (S)\n" + LATE)
    assert plan.read_bytes() == server_bytes(human, doc_id)


# ------------------------------------------------------------------ F3: two mirror writers


def server_params(repo: Path, backend: Backend, doc_id: str) -> StdioServerParameters:
    mirror = f"{doc_id}={repo / 'plan.werkbaum'}"
    return StdioServerParameters(
        command=str(SERVER),
        args=["--root", str(repo), "--server", backend.base_url, "--mirror", mirror],
        cwd=str(repo),
        env=dict(os.environ),  # the suite's git settings (no global config)
    )


def client(repo: Path, backend: Backend, doc_id: str, name: str) -> Client:
    info = Implementation(name=name, version="1")
    return Client(server_params(repo, backend, doc_id), client_info=info)


async def set_status(session: Client, path: str, node: str, status: str) -> dict[str, Any]:
    snapshot = structured(await session.call_tool("werkbaum_read", {"source": path}))
    args = {"source": path, "base": snapshot["base"], "id": node, "status": status}
    result: dict[str, Any] = structured(await session.call_tool("werkbaum_set_status", args))
    return result


@pytest.mark.anyio
async def test_two_servers_on_one_mirror_never_commit_an_older_version(
    repo: Path, backend: Backend, human: Human
) -> None:
    """attack-sync r2: server A's mirror waits for the history of version 2 while server B
    writes version 3 and commits it; A then must not put version 2 on top (it did, as a
    revert of B's change credited to A)."""
    doc_id = human.create(PLAN, title="Roadmap")
    path = str(repo / "plan.werkbaum")
    async with (
        client(repo, backend, doc_id, "agent-a") as a,
        client(repo, backend, doc_id, "agent-b") as b,
    ):
        with backend.faults.injected(Held(path="/changes")) as held:
            results: dict[str, dict[str, Any]] = {}

            async def write_a() -> None:
                results["a"] = await set_status(a, path, "a", "~")

            async with anyio.create_task_group() as group:
                group.start_soon(write_a)
                assert await anyio.to_thread.run_sync(held.arrived.wait, WAIT)
                results["b"] = await set_status(b, path, "b", "x")
                held.released.set()
    assert results["b"]["mirror"]["version"] == 3 and "commit" in results["b"]["mirror"]
    assert results["a"]["mirror"] == {"skipped": True, "version": 2, "archived": 3}
    document = human.get(doc_id)
    assert document["version"] == 3
    assert (repo / "plan.werkbaum").read_bytes() == str(document["content"]).encode("utf-8")
    assert trailers(repo)[-1] == "Werkbaum-Version: 3"
    assert "via agent-b" in git(repo, "log", "-1", "--format=%s")
    assert git(repo, "status", "--porcelain") == "" and stashes(repo) == []


@pytest.mark.anyio
async def test_the_cron_job_fetched_earlier_skips_what_a_server_committed_later(
    repo: Path, backend: Backend, human: Human
) -> None:
    """attack-sync r2b, the other way round: the cron command (its own process) waits for
    the history of version 3 while a server writes version 4 and commits it."""
    doc_id = human.create(PLAN, title="Roadmap")
    plan = repo / "plan.werkbaum"
    async with client(repo, backend, doc_id, "agent-a") as session:
        await set_status(session, str(plan), "a", "~")  # version 2, committed
        human.patch(
            doc_id, [{"op": "replace", "index": 2, "count": 1, "lines": ["  - [x] #b: B (M)"]}]
        )
        with (
            backend.faults.injected(Held(path="/changes")) as held,
            cron(doc_id, plan, backend) as job,
        ):
            assert await anyio.to_thread.run_sync(held.arrived.wait, WAIT)
            result = await set_status(session, str(plan), "c", " ")  # version 4
            held.released.set()
            out, err = await anyio.to_thread.run_sync(lambda: job.communicate(timeout=120))
    assert "commit" in result["mirror"] and result["mirror"]["version"] == 4
    assert job.returncode == 0, err
    assert out.strip() == (
        "Skipped: “Roadmap” (version 3) — git has version 4 already, nothing to do."
    )
    assert trailers(repo)[-1] == "Werkbaum-Version: 4"
    assert plan.read_bytes() == str(human.get(doc_id)["content"]).encode("utf-8")


def test_the_cron_command_waits_for_the_mirror_lock_another_process_holds(
    repo: Path, backend: Backend, human: Human
) -> None:
    doc_id = human.create(PLAN, title="Cron")
    plan = repo / "cron.werkbaum"
    before = commits(repo)
    with holding_the_lock(repo):
        job = cron(doc_id, plan, backend)
        with pytest.raises(subprocess.TimeoutExpired):
            job.communicate(timeout=8)  # without the lock it committed at once
        assert commits(repo) == before and not plan.exists()
    out, err = job.communicate(timeout=120)
    assert job.returncode == 0, err
    assert out.startswith("Committed ") and len(commits(repo)) == len(before) + 1


def test_a_mirror_lock_held_too_long_is_a_clear_error(repo: Path, store: DocumentStore) -> None:
    mirror = Mirror.create(
        "00000000-0000-4000-8000-000000000000", repo / "plan.werkbaum", store, None
    )
    assert mirror.repo is not None
    with (
        holding_the_lock(repo),
        pytest.raises(MirrorBusy) as caught,
        mirror_lock(mirror.repo, mirror.file, timeout=0.3),
    ):
        pass
    assert str(caught.value) == (
        f"another mirror run (another server, or `werkbaum mirror`) has held the repository "
        f"{repo} for over 0.3 s; this run wrote and committed nothing — the next write or run "
        "catches up"
    )
    assert git(repo, "status", "--porcelain") == ""  # the lock file is not in the work tree


# ------------------------------------------------------------------ F7: a symlink at the path


def test_a_symlink_put_in_place_of_the_mirror_file_is_refused_and_left(
    repo: Path, human: Human, setup: tuple[str, Agent]
) -> None:
    _, agent = setup
    draft = repo / "plans" / "my-draft.werkbaum"
    draft.write_text("my own draft\n", encoding="utf-8")
    (repo / REL).unlink()
    (repo / REL).symlink_to("my-draft.werkbaum")
    before = commits(repo)
    _, outcome = agent.write("setStatus", {"id": "b", "status": "~"})
    assert outcome == {
        "error": f"{repo / REL} is a symbolic link now (to my-draft.werkbaum); the mirror writes "
        "only the regular file it was started with and does not replace a link — remove the "
        "link (or move it away), then write again"
    }
    assert os.readlink(repo / REL) == "my-draft.werkbaum"
    assert draft.read_text(encoding="utf-8") == "my own draft\n"
    assert commits(repo) == before and stashes(repo) == []


# ------------------------------------------------------------------ helpers


def cron(doc_id: str, plan: Path, backend: Backend) -> subprocess.Popen[str]:
    """``werkbaum mirror <doc> <plan> --git-commit`` started as cron starts it."""
    return subprocess.Popen(
        [str(WERKBAUM), "mirror", doc_id, str(plan), "--git-commit", "--server", backend.base_url],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


@contextlib.contextmanager
def holding_the_lock(repo: Path) -> Iterator[None]:
    """Another process holding the repository's mirror lock until the block ends."""
    path = lock_file(WorkTree.containing(repo / "plan.werkbaum"))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""
