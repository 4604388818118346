"""The stdio server through the official ``mcp`` client, in-memory, in both protocol eras."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import Implementation

from tests.stdio.conftest import (
    CLIENT_NAME,
    MODES,
    PLAN,
    audit_lines,
    make_server,
    structured,
)
from werkbaum_core import checksum
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.schema_problems import MAX_PROBLEM_CHARS

pytestmark = pytest.mark.anyio

READ_TOOLS = {"werkbaum_read", "werkbaum_inspect", "werkbaum_list"}
WRITE_TOOLS = {
    "werkbaum_set_status",
    "werkbaum_apply_ops",
    "werkbaum_write",
    "werkbaum_add_node",
    "werkbaum_move_node",
    "werkbaum_set_size",
    "werkbaum_remove_node",
}
TOOLS_LIST_TOKEN_BUDGET = 5000
"""tools/list is paid for in every agent's context: under 5,000 tokens (chars / 4, issue 14),
measured on JSON with spaces (the wire form is ~6 % smaller)."""


async def read(client: Client, source: str = "plan.werkbaum") -> dict[str, Any]:
    return structured(await client.call_tool("werkbaum_read", {"source": source}))  # type: ignore[no-any-return]


async def error_of(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert result.is_error, result
    body = structured(result)
    return body["error"]  # type: ignore[no-any-return]


async def test_tools_list_names_schemas_annotations_and_budget(client: Client) -> None:
    tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == READ_TOOLS | WRITE_TOOLS
    for tool in tools:
        assert tool.title and tool.description
        assert tool.input_schema["additionalProperties"] is False
        sourceless = tool.name in ("werkbaum_inspect", "werkbaum_list")
        assert sourceless or tool.input_schema["required"][0] == "source"
        assert tool.output_schema is not None
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (tool.name in READ_TOOLS)
        if tool.name in WRITE_TOOLS:
            assert "base" in tool.input_schema["required"]
            assert tool.annotations.destructive_hint is not None
    remove = next(t for t in tools if t.name == "werkbaum_remove_node")
    assert remove.annotations is not None and remove.annotations.destructive_hint is True
    assert set(remove.input_schema["required"]) == {"source", "base", "id", "discard"}
    wire = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
    assert len(wire) / 4 <= TOOLS_LIST_TOKEN_BUDGET, f"tools/list is ~{len(wire) // 4} tokens"


async def test_read_returns_text_base_and_lines(client: Client) -> None:
    snapshot = await read(client)
    assert snapshot == {
        "text": PLAN,
        "base": {"version": None, "checksum": checksum(PLAN)},
        "lines": PLAN.count("\n") + 1,
    }


async def test_inspect_reference_plan_by_source(client: Client) -> None:
    result = structured(await client.call_tool("werkbaum_inspect", {"source": "werkbaum.werkbaum"}))
    assert result["warnings"] == []
    assert len(result["path"]["needed"]) == 188
    assert len(result["path"]["stations"]) == 30
    assert result["path"]["exact"] is True
    assert result["base"]["checksum"].startswith("sha256:")


async def test_inspect_text_subtree_and_include(client: Client) -> None:
    result = structured(
        await client.call_tool("werkbaum_inspect", {"text": PLAN, "id": "b", "include": ["tree"]})
    )
    assert list(result) == ["tree"]
    assert result["tree"][0]["label"] == "B"
    assert [c["id"] for c in result["tree"][0]["children"]] == ["b1"]


async def test_inspect_needs_exactly_one_of_source_and_text(client: Client) -> None:
    error = await error_of(client, "werkbaum_inspect", {})
    assert error["code"] == "invalid_argument"
    error = await error_of(client, "werkbaum_inspect", {"text": "- A", "source": "plan.werkbaum"})
    assert error["code"] == "invalid_argument"


async def test_unknown_properties_are_rejected(client: Client) -> None:
    error = await error_of(client, "werkbaum_read", {"source": "plan.werkbaum", "force": True})
    assert error["code"] == "invalid_argument"
    assert any("force" in p for p in error["problems"])


async def test_ops_indices_must_be_integers(client: Client) -> None:
    base = (await read(client))["base"]
    ops = [{"op": "delete", "index": "1", "count": 1}]
    error = await error_of(
        client, "werkbaum_apply_ops", {"source": "plan.werkbaum", "base": base, "ops": ops}
    )
    assert error["code"] == "invalid_argument"


WRITES: list[tuple[str, dict[str, Any], str]] = [
    ("werkbaum_set_status", {"id": "a", "status": "in-progress"}, "  - [~] #a: A (S)"),
    (
        "werkbaum_apply_ops",
        {"ops": [{"op": "insert", "index": 5, "lines": ["  - [ ] #d: D (XS)"]}]},
        "  - [ ] #d: D (XS)",
    ),
    ("werkbaum_write", {"text": PLAN.replace("#c: C", "#c: Cee")}, "  - [x] #c: Cee (S)"),
    ("werkbaum_add_node", {"parent": "b", "line": "- [ ] #b2: B2 (XS)"}, "    - [ ] #b2: B2 (XS)"),
    ("werkbaum_move_node", {"id": "b1", "parent": "plan"}, "  - [ ] #b1: B1 (XS)"),
    ("werkbaum_set_size", {"id": "a", "size": "M"}, "  - [ ] #a: A (M)"),
    ("werkbaum_remove_node", {"id": "a", "discard": True}, "  - [-] #a: A (S)"),
]


@pytest.mark.parametrize(("tool", "args", "line"), WRITES, ids=[w[0] for w in WRITES])
async def test_every_write_tool_changes_the_file(
    client: Client, plans: Path, audit_file: Path, tool: str, args: dict[str, Any], line: str
) -> None:
    base = (await read(client))["base"]
    result = structured(
        await client.call_tool(tool, {"source": "plan.werkbaum", "base": base, **args})
    )
    text = (plans / "plan.werkbaum").read_text(encoding="utf-8")
    assert line in text.split("\n")
    assert result["base"] == {"version": None, "checksum": checksum(text)}
    assert result["ops"]
    entry = audit_lines(audit_file)[-1]
    assert entry["tool"] == tool
    assert entry["outcome"] == "ok"
    assert entry["displayName"] == CLIENT_NAME
    assert entry["new"]["checksum"] == result["base"]["checksum"]
    assert "PLAN" not in json.dumps(entry) and "Plan" not in json.dumps(entry), "no plan text"


async def test_remove_node_delete_removes_the_subtree(client: Client, plans: Path) -> None:
    base = (await read(client))["base"]
    args = {"source": "plan.werkbaum", "base": base, "id": "b", "discard": False}
    structured(await client.call_tool("werkbaum_remove_node", args))
    text = (plans / "plan.werkbaum").read_text(encoding="utf-8")
    assert "#b" not in text and "#a: A" in text


async def test_conflict_carries_base_diff_and_short_text_and_writes_nothing(
    client: Client, plans: Path
) -> None:
    base = (await read(client))["base"]
    changed = PLAN.replace("(M)", "(L)")
    (plans / "plan.werkbaum").write_text(changed, encoding="utf-8")
    error = await error_of(
        client,
        "werkbaum_set_status",
        {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x"},
    )
    assert error["code"] == "conflict"
    current = error["current"]
    assert current["base"] == {"version": None, "checksum": checksum(changed)}
    # The server handed out the base text itself, so it can say what changed since.
    changes = [line for line in current["diff"].split("\n")[2:] if line[:1] in "+-"]
    assert changes == ["-  - [ ] #b: B (M)", "+  - [ ] #b: B (L)"]
    assert current["text"] == changed  # a short plan also comes whole
    assert (plans / "plan.werkbaum").read_text(encoding="utf-8") == changed
    assert error["requestId"]


async def test_guard_blocks_prod_and_broken_notation(
    client: Client, plans: Path, audit_file: Path
) -> None:
    base = (await read(client))["base"]
    error = await error_of(
        client,
        "werkbaum_set_status",
        {"source": "plan.werkbaum", "base": base, "id": "a", "status": "prod"},
    )
    assert error["code"] == "blocked" and error["flag"] == "allowProd"
    error = await error_of(
        client,
        "werkbaum_add_node",
        {"source": "plan.werkbaum", "base": base, "parent": "b", "line": "| [ ] #x: X (S)"},
    )
    assert error["code"] == "blocked" and error["flag"] == "allowWarnings"
    assert [w["type"] for w in error["warnings"]] == ["mixedGate"]
    assert (plans / "plan.werkbaum").read_text(encoding="utf-8") == PLAN
    assert [e["outcome"] for e in audit_lines(audit_file)][-2:] == ["blocked", "blocked"]


async def test_content_warning_is_written_and_reported(client: Client) -> None:
    base = (await read(client))["base"]
    args = {"source": "plan.werkbaum", "base": base, "parent": "b", "line": "- [ ] #big: Big (L)"}
    result = structured(await client.call_tool("werkbaum_add_node", args))
    assert [w["type"] for w in result["warnings"]["added"]] == ["sizeConflict"]


async def test_dry_run_writes_nothing(client: Client, plans: Path, audit_file: Path) -> None:
    base = (await read(client))["base"]
    args = {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x", "dryRun": True}
    result = structured(await client.call_tool("werkbaum_set_status", args))
    assert result["dryRun"] is True and "+  - [x] #a: A (S)" in result["diff"]
    assert (plans / "plan.werkbaum").read_text(encoding="utf-8") == PLAN
    assert audit_lines(audit_file)[-1]["outcome"] == "dryRun"


async def test_a_dry_run_hands_back_the_files_base_not_a_forged_version(client: Client) -> None:
    """A file has no version: a dry run with a made-up one answers the file's base
    (``version: null``, as the real write does), not the agent's invention."""
    base = (await read(client))["base"]
    forged = {**base, "version": 3}
    args = {"source": "plan.werkbaum", "id": "a", "status": "x"}
    preview = structured(
        await client.call_tool("werkbaum_set_status", {**args, "base": forged, "dryRun": True})
    )
    written = structured(await client.call_tool("werkbaum_set_status", {**args, "base": forged}))
    assert preview["base"] == base and preview["base"]["version"] is None
    assert written["base"]["version"] is None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"source": "/etc/passwd"}, "forbidden_source"),
        ({"source": "../outside.werkbaum"}, "forbidden_source"),
        ({"source": "missing.werkbaum"}, "not_found"),
        (
            {"source": "http://127.0.0.1:9/api/v1/documents/0b1e0e9e-5b0f-4a53-9a38-2ad0b4d4ef0e"},
            "source_unavailable",
        ),
    ],
)
async def test_source_errors(client: Client, args: dict[str, Any], code: str) -> None:
    assert (await error_of(client, "werkbaum_read", args))["code"] == code


