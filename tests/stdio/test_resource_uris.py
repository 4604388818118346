"""Resource URIs through the real stdio server: a listed ``werkbaum://file/`` URI reads back
the very file it lists (its path percent-decoded exactly once, as the tools decode it), and a
read the store refuses is a JSON-RPC error with MCP's code and the tool error's wording."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from mcp import Client, MCPError

from tests.backend import Backend
from tests.backend.human import Human
from tests.stdio.conftest import MODES, claude_code, make_server, structured
from werkbaum_core.engine import LazyEngine
from werkbaum_stdio.registration import RESOURCE_NOT_FOUND_LEGACY

pytestmark = pytest.mark.anyio

NAMES = [
    "%41.werkbaum",  # decoded twice, this was A.werkbaum
    "A.werkbaum",
    "100%25.werkbaum",  # decoded twice, this was "no file 100%.werkbaum"
    "%2e%2e.werkbaum",
    "%2F.werkbaum",
    "a b.werkbaum",
    "c#d.werkbaum",
    "why?.werkbaum",
    "plus+and&amp.werkbaum",
    "Grüße.werkbaum",
    "計画.werkbaum",
    "sub dir/%20 ü #?.werkbaum",
]
"""File names that percent-encoding can get wrong: literal escapes, reserved characters,
spaces, non-ASCII, and a directory with the same in its name."""

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def not_found_code(mode: str) -> int:
    """``-32002`` in the handshake era (2025-11-25), ``-32602`` from 2026-07-28 (SEP-2164)."""
    return RESOURCE_NOT_FOUND_LEGACY if mode == "legacy" else INVALID_PARAMS


def plan_of(name: str) -> str:
    """Each file's own text, so a read of the wrong file shows."""
    return f"[ ] #p: the plan named {name} (S)\n"


@pytest.fixture
def tricky_root(tmp_path: Path) -> Path:
    root = tmp_path / "plans"
    for name in NAMES:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(plan_of(name), encoding="utf-8")
    return root


@pytest.fixture(params=MODES)
async def tricky_client(
    request: pytest.FixtureRequest, tricky_root: Path, shared_engine: LazyEngine, tmp_path: Path
) -> AsyncIterator[Client]:
    server = make_server(tricky_root, shared_engine, tmp_path / "audit.jsonl")
    async with Client(server, mode=request.param) as client:
        yield client


async def file_uris(client: Client) -> list[str]:
    listed = (await client.list_resources()).resources
    return [str(r.uri) for r in listed if str(r.uri).startswith("werkbaum://file/")]


async def assert_each_listed_uri_reads_its_own_file(client: Client) -> None:
    uris = await file_uris(client)
    assert len(uris) == len(NAMES)
    seen = set()
    for uri in uris:
        [contents] = (await client.read_resource(uri)).contents
        name = contents.text.removeprefix("[ ] #p: the plan named ").removesuffix(" (S)\n")  # type: ignore[union-attr]
        assert contents.text == plan_of(name), uri  # type: ignore[union-attr]
        seen.add(name)
        tool = structured(await client.call_tool("werkbaum_read", {"source": uri}))
        assert tool["text"] == contents.text, uri  # type: ignore[union-attr]
        assert contents.meta is not None
        assert tool["base"]["checksum"] == contents.meta["checksum"]
    assert seen == set(NAMES)


async def test_a_listed_uri_reads_back_that_very_file(tricky_client: Client) -> None:
    await assert_each_listed_uri_reads_its_own_file(tricky_client)


@pytest.mark.parametrize("mode", MODES)
async def test_a_listed_uri_reads_back_that_very_file_in_a_real_process(
    mode: str, tricky_root: Path, tmp_path: Path
) -> None:
    async with claude_code(tricky_root, mode, tmp_path / "audit.jsonl") as client:
        await assert_each_listed_uri_reads_its_own_file(client)


