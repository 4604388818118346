"""Tools-only hosts get everything, and a plan is created in one call (issue 14, items 5
and 7), through the official client in both protocol eras: the guide and resource URIs
through ``werkbaum_read``, ``werkbaum_list``, ``werkbaum_write`` with ``base: null``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.stdio.conftest import PLAN, audit_lines, structured
from werkbaum_core import checksum
from werkbaum_core.guide import bundled_guide
from werkbaum_stdio.sources import file_uri

pytestmark = pytest.mark.anyio

NEW = "[ ] #new: New plan\n  - [ ] #new.a: First (S)\n  - [ ] #new.b: Second (M)\n"


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, args))  # type: ignore[no-any-return]


async def error(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, result
    return structured(result)["error"]  # type: ignore[no-any-return]


# ------------------------------------------------------------------ the guide and URIs


async def test_the_guide_through_a_tool_equals_the_resource(client: Client) -> None:
    read = await call(client, "werkbaum_read", source="werkbaum://guide")
    resource = (await client.read_resource("werkbaum://guide")).contents[0]
    assert read == {"text": resource.text, "lines": bundled_guide().count("\n") + 1}  # type: ignore[union-attr]
    assert "base" not in read


async def test_the_instructions_point_tools_only_hosts_to_werkbaum_read(client: Client) -> None:
    instructions = client.instructions or ""
    assert "werkbaum://guide" in instructions and "werkbaum_read it" in instructions


async def test_the_guide_is_no_plan_to_inspect_or_write(client: Client) -> None:
    assert (await error(client, "werkbaum_inspect", source="werkbaum://guide"))["code"] == (
        "invalid_argument"
    )
    failed = await error(client, "werkbaum_write", source="werkbaum://guide", base=None, text="x")
    assert failed["code"] == "invalid_argument"


async def test_every_listed_resource_uri_is_a_source(client: Client) -> None:
    listed = (await client.list_resources()).resources
    files = [str(r.uri) for r in listed if str(r.uri).startswith("werkbaum://file/")]
    assert files, listed
    for uri in files:
        read = await call(client, "werkbaum_read", source=uri)
        resource = (await client.read_resource(uri)).contents[0]
        assert read["text"] == resource.text  # type: ignore[union-attr]
        assert resource.meta is not None and read["base"]["checksum"] == resource.meta["checksum"]


async def test_a_document_uri_that_names_a_file_is_refused(client: Client) -> None:
    failed = await error(client, "werkbaum_read", source="werkbaum://doc/plan.werkbaum")
    assert failed["code"] == "invalid_argument"


# ------------------------------------------------------------------ werkbaum_list


async def test_the_listing_gives_sources_and_line_counts(client: Client, plans: Path) -> None:
    (plans / "sub").mkdir()
    (plans / "sub" / "deep.werkbaum").write_text("- [ ] One\n- [ ] Two\n", encoding="utf-8")
    (plans / "notes.txt").write_text("not a plan", encoding="utf-8")
    listed = await call(client, "werkbaum_list")
    assert listed == {
        "plans": [
            {"source": "plan.werkbaum", "lines": PLAN.count("\n") + 1},
            {"source": "werkbaum.werkbaum", "lines": listed["plans"][1]["lines"]},
            {"source": "sub/deep.werkbaum", "lines": 3},
        ]
    }
    for entry in listed["plans"]:
        read = await call(client, "werkbaum_read", source=entry["source"])
        assert read["lines"] == entry["lines"]


async def test_the_listing_pages_with_cursors(client: Client, plans: Path) -> None:
    for i in range(150):
        (plans / f"p{i:03}.werkbaum").write_text(f"- [ ] Task {i}\n", encoding="utf-8")
    first = await call(client, "werkbaum_list")
    assert len(first["plans"]) == 100 and "nextCursor" in first
    second = await call(client, "werkbaum_list", cursor=first["nextCursor"])
    assert "nextCursor" not in second
    sources = [p["source"] for p in first["plans"] + second["plans"]]
    assert len(sources) == len(set(sources)) == 152
    assert file_uri(sources[0]).startswith("werkbaum://file/")
    assert (await error(client, "werkbaum_list", cursor="forged"))["code"] == "invalid_argument"


# ------------------------------------------------------------------ creating a plan


async def test_a_plan_is_created_in_one_call(client: Client, plans: Path, audit_file: Path) -> None:
    (plans / "new").mkdir()
    out = await call(client, "werkbaum_write", source="new/roadmap.werkbaum", base=None, text=NEW)
    assert (plans / "new" / "roadmap.werkbaum").read_text(encoding="utf-8") == NEW
    assert out["base"] == {"version": None, "checksum": checksum(NEW)}
    assert out["warnings"] == {"added": [], "removed": [], "remaining": 0}
    line = audit_lines(audit_file)[-1]
    assert line["outcome"] == "ok" and line["create"] is True and "old" not in line
    assert line["new"] == out["base"]
    # the new base is good for the next write at once
    done = await call(
        client,
        "werkbaum_set_status",
        source="new/roadmap.werkbaum",
        base=out["base"],
        id="new.a",
        status="done",
    )
    assert done["base"]["checksum"] != out["base"]["checksum"]
    listed = [p["source"] for p in (await call(client, "werkbaum_list"))["plans"]]
    assert "new/roadmap.werkbaum" in listed


async def test_a_dry_run_creates_nothing(client: Client, plans: Path, audit_file: Path) -> None:
    out = await call(
        client, "werkbaum_write", source="draft.werkbaum", base=None, text=NEW, dryRun=True
    )
    assert out["dryRun"] is True and "base" not in out and out["lines"] == 4
    assert not (plans / "draft.werkbaum").exists()
    assert audit_lines(audit_file)[-1]["outcome"] == "dryRun"


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("plan.werkbaum", "conflict"),
        ("missing/new.werkbaum", "not_found"),
        ("notes.txt", "forbidden_source"),
        ("/etc/new.werkbaum", "forbidden_source"),
        (
            "https://plans.example/api/v1/documents/0f8fad5b-d9cb-469f-a165-70867728950e",
            "invalid_argument",
        ),
    ],
)
async def test_a_create_needs_a_free_plan_name_in_an_existing_directory(
    client: Client, plans: Path, source: str, code: str
) -> None:
    for dry_run in (True, False):
        failed = await error(
            client, "werkbaum_write", source=source, base=None, text=NEW, dryRun=dry_run
        )
        assert failed["code"] == code, failed
    assert (plans / "plan.werkbaum").read_text(encoding="utf-8") == PLAN
    assert not (plans / "missing").exists() and not (plans / "notes.txt").exists()


async def test_an_existing_plan_answers_its_base(client: Client, plans: Path) -> None:
    failed = await error(client, "werkbaum_write", source="plan.werkbaum", base=None, text=NEW)
    assert failed["current"] == {
        "base": {"version": None, "checksum": checksum(PLAN)},
        "text": PLAN,
    }
    assert "read it and write against its base" in failed["message"]


async def test_the_guard_rails_apply_to_a_new_plan(client: Client, plans: Path) -> None:
    mixed = "[ ] #p: P\n  - [ ] A\n  | [ ] B\n"
    blocked = await error(client, "werkbaum_write", source="mixed.werkbaum", base=None, text=mixed)
    assert blocked["code"] == "blocked" and blocked["flag"] == "allowWarnings"
    prod = await error(client, "werkbaum_write", source="live.werkbaum", base=None, text="[^] L\n")
    assert prod["code"] == "blocked" and prod["flag"] == "allowProd"
    assert not (plans / "mixed.werkbaum").exists() and not (plans / "live.werkbaum").exists()
    allowed = await call(
        client,
        "werkbaum_write",
        source="mixed.werkbaum",
        base=None,
        text=mixed,
        allowWarnings=True,
    )
    assert [w["type"] for w in allowed["warnings"]["added"]] == ["mixedGate"]


async def test_of_two_racing_creators_one_creates_and_one_gets_a_conflict(
    client: Client, plans: Path
) -> None:
    texts = [f"[ ] #r: Racer {i}\n" for i in range(2)]
    results: list[Any] = [None, None]

    async def create(i: int) -> None:
        results[i] = await client.call_tool(
            "werkbaum_write", {"source": "race.werkbaum", "base": None, "text": texts[i]}
        )

    async with anyio.create_task_group() as group:
        for i in range(2):
            group.start_soon(create, i)
    outcomes = sorted(structured(r)["error"]["code"] if r.is_error else "ok" for r in results)
    assert outcomes == ["conflict", "ok"]
    winner = next(i for i, r in enumerate(results) if not r.is_error)
    assert (plans / "race.werkbaum").read_text(encoding="utf-8") == texts[winner]


async def test_base_null_is_for_werkbaum_write_only(client: Client) -> None:
    result = await client.call_tool(
        "werkbaum_set_size", {"source": "new.werkbaum", "base": None, "id": "a", "size": "S"}
    )
    assert result.is_error and structured(result)["error"]["code"] == "invalid_argument"
