"""A root added to a plan with an indented top level, through the stdio server (round 22 F1).

The line-level cases are in ``tests/core/test_edit_placement.py``; this one goes through
the official client, the tool, the file store and the bytes on disk, in both protocol eras.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.stdio.conftest import structured

pytestmark = pytest.mark.anyio

INDENTED = "  - A #a\n    - A1\n  - B #b\n    - B1\n"


async def test_add_node_at_root_level_keeps_the_next_root_a_root(
    client: Client, plans: Path
) -> None:
    (plans / "indented.werkbaum").write_bytes(INDENTED.encode())
    base = structured(await client.call_tool("werkbaum_read", {"source": "indented.werkbaum"}))
    args = {"source": "indented.werkbaum", "base": base["base"], "line": "- New #n", "after": "a"}
    result = structured(await client.call_tool("werkbaum_add_node", args))
    assert result["warnings"]["added"] == []
    assert (plans / "indented.werkbaum").read_bytes() == (
        b"  - A #a\n    - A1\n  - New #n\n  - B #b\n    - B1\n"
    )
    inspect = {"source": "indented.werkbaum", "include": ["tree"]}
    tree = structured(await client.call_tool("werkbaum_inspect", inspect))["tree"]
    assert [(n["label"], [c["label"] for c in n.get("children", [])]) for n in tree] == [
        ("A", ["A1"]),
        ("New", []),
        ("B", ["B1"]),
    ]