async def test_a_doubly_encoded_uri_names_the_once_decoded_file(tricky_client: Client) -> None:
    """``%2541`` is the file named ``%41``; a plain ``%41`` is ``A``: one decoding."""
    for uri, name in [
        ("werkbaum://file/%2541.werkbaum", "%41.werkbaum"),
        ("werkbaum://file/%41.werkbaum", "A.werkbaum"),
        ("werkbaum://file/%252e%252e.werkbaum", "%2e%2e.werkbaum"),
        ("werkbaum://file/%252F.werkbaum", "%2F.werkbaum"),
    ]:
        [contents] = (await tricky_client.read_resource(uri)).contents
        assert contents.text == plan_of(name)  # type: ignore[union-attr]


async def refusal(client: Client, uri: str) -> tuple[int, str, dict[str, Any]]:
    with pytest.raises(MCPError) as raised:
        await client.read_resource(uri)
    error = raised.value.error
    assert isinstance(error.data, dict)
    assert error.data["uri"] == uri
    return error.code, error.message, error.data


async def tool_error(client: Client, source: str) -> dict[str, Any]:
    result = await client.call_tool("werkbaum_read", {"source": source})
    assert result.is_error
    return structured(result)["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", MODES)
async def test_refused_reads_have_mcp_codes_and_the_tools_wording(
    mode: str, tricky_root: Path, shared_engine: LazyEngine, tmp_path: Path
) -> None:
    (tricky_root / "notes.txt").write_text("not a plan\n", encoding="utf-8")
    (tricky_root / "huge.werkbaum").write_text("x" * 2_000_001, encoding="utf-8")
    os.mkfifo(tricky_root / "pipe.werkbaum")
    expected = {
        "werkbaum://file/missing.werkbaum": ("not_found", not_found_code(mode)),
        "werkbaum://file/../../etc/passwd.werkbaum": ("forbidden_source", INVALID_PARAMS),
        "werkbaum://file/notes.txt": ("forbidden_source", INVALID_PARAMS),
        "werkbaum://file/%00.werkbaum": ("invalid_argument", INVALID_PARAMS),
        "werkbaum://file/huge.werkbaum": ("too_large", INVALID_PARAMS),
        "werkbaum://file/pipe.werkbaum": ("source_unavailable", INTERNAL_ERROR),
    }
    server = make_server(tricky_root, shared_engine, tmp_path / "audit.jsonl")
    async with Client(server, mode=mode) as client:
        for uri, (werkbaum_code, rpc_code) in expected.items():
            code, message, data = await refusal(client, uri)
            told = await tool_error(client, uri)
            assert (data["code"], code) == (werkbaum_code, rpc_code), (uri, message)
            assert told["code"] == werkbaum_code
            assert message == f"{werkbaum_code}: {told['message']}", uri
        _, message, data = await refusal(client, "werkbaum://file/huge.werkbaum")
        assert data["limit"] == 2_000_000 and message.endswith("the limit is 2,000,000 characters")
        code, message, data = await refusal(client, "werkbaum://nothing/here")
        assert (code, message, data) == (
            not_found_code(mode),
            "Unknown resource: werkbaum://nothing/here",
            {"uri": "werkbaum://nothing/here"},
        )


@pytest.mark.parametrize("mode", MODES)
async def test_a_document_uri_is_decoded_once(
    mode: str, backend: Backend, human: Human, shared_engine: LazyEngine, tmp_path: Path
) -> None:
    """A share link holds its document URL percent-encoded (``%3A``, ``%2F``); in the
    resource URI those become ``%253A``, ``%252F`` and are decoded once, back to the
    link. A URI whose value is itself a ``werkbaum://doc/`` URI is no document."""
    plan = "[ ] #plan: shared (S)\n"
    doc = human.create(plan)
    url = f"{backend.base_url}/api/v1/documents/{doc}"
    link = f"{backend.base_url}/?live={quote(url, safe='')}"
    server = make_server(
        tmp_path, shared_engine, tmp_path / "audit.jsonl", servers=(backend.base_url,)
    )
    async with Client(server, mode=mode) as client:
        for document in (doc, url, link):
            uri = f"werkbaum://doc/{quote(document, safe='')}"
            [contents] = (await client.read_resource(uri)).contents
            assert contents.text == plan, uri  # type: ignore[union-attr]
        nested = f"werkbaum://doc/{quote(f'werkbaum://doc/{doc}', safe='')}"
        code, message, data = await refusal(client, nested)
        assert (code, data["code"]) == (INVALID_PARAMS, "invalid_argument"), message