async def test_unknown_node_is_not_found(client: Client) -> None:
    base = (await read(client))["base"]
    error = await error_of(
        client, "werkbaum_move_node", {"source": "plan.werkbaum", "base": base, "id": "zz"}
    )
    assert error["code"] == "not_found" and "zz" in error["message"]


async def test_too_large_text(client: Client) -> None:
    error = await error_of(client, "werkbaum_inspect", {"text": "x" * 2_000_001})
    assert error["code"] in ("too_large", "invalid_argument")


async def test_guide_and_file_resources(client: Client) -> None:
    listed = {str(r.uri) for r in (await client.list_resources()).resources}
    assert "werkbaum://guide" in listed
    assert "werkbaum://file/plan.werkbaum" in listed
    guide = await client.read_resource("werkbaum://guide")
    assert guide.contents[0].mime_type == "text/markdown"
    assert "[^]" in guide.contents[0].text  # type: ignore[union-attr]
    plan = await client.read_resource("werkbaum://file/plan.werkbaum")
    assert plan.contents[0].text == PLAN  # type: ignore[union-attr]
    # the base to write against; a file has no version (null, which the 2026 era omits)
    assert plan.contents[0].meta is not None
    assert plan.contents[0].meta["checksum"] == checksum(PLAN)
    assert plan.contents[0].meta.get("version") is None
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert "werkbaum://file/{+path}" in templates


