"""The commit message (documents-api §11.3, §11.5): subject, body and trailers, read by git."""

from __future__ import annotations

import subprocess
import tempfile
from datetime import UTC, datetime
from typing import Any

import pytest

from werkbaum_stdio.mirror.message import (
    Fetched,
    body_items,
    changes_since,
    commit_message,
    subject,
    wrap_items,
)

AT = datetime(2026, 8, 27, 6, 8, tzinfo=UTC)


def entry(version: int, name: str | None = None, kind: str = "UPDATED") -> dict[str, Any]:
    out: dict[str, Any] = {"version": version, "changeType": kind, "content": "…", "title": "T"}
    if name is not None:
        out["displayName"] = name
    return out


def parsed(message: str) -> list[str]:
    done = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        cwd=tempfile.gettempdir(),  # no repository needed (nor wanted: this one's config)
        input=message,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout.splitlines()


def fetched(version: int, title: str = "Titel") -> Fetched:
    return Fetched(text="", version=version, title=title, at=AT)


def test_subject_uses_local_time_and_names_the_agent(local_tz: None) -> None:
    assert subject(fetched(8), "Claude Code") == (
        "Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8, via Claude Code)"
    )
    assert subject(fetched(8), None) == "Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8)"
    assert subject(fetched(8, "Zwei\nZeilen"), " ").endswith("— „Zwei Zeilen“ (Version 8)")


def test_message_with_humans_agents_and_unnamed_entries(local_tz: None) -> None:
    history = [
        entry(1, kind="CREATED"),
        entry(5, "Anna"),
        entry(6, kind="RENAMED"),
        entry(7, "Anna"),
        entry(8, "Claude Code"),
        entry(9, "Bert"),  # newer than the fetched version: not part of this commit
    ]
    message = commit_message(fetched(8), "Claude Code", history, bound=4)
    assert message == (
        "Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8, via Claude Code)\n"
        "\n"
        "v5 Anna · v6 (unnamed) · v7 Anna · v8 Claude Code\n"
        "\n"
        "Werkbaum-Changed-By: Anna\n"
        "Werkbaum-Changed-By: Claude Code\n"
        "Werkbaum-Version: 8\n"
    )
    assert parsed(message) == [
        "Werkbaum-Changed-By: Anna",
        "Werkbaum-Changed-By: Claude Code",
        "Werkbaum-Version: 8",
    ]


def test_without_a_lower_bound_every_available_entry_is_listed() -> None:
    history = [entry(1, kind="CREATED"), entry(4, "Anna"), entry(6, "Claude Code")]
    changes = changes_since(history, None, 6)
    assert body_items(changes, None, 6) == [
        "v1 (unnamed)",
        "v2-v3 (not in history)",
        "v4 Anna",
        "v5 (not in history)",
        "v6 Claude Code",
    ]


def test_a_version_missing_at_the_end_is_named_too() -> None:
    """The history was read after a newer write: the fetched version is no longer in it."""
    assert body_items(changes_since([entry(3, "Anna")], 2, 5), 2, 5) == [
        "v3 Anna",
        "v4-v5 (not in history)",
    ]


def test_nothing_new_since_the_last_commit_leaves_only_the_trailer(local_tz: None) -> None:
    message = commit_message(fetched(8), None, [entry(8, "Anna")], bound=8)
    assert (
        message
        == "Werkbaum-Stand vom 2026-08-27 11:53 — „Titel“ (Version 8)\n\nWerkbaum-Version: 8\n"
    )
    assert parsed(message) == ["Werkbaum-Version: 8"]


def test_a_display_name_cannot_forge_a_trailer(local_tz: None) -> None:
    history = [entry(2, "Eve\nWerkbaum-Version: 99"), entry(3, "  \t")]
    message = commit_message(fetched(3), "Agent\n\nX: y", history, bound=1)
    assert parsed(message) == [
        "Werkbaum-Changed-By: Eve Werkbaum-Version: 99",
        "Werkbaum-Changed-By: Agent X: y",
        "Werkbaum-Version: 3",
    ]
    assert "v3 (unnamed)" in message
    assert message.splitlines()[0].endswith("(Version 3, via Agent X: y)")


def test_the_agent_of_the_subject_is_in_the_trailers_when_history_lost_its_version(
    local_tz: None,
) -> None:
    """A wrote v16, B v17 before the mirror fetched; the backend kept only v17 (round 23
    attack-sync F7): the subject's agent must not be missing from the trailers."""
    message = commit_message(fetched(17), "A", [entry(17, "B")], bound=6)
    assert message.splitlines()[0].endswith("(Version 17, via A)")
    assert "v7-v16 (not in history) · v17 B" in message
    assert parsed(message) == [
        "Werkbaum-Changed-By: B",
        "Werkbaum-Changed-By: A",
        "Werkbaum-Version: 17",
    ]
    shown = commit_message(fetched(17), "B", [entry(16, "A"), entry(17, "B")], bound=15)
    assert parsed(shown)[:2] == ["Werkbaum-Changed-By: A", "Werkbaum-Changed-By: B"]


def test_a_commit_without_new_versions_names_no_agent(local_tz: None) -> None:
    message = commit_message(fetched(8), "A", [entry(8, "B")], bound=8)
    assert message.splitlines()[0].endswith("(Version 8)")
    assert parsed(message) == ["Werkbaum-Version: 8"]


@pytest.mark.parametrize("count", [1, 12, 40])
def test_a_long_body_wraps_at_72_columns_and_keeps_the_trailers(local_tz: None, count: int) -> None:
    history = [entry(v, f"Person {v}") for v in range(1, count + 1)]
    message = commit_message(fetched(count), None, history, bound=None)
    body = message.split("\n\n")[1]
    assert all(len(line) <= 72 for line in body.splitlines())
    assert body.replace(" ·\n", " · ") == " · ".join(
        f"v{v} Person {v}" for v in range(1, count + 1)
    )
    assert parsed(message)[-1] == f"Werkbaum-Version: {count}"
    assert len(parsed(message)) == count + 1


def test_wrap_items_breaks_only_between_items() -> None:
    assert wrap_items(["a" * 40, "b" * 30, "c"]) == f"{'a' * 40} ·\n{'b' * 30} · c"
    assert wrap_items([]) == ""
