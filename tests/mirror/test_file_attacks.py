"""The mirror file under attack: a local process swapping its directory for a symlink out of
the roots while the mirror writes, and names as long as the file system allows.

The attacker is the file store's (``tests/stdio/swapper.py``, a separate process
exchanging the directory with a symlink in a tight loop), so the mirror is held to the
store's guarantee: whatever the timing, nothing outside the roots is written, created or
replaced, and every refusal is a clear report, never a raw ``[Errno …]``.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.backend.human import Human
from tests.mirror.conftest import AGENT, PLAN, git, make_repo
from tests.stdio.test_file_attacks import state_of, swapping
from werkbaum_core.stores.documents import DocumentStore
from werkbaum_stdio.files import TEMP_SUFFIX
from werkbaum_stdio.mirror import Mirror
from werkbaum_stdio.roots import Roots

RACE_SECONDS = 4.0
"""How long the mirror writes against the swapper (the old by-name code let a file out
within 8-77 writes, about one second)."""
LINES = ["  - [ ] #a: A (S)", "  - [x] #a: A (S)"]
DECOY = "[ ] #decoy: a file outside the roots\n"


def toggle(human: Human, doc_id: str, index: int) -> None:
    """A change on the server, so that every sync has a new text to write."""
    human.patch(doc_id, [{"op": "replace", "index": 1, "count": 1, "lines": [LINES[index % 2]]}])


@pytest.mark.parametrize("git_commit", [True, False], ids=["git", "no-git"])
def test_a_directory_swapped_for_a_symlink_never_lets_the_mirror_write_outside(
    tmp_path: Path, human: Human, store: DocumentStore, git_commit: bool
) -> None:
    """With git (``--mirror``, confined to the roots) and without (``werkbaum mirror``,
    confined to the file's directory): the mirror's directory is exchanged with a link to
    a directory outside, which holds a decoy of the same name, as fast as a process can."""
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plan.werkbaum").write_text(DECOY, encoding="utf-8")
    (repo / "plans").mkdir()
    doc_id = human.create(PLAN)
    roots = Roots.from_args([str(repo)]) if git_commit else None
    mirror = Mirror.create(doc_id, repo / "plans/plan.werkbaum", store, roots, git=git_commit)
    before = state_of(outside)
    outcomes: Counter[str] = Counter()
    with swapping(tmp_path / "stop", repo / "plans", str(outside)) as swaps:
        deadline = time.monotonic() + RACE_SECONDS
        index = 0
        while time.monotonic() < deadline:
            toggle(human, doc_id, index)
            outcome = mirror.sync(AGENT)
            if outcome.ok:
                outcomes[outcome.kind] += 1
            else:
                assert outcome.error is not None and "Errno" not in outcome.error, outcome
                outcomes[f"{outcome.stage}"] += 1
            assert state_of(outside) == before, f"write {index} reached outside ({outcomes})"
            index += 1
    assert state_of(outside) == before
    assert swaps[0] > 0 and outcomes["file"] > 0, f"the race was not met: {outcomes}"
    assert not [name for name in os.listdir(repo / "plans") if name.endswith(TEMP_SUFFIX)]
    # The attack over, the mirror catches up with the document.
    toggle(human, doc_id, index)
    final = mirror.sync(AGENT)
    assert final.ok, final
    assert (repo / "plans/plan.werkbaum").read_text(encoding="utf-8") == human.get(doc_id)[
        "content"
    ]
    if git_commit:
        assert git(repo, "status", "--porcelain", "--", "plans") == ""


def test_a_symlink_inside_the_roots_in_place_of_the_directory_is_refused_too(
    tmp_path: Path, human: Human, store: DocumentStore
) -> None:
    """git commits the file by the name it was started with, so a link to another
    directory under the same root is no way to the mirror file either."""
    repo = make_repo(tmp_path / "repo")
    (repo / "plans").mkdir()
    (repo / "elsewhere").mkdir()
    doc_id = human.create(PLAN)
    mirror = Mirror.create(
        doc_id, repo / "plans/plan.werkbaum", store, Roots.from_args([str(repo)])
    )
    (repo / "plans").rmdir()
    (repo / "plans").symlink_to("elsewhere", target_is_directory=True)
    outcome = mirror.sync(AGENT)
    assert outcome.stage == "file" and outcome.error is not None
    assert "reached through a symlink now" in outcome.error, outcome.error
    assert os.listdir(repo / "elsewhere") == []


def test_a_fifo_in_place_of_the_mirror_file_is_reported_and_does_not_block(
    tmp_path: Path, human: Human, store: DocumentStore
) -> None:
    repo = make_repo(tmp_path / "repo")
    doc_id = human.create(PLAN)
    mirror = Mirror.create(doc_id, repo / "plan.werkbaum", store, Roots.from_args([str(repo)]))
    os.mkfifo(repo / "plan.werkbaum")
    outcome = mirror.sync(AGENT)
    assert outcome.stage == "file" and "is not a regular file" in (outcome.error or ""), outcome


def test_a_mirror_file_with_the_longest_legal_name_is_written(
    tmp_path: Path, human: Human, store: DocumentStore
) -> None:
    name = "ä" * 123 + ".werkbaum"
    assert len(os.fsencode(name)) == 255
    doc_id = human.create(PLAN)
    mirror = Mirror.create(doc_id, tmp_path / name, store, None, git=False)
    outcome = mirror.sync(None)
    assert outcome.kind == "written", outcome
    assert (tmp_path / name).read_text(encoding="utf-8") == PLAN
    assert os.listdir(tmp_path) == [name]