async def test_file_resource_outside_the_roots_is_refused(client: Client) -> None:
    with pytest.raises(Exception, match=r"forbidden_source|outside"):
        await client.read_resource("werkbaum://file/../../etc/passwd")


async def test_prompts(client: Client) -> None:
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert set(prompts) == {"werkbaum/review", "werkbaum/decompose"}
    review = await client.get_prompt("werkbaum/review", {"source": "plan.werkbaum"})
    assert "werkbaum_inspect" in review.messages[0].content.text  # type: ignore[union-attr]
    decompose = await client.get_prompt(
        "werkbaum/decompose", {"source": "plan.werkbaum", "id": "b"}
    )
    assert "#b" in decompose.messages[0].content.text  # type: ignore[union-attr]


async def test_prompt_errors_are_invalid_params(client: Client) -> None:
    for name, arguments, says in [
        ("werkbaum/nope", {}, "Unknown prompt: werkbaum/nope"),
        ("werkbaum/decompose", {"source": "plan.werkbaum"}, "needs the argument 'id'"),
        ("werkbaum/review", {"source": "plan.werkbaum", "extra": "x"}, "has no argument"),
    ]:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt(name, arguments)
        assert raised.value.error.code == -32602
        assert says in raised.value.error.message


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_hides_write_tools_like_unknown_ones(
    mode: str, plans: Path, shared_engine: LazyEngine, audit_file: Path
) -> None:
    server = make_server(plans, shared_engine, audit_file, read_only=True)
    async with Client(server, mode=mode) as client:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
        base = (await read(client))["base"]
        hidden = await client.call_tool(
            "werkbaum_set_status",
            {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x"},
        )
        unknown = await client.call_tool("werkbaum_frobnicate", {"source": "plan.werkbaum"})
        assert hidden.is_error and unknown.is_error
        hidden_text = hidden.content[0].text.replace("werkbaum_set_status", "NAME")  # type: ignore[union-attr]
        unknown_text = unknown.content[0].text.replace("werkbaum_frobnicate", "NAME")  # type: ignore[union-attr]
        assert hidden_text == unknown_text
    assert (plans / "plan.werkbaum").read_text(encoding="utf-8") == PLAN


@pytest.mark.parametrize("mode", MODES)
async def test_display_name_from_name_flag_wins(
    mode: str, plans: Path, shared_engine: LazyEngine, audit_file: Path
) -> None:
    server = make_server(plans, shared_engine, audit_file, name="Release Bot")
    info = Implementation(name="other-client", version="1")
    async with Client(server, mode=mode, client_info=info) as client:
        base = (await read(client))["base"]
        await client.call_tool(
            "werkbaum_set_status",
            {"source": "plan.werkbaum", "base": base, "id": "a", "status": "x"},
        )
    assert audit_lines(audit_file)[-1]["displayName"] == "Release Bot"


SNAPSHOT = Path(__file__).with_name("tools_list.snapshot.json")


async def test_tools_list_matches_the_snapshot(client: Client) -> None:
    """Any change to names, schemas or annotations is deliberate: refresh the snapshot with
    WERKBAUM_UPDATE_SNAPSHOT=1 and review the diff."""
    tools = (await client.list_tools()).tools
    current = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    if os.environ.get("WERKBAUM_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(
            json.dumps(current, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    assert current == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


async def test_a_file_over_the_text_limit_is_too_large(client: Client, plans: Path) -> None:
    (plans / "huge.werkbaum").write_text("- x\n" * 600_000, encoding="utf-8")
    error = await error_of(client, "werkbaum_read", {"source": "huge.werkbaum"})
    assert error["code"] == "too_large"


async def test_schema_problems_quote_at_most_a_bounded_part_of_the_value(client: Client) -> None:
    # the validator's message quotes the offending value: here a 2 MB list
    error = await error_of(client, "werkbaum_inspect", {"text": ["x" * 1000] * 2000})
    assert error["code"] == "invalid_argument"
    assert [len(p) <= MAX_PROBLEM_CHARS for p in error["problems"]] == [True]
    assert error["problems"][0].startswith("text: [")
    assert error["problems"][0].endswith("… is not of type 'string'")


async def test_a_bound_problem_says_field_size_and_limit_before_any_quotation(
    client: Client,
) -> None:
    base = (await read(client))["base"]
    insert = {"op": "insert", "index": 1, "lines": ["  - [ ] #n: N (S)"]}
    for tool, args, told in [
        (
            "werkbaum_inspect",
            {"source": "plan.werkbaum", "find": "b " * 500_000},
            "find: 1,000,000 characters; the limit is 200 characters (starts 'b b b",
        ),
        (
            "werkbaum_apply_ops",
            {"source": "plan.werkbaum", "base": base, "dryRun": True, "ops": [insert] * 1001},
            "ops: 1,001 items; the limit is 1,000 items",
        ),
        (
            "werkbaum_add_node",
            {"source": "plan.werkbaum", "base": base, "parent": "a", "lines": ["- [ ] y"] * 10**5},
            "lines: 100,000 items; the limit is 1,000 items",
        ),
        (  # objects in a uniqueItems array: jsonschema compares them pair by pair
            "werkbaum_inspect",
            {"source": "plan.werkbaum", "include": [{"a": i} for i in range(20_000)]},
            "include: 20,000 items; the limit is 4 items",
        ),
        ("werkbaum_read", {"source": ""}, "source: 0 characters; the minimum is 1 character"),
        ("werkbaum_inspect", {"source": "plan.werkbaum", "depth": -1}, "depth: -1 is less than"),
    ]:
        error = await error_of(client, tool, args)
        assert error["code"] == "invalid_argument"
        [said] = error["problems"]
        assert said.startswith(told), said
        assert len(said) <= len(told) + 50, said


async def test_a_lone_value_where_a_list_belongs_gets_the_list_it_meant(client: Client) -> None:
    """Round 26 newcomer L10: ``include: "stations"`` read "'stations' is not of type
    'array'"; now the problem shows the list, as JSON (a long value only the reason)."""
    for given, said in [
        ("stations", "include: 'stations' is not a list; pass a list, e.g. [\"stations\"]"),
        ("x" * 100, "include: 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx… is not a list"),
    ]:
        args = {"source": "plan.werkbaum", "include": given}
        error = await error_of(client, "werkbaum_inspect", args)
        assert (error["code"], error["problems"]) == ("invalid_argument", [said])


async def test_an_enum_problem_lists_the_allowed_values_as_json(client: Client) -> None:
    base = (await read(client))["base"]
    args = {"source": "plan.werkbaum", "base": base, "id": "a", "status": "completed"}
    [said] = (await error_of(client, "werkbaum_set_status", args))["problems"]
    assert said.startswith('status: \'completed\' is not one of ["?", " ", '), said
    assert said.endswith(', "discarded", null]'), said


async def test_a_missing_plan_file_names_the_listed_ones_it_may_have_meant(
    client: Client, plans: Path
) -> None:
    (plans / "sub").mkdir()
    (plans / "sub" / "launch.werkbaum").write_text("[ ] Launch\n", encoding="utf-8")
    for source, meant in [
        ("launch.werkbaum", ["sub/launch.werkbaum"]),  # the name alone, in another folder
        ("werkbam.werkbaum", ["werkbaum.werkbaum"]),  # a slip of the pen
        ("nothing-like-it.werkbaum", None),
    ]:
        error = await error_of(client, "werkbaum_read", {"source": source})
        assert error["code"] == "not_found"
        assert error["message"].endswith("; werkbaum_list lists the plan files")
        assert error.get("didYouMean") == meant, source
    base = (await read(client))["base"]
    args = {"source": "plan.werkbaum", "base": base, "id": "nope", "status": "x"}
    node = await error_of(client, "werkbaum_set_status", args)
    assert "werkbaum_list" not in node["message"]  # a node's not_found stays as it was
