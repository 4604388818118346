"""An agent's round trip through werkbaum-mcp with the official MCP Python SDK (``mcp`` 2.3).

Run it in a clone (``uv run --no-dev python examples/mcp_client.py``): it starts
``werkbaum-mcp`` on a copy of ``examples/launch.werkbaum`` in a temporary folder, asks
for the open front (stations), starts work on the first one not begun with the ``base`` it
read, then sends the same write with that old base again and shows the ``conflict``
the server answers: nothing is overwritten, the error carries the current base.

``mcp`` 2.x differs from the 1.x tutorials: one ``Client`` takes the server's start
parameters (or a transport) and speaks either protocol era; results are pydantic
models with snake_case fields (``structured_content``, ``is_error``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, Implementation, TextContent

PLAN = Path(__file__).with_name("launch.werkbaum")


def answer(result: CallToolResult) -> dict[str, Any]:
    """A tool's JSON: ``structured_content``, or for an error the JSON in its text."""
    if result.structured_content is not None:
        return dict(result.structured_content)
    first = result.content[0]
    assert isinstance(first, TextContent)
    parsed: dict[str, Any] = json.loads(first.text)
    return parsed


async def main(root: Path) -> None:
    server = StdioServerParameters(command="werkbaum-mcp", args=["--root", str(root)])
    # The name the audit lines (on stderr) and mirror commits give the change.
    async with Client(
        server, client_info=Implementation(name="example-agent", version="1")
    ) as client:
        source = {"source": "launch.werkbaum"}
        front = answer(
            await client.call_tool("werkbaum_inspect", {**source, "include": ["stations"]})
        )
        stations = front["stations"]["nodes"]
        todo = next(node for node in stations if node["status"] == " ")  # planned, not begun
        print(f"{len(stations)} stations; the first not begun: {todo['ref']} {todo['label']}")

        base = front["base"]
        change = {**source, "base": base, "id": todo["ref"], "status": "in-progress"}
        written = answer(await client.call_tool("werkbaum_set_status", change))
        added = [
            line
            for line in written["diff"].splitlines()
            if line.startswith("+") and not line.startswith("+++")
        ]
        print("written:", *added)

        stale = await client.call_tool("werkbaum_set_status", {**change, "status": "done"})
        error = answer(stale)["error"]
        print(f"again with the old base: {error['code']}: {error['message']}")
        print("the server's current base:", error["current"]["base"])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(PLAN, folder)
        asyncio.run(main(Path(folder)))
